"""Loaders of sets of sequences (docs/guide/datasets.md): EEG, COVID-19, MIMIC-III (user file) and csv_sets."""

import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.signal import resample

from pibench.data_loaders.covid import covid_problem
from pibench.data_loaders.csv_sets import csv_sets_problem, read_long_sequences
from pibench.data_loaders.eeg import eeg_problem
from pibench.data_loaders.mimic import mimic_problem
from pibench.data_loaders.paths import DATASET_FILES
from pibench.data_loaders.registry import load_dataset


def _has(folder: Path, key: str) -> bool:
    return (folder / DATASET_FILES[key].relpath).is_file()


# --------------------------------------------------------------------------------- covid


def test_covid_split_follows_cf_rnn(shared_data_dir):
    if not _has(shared_data_dir, "covid"):
        pytest.skip("COVID file not staged")
    raw = pd.read_csv(shared_data_dir / DATASET_FILES["covid"].relpath).filter(regex=r"^t\d+$").to_numpy(float)
    p = covid_problem(data_dir=shared_data_dir, replicate=1)
    assert (p.train.n, p.calibration.n, p.test.n, p.horizon) == (200, 100, 80, 50)
    perm = np.random.RandomState(1).permutation(380)
    np.testing.assert_array_equal(p.test.x[:, :, 0], raw[perm[300:], :100])
    np.testing.assert_array_equal(p.calibration.y, raw[perm[200:300], 100:])
    other = covid_problem(data_dir=shared_data_dir, replicate=2)
    assert not np.array_equal(other.test.y, p.test.y)


def _covid_file(folder: Path, values: np.ndarray) -> Path:
    path = folder / DATASET_FILES["covid"].relpath
    path.parent.mkdir(parents=True)
    pd.DataFrame(values, columns=[f"t{i:03d}" for i in range(values.shape[1])]).to_csv(path, index=False)
    return folder


def test_covid_validation(tmp_path):
    values = np.ones((20, 15))
    values[3, 4] = -1
    with pytest.raises(ValueError, match="must be finite and >= 0"):
        covid_problem(data_dir=_covid_file(tmp_path / "a", values), input_length=10, horizon=5, n_train=5,
                      n_calibration=5)
    good = _covid_file(tmp_path / "b", np.ones((20, 15)))
    with pytest.raises(ValueError, match="must fit in the file's 15 days"):
        covid_problem(data_dir=good)
    with pytest.raises(ValueError, match="must leave test areas"):
        covid_problem(data_dir=good, input_length=10, horizon=5, n_train=15, n_calibration=5)
    with pytest.raises(ValueError, match="covid data file not found"):
        covid_problem(data_dir=tmp_path / "nothing")


# ----------------------------------------------------------------------------------- eeg


