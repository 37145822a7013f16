"""Is the difference real? Uncertainty and comparisons of stored results, from their predictions only.

Per record (cached beside the store, checked like every cache): the values of its headline
metrics per resampling unit, for a set of sequences their bootstrap replicates
(:mod:`pibench.reports.bootstrap_ci`), and the clusters of the interval-forecast tests
(:mod:`pibench.reports.interval_tests`). Per table row (suite, dataset, alpha, method,
setting) over its seeds: CIs of coverage, mean length and interval score (a series'
fixed-smoothing t intervals, :mod:`pibench.reports.series_ci`; a set's seeds resampled, then
its sequences), the tests on the counts
pooled over seeds (a time step's or sequence's seeds one cluster), and membership of
the Model Confidence Set of its dataset. Per dataset: each
row's Diebold-Mariano comparison with a reference row (:mod:`pibench.reports.comparisons`).
The oracle is never the reference and never in an MCS: it is the truth, not a method.
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from statsmodels.stats.multitest import multipletests

from pibench.data_loaders.fingerprint import seeded_dataset
from pibench.data_loaders.validation import did_you_mean
from pibench.reports.bootstrap_ci import (
    CI_LEVEL,
    REPS,
    SERIES_METRICS,
    SET_METRICS,
    block_length,
    group_sizes,
    percentile_ci,
    replicates,
    seed_replicates,
    sequence_clusters,
    unit_values,
)
from pibench.reports.comparisons import MIN_UNITS, diebold_mariano, mcs_p_values
from pibench.reports.interval_tests import clustered_coverage_tests, clustered_joint_coverage_test, step_clusters
from pibench.reports.metrics import ORACLE, ROUNDING
from pibench.reports.selection import configuration_change
from pibench.reports.series_ci import series_ci

#: Part of every cache entry's name: a change of what is computed here makes old entries unused.
STATS_VERSION = 10
ROW_KEYS = ["suite", "dataset", "alpha", "method", "setting"]
GROUP_KEYS = ["suite", "dataset", "alpha"]
#: What the summary calls each bootstrapped metric: a set's headline coverage is its joint coverage.
SUMMARY_NAMES = {"series": dict(zip(SERIES_METRICS, SERIES_METRICS)),
                 "set": {"joint_coverage": "coverage", "coverage": "marginal_coverage", "mean_length": "mean_length",
                         "winkler": "winkler", "bonferroni_winkler": "bonferroni_winkler"}}
#: Losses :func:`compare` can rank rows by (the interval score is the proper one).
LOSSES = {"winkler": "winkler", "interval_score": "winkler", "mean_length": "mean_length"}


@dataclass(frozen=True)
class RecordStatistics:
    """What one record contributes: its units' values (n, k), their replicates (a set's (REPS, k); a series'
    none, (0, k)), the block length, the clusters of its tests (series:
    :func:`~pibench.reports.interval_tests.step_clusters`; sets: per test sequence, or group of sequences where
    the dataset names them, (sequences, jointly covered)), and a series' misses (n, G) (a set's (0, 0))."""

    task_id: str
    kind: str  # "series" or "set"
    units: np.ndarray
    draws: np.ndarray
    block: int
    clusters: np.ndarray
    misses: np.ndarray

    @property
    def metrics(self) -> tuple[str, ...]:
        return SERIES_METRICS if self.kind == "series" else SET_METRICS

    def column(self, metric: str) -> np.ndarray:
        return self.units[:, self.metrics.index(metric)]

    def loss(self, metric: str) -> np.ndarray:
        """Per unit loss ``metric``; a set's interval score at the per-horizon level alpha / H."""
        return self.column("bonferroni_winkler" if metric == "winkler" and self.kind == "set" else metric)


def _seed_of(key: str) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)


def _seed_key(key: tuple, members: list[tuple[dict, RecordStatistics]]) -> tuple:
    """A row's key as the bootstrap's seeds see it: a file dataset by its name, not the path it was reached
    through (:func:`~pibench.data_loaders.fingerprint.seeded_dataset`), as the tasks' own seeds."""
    dataset = seeded_dataset(members[0][0]["config"].get("dataset", {}))
    return (key[0], dataset.get("label", key[1]), *key[2:])


