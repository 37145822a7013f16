"""A record's values per resampling unit; confidence intervals of a set's headline metrics by the bootstrap.

A record's predictions are first reduced to one value per resampling unit and metric:

* a series: the unit is a test step, all series of the step together (fesp's 24
  hours of a day resample as one day); its values are the mean over its G points of
  the hit (coverage), the capped length (mean length) and the interval score;
* a set of sequences: the unit is a test sequence; its values are whether all H
  horizons are covered (joint coverage), the mean hit, capped length and interval
  score over its horizons, and the interval score at the per-horizon level alpha / H
  (the level of Bonferroni's per-horizon intervals, which the set methods aim at).
  Where the dataset groups its sequences (``cluster`` in the predictions: EEG's 64
  channels of a trial move together), the unit is a group, its values the sums over its
  sequences times (groups / sequences), so that their mean is the mean over sequences;
  a replicate of groups of unequal sizes is the ratio of its resampled sums to its
  resampled sizes (a share stays within [0, 1]).

A series' CIs are t intervals from its steps' values (:mod:`pibench.reports.series_ci`);
their dependence's reach is summarised by the stationary bootstrap's mean block length of
Politis & White (2004) with Patton, Politis & White's (2009) correction
(``arch.bootstrap.optimal_block_length``, :func:`block_length`). Test sequences are
exchangeable and resampled one by one, or by group (``IIDBootstrap``). Each replicate is
the mean of the resampled units, the CI the percentile interval at :data:`CI_LEVEL`.

Several seeds: a row's replicate resamples the seeds (with replacement) and then the
units, one draw of units for every drawn seed (:func:`seed_replicates`): the spread over
seeds and the uncertainty of the test data together. The seeds of a row share their test
sequences, the same data on a real dataset: units drawn apart per seed would average the
bootstrap's noise away, and seeds that predict alike would look as precise as that many
datasets (a 90% CI holding the truth 60% of the time for five alike seeds). Where each seed
splits the data into groups of unequal sizes its own way (``csv_sets`` draws its test groups
by the seed), group i of one seed is not group i of another: a replicate then averages the
drawn seeds' own replicates (pairing them by position divided one seed's sums by another's
sizes, and a joint coverage's CI reached 104%). Sequences, or groups of one size, split anew
by each seed (COVID's areas) pair as they are: in law the same.

Infinite bounds (ACI with alpha_t <= 0) are capped as in every table
(:func:`~pibench.reports.metrics.cap_bounds`), so lengths and scores, and their CIs,
stay finite. Bootstrap draws are seeded by the task's configuration (not its code version): the numbers
repeat exactly, and the same predictions give the same CIs under any pibench version.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from arch.bootstrap import IIDBootstrap, optimal_block_length

from pibench.reports.metrics import cap_bounds, interval_scores, tie_runs

#: Bootstrap replicates per record, and the level of every CI.
REPS = 1000
CI_LEVEL = 0.9

SERIES_METRICS = ("coverage", "mean_length", "winkler")
#: a set's ``bonferroni_winkler``: the interval score at the per-horizon level alpha / H that its intervals aim at
#: (Bonferroni's), the loss its comparisons rank by
SET_METRICS = ("joint_coverage", "coverage", "mean_length", "winkler", "bonferroni_winkler")


def unit_values(frame: pd.DataFrame, alpha: float, cap: tuple[float, float]) -> tuple[np.ndarray, bool]:
    """(values (n_units, k) in the order of :data:`SERIES_METRICS` or :data:`SET_METRICS`, whether the
    units are serially dependent) of a record's predictions (the runner's long table)."""
    series = "group" in frame.columns
    width = len(frame["group"].unique()) if series else int(frame["horizon"].max())
    y, lo, up = (frame[c].to_numpy(float).reshape(-1, width) for c in ("y", "lower", "upper"))
    hit = ((y >= lo) & (y <= up)).astype(float)
    capped_lo, capped_up = cap_bounds(lo, up, cap)
    columns = [hit.mean(axis=1), (capped_up - capped_lo).mean(axis=1),
               interval_scores(y, lo, up, alpha, cap).mean(axis=1)]
    if series:
        return np.column_stack(columns), series
    columns.insert(0, hit.min(axis=1))  # a sequence is jointly covered when every horizon is
    columns.append(interval_scores(y, lo, up, alpha / width, cap).mean(axis=1))
    return by_cluster(np.column_stack(columns), sequence_clusters(frame)), series


def sequence_clusters(frame: pd.DataFrame) -> np.ndarray | None:
    """(n_sequences,) the group of each test sequence of a set's predictions, numbered in order of first
    appearance; None where the dataset names none (every sequence its own unit)."""
    if "cluster" not in frame.columns:
        return None
    labels = frame["cluster"].to_numpy()[frame["horizon"].to_numpy() == 1]
    return pd.factorize(labels)[0]


def by_cluster(values: np.ndarray, clusters: np.ndarray | None) -> np.ndarray:
    """Per-sequence ``values`` (n, k) as per-group units (C, k): each group's sum times C / n, whose mean is the
    mean over sequences (module docstring); unchanged without groups."""
    if clusters is None:
        return values
    n_clusters = int(clusters.max()) + 1
    sums = np.zeros((n_clusters, values.shape[1]))
    np.add.at(sums, clusters, values)
    return sums * (n_clusters / len(values))


def block_length(values: np.ndarray) -> int:
    """The stationary bootstrap's mean block length for ``values`` (n, k): Politis-White's estimate, the
    largest over the columns that vary, in [1, n / 4]. A column varies if its values are not all equal but
    for rounding (:func:`~pibench.reports.metrics.tie_runs`: the oracle's lengths would give a block of noise)."""
    n = len(values)
    varying = [j for j in range(values.shape[1]) if len(tie_runs(np.sort(values[:, j]))) > 1]
    if n < 8 or not varying:
        return 1
    estimate = optimal_block_length(values[:, varying])["stationary"].to_numpy(float)
    estimate = estimate[np.isfinite(estimate)]
    best = math.ceil(float(estimate.max())) if len(estimate) else 1
    return int(min(max(best, 1), max(1, n // 4)))


def replicates(values: np.ndarray, seed: int, reps: int = REPS, sizes: np.ndarray | None = None) -> np.ndarray:
    """I.i.d. bootstrap replicates (reps, k) of the column means of exchangeable ``values``. ``sizes`` (n,), of
    groups of sequences scaled to mean 1 (:func:`group_sizes`): each replicate divided by its resampled sizes'
    mean (the ratio estimator)."""
    columns = values if sizes is None else np.column_stack([values, sizes])
    bootstrap = IIDBootstrap(columns, seed=np.random.default_rng(seed))
    draws = np.asarray(bootstrap.apply(lambda x: x.mean(axis=0), reps), dtype=float).reshape(reps, columns.shape[1])
    return draws if sizes is None else draws[:, :-1] / draws[:, -1:]


def group_sizes(clusters: np.ndarray) -> np.ndarray | None:
    """The sizes of a set's groups of sequences (the sequences column of its clusters), scaled to mean 1, or
    None where they are all equal (the plain mean is then the ratio)."""
    sizes = np.asarray(clusters, dtype=float)[:, 0]
    return None if np.ptp(sizes) == 0 else sizes / sizes.mean()


def seed_replicates(units: list[np.ndarray], draws: list[np.ndarray], seed: int,
                    sizes: np.ndarray | None = None, shared: bool = True) -> np.ndarray:
    """A set row's replicates (reps, k) from its seeds' units (each (n, k)) and own replicates (each (reps, k)):
    replicate b draws as many seeds as there are, with replacement, and one resample of the sequences (or
    groups, of ``sizes``) for all of them (module docstring). One seed: its own replicates. Seeds over other
    units (not ``shared``: each seed's own split): the b-th replicates of the drawn seeds, averaged."""
    if len(units) == 1:
        return draws[0]
    reps, n_seeds = len(draws[0]), len(units)
    rng = np.random.default_rng(seed)
    drawn = rng.integers(0, n_seeds, size=(reps, n_seeds))
    if not shared or len({u.shape for u in units}) > 1:
        return np.stack(draws)[drawn, np.arange(reps)[:, None]].mean(axis=1)
    stacked = np.stack(units)  # (S, n, k)
    n = stacked.shape[1]
    positions = np.arange(n)
    resample = IIDBootstrap(positions, seed=rng)
    weights = np.empty((reps, n))  # replicate b's share of each unit
    for b, (data, _) in enumerate(resample.bootstrap(reps)):
        weights[b] = np.bincount(data[0], minlength=n) / n
    share = np.zeros((reps, n_seeds))  # replicate b's share of each seed
    np.add.at(share, (np.arange(reps)[:, None], drawn), 1 / n_seeds)
    out = np.einsum("bs,bsk->bk", share, np.einsum("bn,snk->bsk", weights, stacked))
    return out if sizes is None else out / (weights @ sizes)[:, None]  # groups of unequal sizes: the ratio


def percentile_ci(draws: np.ndarray, level: float = CI_LEVEL) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) percentile bounds of each column of ``draws`` (reps, k) at ``level``."""
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(draws, [tail, 100 - tail], axis=0)
    return low, high
