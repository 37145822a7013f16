"""Order-selection read-outs against hand-computed values; the classical AR baseline on known processes."""

import numpy as np
import pytest

from data_loaders.synthetic import simulate_ar, simulate_expar
from methods.ar_order import select_ar_lags
from reports.order_selection import (
    TRUE_LAGS,
    estimated_order,
    false_selection_rate,
    hidden_links,
    negative_selection_rate,
    selected_lags,
)


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


def test_pa_rnn_runs_offline_and_reports_its_selection():
    from benchmarks.protocols import run_series
    from data_loaders.synthetic import expar_problem
    from methods.base import get_method

    problem = expar_problem(n_train=500, n_test=300, n_lags=3, seed=0)
    method = get_method("pa_rnn")(hidden=8, seq_len=6, burn_in=2, iterations=300, T1=100, T2=150, T3=250,
                                  refine_iterations=50, lr=5e-3, s0_init=1e-5, s0_end=1e-6, lam=1e-6)
    out = run_series(problem, method, kind="offline")
    diag = method.diagnostics()
    assert set(diag) == {"selected_lags", "ar_order", "hidden_links", "msfe", "kept_weights"}
    lags = {int(j) for j in diag["selected_lags"].split(",") if j}
    assert lags <= {1, 2, 3} and diag["ar_order"] == max(lags, default=0)
    assert 0 <= diag["hidden_links"] <= 64
    # EXPAR noise is N(0, 1): a fitted model's errors are near 1, and its intervals cover
    assert 0.8 < np.mean((out.y - out.point) ** 2) < 1.5
    assert 0.8 <= np.mean((out.y >= out.lower) & (out.y <= out.upper)) <= 1.0