def _arrays_sha256(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode() + a.dtype.str.encode() + str(a.shape).encode() + a.tobytes())
    return h.hexdigest()


def _compute(record: dict, frame: pd.DataFrame) -> RecordStatistics:
    units, dependent = unit_values(frame, float(record["alpha"]), tuple(record["length_cap"]))
    if dependent:
        width = len(frame["group"].unique())
        misses = ~((frame["y"] >= frame["lower"]) & (frame["y"] <= frame["upper"])).to_numpy().reshape(-1, width)
        clusters = step_clusters(misses)
    else:  # per group of sequences (each sequence its own without): its sequences and those jointly covered
        y, lo, up = (frame[c].to_numpy(float).reshape(-1, int(frame["horizon"].max())) for c in ("y", "lower", "upper"))
        joint = ((y >= lo) & (y <= up)).all(axis=1)
        groups = sequence_clusters(frame)
        groups = np.arange(len(joint)) if groups is None else groups
        clusters = np.column_stack([np.bincount(groups), np.bincount(groups, weights=joint)]).astype(np.int64)
        misses = np.zeros((0, 0), dtype=bool)
    if dependent:  # its CIs are t intervals from the units (pibench.reports.series_ci)
        draws, block = np.empty((0, units.shape[1])), block_length(units)
    else:  # seeded by what the task is (its config), not by the code that ran it: the same predictions give the
        # same CIs after any change of pibench that leaves them alone
        seeded_config = dict(record["config"])
        if "dataset" in seeded_config:
            seeded_config["dataset"] = seeded_dataset(seeded_config["dataset"])
        draws, block = replicates(units, _seed_of(json.dumps(seeded_config, sort_keys=True)),
                                  sizes=group_sizes(clusters)), 1  # exchangeable sequences: blocks of one
    return RecordStatistics(record["task_id"], "series" if dependent else "set", units, draws, block, clusters,
                            misses)


def _cache_path(cache_dir: Path, task_id: str) -> Path:
    return cache_dir / f"{task_id}.v{STATS_VERSION}.r{REPS}.npz"


def _load_cached(path: Path, record: dict) -> RecordStatistics | None:
    """The cached statistics of ``record`` if ``path`` holds them for its very predictions, else None."""
    try:
        if not path.is_file():
            return None
        with np.load(path, allow_pickle=False) as z:
            meta = json.loads(str(z["meta"]))
            arrays = {name: z[name] for name in ("units", "draws", "clusters", "misses")}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # a torn or empty file: computed again
        return None
    if meta.get("predictions_sha256") != record.get("predictions_sha256") or meta.get("sha256") != _arrays_sha256(
            arrays):
        return None
    stats = RecordStatistics(record["task_id"], meta["kind"], arrays["units"], arrays["draws"], int(meta["block"]),
                             arrays["clusters"], arrays["misses"])
    return stats if stats.units.shape[1] == stats.draws.shape[1] == len(stats.metrics) else None


def _store(path: Path, record: dict, stats: RecordStatistics) -> None:
    arrays = {"units": stats.units, "draws": stats.draws, "clusters": stats.clusters, "misses": stats.misses}
    meta = {"predictions_sha256": record.get("predictions_sha256"), "kind": stats.kind, "block": stats.block,
            "sha256": _arrays_sha256(arrays)}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            np.savez(fh, meta=np.array(json.dumps(meta)), **arrays)  # type: ignore[arg-type]  # (numpy's stub)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only store still gets its statistics, computed each time


def record_statistics(record: dict, read_predictions: Callable[[str], pd.DataFrame],
                      cache_dir: Path | None = None) -> RecordStatistics | None:
    """The statistics of a finished record (None for a failed one), from the cache in ``cache_dir`` when it
    holds them for the record's predictions (their sha256), else computed and cached."""
    if record.get("status") != "ok" or "length_cap" not in record or "alpha" not in record:
        return None  # a failed task, or a record too old to carry the cap its lengths were measured with
    path = _cache_path(cache_dir, record["task_id"]) if cache_dir is not None else None
    cached = _load_cached(path, record) if path is not None else None
    if cached is not None:
        return cached
    stats = _compute(record, read_predictions(record["task_id"]))
    if path is not None:
        _store(path, record, stats)
    return stats