def test_eeg_has_the_papers_counts_and_drops_duplicates_on_request(shared_data_dir):
    if not _has(shared_data_dir, "eeg"):
        pytest.skip("EEG file not staged")
    p = eeg_problem(data_dir=shared_data_dir)
    # 300 control trials x 64 channels = 19,200 per split (the paper's counts); 20% of TRAIN calibrates
    assert (p.train.n + p.calibration.n, p.test.n) == (19200, 19200)
    assert (p.train.n, p.calibration.n) == (15360, 3840)
    assert p.metadata["dropped_duplicate_test_trials"] == 0 and p.metadata["test_trials"] == 300
    assert p.train.x.shape[1:] == (40, 1) and p.horizon == 10
    with np.load(shared_data_dir / DATASET_FILES["eeg"].relpath) as z:
        first_control = z["test_values"][z["test_subject_class"] == "c"][0]
    expected = resample(first_control[5], 50)  # channel 5 of the first control test trial
    np.testing.assert_allclose(np.r_[p.test.x[5, :, 0], p.test.y[5]], expected, atol=1e-9)
    again = eeg_problem(data_dir=shared_data_dir)
    np.testing.assert_array_equal(again.calibration.y, p.calibration.y)
    assert not np.array_equal(eeg_problem(data_dir=shared_data_dir, replicate=1).calibration.y, p.calibration.y)
    # the 17 TEST trials identical to a TRAIN trial of the same subject and number, left out on request
    deduplicated = eeg_problem(data_dir=shared_data_dir, drop_duplicate_trials=True)
    assert deduplicated.metadata["dropped_duplicate_test_trials"] == 17
    assert deduplicated.test.n == 283 * 64 == 18112
    np.testing.assert_array_equal(deduplicated.train.y, p.train.y)  # only the test set changes
    with np.load(shared_data_dir / DATASET_FILES["eeg"].relpath) as z:  # by hand: same subject, number, values
        train = {(s, t): v for s, t, v in zip(z["train_subject"], z["train_trial"], z["train_values"])}
        twin = np.array([(s, t) in train and np.array_equal(v, train[(s, t)])
                         for s, t, v in zip(z["test_subject"], z["test_trial"], z["test_values"])])
    assert twin.sum() == 17
    np.testing.assert_array_equal(deduplicated.test.y, p.test.y[np.repeat(~twin, 64)])
    # a test trial's 64 channels are one unit of the statistics: its subject and number, channels consecutive
    clusters = np.asarray(p.test_clusters).reshape(300, 64)
    assert (clusters == clusters[:, :1]).all() and len(set(clusters[:, 0])) == 300
    with np.load(shared_data_dir / DATASET_FILES["eeg"].relpath) as z:
        control = z["test_subject_class"] == "c"
        assert clusters[0, 0] == f"{z['test_subject'][control][0]} trial {z['test_trial'][control][0]}"
    assert len(set(deduplicated.test_clusters)) == 283
    # a smoke run's size: the first trials of each split, their sequences as in the whole set
    small = eeg_problem(data_dir=shared_data_dir, max_trials=6, drop_duplicate_trials=True)
    assert (small.train.n + small.calibration.n, small.test.n) == (6 * 64, 6 * 64)
    assert small.metadata["dropped_duplicate_test_trials"] == 17 and small.metadata["test_trials"] == 6
    np.testing.assert_allclose(small.test.y, deduplicated.test.y[:6 * 64])
    with pytest.raises(ValueError, match="max_trials=0: keep at least 1 trial per split"):
        eeg_problem(data_dir=shared_data_dir, max_trials=0)
    with pytest.raises(ValueError, match="of 4 TRAIN trials leaves no calibration trial; raise max_trials"):
        eeg_problem(data_dir=shared_data_dir, max_trials=4, calibration_split="trial")  # 20% of 4 trials: none


def test_eeg_calibration_by_trial_holds_out_whole_trials(shared_data_dir):
    if not _has(shared_data_dir, "eeg"):
        pytest.skip("EEG file not staged")
    by_sequence = eeg_problem(data_dir=shared_data_dir)
    by_trial = eeg_problem(data_dir=shared_data_dir, calibration_split="trial")
    assert (by_trial.train.n, by_trial.calibration.n) == (240 * 64, 60 * 64)  # 20% of the 300 TRAIN trials
    np.testing.assert_array_equal(by_trial.test.y, by_sequence.test.y)  # the test set is the same
    # the union of train and calibration is the same TRAIN sequences, each once
    def rows(p):
        return {row.tobytes() for row in np.c_[np.r_[p.train.x[:, :, 0], p.calibration.x[:, :, 0]],
                                               np.r_[p.train.y, p.calibration.y]]}

    assert rows(by_trial) == rows(by_sequence)
    # by hand: trial k's 64 channels are sequences 64 k .. 64 k + 63 of the TRAIN split, in the loader's order
    with np.load(shared_data_dir / DATASET_FILES["eeg"].relpath) as z:
        control = z["train_values"][z["train_subject_class"] == "c"]
    held_out = np.random.RandomState(0).permutation(300)[:60]
    expected = resample(control[held_out[0], 7], 50)  # channel 7 of the first held-out trial
    np.testing.assert_allclose(np.r_[by_trial.calibration.x[7, :, 0], by_trial.calibration.y[7]], expected,
                               atol=1e-9)
    assert by_trial.metadata["calibration_split"] == "trial"
    with pytest.raises(ValueError, match="calibration_split"):
        eeg_problem(data_dir=shared_data_dir, calibration_split="subject")


def test_the_old_eeg_file_is_named_in_the_error(tmp_path):
    old = tmp_path / "eeg_uci_smni_cmi" / "eeg_smni_cmi_16subj_kaggle_subset.npz"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"")
    with pytest.raises(ValueError, match="eeg_smni_cmi_control_20subj.npz") as error:
        eeg_problem(data_dir=tmp_path)
    assert "16subj_kaggle_subset.npz is no longer read" in str(error.value)


def test_eeg_validation(tmp_path):
    path = tmp_path / DATASET_FILES["eeg"].relpath
    path.parent.mkdir(parents=True)
    np.savez(path, train_values=np.zeros((2, 3, 256)))
    with pytest.raises(ValueError, match=re.escape("no array(s) ['train_subject'")):
        eeg_problem(data_dir=tmp_path)
    with pytest.raises(ValueError, match="calibration_fraction"):
        eeg_problem(data_dir=tmp_path, calibration_fraction=1.0)


