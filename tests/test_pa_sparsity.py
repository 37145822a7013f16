"""PA end to end: the prior prunes inputs known to be irrelevant, and the intervals cover.

Training a network is chaotic in its floating-point rounding: another CPU (other SIMD kernels,
another BLAS) gives another trajectory from the same seed, so a trained result is one draw
from a distribution, not a fixed number. These tests therefore assert what PA guarantees over
a few seeds, with margins measured over many seeds (numbers in the comments), and keep exact
checks only for what holds by construction.
"""

import numpy as np
import pytest
import torch

from pibench.benchmarks.protocols import run_series
from pibench.data_loaders.synthetic import ar_problem
from pibench.methods.catalog import get_method
from pibench.methods.pa.intervals import fit_asymptotic_normal
from pibench.methods.pa.networks import MLP
from pibench.methods.pa.trainer import PASettings, train_pa

Z_95 = 1.6449  # z_{0.05}: the 90% interval is mu +/- Z_95 sigma
SEEDS = (0, 1, 2)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def sparse_regression_fit(seed: int) -> dict:
    """10 inputs, only inputs 0 and 1 matter; 2,000 training and 2,000 test points; PA with a
    10-unit tanh MLP. Data, initialisation and training all follow ``seed``."""
    rng = np.random.default_rng(seed)
    n, m, p = 2000, 2000, 10
    X = rng.normal(size=(n + m, p))
    noise_sd = 0.5
    y = 2 * np.sin(X[:, 0]) + X[:, 1] - 0.25 * X[:, 1] ** 2 + noise_sd * rng.normal(size=n + m)
    torch.manual_seed(seed)
    model = MLP(p, hidden=10, activation="tanh")
    settings = PASettings(epochs=200, lr=5e-3, T1=100, T2=110, T3=170, refine_epochs=50)
    masks = train_pa(model, torch.tensor(X[:n], dtype=torch.float32), torch.tensor(y[:n], dtype=torch.float32),
                     settings, seed=seed)
    fitted = fit_asymptotic_normal(model, masks, torch.tensor(X[:n]), torch.tensor(y[:n]))
    _, lower, upper = fitted.predict(torch.tensor(X[n:]), 0.1)
    return {"model": model, "masks": masks, "kept_per_input": masks["hidden.weight"].sum(dim=0),
            "coverage": float(((y[n:] >= lower) & (y[n:] <= upper)).mean()),
            "mean_length": float(np.mean(upper - lower)), "oracle_length": 2 * Z_95 * noise_sd}