# -- per task: the columns of summary.csv -----------------------------------------------------------------------

def _exact_where_every_unit_agrees(metrics: Iterable[str], low: np.ndarray, high: np.ndarray, units: int,
                                   level: float = CI_LEVEL) -> None:
    """A coverage whose every unit is covered (or none is) has a t or bootstrap CI of zero width, [100, 100]
    however few the units: in place, Clopper & Pearson's exact bounds for ``units`` trials take its place,
    [((1 - level) / 2)^(1 / n), 1] (for none covered, [0, 1 - that]). Both bounds at 1 or 0 to rounding count
    (the ratio estimate of units of unequal sizes is 1 +- 1 ulp); every coverage CI is cut to [0, 1]."""
    bound = ((1 - level) / 2) ** (1 / max(units, 1))
    for j, metric in enumerate(metrics):
        if metric not in ("coverage", "joint_coverage"):
            continue
        low[j], high[j] = min(max(low[j], 0.0), 1.0), min(max(high[j], 0.0), 1.0)
        if high[j] - low[j] <= ROUNDING and (low[j] >= 1 - ROUNDING or high[j] <= ROUNDING):
            low[j], high[j] = (bound, 1.0) if low[j] >= 1 - ROUNDING else (0.0, 1.0 - bound)


def _ci_columns(stats_kind: str, metrics: Iterable[str], low: np.ndarray, high: np.ndarray) -> dict[str, float]:
    names = SUMMARY_NAMES[stats_kind]
    out = {}
    for metric, lo, hi in zip(metrics, low, high):
        out[f"{names[metric]}_ci_low"], out[f"{names[metric]}_ci_high"] = float(lo), float(hi)
    return out


def _test_columns(kind: str, clusters: np.ndarray, alpha: float, misses: np.ndarray | None = None
                  ) -> dict[str, float]:
    """The p-values of a record's or row's tests, and the design effect of its misses (1: no clustering); a
    series' ``misses`` (n, C) side by side permute their steps for the independence test."""
    if kind == "series":
        tests = clustered_coverage_tests(clusters, alpha, misses)
        return {"p_uc": tests.p_uc, "p_ind": tests.p_ind, "p_cc": tests.p_cc, "design_effect": tests.design_effect}
    p, deff = clustered_joint_coverage_test(clusters[:, 1], clusters[:, 0], alpha)
    return {"p_joint": p, "design_effect": deff}


def row_misses(members: list[RecordStatistics]) -> np.ndarray | None:
    """A series row's misses: its seeds' side by side (n, G x seeds); None for seeds over other steps (never in
    a row of one dataset: their tests fall back on the design effect) or a set."""
    arrays = [s.misses for s in members]
    return np.hstack(arrays) if len({a.shape[0] for a in arrays}) == 1 and arrays[0].size else None


def row_clusters(members: list[RecordStatistics], shared: bool = True) -> np.ndarray:
    """A row's clusters: its seeds' summed step by step (sequence by sequence), the seeds of one step one
    cluster; seeds over other units (not ``shared``: a set split by each seed its own way) side by side."""
    arrays = [s.clusters for s in members]
    if shared and len({a.shape for a in arrays}) == 1:
        return np.sum(arrays, axis=0)
    return np.concatenate(arrays)


def task_columns(record: dict, stats: RecordStatistics) -> dict[str, float]:
    """The summary columns of one task: CIs of its own, its tests, its block length."""
    low, high = series_ci([stats.units]) if stats.kind == "series" else percentile_ci(stats.draws)
    _exact_where_every_unit_agrees(stats.metrics, low, high, len(stats.clusters))
    # a set's interval score at the per-horizon level alpha / H: the loss its comparisons and MCS rank by
    compared = {"bonferroni_winkler": float(stats.column("bonferroni_winkler").mean())} if stats.kind == "set" else {}
    return {**_ci_columns(stats.kind, stats.metrics, low, high), **compared,
            **_test_columns(stats.kind, stats.clusters, float(record["alpha"]), stats.misses),
            "block_length": stats.block}


# -- per row and per dataset ---------------------------------------------------------------------------------------

def _row_key(record: dict) -> tuple:
    return tuple(record[k] for k in ROW_KEYS)