# --------------------------------------------------------------------------------- mimic


def _long_file(path: Path, lengths, seed=0) -> Path:
    rng = np.random.default_rng(seed)
    rows = [(f"p{i}", step, float(rng.normal(10, 2))) for i, n in enumerate(lengths) for step in range(n)]
    frame = pd.DataFrame(rows, columns=["id", "step"] + ["value"]).sample(frac=1.0, random_state=1)
    frame.to_parquet(path, index=False) if path.suffix == ".parquet" else frame.to_csv(path, index=False)
    return path


def test_mimic_long_file_lengths_padding_and_split(tmp_path):
    lengths = [3, 4, 5, 6, 47, 48] + [5 + i % 40 for i in range(300)]
    path = _long_file(tmp_path / "wbc.csv", lengths)
    p = mimic_problem(path=str(path), replicate=0)
    n = 3 + 300  # 5, 6 and 47 visits of the first six, and every one of the 300
    assert p.train.n + p.calibration.n + p.test.n == n
    assert (p.calibration.n, p.test.n) == (round(0.47 * n), round(0.10 * n))
    assert p.horizon == 2 and p.train.x.shape[1] == 45  # 47 visits - 2
    frame = pd.read_csv(path).sort_values(["id", "step"])
    for data in (p.train, p.calibration, p.test):
        assert data.lengths.min() >= 3 and data.lengths.max() <= 45
    # each sequence: the observed inputs then its last 2 visits as targets
    series = {i: g["value"].to_numpy() for i, g in frame.groupby("id")}
    pool = {tuple(np.r_[s[:-2], s[-2:]]) for s in series.values() if 5 <= len(s) <= 47}
    x0, y0 = p.test.x[0, :p.test.lengths[0], 0], p.test.y[0]
    assert tuple(np.r_[x0, y0]) in pool


