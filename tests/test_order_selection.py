"""Order-selection read-outs against hand-computed values; the classical AR baseline on known processes."""

import numpy as np
import pytest

from pibench.data_loaders.synthetic import simulate_ar, simulate_expar
from pibench.methods.ar_order import select_ar_lags
from pibench.methods.pa.order_readout import estimated_order, hidden_links, selected_lags
from pibench.reports.order_selection import TRUE_LAGS, false_selection_rate, negative_selection_rate


def test_lags_order_and_links_from_masks():
    kept = np.zeros((4, 15), dtype=bool)
    kept[0, 0] = kept[2, 6] = kept[3, 1] = True  # columns 0, 1, 6 -> lags 1, 2, 7
    assert selected_lags(kept) == {1, 2, 7}
    assert estimated_order(selected_lags(kept)) == 7
    assert estimated_order(set()) == 0
    assert hidden_links(np.array([[0.0, 0.3], [-1.0, 0.0]])) == 2


def test_fsr_and_nsr_by_hand():
    truth = TRUE_LAGS["nlar"]  # {1, 2, 3, 7}
    selected = [{1, 2, 3, 7}, {1, 2, 7, 9, 12}, {1, 2, 3}]
    # false: 0 + 2 (9, 12) + 0 = 2 of 4 + 5 + 3 = 12 selected -> 1/6
    assert false_selection_rate(truth, selected) == pytest.approx(2 / 12)
    # missed: 0 + 1 (3) + 1 (7) = 2 of 3 datasets x 4 true lags -> 1/6
    assert negative_selection_rate(truth, selected) == pytest.approx(2 / 12)
    assert false_selection_rate(truth, [set(), set()]) == 0.0
    with pytest.raises(ValueError):
        negative_selection_rate(set(), selected)


def test_bic_recovers_a_known_ar2_and_expar_order_one():
    y = simulate_ar(5000, coefs=[0.5, -0.3], seed=1)
    assert select_ar_lags(y, maxlag=10, criterion="bic") == {1, 2}
    # EXPAR is order 1; its linearisation is an AR(1) too, with most of the dependence at lag 1
    assert 1 in select_ar_lags(simulate_expar(5000, seed=2), maxlag=10, criterion="bic")
    with pytest.raises(ValueError, match="criterion"):
        select_ar_lags(y, maxlag=3, criterion="hqic")