def _row_losses(members: list[tuple[dict, RecordStatistics]], seeds: list, metric: str) -> np.ndarray | None:
    """A row's per-unit loss averaged over ``seeds`` (None if a seed is missing or the units differ)."""
    by_seed = {r["seed"]: s for r, s in members}
    if any(seed not in by_seed for seed in seeds):
        return None
    columns = [by_seed[seed].loss(metric) for seed in seeds]
    if len({len(c) for c in columns}) != 1:
        return None
    return np.mean(columns, axis=0)


@dataclass
class GroupComparison:
    """The comparison of the rows of one (suite, dataset, alpha): per row, its mean loss, the Diebold-Mariano
    comparison with the reference row and MCS membership; ``apart``: the rows compared with none (they ran on
    other data than the rows compared, or over another test span), each with why."""

    reference: tuple | None
    table: pd.DataFrame
    apart: dict[tuple, str] = field(default_factory=dict)


def _prints(members: list[tuple[dict, RecordStatistics]]) -> dict[int, str]:
    """seed -> the fingerprint of the data a row's seed ran on."""
    return {r["seed"]: json.dumps(r.get("data_fingerprint"), sort_keys=True, default=str) for r, _ in members}


def _agree(a: dict, b: dict) -> bool:
    """Whether two rows' :func:`_prints` share a seed and agree on every seed they share."""
    shared = set(a) & set(b)
    return bool(shared) and all(a[seed] == b[seed] for seed in shared)


def _compared_data(rows: dict[tuple, list[tuple[dict, RecordStatistics]]]) -> dict[int, str]:
    """seed -> the data the comparison of a dataset's rows is on: those of the row (the oracle aside) that the most
    other rows agree with (:func:`_agree`; ties: the first row in sorted order, whatever order the store lists
    them in), and for seeds it lacks, the most common among the rows that agree with it. A dataset label's full
    suite and its --quick variant, say, generate other series, which no comparison may pair step by step."""
    prints = {key: _prints(members) for key, members in rows.items()}
    voters = sorted((key for key in rows if key[3] != ORACLE), key=lambda k: tuple(map(str, k))) or \
        sorted(rows, key=lambda k: tuple(map(str, k)))
    pick = max(voters, key=lambda k: sum(_agree(prints[k], prints[o]) for o in voters if o != k))  # the first of ties
    data = dict(prints[pick])
    votes: dict[int, list[str]] = {}
    for key in voters:
        if _agree(prints[pick], prints[key]):
            for seed, fingerprint in prints[key].items():
                votes.setdefault(seed, []).append(fingerprint)
    for seed, seen in votes.items():
        data.setdefault(seed, max(sorted(set(seen)), key=seen.count))
    return data


def _apart_reason(record: dict, compared: dict) -> str:
    """Why a row on other data than the compared rows (``compared``: one of their records) is left apart."""
    part = {k: record["config"].get(k) for k in ("dataset", "protocol")}
    differ = configuration_change(part, {k: compared["config"].get(k) for k in ("dataset", "protocol")},
                                  "the compared rows'")
    return (f"ran on other data than the rows compared ({differ or 'the same configuration, other data files'})")


def _most_common(counts: list[int]) -> int:
    """The value most often in ``counts`` (ties: the largest)."""
    return max(set(counts), key=lambda value: (counts.count(value), value))


