"""Methods without online state are asked for a fit's test steps at once (``serves_spans``): the series
protocol calls ``predict_interval`` once per fit, never ``update``, and the answers are those of
step-by-step calls (PA and PA-RNN batch their Jacobians: equal up to float64 rounding)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from pibench.benchmarks.protocols import run_series
from pibench.data_loaders.synthetic import expar_problem
from pibench.methods.base import Interval, IntervalMethod
from pibench.methods.catalog import get_method


class _Recorder(IntervalMethod):
    """Intervals x +- 1 around the mean of the fit window's targets; records what the protocol asks."""

    name = "recorder"

    def __init__(self, alpha: float = 0.1, random_state: int = 0) -> None:
        super().__init__(alpha, random_state)
        self.calls: list[tuple] = []

    def fit(self, data, calibration=None):
        self.level_ = float(data.y.mean())
        self.calls.append(("fit", data.n_steps))
        return self

    def predict_interval(self, X):
        self.calls.append(("predict", len(X)))
        point = X[:, :, 0] + self.level_
        return Interval(lower=point - 1, upper=point + 1, point=point)


class _SpanRecorder(_Recorder):
    serves_spans = True


class _StepRecorder(_Recorder):
    def update(self, y):
        self.calls.append(("update", len(y)))


def test_a_span_method_is_asked_once_per_fit_and_answers_as_step_by_step():
    problem = expar_problem(n_train=200, n_test=50, n_lags=2, seed=1)
    protocol = {"kind": "online", "window": 100, "retrain_every": 20}
    span, step = _SpanRecorder(), _StepRecorder()
    by_span, by_step = run_series(problem, span, **protocol), run_series(problem, step, **protocol)
    # fits at test steps 0, 20, 40 serve 20, 20 and 10 steps
    assert span.calls == [("fit", 100), ("predict", 20), ("fit", 100), ("predict", 20), ("fit", 100),
                          ("predict", 10)]
    assert step.calls[:4] == [("fit", 100), ("predict", 1), ("update", 1), ("predict", 1)]
    assert step.calls.count(("predict", 1)) == step.calls.count(("update", 1)) == 50
    for name in ("lower", "upper", "point"):
        np.testing.assert_array_equal(getattr(by_span, name), getattr(by_step, name))


def test_a_span_answer_must_cover_the_span():
    class _Short(_SpanRecorder):
        def predict_interval(self, X):
            return super().predict_interval(X[:1])

    problem = expar_problem(n_train=200, n_test=50, n_lags=2, seed=1)
    with pytest.raises(ValueError, match=r"shape \(1, 1\) for a span of 50 steps \(serves_spans = True\), whose "
                                         r"targets have shape \(50, 1\)"):
        run_series(problem, _Short(), kind="offline")


def test_a_method_that_serves_spans_cannot_have_online_state():
    with pytest.raises(TypeError, match="serves spans .* defines update"):
        class _Both(_SpanRecorder):
            def update(self, y):
                pass


def _one_step_at_a_time(method, problem, start, stop):
    ivs = [method.predict_interval(problem.X[t : t + 1]) for t in range(start, stop)]
    return {name: np.concatenate([getattr(iv, name) for iv in ivs]) for name in ("lower", "upper", "point")}


@pytest.mark.parametrize("seq_len, burn_in", [(6, 2), (1, 0)])
def test_pa_rnn_answers_a_span_as_its_steps_and_keeps_the_history(one_torch_thread, seq_len, burn_in):
    _pa_rnn_span_as_steps(seq_len, burn_in)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_pa_rnn_answers_a_span_as_its_steps():
    """On a GPU the span's Jacobians are one batched pass there; the steps, one pass each."""
    from pibench.methods.device import use_device
    with use_device("cuda"):
        _pa_rnn_span_as_steps(6, 2)


def _pa_rnn_span_as_steps(seq_len: int, burn_in: int) -> None:
    problem = expar_problem(n_train=600, n_test=120, n_lags=3, seed=0)
    method = get_method("pa_rnn")(hidden=12, seq_len=seq_len, burn_in=burn_in, iterations=200, T1=60, T2=100,
                                  T3=160, refine_iterations=30, lr=5e-3, s0_init=1e-5, s0_end=1e-6, lam=1e-6)
    method.fit(problem.window(0, problem.test_start))
    stepwise = copy.deepcopy(method)
    t0, t1 = problem.test_start, problem.n_steps
    one = _one_step_at_a_time(stepwise, problem, t0, t0 + 70)
    span = method.predict_interval(problem.X[t0 : t0 + 70])
    for name in one:
        np.testing.assert_allclose(getattr(span, name), one[name], rtol=1e-9, atol=1e-9)
    # the next span continues from the same history as the next steps do
    np.testing.assert_array_equal(method.history_, stepwise.history_)
    rest = _one_step_at_a_time(stepwise, problem, t0 + 70, t1)
    np.testing.assert_allclose(method.predict_interval(problem.X[t0 + 70 : t1]).upper, rest["upper"], rtol=1e-9)
    with pytest.raises(ValueError, match=r"X must be \(m, 1, 3\)"):
        method.predict_interval(problem.X[t0 : t0 + 2, :, :2])


def test_pa_online_by_spans_equals_step_by_step(one_torch_thread):
    problem = expar_problem(n_train=300, n_test=40, n_lags=2, seed=2)
    params = {"hidden": 8, "epochs": 30, "T1": 10, "T2": 15, "T3": 25}
    protocol = {"kind": "online", "window": 200, "retrain_every": 20}
    by_span = run_series(problem, get_method("pa")(**params), **protocol)

    class _PAByStep(get_method("pa")):  # type: ignore[misc, valid-type]  # the same method, one step at a time
        serves_spans = False
    by_step = run_series(problem, _PAByStep(**params), **protocol)
    assert by_span.n_fits == by_step.n_fits == 2
    for name in ("lower", "upper", "point"):
        np.testing.assert_allclose(getattr(by_span, name), getattr(by_step, name), rtol=1e-9, atol=1e-9)
