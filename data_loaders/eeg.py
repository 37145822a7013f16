"""UCI EEG (SMNI CMI), control subjects, as sets of sequences (docs/guide/datasets.md; CF-RNN's processing).

Each (trial, channel) of a control subject is one series of 256 samples (1 s at
256 Hz), resampled to ``input_length + horizon`` points with
``scipy.signal.resample`` (Fourier); x = the first ``input_length``, y = the last
``horizon``. Train and calibration come from the TRAIN split (a
``RandomState(replicate)`` permutation puts ``calibration_fraction`` of its
sequences in calibration), test from the TEST split. The staged file holds all
10 control subjects of the large set, 300 trials per split: 19,200 sequences
each, the paper's counts. 17 TEST trials are value-for-value identical to the
TRAIN trial of the same subject and number (in the raw UCI files too); the paper
keeps them, and so does the default. ``drop_duplicate_trials = True`` leaves them
out of the test set (283 trials, 18,112 sequences), so that no test sequence was
also trained on. ``max_trials`` keeps the first trials of each split only: a smoke
run's size (the GPU suites' CPU dry run, :mod:`pibench.benchmarks.tiny_suite`).

``calibration_split = "trial"`` puts whole TRAIN trials (all their channels) in
calibration instead of single sequences: the channels of one trial move together,
so a calibration sequence whose trial the network trained on scores smaller errors
than a test sequence from an unseen trial, and split conformal's exchangeability
between calibration and test fails (conformalised PA-LSTM: 87.1% over 5 seeds where 90% is
guaranteed). With trials held out, calibration and test sequences both come from
unseen trials.
"""

from __future__ import annotations

import os

import numpy as np
from scipy.signal import resample

from pibench.data_loaders.paths import locate
from pibench.data_loaders.problems import SetProblem

KEYS = ("values", "subject", "subject_class", "trial")


def _split(z, split: str, path) -> dict[str, np.ndarray]:
    missing = [f"{split}_{k}" for k in KEYS if f"{split}_{k}" not in z.files]
    if missing:
        raise ValueError(f"{path}: no array(s) {missing}; is this the staged EEG file (see its SOURCE.md)?")
    arrays = {k: z[f"{split}_{k}"] for k in KEYS}
    values = arrays["values"]
    if values.ndim != 3 or not np.isfinite(values).all():
        raise ValueError(f"{path}: {split}_values must be finite [trials, channels, samples]; got {values.shape}.")
    return arrays


def _duplicated_in(train: dict, test: dict) -> np.ndarray:
    """(test trials,) True where a TRAIN trial has the same subject, number and values."""
    index = {(s, t): i for i, (s, t) in enumerate(zip(train["subject"], train["trial"]))}
    return np.array([(s, t) in index and np.array_equal(test["values"][j], train["values"][index[(s, t)]])
                     for j, (s, t) in enumerate(zip(test["subject"], test["trial"]))], dtype=bool)


def eeg_problem(
    *,
    replicate: int = 0,
    data_dir: str | os.PathLike | None = None,
    input_length: int = 40,
    horizon: int = 10,
    calibration_fraction: float = 0.2,
    drop_duplicate_trials: bool = False,
    calibration_split: str = "sequence",
    max_trials: int | None = None,
) -> SetProblem:
    """Control-subject EEG sequences; see the module docstring."""
    if input_length < 1 or horizon < 1:
        raise ValueError(f"input_length={input_length} and horizon={horizon} must be >= 1.")
    if not 0 < calibration_fraction < 1:
        raise ValueError(f"calibration_fraction={calibration_fraction} must lie in (0, 1).")
    if calibration_split not in ("sequence", "trial"):
        raise ValueError(f'calibration_split={calibration_split!r}; use "sequence" (the paper\'s) or "trial".')
    if max_trials is not None and max_trials < 1:  # (too few to calibrate on is said once the split is known)
        raise ValueError(f"max_trials={max_trials}: keep at least 1 trial per split, or leave it out for all of them.")
    path = locate("eeg", data_dir)
    with np.load(path, allow_pickle=False) as z:
        train, test = _split(z, "train", path), _split(z, "test", path)
    duplicated = _duplicated_in(train, test) if drop_duplicate_trials else np.zeros(len(test["trial"]), bool)
    keep_test = (test["subject_class"] == "c") & ~duplicated
    if max_trials is not None:
        keep_test[np.flatnonzero(keep_test)[max_trials:]] = False
    train_values = train["values"][train["subject_class"] == "c"][:max_trials]
    test_values = test["values"][keep_test]
    if not len(train_values) or not len(test_values):
        raise ValueError(f"{path}: no control-subject trial (subject_class 'c') in one of the splits.")

    def sequences(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        series = resample(values.reshape(-1, values.shape[-1]), input_length + horizon, axis=1)
        return series[:, :input_length, None], series[:, input_length:]

    x_train, y_train = sequences(train_values)
    x_test, y_test = sequences(test_values)
    n = len(x_train)
    if calibration_split == "sequence":
        perm = np.random.RandomState(int(replicate)).permutation(n)
        n_cal = int(calibration_fraction * n)
    else:  # whole trials: sequence i belongs to trial i // channels
        n_trials = len(train_values)
        channels = n // n_trials
        trial_perm = np.random.RandomState(int(replicate)).permutation(n_trials)
        perm = (trial_perm[:, None] * channels + np.arange(channels)).ravel()
        n_cal = int(calibration_fraction * n_trials) * channels
    if n_cal == 0:
        raise ValueError(f"calibration_fraction={calibration_fraction} of {len(train_values)} TRAIN trials leaves no "
                         f"calibration {'trial' if calibration_split == 'trial' else 'sequence'}; raise max_trials "
                         "or calibration_fraction.")
    x = np.concatenate([x_train, x_test])
    y = np.concatenate([y_train, y_test])
    # a test trial's channels move together: the trial (subject, number) is the independent unit
    trials = [f"{subject} trial {number}" for subject, number in zip(test["subject"][keep_test],
                                                                      test["trial"][keep_test])]
    clusters = np.r_[np.full(n, ""), np.repeat(trials, len(x_test) // len(test_values))]
    return SetProblem.from_indices(
        "eeg", x, y, train=perm[n_cal:], calibration=perm[:n_cal], test=np.arange(n, n + len(x_test)),
        clusters=clusters,
        metadata={"source": str(path), "train_trials": len(train_values), "test_trials": len(test_values),
                  "drop_duplicate_trials": drop_duplicate_trials, "calibration_split": calibration_split,
                  "dropped_duplicate_test_trials": int(((test["subject_class"] == "c") & duplicated).sum())},
    )