def _compared_rows(rows: dict[tuple, list[tuple[dict, RecordStatistics]]], column: str
                   ) -> tuple[list, dict[tuple, np.ndarray], dict[tuple, str]]:
    """(the seeds compared; per row compared, its loss per unit averaged over them; the rows left apart, each with
    why). In turn: rows whose seeds ran on other data than :func:`_compared_data` are apart; then rows whose test
    spans (units per seed) differ from the most rows' (oracle aside; ties: the longer); then the seeds are those
    every remaining row has, of the one number of units most of them have (seeds that split a set of sequences
    into test parts of other sizes cannot be averaged unit by unit)."""
    data = _compared_data(rows)
    on_data = {key: members for key, members in rows.items()
               if all(data.get(seed, fp) == fp for seed, fp in _prints(members).items())}
    apart: dict[tuple, str] = {}
    for key in (k for k in rows if k not in on_data):
        seed = next(s for s, fp in _prints(rows[key]).items() if data.get(s, fp) != fp)
        example = next((r for members in on_data.values() for r, _ in members if r["seed"] == seed),
                       next((r for members in on_data.values() for r, _ in members), rows[key][0][0]))
        apart[key] = _apart_reason(rows[key][0][0], example)
    units: dict[int, list[int]] = {}
    for key, members in on_data.items():
        if key[3] != ORACLE or all(k[3] == ORACLE for k in on_data):
            for r, stats in members:
                units.setdefault(r["seed"], []).append(len(stats.loss(column)))
    span = {seed: _most_common(n) for seed, n in units.items()}
    compared = {}
    for key, members in on_data.items():
        # (a seed only the oracle has is no seed of the comparison: nothing to differ from)
        other = [(r["seed"], len(s.loss(column))) for r, s in members
                 if r["seed"] in span and len(s.loss(column)) != span[r["seed"]]]
        if other:
            apart[key] = f"its test span has {other[0][1]} units (seed {other[0][0]}), the rows compared " \
                         f"{span[other[0][0]]}"
        else:
            compared[key] = members
    # the seeds every method has: an oracle on fewer seeds does not narrow the methods' comparison
    methods = [members for key, members in compared.items() if key[3] != ORACLE] or list(compared.values())
    shared = set.intersection(*(set(r["seed"] for r, _ in members) for members in methods)) if methods else set()
    size = _most_common([span[seed] for seed in shared]) if shared else None
    seeds = sorted(seed for seed in shared if span[seed] == size)
    losses: dict[tuple, np.ndarray] = {}
    for key, members in compared.items():
        loss = _row_losses(members, seeds, column) if seeds else None
        if loss is not None:
            losses[key] = loss
        elif seeds and key[3] == ORACLE:
            missing = sorted(set(seeds) - {r["seed"] for r, _ in members})
            apart[key] = f"it lacks seed(s) {', '.join(map(str, missing))} of the rows compared (run it on them too)"
    return seeds, losses, apart


def compare_group(rows: dict[tuple, list[tuple[dict, RecordStatistics]]], metric: str = "winkler",
                  reference: str | None = None) -> GroupComparison:
    """DM of every row against ``reference`` (a method name, or "method setting"; default: the row with
    the lowest mean loss) and the MCS at :data:`~pibench.reports.comparisons.MCS_LEVEL`, on the seeds every row
    compared has (``compared_seeds``); ``mean_loss`` is a row's mean over all its ``seeds``. Rows on other data
    than the most rows, or over another test span, are compared with none (``apart``). The oracle is
    compared but is neither the reference nor in the MCS."""
    column = LOSSES[metric]
    seeds, losses, apart = _compared_rows(rows, column)
    # in the rows' own order (the store's order follows task ids, which change with the code): the MCS's simulated
    # law is drawn per column, so identical predictions give the identical set
    candidates = sorted((key for key in losses if key[3] != ORACLE), key=lambda key: tuple(map(str, key)))
    ref = _reference(candidates, losses, reference)
    kinds = {members[0][1].kind for members in rows.values()}
    dependent = kinds == {"series"}
    mcs: dict[tuple, tuple[bool, float]] = {}  # (in the MCS, its MCS p-value)
    units = len(next(iter(losses.values()))) if losses else 0  # test steps, sequences or groups
    if len(candidates) > 1 and units >= MIN_UNITS:  # no MCS on one or two units
        matrix = np.column_stack([losses[key] for key in candidates])
        group_seed = _seed_of(json.dumps(sorted(str(_seed_key(k, rows[k])) for k in candidates)))
        kept, p_values = mcs_p_values(matrix, group_seed, dependent)
        mcs = dict(zip(candidates, zip(kept.tolist(), p_values.tolist())))
    elif len(candidates) == 1 and units >= MIN_UNITS:  # a set of one; on too few units none, as for several
        mcs = {candidates[0]: (True, 1.0)}
    out = []
    for key, members in rows.items():
        row = dict(zip(ROW_KEYS, key))
        row["mean_loss"] = float(np.mean([s.loss(column).mean() for _, s in members]))
        row["seeds"] = len(members)
        row["in_mcs"], row["mcs_p"] = mcs.get(key, (None, float("nan")))
        if ref is not None and key in losses and key != ref:
            dm = diebold_mariano(losses[key], losses[ref], dependent)
            row.update(difference=dm.mean_difference, difference_ci_low=dm.ci_low, difference_ci_high=dm.ci_high,
                       dm_statistic=dm.statistic, dm_p=dm.p_value)
        out.append(row)
    table = pd.DataFrame(out)
    if "dm_p" in table:
        table["dm_p_holm"] = holm(table["dm_p"].to_numpy(dtype=float))
    table["kind"] = "series" if dependent else "set"
    table["compared_seeds"] = [tuple(seeds)] * len(table)  # what the differences, DM and the MCS rest on
    table["units"] = units
    table["not_compared"] = [apart.get(tuple(r[k] for k in ROW_KEYS), "") for r in out]  # why, for a row apart
    if ref is not None:  # the reference first, then the rows by their mean loss
        table = table.assign(_ref=[tuple(r[k] for k in ROW_KEYS) != ref for r in out]).sort_values(
            ["_ref", "mean_loss"], kind="stable").drop(columns="_ref").reset_index(drop=True)
    if ref is not None:
        table["reference"] = " ".join(str(x) for x in ref[3:])
    return GroupComparison(ref, table, apart)


