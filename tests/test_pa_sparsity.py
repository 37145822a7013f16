"""PA end to end: the prior prunes inputs known to be irrelevant, and the intervals cover."""

import numpy as np
import torch

from benchmarks.protocols import run_series
from data_loaders.synthetic import ar_problem
from methods.catalog import get_method
from methods.pa.intervals import fit_asymptotic_normal
from methods.pa.networks import MLP
from methods.pa.trainer import PASettings, train_pa


def test_irrelevant_inputs_are_pruned_and_coverage_is_nominal():
    rng = np.random.default_rng(0)
    n, m, p = 2000, 2000, 10
    X = rng.normal(size=(n + m, p))
    noise_sd = 0.5
    # only inputs 0 and 1 matter
    y = 2 * np.sin(X[:, 0]) + X[:, 1] - 0.25 * X[:, 1] ** 2 + noise_sd * rng.normal(size=n + m)
    torch.manual_seed(0)
    model = MLP(p, hidden=10, activation="tanh")
    settings = PASettings(epochs=200, lr=5e-3, T1=100, T2=110, T3=170, refine_epochs=50)
    masks = train_pa(model, torch.tensor(X[:n], dtype=torch.float32), torch.tensor(y[:n], dtype=torch.float32),
                     settings, seed=0)
    kept_per_input = masks["hidden.weight"].sum(dim=0)
    assert (kept_per_input[2:] == 0).all() and (kept_per_input[:2] > 0).all()
    assert (model.hidden.weight[:, 2:] == 0).all()  # pruned weights stay exactly zero through refining
    fitted = fit_asymptotic_normal(model, masks, torch.tensor(X[:n]), torch.tensor(y[:n]))
    _, lower, upper = fitted.predict(torch.tensor(X[n:]), 0.1)
    coverage = ((y[n:] >= lower) & (y[n:] <= upper)).mean()
    assert abs(coverage - 0.90) <= 0.02
    assert np.mean(upper - lower) >= 2 * 1.6449 * noise_sd * 0.98  # not shorter than the oracle


def test_pa_method_offline_on_ar1():
    problem = ar_problem(n_train=1000, n_test=2000, phi=(0.6,), seed=0)
    method = get_method("pa")(hidden=20, epochs=60, T1=30, T2=35, T3=50, refine_epochs=20, lr=1e-2)
    out = run_series(problem, method, kind="offline")
    coverage = ((out.y >= out.lower) & (out.y <= out.upper)).mean()
    assert abs(coverage - 0.90) <= 0.02
    assert np.mean(out.upper - out.lower) < 3.29 * 1.1  # near the oracle length 2 z_0.05 sigma
    assert method.diagnostics()["mean_kept_weights"] > 0