class _Tripwire:
    """Unpickling this writes a file: proof that a pickle was (or was not) opened."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (Path(self.marker), "unpickled"))


def test_mimic_pickle_needs_the_trust_flag(tmp_path):
    marker = tmp_path / "ran.txt"
    evil = tmp_path / "mimic.p"
    evil.write_bytes(pickle.dumps(_Tripwire(str(marker))))
    with pytest.raises(ValueError, match="unpickling runs whatever code.*trust_pickle = true"):
        mimic_problem(path=str(evil))
    assert not marker.exists()  # refused before opening

    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 30, size=80)
    longitudinal = rng.normal(size=(80, 30, 30))
    good = tmp_path / "cf.p"
    good.write_bytes(pickle.dumps({"longitudinal": longitudinal, "trajectory_lengths": lengths}))
    p = mimic_problem(path=str(good), trust_pickle=True)
    all_y = np.concatenate([p.train.y, p.calibration.y, p.test.y])
    expected = {tuple(longitudinal[i, lengths[i] - 2:lengths[i], 23]) for i in range(80)}
    assert {tuple(row) for row in all_y} == expected


def test_mimic_without_a_file_says_how_to_get_one(tmp_path):
    with pytest.raises(ValueError, match="credentialed PhysioNet data"):
        mimic_problem(data_dir=tmp_path)


# ------------------------------------------------------------------------------ csv_sets


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_csv_sets_takes_the_last_steps_of_each_sequence(tmp_path, suffix):
    path = _long_file(tmp_path / f"s{suffix}", [12] * 50)
    p = load_dataset("csv_sets", {"path": str(path), "input_length": 6, "horizon": 3}, replicate=3)
    assert (p.train.n, p.calibration.n, p.test.n) == (30, 10, 10)
    frame = (pd.read_parquet(path) if suffix == ".parquet" else pd.read_csv(path)).sort_values(["id", "step"])
    tails = {tuple(g["value"].to_numpy()[-9:]) for _, g in frame.groupby("id")}
    assert {tuple(np.r_[x[:, 0], y]) for x, y in zip(p.test.x, p.test.y)} <= tails


@pytest.mark.parametrize("change, message", [
    (lambda f: f.rename(columns={"value": "v"}), re.escape("no column(s) ['value']")),
    (lambda f: pd.concat([f, f.iloc[:1]]), "has step 0 twice"),
    (lambda f: f.assign(value=f["value"].where(f.index != 7, np.nan)), "missing, infinite or non-numeric"),
    (lambda f: f.assign(value=f["value"].where(f.index != 7, np.inf)), "missing, infinite or non-numeric"),
    (lambda f: f.assign(value=f["value"].astype(object).where(f.index != 7, "1,234.5")),
     "Values such as '1,234.5' have a comma inside"),
    (lambda f: f[~((f["id"] == "p2") & (f["step"] > 4))], r"1 sequence\(s\) have fewer than"),
])
def test_csv_sets_validation(tmp_path, change, message):
    path = _long_file(tmp_path / "s.csv", [12] * 20)
    change(pd.read_csv(path)).to_csv(path, index=False)
    with pytest.raises(ValueError, match=message):
        csv_sets_problem(path=path, input_length=6, horizon=3)


def test_csv_sets_steps_written_as_dates_are_ordered_as_dates(tmp_path):
    """Day-first dates order in time, not as text (01/02/2020 before 20/01/2020 would scramble every
    sequence): the problem equals the one of the same file with step numbers; text steps are refused."""
    numbered = _long_file(tmp_path / "n.csv", [12] * 20)
    frame = pd.read_csv(numbered)
    days = pd.Timestamp("2020-01-20") + pd.to_timedelta(frame["step"], unit="D")
    dated = tmp_path / "d.csv"
    frame.assign(step=days.dt.strftime("%d/%m/%Y")).sample(frac=1, random_state=0).to_csv(dated, index=False)
    a, b = (csv_sets_problem(path=p, input_length=6, horizon=3) for p in (numbered, dated))
    for split in ("train", "calibration", "test"):
        np.testing.assert_array_equal(getattr(a, split).y, getattr(b, split).y)
    frame.assign(step="w" + frame["step"].astype(str)).to_csv(dated, index=False)
    with pytest.raises(ValueError, match="the step column 'step' holds neither numbers nor dates \\(row 0 holds 'w"):
        csv_sets_problem(path=dated, input_length=6, horizon=3)  # (it said "holds numbers, but row 0 ...")


def test_csv_sets_says_where_a_sequences_steps_skip(tmp_path):
    """A sequence missing step 8 (or a day): its values are used as consecutive, now with a note naming it; gaps
    before the steps used and evenly spaced files say nothing."""
    numbered = _long_file(tmp_path / "n.csv", [12] * 20)
    frame = pd.read_csv(numbered)
    assert csv_sets_problem(path=numbered, input_length=6, horizon=3).metadata.get("notes") is None
    frame[~((frame["id"] == "p2") & (frame["step"] == 1))].to_csv(numbered, index=False)  # before the 9 used
    assert csv_sets_problem(path=numbered, input_length=6, horizon=3).metadata.get("notes") is None
    frame[~((frame["id"] == "p2") & (frame["step"] == 8))].to_csv(numbered, index=False)
    (note,) = csv_sets_problem(path=numbered, input_length=6, horizon=3).metadata["notes"]
    assert note.startswith("1 of 20 sequence(s) skip steps in 'step' over the 9 steps used (sequence "
                           "'p2': 7 then 9, where the usual step is 1)")
    days = frame.assign(step=(pd.Timestamp("2020-01-01") + pd.to_timedelta(frame["step"], unit="D")).dt.strftime(
        "%Y-%m-%d"))
    days[~((days["id"] == "p2") & (days["step"] == "2020-01-09"))].to_csv(numbered, index=False)
    (note,) = csv_sets_problem(path=numbered, input_length=6, horizon=3).metadata["notes"]
    assert "(sequence 'p2': 2020-01-08 then 2020-01-10, where the usual step is 1 day(s))" in note
    months = frame.assign(step=pd.date_range("2019-01-01", periods=12, freq="MS").strftime("%Y-%m-%d").to_numpy()[
        frame["step"]], value=frame["value"])  # months of 28 to 31 days, and steps of 0.1, are even
    months.to_csv(numbered, index=False)
    assert csv_sets_problem(path=numbered, input_length=6, horizon=3).metadata.get("notes") is None
    frame.assign(step=frame["step"] * 0.1).to_csv(numbered, index=False)
    assert csv_sets_problem(path=numbered, input_length=6, horizon=3).metadata.get("notes") is None


def test_csv_sets_groups_its_sequences_by_a_column(tmp_path):
    """Patients with several sequences each: the group travels with every test sequence (the statistics' unit);
    a sequence in two groups is refused."""
    path = _long_file(tmp_path / "s.csv", [12] * 40)
    frame = pd.read_csv(path)
    frame["patient"] = "pt" + (frame["id"].str[1:].astype(int) // 4).astype(str)  # four sequences per patient
    frame.to_csv(path, index=False)
    p = csv_sets_problem(path=path, input_length=6, horizon=3, group_column="patient")
    assert [f"pt{int(i[1:]) // 4}" for i in p.test_ids] == list(p.test_clusters)
    assert csv_sets_problem(path=path, input_length=6, horizon=3).test_clusters is None
    frame.loc[frame.index[0], "patient"] = "elsewhere"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"the group column 'patient' changes within sequence\(s\) \['p"):
        csv_sets_problem(path=path, input_length=6, horizon=3, group_column="patient")
    frame.loc[frame["id"].isin(["p3", "p7"]), "patient"] = "NA"  # read as blank: all were one group, "nan"
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=re.escape("the group column 'patient' is blank for 2 sequence(s) (first "
                                                   "ids ['p3', 'p7']); give each sequence its group on every row "
                                                   "(a CSV cell NA, None, null or n/a reads as blank")):
        csv_sets_problem(path=path, input_length=6, horizon=3, group_column="patient")


def test_csv_sets_group_labels_are_read_as_written(tmp_path):
    """Patients labelled 7 and 007 are two patients (the group column was read as numbers: they were one, and
    03 was stored as 3), as ids are."""
    path = _long_file(tmp_path / "s.csv", [12] * 40)
    frame = pd.read_csv(path)
    number = frame["id"].str[1:].astype(int)
    frame["patient"] = np.where(number < 20, (number // 2).astype(str), (number // 2 - 10).astype(str).str.zfill(3))
    frame.to_csv(path, index=False)
    sequences = read_long_sequences(path, group_column="patient")
    assert len(set(sequences.groups)) == 20 and {"7", "007"} <= set(sequences.groups)
    p = csv_sets_problem(path=path, input_length=6, horizon=3, group_column="patient")
    assert set(p.test_clusters) <= set(sequences.groups) and len(set(p.test_clusters)) == 4  # 0.2 of 20 groups


def test_csv_sets_random_split_keeps_each_group_whole(tmp_path):
    """30 patients of 4 sequences: the random split put a patient's sequences in train and test alike (28 of 30
    groups had test sequences); now each patient is in one part, the fractions counting patients (6 test, 6
    calibration, 18 train), other replicates other patients; the rest of a test_ids split is split likewise."""
    path = _long_file(tmp_path / "s.csv", [12] * 120)
    frame = pd.read_csv(path)
    frame["patient"] = "pt" + (frame["id"].str[1:].astype(int) // 4).astype(str)
    frame.to_csv(path, index=False)
    names = [f"p{i}" for i in range(120)]
    by_tail = dict(zip(_tails(path, names), names))  # a sequence's last 9 values name it

    def parts(p) -> dict[str, list[str]]:
        return {name: [by_tail[tuple(row)] for row in np.concatenate([getattr(p, name).x[:, :, 0],
                                                                      getattr(p, name).y], axis=1)]
                for name in ("train", "calibration", "test")}

    def patients(ids) -> set[str]:
        return {f"pt{int(i[1:]) // 4}" for i in ids}

    tests = []
    for replicate in (0, 1):
        p = csv_sets_problem(path=path, input_length=6, horizon=3, group_column="patient", replicate=replicate)
        ids = parts(p)
        assert ids["test"] == list(p.test_ids)
        groups = {name: patients(part) for name, part in ids.items()}
        assert [len(g) for g in groups.values()] == [18, 6, 6] and [len(i) for i in ids.values()] == [72, 24, 24]
        assert not (groups["train"] & groups["test"] or groups["train"] & groups["calibration"]
                    or groups["calibration"] & groups["test"])
        tests.append(groups["test"])
    assert tests[0] != tests[1]
    (tmp_path / "test_ids.txt").write_text("\n".join(names[:8]))  # patients pt0 and pt1
    ids = parts(csv_sets_problem(path=path, input_length=6, horizon=3, group_column="patient",
                                 test_ids=str(tmp_path / "test_ids.txt")))
    assert patients(ids["test"]) == {"pt0", "pt1"} and len(patients(ids["calibration"])) == round(0.2 * 28)
    assert not patients(ids["train"]) & patients(ids["calibration"])
    whole = csv_sets_problem(path=path, input_length=6, horizon=3, group_column="patient",
                             test_ids=str(tmp_path / "test_ids.txt"))
    assert not whole.metadata.get("notes")  # whole patients in the test: nothing to say
    (tmp_path / "test_ids.txt").write_text("\n".join(names[:6]))  # pt0 whole, two of pt1's four sequences
    split = csv_sets_problem(path=path, input_length=6, horizon=3, group_column="patient",
                             test_ids=str(tmp_path / "test_ids.txt"))
    (note,) = split.metadata["notes"]
    assert note.startswith("1 group(s) of 'patient' have sequences both in the test and outside it (first ['pt1'])")


def _tails(path: Path, ids) -> list[tuple]:
    """The last 9 values of each named sequence, in the order given (what x and y of a (6, 3) problem hold)."""
    frame = pd.read_csv(path).sort_values(["id", "step"])
    return [tuple(frame[frame["id"] == i]["value"].to_numpy()[-9:]) for i in ids]


def test_csv_sets_split_column_is_honoured_for_every_seed(tmp_path):
    path = _long_file(tmp_path / "s.csv", [12] * 20)
    frame = pd.read_csv(path)
    part = {f"p{i}": "test" if i < 4 else "calibration" if i < 9 else "train" for i in range(20)}
    frame.assign(part=frame["id"].map(part)).to_csv(path, index=False)
    for replicate in (0, 3):
        p = load_dataset("csv_sets", {"path": str(path), "input_length": 6, "horizon": 3, "split_column": "part"},
                         replicate=replicate)
        assert (p.train.n, p.calibration.n, p.test.n) == (11, 5, 4)
        assert list(p.test_ids) == ["p0", "p1", "p2", "p3"]
        assert [tuple(np.r_[x[:, 0], y]) for x, y in zip(p.test.x, p.test.y)] == _tails(path, p.test_ids)


def test_a_split_fixed_for_every_seed_or_few_test_groups_get_a_note(tmp_path):
    """A split_column gave every seed the same data, and "seeds 2" showed without a word; 60 test sequences of
    6 patients passed as plenty, though the statistics count patients."""
    from pibench.api import suite_tasks
    from pibench.benchmarks.preflight import prepare_tasks

    path = _long_file(tmp_path / "s.csv", [12] * 300)
    frame = pd.read_csv(path)
    number = frame["id"].str[1:].astype(int)
    frame.assign(part=np.where(number < 60, "test", np.where(number < 120, "calibration", "train")),
                 patient="pt" + (number // 10).astype(str)).to_csv(path, index=False)

    def notes(**params) -> list[str]:
        entry = ", ".join(f'{k} = "{v}"' for k, v in params.items())
        suite = tmp_path / "suite.toml"
        suite.write_text(f'seeds = [0, 1]\ndatasets = [{{ name = "csv_sets", label = "mine", params = {{ path = '
                         f'"{path}", input_length = 6, horizon = 3, {entry} }} }}]\nmethods = [{{ name = "cfrnn" }}]\n')
        return [n for n in prepare_tasks(suite_tasks(str(suite))[1]).notes if "'mine'" in n]

    assert notes(split_column="part") == ["dataset 'mine': its 2 seeds give the same sequences and split (its "
                                          "split is fixed, e.g. by a split_column): only the methods' seeds differ"]
    assert notes(group_column="patient") == ["dataset 'mine' has 60 test sequence(s) in 6 group(s): its "
                                             "intervals, tests and MCS count its 6 group(s) as units; they say "
                                             "little (COVID-19 has 80 sequences); give more groups or a larger "
                                             "test share"]
    assert notes(split_column="part", group_column="patient") == notes(group_column="patient") + notes(
        split_column="part")


def test_csv_sets_split_column_must_be_one_part_per_sequence(tmp_path):
    path = _long_file(tmp_path / "s.csv", [12] * 20)
    frame = pd.read_csv(path)
    frame.assign(part=np.where(frame["step"] == 0, "test", "train")).to_csv(path, index=False)
    with pytest.raises(ValueError, match="changes within sequence"):
        csv_sets_problem(path=path, input_length=6, horizon=3, split_column="part")
    frame.assign(part="valid").to_csv(path, index=False)
    with pytest.raises(ValueError, match=re.escape("holds ['valid']; use train, calibration, test")):
        csv_sets_problem(path=path, input_length=6, horizon=3, split_column="part")


@pytest.mark.parametrize("blank", ["NA", "", "null"])
def test_csv_sets_rows_without_an_id_are_refused_not_dropped(tmp_path, blank):
    """pandas reads NA, null or an empty cell as missing, and the sequences were grouped without such rows: a
    sequence named "NA" vanished (299 of 300 read), one blank row made a gap that is not in the file."""
    path = _long_file(tmp_path / "s.csv", [12] * 20)
    frame = pd.read_csv(path, dtype={"id": str})
    frame.loc[frame["id"] == "p3", "id"] = blank
    frame.loc[frame["id"] == "p5", "id"] = frame["id"].where(frame["step"] != 4, blank)  # one row of p5
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"13 row\(s\) have a blank 'id'"):
        csv_sets_problem(path=path, input_length=6, horizon=3)


def test_csv_sets_ids_that_differ_only_by_spaces_are_refused(tmp_path):
    """Split and group labels are read stripped, ids as written: the last rows of 'p3' written 'p3 ' made a
    sequence of their own and left 'p3' shorter, silently (dogfood). Spaces that make no twin are an id as any."""
    path = _long_file(tmp_path / "s.csv", [12] * 20)
    frame = pd.read_csv(path, dtype={"id": str})
    frame.loc[frame.index[(frame["id"] == "p3").to_numpy()][-4:], "id"] = "p3 "
    frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"the ids 'p3 ' and 'p3' differ only by spaces around them \(first row "
                                         r"\d+, counted from 0 under the header\); they would be two sequences"):
        csv_sets_problem(path=path, input_length=6, horizon=3)
    frame["id"] = frame["id"].str.strip().where(frame["id"] != "p3 ", " p3x")  # a spaced id with no twin
    frame.to_csv(path, index=False)
    csv_sets_problem(path=path, input_length=3, horizon=1)


def test_csv_sets_refuses_one_column_in_two_roles(tmp_path):
    """step_column = "value" ran, each sequence sorted by its own values; value_column = "id" benchmarked the ids."""
    path = _long_file(tmp_path / "s.csv", [12] * 20)
    with pytest.raises(ValueError, match="step_column and value_column both name the column 'value'"):
        csv_sets_problem(path=path, input_length=6, horizon=3, step_column="value")
    with pytest.raises(ValueError, match="id_column and group_column both name the column 'id'"):
        csv_sets_problem(path=path, input_length=6, horizon=3, group_column="id")


@pytest.mark.parametrize("layout", ["lines", "table", "excel"])
def test_csv_sets_test_ids_file(tmp_path, layout):
    """One id per line, or a table with the id column; Excel's "CSV UTF-8" starts with a byte order mark (its
    first id read as a byte order mark and p7, not a sequence)."""
    path = _long_file(tmp_path / "s.csv", [12] * 30)
    ids = tmp_path / "test_ids.txt"
    ids.write_text("p7\np2\np11\n" if layout == "lines" else "id,note\np7,a\np2,b\np11,c\n",
                   encoding="utf-8-sig" if layout == "excel" else "utf-8")
    p = load_dataset("csv_sets", {"path": str(path), "input_length": 6, "horizon": 3, "test_ids": str(ids),
                                  "calibration_fraction": 0.25}, replicate=1)
    assert sorted(p.test_ids) == ["p11", "p2", "p7"] and p.test.n == 3
    assert (p.calibration.n, p.train.n) == (round(0.25 * 27), 27 - round(0.25 * 27))
    assert [tuple(np.r_[x[:, 0], y]) for x, y in zip(p.test.x, p.test.y)] == _tails(path, p.test_ids)
    assert "notes" not in p.metadata
    ids.write_text("p7\np2\np7\n")  # a repeat was dropped without a word
    p = load_dataset("csv_sets", {"path": str(path), "input_length": 6, "horizon": 3, "test_ids": str(ids)})
    assert p.test.n == 2 and p.metadata["notes"] == [f"test_ids file {ids} lists 1 id(s) more than once (first "
                                                     "['p7']); each is one test sequence, so the test has 2, not 3"]
    ids.write_text("p7\nnobody\n")
    with pytest.raises(ValueError, match=re.escape("1 id(s) are not sequences of")):
        load_dataset("csv_sets", {"path": str(path), "input_length": 6, "horizon": 3, "test_ids": str(ids)})


def test_csv_sets_predictions_name_their_sequences(tmp_path):
    from pibench.benchmarks.store import ResultsStore
    from pibench.cli import main

    path = _long_file(tmp_path / "s.csv", [12] * 30)
    suite = tmp_path / "suite.toml"
    suite.write_text(f'datasets = [{{ name = "csv_sets", params = {{ path = "{path}", input_length = 6, '
                     'horizon = 3 } }]\nmethods = [{ name = "cfrnn", params = { epochs = 2 } }]\n')
    assert main(["run", "--suite", str(suite), "--results-dir", str(tmp_path / "r"), "--no-progress"]) == 0
    store = ResultsStore(tmp_path / "r")
    (record,) = store.records()
    predictions = store.predictions(record["task_id"])
    p = load_dataset("csv_sets", {"path": str(path), "input_length": 6, "horizon": 3})
    assert list(predictions["sequence"]) == [i for i in p.test_ids for _ in range(3)]
    for sequence, rows in predictions.groupby("sequence"):
        assert tuple(rows.sort_values("horizon")["y"]) == _tails(path, [sequence])[0][-3:]


def test_a_sets_dataset_with_few_test_sequences_gets_a_note(tmp_path):
    """4 test sequences: joint coverage in steps of 25 points; the run says so (and runs)."""
    from pibench import run

    path = _long_file(tmp_path / "s.csv", [12] * 20)
    suite = tmp_path / "suite.toml"
    suite.write_text(f'datasets = [{{ name = "csv_sets", params = {{ path = "{path}", input_length = 6, '
                     'horizon = 3 } }]\nmethods = [{ name = "cfrnn", params = { epochs = 1 } }]\n')
    results = run(str(suite), results_dir=str(tmp_path / "r"), progress=False)
    assert len(results.run_report.executed) == 1
    (note,) = [n for n in results.run_report.notes if "test sequence(s)" in n]
    assert "has 4 test sequence(s)" in note and "steps of 25 points" in note


def test_two_test_groups_are_no_evidence_for_a_comparison(tmp_path):
    """Sequences of 10 patients, 2 of them in the test part: the difference of two methods' scores is shown, but
    no DM test or MCS (on one or two units it reported p = 0.00* with a CI of one value); the run's note and the
    table say why."""
    from pibench import run
    from pibench.reports.summary import comparison_tables

    path = _long_file(tmp_path / "s.csv", [12] * 20)
    frame = pd.read_csv(path)
    frame.assign(patient="pt" + (frame["id"].str[1:].astype(int) // 2).astype(str)).to_csv(path, index=False)
    suite = tmp_path / "suite.toml"
    suite.write_text(f'datasets = [{{ name = "csv_sets", params = {{ path = "{path}", input_length = 6, '
                     'horizon = 3, group_column = "patient" } }]\nmethods = [{ name = "cfrnn", params = { epochs = 1 '
                     '} }, { name = "mqrnn", params = { epochs = 1 } }]\n')
    results = run(str(suite), results_dir=str(tmp_path / "r"), progress=False, errors="ignore")
    (note,) = [n for n in results.run_report.notes if "test sequence(s)" in n]
    assert "in 2 group(s)" in note and "no Diebold-Mariano test or MCS" in note
    table = results.compare()
    assert (table["units"] == 2).all() and table["dm_p"].isna().all() and table["in_mcs"].isna().all()
    assert table["difference"].notna().sum() == 1  # the difference itself is what it is
    text = comparison_tables(results.statistics.groups)
    assert "Only 2 test unit(s)" in text and "[+nan" not in text
    (name,) = [n for n in results.figure_names if n.startswith("comparison")]
    assert "only 2 test unit(s): no CI, no MCS" in results.figure(name).axes[0].get_title()


def test_csv_sets_of_one_constant_value_are_refused(tmp_path):
    """A constant series is refused; a sets file of one value ran (100% coverage, length 6.1, no note)."""
    path = _long_file(tmp_path / "s.csv", [12] * 20)
    pd.read_csv(path).assign(value=3.0).to_csv(path, index=False)
    with pytest.raises(ValueError, match="every 'value' is 3; constant sequences have no uncertainty to bound"):
        csv_sets_problem(path=path, input_length=6, horizon=3)


def test_a_share_that_rounds_to_no_sequence_is_named():
    """test_fraction = 0.001 of 300 sequences said "300 sequences are too few to split", blaming the data for a
    share that rounds to 0."""
    from pibench.data_loaders.csv_sets import split_by_replicate

    with pytest.raises(ValueError, match=r"^300 sequences leave no test part \(test_fraction=0.001 of 300 rounds to "
                                         r"0\): raise it or give more sequences\.$"):
        split_by_replicate(300, 0, 0.2, 0.001)
    with pytest.raises(ValueError, match=r"^2 groups leave no calibration and no test part \(calibration_fraction="
                                         r"0.2 of 2 rounds to 0; test_fraction=0.2 of 2 rounds to 0\): raise them"):
        split_by_replicate(2, 0, 0.2, 0.2, unit="groups")
    train, calibration, test = split_by_replicate(10, 0, 0.2, 0.2)
    assert (len(train), len(calibration), len(test)) == (6, 2, 2)