def holm(p_values: np.ndarray) -> np.ndarray:
    """Holm's (1979) step-down adjustment of the p-values (statsmodels' ``multipletests``; NaN: no test, left out
    and kept NaN): the i-th smallest of m times m - i + 1, made non-decreasing and at most 1. A group's DM tests
    share a reference chosen as the lowest mean on the same data: unadjusted, rows of equal expected loss were
    starred at 5% in 20% of tables of 4 rows and 77% of 16 (i.i.d. losses, 365 units); adjusted, 7% and 12%. The
    MCS is the verdict that weighs the choice of the best."""
    adjusted = np.asarray(p_values, dtype=float).copy()
    tested = ~np.isnan(adjusted)
    if tested.any():
        adjusted[tested] = multipletests(adjusted[tested], method="holm")[1]
    return adjusted


def paired_seeds(table: pd.DataFrame) -> str | None:
    """"seeds 0, 1" when some row of a :func:`compare_group` table has seeds another lacks (its differences pair
    the rows on the seeds they share, its scores are each row's mean over all its own), else None."""
    compared = [str(seed) for seed in table["compared_seeds"].iloc[0]]
    if not (table.loc[table["not_compared"] == "", "seeds"] != len(compared)).any():
        return None
    return f"seed{'s' * (len(compared) > 1)} {', '.join(compared)}"


def _reference(candidates: list[tuple], losses: dict[tuple, np.ndarray], wanted: str | None) -> tuple | None:
    if not candidates:
        return None
    if wanted is None:
        return min(candidates, key=lambda k: float(losses[k].mean()))
    named = [k for k in candidates if wanted in (k[3], f"{k[3]} {k[4]}")]
    if not named:
        return None
    return min(named, key=lambda k: float(losses[k].mean()))  # a method's best setting


@dataclass
class Statistics:
    """Everything this module derives for a set of records (see the module docstring)."""

    tasks: pd.DataFrame   # one row per task_id: CIs of its own, tests, block length, in_mcs, mcs_p
    rows: pd.DataFrame    # one row per (suite, dataset, alpha, method, setting): CIs over seeds, pooled tests, MCS
    groups: dict[tuple, GroupComparison]


def _grouped(records: list[dict], read_predictions: Callable[[str], pd.DataFrame], cache_dir: Path | None
             ) -> tuple[list[tuple[dict, RecordStatistics]], dict[tuple, dict[tuple, list]]]:
    """(every finished record with its statistics, the same by dataset group and row, seeds in order)."""
    pairs = [(r, record_statistics(r, read_predictions, cache_dir)) for r in records if r.get("status") == "ok"]
    kept = [(r, s) for r, s in pairs if s is not None]
    by_group: dict[tuple, dict[tuple, list]] = {}
    for record, stats in sorted(kept, key=lambda p: p[0]["seed"]):
        key = _row_key(record)
        by_group.setdefault(key[:3], {}).setdefault(key, []).append((record, stats))
    return kept, by_group


