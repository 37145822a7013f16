"""Batched PA-RNN fits (an order-selection cell trained as one network): each member equals its
training alone, given the same seeds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from pibench.data_loaders.synthetic import nlar_problem
from pibench.methods.pa.networks import AfterBurnIn, ElmanRNN, StackedElmanRNNs
from pibench.methods.pa.rnn_method import PARNN
from pibench.methods.pa.trainer import PASettings, train_pa

SETTINGS = PASettings(epochs=60, lr=5e-2, batch_size=16, T1=20, T2=30, T3=50, s1=0.05, s0_init=1e-3,
                      s0_end=1e-4, lam=1e-6, tau=0.1, refine_epochs=10, unit="iteration")


def member_data(b: int, n: int = 300, T: int = 6, k: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(100 + b)
    x = torch.randn(n, T, k, generator=g)
    return x, (x[..., 0] * 0.8 + 0.3 * torch.randn(n, T, generator=g))[:, 2:]


def initial(b: int) -> ElmanRNN:
    torch.manual_seed(b)
    return ElmanRNN(3, 16, init_bound=0.003)


def train_stack(members: list[int]) -> tuple[StackedElmanRNNs, dict]:
    stack = StackedElmanRNNs.from_members([initial(b) for b in members], burn_in=2)
    data = [member_data(b) for b in members]
    X, Y = torch.stack([x for x, _ in data], dim=1), torch.stack([y for _, y in data], dim=1)
    return stack, train_pa(stack, X, Y, SETTINGS, seed=[10 + b for b in members])


def test_the_stacked_forward_is_each_members_forward():
    rnns = [initial(b).double() for b in range(3)]
    stack = StackedElmanRNNs.from_members(rnns, burn_in=2).double()
    x = torch.randn(7, 3, 6, 3, dtype=torch.float64)
    out = stack(x)
    for b, rnn in enumerate(rnns):
        torch.testing.assert_close(out[:, b], AfterBurnIn(rnn, 2)(x[:, b]), rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(stack.member(b).recurrent.weight, rnn.recurrent.weight, rtol=0, atol=0)


def test_a_member_trains_as_it_would_alone_bit_for_bit():
    """Members 0-2 together vs each alone (a stack of one): same seeds, the same weights and masks."""
    together, masks = train_stack([0, 1, 2])
    for b in range(3):
        alone, alone_masks = train_stack([b])
        for stacked, _ in StackedElmanRNNs.PARTS:
            assert torch.equal(getattr(together, stacked)[b], getattr(alone, stacked)[0]), (b, stacked)
            assert torch.equal(masks[stacked][b], alone_masks[stacked][0]), (b, stacked)
    # and it selects: every member keeps only the true lag (y follows x[..., 0]) and no hidden link
    assert [masks["input_weight"][b].any(0).tolist() for b in range(3)] == [[True, False, False]] * 3
    assert not masks["recurrent_weight"].any()


def test_a_stack_of_one_follows_the_plain_elman_training():
    """The same random numbers as training the ElmanRNN itself; only the kernels differ (bmm vs addmm)."""
    stack, masks = train_stack([0])
    rnn = initial(0)
    x, y = member_data(0)
    plain_masks = train_pa(AfterBurnIn(rnn, 2), x, y, SETTINGS, seed=10)
    member = stack.member(0)
    for (_stacked, single) in StackedElmanRNNs.PARTS:
        torch.testing.assert_close(member.get_parameter(single), rnn.get_parameter(single), rtol=0, atol=1e-4)
    agree = np.mean([bool(a == b) for s, p in StackedElmanRNNs.PARTS
                     for a, b in zip(masks[s][0].reshape(-1), plain_masks["rnn." + p].reshape(-1))])
    assert agree > 0.99


def test_fit_together_gives_each_method_its_own_fit():
    params = dict(hidden=16, seq_len=6, burn_in=2, iterations=60, T1=20, T2=30, T3=50, refine_iterations=10,
                  lr=5e-3, s0_init=1e-5, s0_end=1e-6, lam=1e-6, init_bound=0.05, batch_size=16)
    problems = [nlar_problem(n_train=400, n_test=50, n_lags=3, seed=s) for s in range(3)]
    datas = [p.window(0, p.test_start) for p in problems]
    together = [PARNN(random_state=s, **params) for s in range(3)]
    PARNN.fit_together(together, datas)
    for s, (method, data) in enumerate(zip(together, datas)):
        method.fit(data)
        alone = PARNN(random_state=s, **params).fit(data)
        assert method.diagnostics()["selected_lags"] == alone.diagnostics()["selected_lags"]
        x = problems[s].X[problems[s].test_start : problems[s].test_start + 1]
        np.testing.assert_allclose(method.predict_interval(x).upper, alone.predict_interval(x).upper, rtol=1e-3)
    with pytest.raises(ValueError, match="equal settings"):
        PARNN.fit_together([PARNN(**params), PARNN(**{**params, "lr": 1e-3})], datas[:2])


CELL_SUITE = """
name = "cell"
seeds = [0, 1, 2]
protocol = { kind = "offline" }
[[datasets]]
name = "nlar"
params = { n_train = 400, n_test = 60, n_lags = 3 }
[[methods]]
name = "pa_rnn"
[methods.params]
hidden = 16
seq_len = 6
burn_in = 2
iterations = 60
T1 = 20
T2 = 30
T3 = 50
refine_iterations = 10
lr = 5e-3
s0_init = 1e-5
s0_end = 1e-6
lam = 1e-6
init_bound = 0.05
batch_size = 16
[[methods]]
name = "autoreg"
params = { lags = 1 }
"""


def test_the_runner_trains_a_cell_together_and_records_it(tmp_path):
    """batch_cells (on by default only on a GPU): the 3 seeds of a window train as one network;
    the tasks, their ids and their results are those of training alone (up to kernel rounding)."""
    from pibench.benchmarks.runner import cells, run_tasks
    from pibench.benchmarks.store import ResultsStore
    from pibench.benchmarks.suite import build_tasks, load_suite

    path = tmp_path / "cell.toml"
    path.write_text(CELL_SUITE)
    tasks = build_tasks(load_suite(str(path)))
    batched, others = cells(tasks)
    assert [len(c) for c in batched] == [3] and len(others) == 3
    alone = run_tasks(tasks, tmp_path / "alone", progress=False)
    together = run_tasks(tasks, tmp_path / "together", progress=False, batch_cells=True)
    assert not alone.failed and not together.failed
    by_id = {r["task_id"]: r for r in alone.executed}
    assert set(by_id) == {r["task_id"] for r in together.executed}
    for record in together.executed:
        mine = ResultsStore(tmp_path / "together").predictions(record["task_id"])
        theirs = ResultsStore(tmp_path / "alone").predictions(record["task_id"])
        assert "cell" not in by_id[record["task_id"]]
        if record["method"] != "pa_rnn":
            assert "cell" not in record
            pd.testing.assert_frame_equal(mine, theirs)
            continue
        assert record["cell"]["members"] == 3 and "error" not in record["cell"]
        assert record["selected_lags"] == by_id[record["task_id"]]["selected_lags"]
        np.testing.assert_allclose(mine["upper"], theirs["upper"], rtol=1e-3)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_a_stacks_prior_terms_are_its_members_own_bit_for_bit():
    """PA's trainer takes a stack's prior terms in one call on a GPU (trainer._of_each): each member's slice must
    be what its own tensor gives, as the per-member calls on the CPU make sure of."""
    from pibench.methods.pa.prior import MixtureGaussianPrior, mixture_grad_log_density
    from pibench.methods.pa.trainer import _of_each

    g = torch.Generator(device="cuda").manual_seed(0)
    prior = MixtureGaussianPrior(1e-7, 4e-6, 0.05)
    c1, c2, s0 = (torch.tensor(v, device="cuda") for v in (prior.c1, prior.c2, prior.s0))
    for shape in ((5, 1000, 1000), (5, 1000), (5, 7, 3), (3, 1)):
        p = 0.01 * torch.randn(*shape, generator=g, device="cuda")
        for term in (prior.curvature, lambda q: mixture_grad_log_density(q, c1, c2, s0, 0.05)):
            whole = _of_each(term, p, members=True)
            assert all(torch.equal(whole[b], term(p[b].clone())) for b in range(shape[0])), shape


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_cell_on_cuda_agrees_with_the_cpu(tmp_path):
    """On a GPU cells batch by default. The GPU draws its minibatches and noise from its own generator family
    (methods/device.py), so its seeds are other draws than the CPU's: the lags agree, and the intervals
    differ from the CPU's no more than the CPU's seeds differ among themselves (with margin). Measured on
    the CPU over 10 seeds of this suite: midpoints of two seeds differ by 0.77-1.82 on average (y's sd 2.0),
    mean lengths run 5.8-13.8, coverage 0.97-1.0; on an H200 single points differed by up to 13%."""
    from itertools import combinations, product

    from pibench.benchmarks.runner import run_tasks
    from pibench.benchmarks.store import ResultsStore
    from pibench.benchmarks.suite import build_tasks, load_suite

    path = tmp_path / "cell.toml"
    path.write_text(CELL_SUITE)
    tasks = build_tasks(load_suite(str(path)))
    cpu = run_tasks(tasks, tmp_path / "cpu", progress=False)
    gpu = run_tasks(tasks, tmp_path / "gpu", progress=False, device="cuda")
    by_id = {r["task_id"]: r for r in cpu.executed}
    found: dict[str, list] = {"cpu": [], "gpu": []}
    for record in gpu.executed:
        if record["method"] == "pa_rnn":
            assert record["cell"]["members"] == 3 and record["device"].startswith("cuda: ")
            assert record["selected_lags"] == by_id[record["task_id"]]["selected_lags"]
            for where in found:
                found[where].append(ResultsStore(tmp_path / where).predictions(record["task_id"]))
    assert len(found["gpu"]) == 3

    def mid(p):
        return ((p["upper"] + p["lower"]) / 2).to_numpy()

    among_cpu = np.mean([np.abs(mid(a) - mid(b)).mean() for a, b in combinations(found["cpu"], 2)])
    gpu_to_cpu = np.mean([np.abs(mid(a) - mid(b)).mean() for a, b in product(found["gpu"], found["cpu"])])
    assert gpu_to_cpu <= 2 * among_cpu, (gpu_to_cpu, among_cpu)
    lengths = {w: np.median([(p["upper"] - p["lower"]).mean() for p in found[w]]) for w in found}
    assert 0.5 <= lengths["gpu"] / lengths["cpu"] <= 2, lengths
    covered = np.concatenate([((p["lower"] <= p["y"]) & (p["y"] <= p["upper"])).to_numpy() for p in found["gpu"]])
    assert np.isfinite(lengths["gpu"]) and covered.mean() >= 0.85, covered.mean()


def test_a_cell_that_cannot_train_together_trains_its_tasks_alone(tmp_path, monkeypatch):
    from pibench.benchmarks.runner import run_tasks
    from pibench.benchmarks.suite import build_tasks, load_suite

    def refuse(cls, methods, datas):
        raise MemoryError("no room for the stack")

    monkeypatch.setattr(PARNN, "fit_together", classmethod(refuse))
    path = tmp_path / "cell.toml"
    path.write_text(CELL_SUITE)
    report = run_tasks(build_tasks(load_suite(str(path))), tmp_path / "r", progress=False, batch_cells=True)
    assert not report.failed
    rnn = [r for r in report.executed if r["method"] == "pa_rnn"]
    assert len(rnn) == 3
    assert all(r["cell"] == {"members": 3, "error": "MemoryError: no room for the stack"} for r in rnn)


def test_a_cell_that_cannot_train_together_hands_its_tasks_back_unrun(tmp_path, monkeypatch):
    """Not one after another in the cell's worker (five PA-LSTM-100 seeds would take it past a GPU session's
    stage limit): the runner runs them as jobs of their own, side by side (the test above: their records)."""
    from pibench.benchmarks import runner
    from pibench.benchmarks.preflight import prepare_tasks
    from pibench.benchmarks.suite import build_tasks, load_suite

    def refuse(cls, methods, datas):
        raise MemoryError("no room for the stack")

    monkeypatch.setattr(PARNN, "fit_together", classmethod(refuse))
    path = tmp_path / "cell.toml"
    path.write_text(CELL_SUITE)
    batched, _ = runner.cells(prepare_tasks(build_tasks(load_suite(str(path)))).tasks)
    back = runner.execute_cell(batched[0], tmp_path / "r")
    assert isinstance(back, runner.CellDeferred)
    assert back.task_ids == [t.task_id for t in batched[0]]
    assert back.cell == {"members": 3, "error": "MemoryError: no room for the stack"}
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").rglob("*.json"))  # nothing ran


def test_a_cell_lets_each_fitted_member_go_after_its_task(tmp_path, monkeypatch):
    """On a GPU a fitted PA member holds its dense curvature (gigabytes at PA-LSTM-100's size): the cell keeps
    no member alive past its own task."""
    import gc
    import weakref

    from pibench.benchmarks import runner
    from pibench.benchmarks.preflight import prepare_tasks
    from pibench.benchmarks.suite import build_tasks, load_suite

    path = tmp_path / "cell.toml"
    path.write_text(CELL_SUITE)
    batched, _ = runner.cells(prepare_tasks(build_tasks(load_suite(str(path)))).tasks)
    seen: list[weakref.ref] = []
    alive_before: list[int] = []
    run_one = runner.execute_task

    def watched(task, *args):
        gc.collect()
        alive_before.append(sum(ref() is not None for ref in seen))
        seen.append(weakref.ref(args[5]))  # the member trained in the cell
        return run_one(task, *args)
    monkeypatch.setattr(runner, "execute_task", watched)
    records = runner.execute_cell(batched[0], tmp_path / "r")
    assert [r["status"] for r in records] == ["ok"] * 3 and all("error" not in r["cell"] for r in records)
    assert alive_before == [0, 0, 0]
