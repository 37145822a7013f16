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