def compute_statistics(records: list[dict], read_predictions: Callable[[str], pd.DataFrame],
                       cache_dir: Path | None = None) -> Statistics:
    """The statistics of every finished record, row and dataset of ``records``."""
    pairs, by_group = _grouped(records, read_predictions, cache_dir)
    tasks = pd.DataFrame([{"task_id": r["task_id"], **task_columns(r, s)} for r, s in pairs])
    groups = {group: compare_group(rows) for group, rows in by_group.items()}
    mcs = {tuple(row[k] for k in ROW_KEYS): {"in_mcs": row["in_mcs"], "mcs_p": row["mcs_p"]}
           for g in groups.values() for row in g.table.to_dict("records")}
    unknown = {"in_mcs": None, "mcs_p": float("nan")}
    rows = pd.DataFrame([_row_columns(key, members, mcs.get(key, unknown)) for group in by_group.values()
                         for key, members in group.items()])
    if len(tasks):
        for column in unknown:
            tasks[column] = [mcs.get(_row_key(r), unknown)[column] for r, _ in pairs]
    return Statistics(tasks, rows, groups)


def _row_columns(key: tuple, members: list[tuple[dict, RecordStatistics]], mcs: dict) -> dict:
    kind, stats = members[0][1].kind, [s for _, s in members]
    seed = _seed_of(json.dumps([str(k) for k in _seed_key(key, members)]))
    # seeds of a generated series each draw their own data; those of a set may each split it their own way
    shared = len({json.dumps(r.get("data_fingerprint"), default=str) for r, _ in members}) == 1
    # a set split by each seed into groups of unequal sizes: its seeds' units cannot be paired by position
    # (sequences, or groups of one size, may: in law the same; COVID's seeds split its areas anew)
    paired = shared or kind == "series" or all(group_sizes(s.clusters) is None for s in stats)
    clusters = row_clusters(stats, paired)
    units = len(clusters)  # the seeds' shared steps (sequences, groups) once
    if kind == "series":
        low, high = series_ci([s.units for s in stats], shared=shared)
        units = units if shared else sum(len(s.clusters) for s in stats)
    else:
        low, high = percentile_ci(seed_replicates([s.units for s in stats], [s.draws for s in stats], seed,
                                                  group_sizes(stats[0].clusters), shared=paired))
    _exact_where_every_unit_agrees(stats[0].metrics, low, high, units)
    return {**dict(zip(ROW_KEYS, key)), "seeds": len(members), **_ci_columns(kind, stats[0].metrics, low, high),
            **_test_columns(kind, clusters, float(key[2]), row_misses(stats)), **mcs}


def compare(records: list[dict], read_predictions: Callable[[str], pd.DataFrame], reference: str | None = None,
            metric: str = "winkler", cache_dir: Path | None = None) -> pd.DataFrame:
    """Per row of every dataset: its mean loss, the Diebold-Mariano comparison with ``reference`` (mean
    difference, its CI at :data:`~pibench.reports.bootstrap_ci.CI_LEVEL`, DM*, p-value) and MCS membership
    on ``metric``. ValueError for an unknown metric, or a reference that is a row of no dataset."""
    if metric not in LOSSES:
        raise ValueError(f"metric={metric!r}: compare on one of {', '.join(LOSSES)} (the interval score, "
                         "'winkler', is the proper one).")
    _, by_group = _grouped(records, read_predictions, cache_dir)
    frames = []
    for _, rows in sorted(by_group.items(), key=lambda kv: (str(kv[0][0]), str(kv[0][1]), float(kv[0][2]))):
        group = compare_group(rows, metric, reference)
        if group.reference is not None:
            frames.append(group.table)
    if reference is not None and not frames:
        names = sorted({r["method"] for r in records} - {ORACLE})
        if reference.split()[0] == ORACLE:
            raise ValueError(f"reference={reference!r}: the oracle (the true interval) is never the reference; give a "
                             f"method name or 'method setting' of {names}.")
        settings = sorted({f"{r['method']} {r['setting']}" for r in records if r["method"] != ORACLE})
        raise ValueError(f"reference={reference!r} is a row of no dataset here: give a method name or "
                         f"'method setting' of {names}.{did_you_mean(reference, names + settings)}")
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