def test_irrelevant_inputs_are_pruned_and_coverage_is_nominal():
    fits = [sparse_regression_fit(s) for s in SEEDS]
    kept = torch.stack([f["kept_per_input"] for f in fits])  # (seed, input): kept hidden weights of 10
    coverage = np.array([f["coverage"] for f in fits])
    lengths = np.array([f["mean_length"] / f["oracle_length"] for f in fits])
    report = f"kept per input {kept.tolist()}, coverage {coverage.tolist()}, length / oracle {lengths.tolist()}"

    # Exact by construction: a pruned weight is set to 0 and the refining step never moves it.
    for f in fits:
        for name, p in f["model"].named_parameters():
            assert (p.detach()[~f["masks"][name]] == 0).all(), name

    # Selection. PA's guarantee is consistency: an irrelevant weight's posterior inclusion
    # probability tends to 0 as n grows. At finite n, after a finite SGHMC run, an irrelevant
    # weight sometimes ends just above the threshold, and which one does is decided by the
    # rounding of the run: seed 0 keeps none on an AMD EPYC; with MKL's AVX2 code path
    # (MKL_CBWR=AVX2) it keeps one weight of input 9, the failure a Xeon showed of the former
    # "every irrelevant weight pruned"; with ATen's scalar kernels one of input 4 and one of 9.
    # So bound the fraction, not each weight. Measured over seeds 0-19: 15 of the 1,600
    # irrelevant weights kept (0.9%; 0.75 of 80 per seed), at most 3 of 80 in one seed and 2 of
    # 10 for one input; inputs 0 and 1 keep at least 2 and 4 of their 10. Bounds: at most 5% of
    # the 240 irrelevant weights of 3 seeds (12, where ~2 are expected: Poisson tail ~1e-6),
    # and at most 8 of 80 in any one seed (over 10x the mean).
    assert (kept[:, :2] > 0).all(), report  # the relevant inputs always stay in the model
    irrelevant = kept[:, 2:]
    assert int(irrelevant.sum()) <= 0.05 * irrelevant.numel() * 10, report
    assert (irrelevant.sum(dim=1) <= 8).all(), report

    # Coverage of the 90% intervals on the 2,000 test points. Binomial standard error of one
    # seed's coverage: sqrt(0.9 * 0.1 / 2000) = 0.0067 (0.0039 for the mean of 3 seeds); the
    # fit adds a little (sigma2_hat from 2,000 points). PA's intervals are asymptotically
    # nominal; at this size, with a 10-unit net whose misfit is folded into sigma2_hat
    # (intervals ~1.1x the oracle's), they over-cover by about a point: over seeds 0-19,
    # coverage mean 0.909, sd 0.0081, range 0.894-0.926. Each seed within [0.87, 0.95] is
    # >= 4.8 sd of that spread (5.9 binomial SE) on either side; the mean of 3 within
    # [0.88, 0.93] is >= 4.4 sd of a 3-seed mean (0.0047) on either side.
    assert ((coverage >= 0.87) & (coverage <= 0.95)).all(), report
    assert 0.88 <= coverage.mean() <= 0.93, report
    # not shorter than the oracle 2 z sigma, nor needlessly long (seeds 0-19: 1.07-1.17x the oracle)
    assert ((lengths >= 0.98) & (lengths <= 1.3)).all(), report


def test_pa_method_offline_on_ar1():
    """PA through the method interface on a linear AR(1) with N(0, 1) noise, over 3 seeds."""
    coverage, lengths = [], []
    for seed in SEEDS:
        problem = ar_problem(n_train=1000, n_test=2000, phi=(0.6,), seed=seed)
        method = get_method("pa")(hidden=20, epochs=60, T1=30, T2=35, T3=50, refine_epochs=20, lr=1e-2,
                                  random_state=seed)
        out = run_series(problem, method, kind="offline")
        coverage.append(((out.y >= out.lower) & (out.y <= out.upper)).mean())
        lengths.append(np.mean(out.upper - out.lower) / (2 * Z_95))  # the oracle length is 2 z_0.05 sigma, sigma 1
        assert method.diagnostics()["mean_kept_weights"] > 0
    coverage, lengths = np.array(coverage), np.array(lengths)
    report = f"coverage {coverage.tolist()}, length / oracle {lengths.tolist()}"
    # One seed's coverage varies by the binomial SE of 2,000 points, 0.0067, and by sigma2_hat
    # estimated from 1,000 points: d coverage / d log sigma = 2 z phi(z) = 0.34 times
    # sd(log sigma_hat) = 1 / sqrt(2 * 1000), another 0.0076; together 0.0101. Measured over
    # seeds 0-27: mean 0.898, sd 0.0101, range 0.881-0.922 (seed 0 alone: 0.885, 0.5 sd inside
    # the former one-seed bound of +/- 0.02, itself 2 sd). Bounds: each seed within 0.045 of 0.90
    # (>= 4.2 sd from the measured mean), the mean of 3 within 0.025 (>= 3.9 sd of a 3-seed
    # mean, 0.0058; 6.5 binomial SE of 6,000 points).
    assert (np.abs(coverage - 0.90) <= 0.045).all(), report
    assert abs(coverage.mean() - 0.90) <= 0.025, report
    # near the oracle length: seeds 0-27 give 0.967-1.059x the oracle (mean 1.003, sd 0.0225);
    # within 10% is >= 4.3 sd either side
    assert (np.abs(lengths - 1.0) <= 0.10).all(), report