@pytest.fixture
def one_torch_thread():
    """Small recurrent nets run several times faster on one thread than on contended ones."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def test_pa_rnn_runs_offline_and_reports_its_selection(one_torch_thread):
    from pibench.benchmarks.protocols import run_series
    from pibench.data_loaders.synthetic import expar_problem
    from pibench.methods.catalog import get_method

    problem = expar_problem(n_train=500, n_test=300, n_lags=3, seed=0)
    method = get_method("pa_rnn")(hidden=8, seq_len=6, burn_in=2, iterations=300, T1=100, T2=150, T3=250,
                                  refine_iterations=50, lr=5e-3, s0_init=1e-5, s0_end=1e-6, lam=1e-6)
    out = run_series(problem, method, kind="offline")
    diag = method.diagnostics()
    assert set(diag) == {"selected_lags", "ar_order", "hidden_links", "msfe", "kept_weights", "candidate_lags"}
    assert diag["candidate_lags"] == 3
    lags = {int(j) for j in diag["selected_lags"].split(",") if j}
    assert lags <= {1, 2, 3} and diag["ar_order"] == max(lags, default=0)
    assert 0 <= diag["hidden_links"] <= 64
    # EXPAR noise is N(0, 1): a fitted model's errors are near 1, and its intervals cover
    assert 0.8 < np.mean((out.y - out.point) ** 2) < 1.5
    assert 0.8 <= np.mean((out.y >= out.lower) & (out.y <= out.upper)) <= 1.0


def test_selectable_truth_keeps_the_true_lags_inside_the_window():
    from pibench.reports.order_selection import selectable_truth

    assert selectable_truth(TRUE_LAGS["nlar"], 1) == {1}
    assert selectable_truth(TRUE_LAGS["nlar"], 5) == {1, 2, 3}
    assert selectable_truth(TRUE_LAGS["nlar"], 15) == {1, 2, 3, 7}
    assert (selectable_truth(TRUE_LAGS["nlar"], None) == selectable_truth(TRUE_LAGS["nlar"], float("nan"))
            == {1, 2, 3, 7})
    with pytest.raises(ValueError, match="max_lag"):
        selectable_truth({1}, 0)


def test_pa_rnn_started_inside_the_spike_prunes_the_recurrence_that_torch_scale_keeps(one_torch_thread):
    """EXPAR is order 1 and needs no memory. Same data, only the cell's initial scale differs:
    from PARNN's default (inside the spike's inclusion region at s0_init) the recurrence is
    pruned (a link or two may survive) and lag 1 survives; from torch's scale for the paper's
    1,000-unit net, many links and spurious lags survive.

    A trained selection is a draw: another CPU's rounding gives another SGHMC path from the same
    seed. Measured on this data over random_state 0-14, the default start selects lag 1 every time,
    lag 2 besides once, and keeps 0 links 12 times, 1 link 3 times (so the former exact
    "lags == '1' and links == 0" held for 12 of 15 draws); torch's start (random_state 0-16) keeps
    8-24 links and lag 2 (1-5 of its 50 input weights) every time. So: lag 1 in, at most one
    spurious lag and 2 links from the default start; at least 5 links from torch's, and a spurious
    lag in at least one of two of its fits (both would have to prune lag 2 entirely)."""
    from pibench.data_loaders.synthetic import expar_problem
    from pibench.methods.pa.rnn_method import PARNN

    problem = expar_problem(n_train=6000, n_test=10, n_lags=3, seed=1)
    data = problem.window(0, problem.test_start)
    settings = dict(hidden=50, seq_len=6, burn_in=2, iterations=4000, T1=300, T2=600, T3=3700,
                    refine_iterations=100, lr=1.5e-2, s1=0.05, s0_init=1e-5, s0_end=1e-6, lam=1e-6, tau=0.1)
    small = PARNN(random_state=1, **settings).fit(data).diagnostics()
    torch_scale = [PARNN(random_state=seed, **settings, init_bound=1000 ** -0.5).fit(data).diagnostics()
                   for seed in (1, 2)]  # the paper net's scale
    lags = {int(j) for j in small["selected_lags"].split(",") if j}
    assert 1 in lags and len(lags) <= 2 and small["hidden_links"] <= 2, small
    assert all(d["hidden_links"] >= 5 for d in torch_scale), torch_scale
    assert any(d["selected_lags"] != "1" for d in torch_scale), torch_scale
    assert small["msfe"] < 1.05  # lag 1 alone fits EXPAR (noise variance 1); measured 1.009-1.017


def test_ar_order_paper_suite_has_the_papers_settings():
    """The paper's appendix tables: NLAR at 1,000 units and 25,000 iterations, EXPAR's schedule."""
    from pibench.benchmarks.suite import build_tasks, load_suite
    from pibench.methods.pa.rnn_method import PARNN

    suite = load_suite("ar_order_paper")
    assert suite["device"] == "auto"
    tasks = [t for t in build_tasks(suite) if t.config["method"]["name"] == "pa_rnn"]
    assert len(tasks) == 8 * 5
    for task in tasks:
        label, p = task.config["dataset"]["label"], {**PARNN().get_params(), **task.config["method"]["params"]}
        common = {"hidden": 1000, "batch_size": 36, "s1": 0.05, "tau": 0.1}
        if label.startswith("nlar"):
            paper = {**common, "iterations": 25000, "T1": 5000, "T2": 10000, "T3": 25000, "s0_end": 1e-7, "lam": 1e-7,
                     "s0_init": 2e-6 if label == "nlar window=1" else 4e-6,
                     "lr": 4e-3 if label == "nlar window=1" else 1e-4}
        else:
            paper = {**common, "iterations": 2000, "T1": 500, "T2": 1000, "T3": 1500, "s0_init": 1e-5, "s0_end": 1e-6,
                     "lam": 1e-6}
        assert {k: p[k] for k in paper} == paper, label
