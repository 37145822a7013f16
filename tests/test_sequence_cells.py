"""The seeds of CF-RNN, MQ-RNN and DP-RNN trained as one block-diagonal network (a cell, as the runner trains
them on a GPU): each member computes, trains and predicts as its seed does alone, up to float32 rounding (DP-RNN's
members with the dropout masks they draw alone)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pibench.data_loaders.problems import SetData
from pibench.methods.catalog import get_method
from pibench.methods.sequence.losses import mse_loss
from pibench.methods.sequence.network import SequenceNet
from pibench.methods.sequence.stacked import StackedSequenceNets
from pibench.methods.sequence.train import train_network, train_stack


def _nets(seeds, horizon=3, k=1, dropout=0.0):
    nets = []
    for seed in seeds:
        torch.manual_seed(seed)
        nets.append(SequenceNet(2, 5, horizon, k, dropout))
    return nets


def _stack(seeds, dropout=0.0):
    """A stack of the seeds' networks, each member's dropout stream the generator's state after its network
    (what fit_together does)."""
    nets, streams = [], []
    for seed in seeds:
        nets += _nets([seed], dropout=dropout)
        streams.append(torch.random.get_rng_state())
    stack = StackedSequenceNets(nets)
    stack.draw_dropout_from(streams, seeds)
    return stack


def _data(seed, n=90, T=8, horizon=3):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, T, 2, generator=g).cumsum(1)
    return x, x[:, -horizon:, 0] + 0.1 * torch.randn(n, horizon, generator=g)


@pytest.mark.parametrize("k", [1, 2])
def test_the_stack_computes_each_member_and_gives_it_back(k):
    nets = _nets([0, 1, 2], k=k)
    stack = StackedSequenceNets(nets)
    xs = [_data(s)[0] for s in range(3)]
    with torch.no_grad():
        out = stack(torch.cat(xs, dim=-1))
        for b, (net, x) in enumerate(zip(nets, xs)):
            torch.testing.assert_close(out[:, b], net(x), rtol=1e-5, atol=1e-6)
    for b, net in enumerate(nets):
        back = dict(stack.member(b).named_parameters())
        for name, p in net.named_parameters():
            assert torch.equal(back[name], p), name
    # the cross-member weights are 0 and masked
    assert not stack.lstm.weight_hh_l0[~stack.mask_hh].any() and stack.mask_hh.sum() == 3 * 4 * 5 * 5


@pytest.mark.parametrize("steps_per_epoch, dropout", [(0, 0.0), (4, 0.0), (0, 0.5)])
def test_members_train_as_their_seeds_do_alone(steps_per_epoch, dropout):
    _members_train_as_alone(steps_per_epoch, rtol=1e-4, dropout=dropout)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_members_train_as_their_seeds_do_alone():
    """On a GPU both draw from the GPU's generators: the same minibatches, cuDNN's rounding."""
    from pibench.methods.device import use_device
    with use_device("cuda"):
        _members_train_as_alone(0, rtol=1e-3)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_cuda_dropout_members_repeat_and_do_not_hang_on_their_cell_mates():
    """On a GPU each member's masks come from a generator seeded by its seed (another stream than a fit alone
    draws): a rerun repeats the stack exactly, and seed 4 beside other seeds ends where it ends beside 3 and 5."""
    from pibench.methods.device import use_device

    def trained(seeds):
        stack = _stack(seeds, 0.5)
        train_stack(stack, [_data(10 + s)[0] for s in seeds], [_data(10 + s)[1] for s in seeds], mse_loss,
                    epochs=3, lr=0.01, batch_size=25, seeds=seeds)
        return stack

    with use_device("cuda"):
        first, again, beside = trained([3, 4, 5]), trained([3, 4, 5]), trained([9, 4])
    for name, p in first.member(1).named_parameters():
        assert torch.equal(dict(again.member(1).named_parameters())[name], p), name
        torch.testing.assert_close(dict(beside.member(1).named_parameters())[name], p, rtol=1e-3, atol=1e-2)


def _members_train_as_alone(steps_per_epoch: int, rtol: float, dropout: float = 0.0) -> None:
    seeds = [3, 4, 5]
    data = [_data(10 + s) for s in seeds]
    apart, histories = [], []
    for s, (x, y) in zip(seeds, data):  # each made, then trained, as a fit alone does: its masks follow its weights
        apart += _nets([s], dropout=dropout)
        histories.append(train_network(apart[-1], x, y, mse_loss, epochs=3, lr=0.01, batch_size=25, seed=s,
                                       steps_per_epoch=steps_per_epoch))
    stack = _stack(seeds, dropout)
    together = train_stack(stack, [x for x, _ in data], [y for _, y in data], mse_loss, epochs=3, lr=0.01,
                           batch_size=25, seeds=seeds, steps_per_epoch=steps_per_epoch)
    for weights, mask in ((stack.lstm.weight_ih_l0, stack.mask_ih), (stack.lstm.weight_hh_l0, stack.mask_hh),
                          (stack.head.weight, stack.mask_head)):
        assert not weights[~mask].any() and weights[mask].all()  # the cross-member weights stay exactly 0
    for b, net in enumerate(apart):
        np.testing.assert_allclose(together[b], histories[b], rtol=rtol)
        mine = dict(stack.member(b).named_parameters())
        for name, p in net.named_parameters():
            torch.testing.assert_close(mine[name], p, rtol=rtol, atol=10 * rtol)
    # a member's training does not depend on the other members: seed 4 beside other seeds ends the same
    other = _stack([9, 4], dropout)
    train_stack(other, [_data(99)[0], data[1][0]], [_data(99)[1], data[1][1]], mse_loss, epochs=3, lr=0.01,
                batch_size=25, seeds=[9, 4], steps_per_epoch=steps_per_epoch)
    torch.testing.assert_close(other.member(1).head.weight, stack.member(1).head.weight, rtol=rtol, atol=10 * rtol)


def test_what_cannot_train_as_a_stack_is_refused():
    with pytest.raises(ValueError, match="share their dropout probability"):
        StackedSequenceNets(_nets([0], dropout=0.5) + _nets([1], dropout=0.2))
    with pytest.raises(RuntimeError, match="one stream per member"):  # one generator would tie their masks
        StackedSequenceNets(_nets([0, 1], dropout=0.5))(_data(0)[0].repeat(1, 1, 2))
    with pytest.raises(ValueError, match="share inputs, units"):
        StackedSequenceNets(_nets([0], horizon=3) + _nets([1], horizon=4))
    stack = StackedSequenceNets(_nets([0, 1]))
    (x0, y0), (x1, y1) = _data(0), _data(1)
    x1 = x1.clone()
    x1[0, -2:] = float("nan")
    with pytest.raises(ValueError, match="padded sequences"):
        train_stack(stack, [x0, x1], [y0, y1], mse_loss, epochs=1, lr=0.01, batch_size=25, seeds=[0, 1])
    with pytest.raises(ValueError, match="all of one size"):
        train_stack(stack, [x0, x0[:50]], [y0, y0[:50]], mse_loss, epochs=1, lr=0.01, batch_size=25, seeds=[0, 1])
    with pytest.raises(ValueError, match="one length with 2 feature"):
        train_stack(stack, [x0, x0[:, :5]], [y0, y0], mse_loss, epochs=1, lr=0.01, batch_size=25, seeds=[0, 1])


def _set(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 10, 1)).cumsum(1)
    return SetData(x=x, y=x[:, -1:, 0] + rng.normal(size=(n, 3)))


@pytest.mark.parametrize("name", ["cfrnn", "mqrnn", "dprnn"])
def test_fits_together_then_each_fit_takes_its_member(name):
    train, calibration, test = _set(0, 120), _set(1, 60), _set(2, 40)
    params = {"hidden": 6, "epochs": 4, "batch_size": 30}
    alone = [get_method(name)(random_state=s, **params).fit(train, calibration) for s in range(3)]
    cell = [get_method(name)(random_state=s, **params) for s in range(3)]
    type(cell[0]).fit_together(cell, [(train, calibration)] * 3)
    for a, c in zip(alone, cell):
        c.fit(train, calibration)
        assert c.trained_in_cell_ and c.diagnostics()["trained_in_cell"] and not hasattr(c, "trained_together_")
        assert not a.trained_in_cell_ and "trained_in_cell" not in a.diagnostics()
        np.testing.assert_allclose(c.predict_interval(test.x).upper, a.predict_interval(test.x).upper, rtol=1e-3)
        np.testing.assert_allclose(c.loss_history_, a.loss_history_, rtol=1e-3)
    # a network trained together on other data is not taken: the fit trains its own
    stray = get_method(name)(random_state=0, **params)
    type(stray).fit_together([stray, get_method(name)(random_state=1, **params)], [(_set(5, 120), calibration)] * 2)
    stray.fit(train, calibration)
    assert not stray.trained_in_cell_
    np.testing.assert_array_equal(stray.predict_interval(test.x).upper, alone[0].predict_interval(test.x).upper)
    with pytest.raises(ValueError, match="equal settings"):
        type(stray).fit_together([stray, get_method(name)(random_state=1, hidden=7, epochs=4)],
                                 [(train, calibration)] * 2)


SETS_CELL_SUITE = """
name = "sets_cell"
seeds = [0, 1, 2]
[[datasets]]
name = "covid"
[[methods]]
name = "cfrnn"
params = { hidden = 6, epochs = 3 }
[[methods]]
name = "mqrnn"
params = { hidden = 6, epochs = 3 }
[[methods]]
name = "dprnn"
params = { hidden = 6, epochs = 3, n_passes = 5 }
[[methods]]
name = "pa_lstm"
params = { hidden = 6, epochs = 6, T1 = 2, T2 = 3, T3 = 5, refine_epochs = 1 }
"""


def test_the_runner_trains_set_cells_together_and_records_them(tmp_path, shared_data_dir):
    """batch_cells (on by default only on a GPU): CF-RNN's, MQ-RNN's, DP-RNN's and PA-LSTM's three seeds train
    as one network each; the results are those of training alone, up to rounding."""
    from pibench.benchmarks.runner import cells, run_tasks
    from pibench.benchmarks.store import ResultsStore
    from pibench.benchmarks.suite import build_tasks, load_suite
    from pibench.data_loaders.paths import DATASET_FILES

    if not (shared_data_dir / DATASET_FILES["covid"].relpath).is_file():
        pytest.skip("the COVID-19 file is not in the shared data folder")
    data_dir = str(shared_data_dir)
    path = tmp_path / "cells.toml"
    path.write_text(SETS_CELL_SUITE)
    tasks = build_tasks(load_suite(str(path)))
    batched, others = cells(tasks)
    assert sorted(len(c) for c in batched) == [3, 3, 3, 3] and not others
    alone = run_tasks(tasks, tmp_path / "alone", data_dir=data_dir, progress=False)
    together = run_tasks(tasks, tmp_path / "together", data_dir=data_dir, progress=False, batch_cells=True)
    assert not alone.failed and not together.failed
    by_id = {r["task_id"]: r for r in alone.executed}
    for record in together.executed:
        mine = ResultsStore(tmp_path / "together").predictions(record["task_id"])
        theirs = ResultsStore(tmp_path / "alone").predictions(record["task_id"])
        assert record["cell"]["members"] == 3 and "error" not in record["cell"], record["cell"]
        assert record["trained_in_cell"] is True
        assert "cell" not in by_id[record["task_id"]]
        # up to rounding: 0.1% of each bound, or of the bounds' scale where one is near 0 (5.95e-6 against
        # 5.96e-6 failed on a relative tolerance alone)
        np.testing.assert_allclose(mine["upper"], theirs["upper"], rtol=1e-3,
                                   atol=1e-3 * float(np.abs(theirs["upper"]).mean()))
