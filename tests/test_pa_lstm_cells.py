"""PA-LSTM's seeds trained as one stack (methods/pa/stacked_lstm.py; a cell of the runner on a GPU): each
member is the network its seed gives alone (the same masks, weights to float32 rounding), and each fit
takes its own."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pibench.data_loaders.problems import SetData
from pibench.methods.catalog import get_method
from pibench.methods.device import use_device
from pibench.methods.pa.stacked_lstm import StackedPALSTMs
from pibench.methods.pa.trainer import PASettings, train_pa
from pibench.methods.sequence.network import SequenceNet

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # the runner's tasks: one thread each
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
SETTINGS = PASettings(epochs=8, lr=0.01, batch_size=30, T1=2, T2=4, T3=6, s1=0.1, s0_init=1e-4, s0_end=1e-5,
                      lam=1e-3, tau=1.0, refine_epochs=2, initial_optimizer="adam", prior_step="implicit")


def _net(seed: int, hidden: int = 6, horizon: int = 3, k: int = 1) -> SequenceNet:
    torch.manual_seed(seed)
    return SequenceNet(2, hidden, horizon, k)


def _data(seed: int, n: int = 90, T: int = 8, horizon: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, T, 2, generator=g).cumsum(1)
    return x, x[:, -horizon:, 0] + 0.1 * torch.randn(n, horizon, generator=g)


@pytest.mark.parametrize("k", [1, 2])
def test_the_stack_computes_each_member_and_gives_it_back(k):
    nets = [_net(s, k=k).double() for s in range(3)]
    stack = StackedPALSTMs(nets).double()
    x = torch.randn(11, 3, 8, 2, dtype=torch.float64)
    with torch.no_grad():
        out = stack(x)
        for b, net in enumerate(nets):
            torch.testing.assert_close(out[:, b], net(x[:, b]), rtol=0, atol=1e-14)
    assert [name for name, _ in stack.named_parameters()] == [name for name, _ in nets[0].named_parameters()]
    for b, net in enumerate(nets):
        back = dict(stack.member(b).named_parameters())
        for name, p in net.named_parameters():
            assert torch.equal(back[name].double(), p), name
    # the cross-member weights are no parameters: a member's output has no gradient in another's weights
    stack(x)[:, 1].sum().backward()
    for p in stack.parameters():
        assert p.grad is not None and not p.grad[[0, 2]].any() and p.grad[1].any()


def _members_against_alone(device: str, mask_slack: int = 0) -> list[float]:
    """Each member's largest weight difference to its seed trained alone, on data of its own; the masks
    differ in at most ``mask_slack`` entries."""
    seeds = [11, 22, 33]
    data = [_data(b) for b in range(3)]
    differences = []
    with use_device(device):
        alone = [(net := _net(s), train_pa(net, x, y, SETTINGS, seed=s)) for s, (x, y) in zip(seeds, data)]
        stack = StackedPALSTMs([_net(s) for s in seeds])
        masks = train_pa(stack, torch.stack([x for x, _ in data], 1), torch.stack([y for _, y in data], 1), SETTINGS,
                         seed=seeds)
    for b, (net, mask) in enumerate(alone):
        mine, member = StackedPALSTMs.member_masks(masks, b), dict(stack.member(b).named_parameters())
        assert mine.keys() == mask.keys() and sum(int((mine[k] != mask[k]).sum()) for k in mask) <= mask_slack
        assert 0 < sum(int(m.sum()) for m in mask.values()) < sum(m.numel() for m in mask.values())
        differences.append(max(float((member[k] - p).detach().abs().max()) for k, p in net.named_parameters()))
    return differences


def test_members_train_under_pa_as_their_seeds_do_alone():
    """The same minibatches, noise and prior terms, in the same order. The larger LSTM kernel rounds a few
    lanes otherwise (vectorised vs scalar gate functions: 3e-8 seen here after 10 epochs, often 0)."""
    assert max(_members_against_alone("cpu")) < 1e-5


@needs_cuda
def test_on_cuda_members_train_under_pa_as_their_seeds_do_alone():
    """On a GPU cuDNN's larger kernels round otherwise: weights to float32 rounding, and a weight that ends
    within rounding of the threshold may fall on the other side (two such allowed)."""
    assert max(_members_against_alone("cuda", mask_slack=2)) < 1e-3


def test_a_stack_refuses_what_it_cannot_hold():
    with pytest.raises(ValueError, match="share inputs, units"):
        StackedPALSTMs([_net(0), _net(1, horizon=4)])
    with pytest.raises(TypeError, match="not their step-by-step twins"):
        StackedPALSTMs([_net(0).unrolled()])
    torch.manual_seed(0)
    with pytest.raises(ValueError, match="dropout train alone"):
        StackedPALSTMs([SequenceNet(2, 6, 3, dropout=0.5)])
    with pytest.raises(ValueError, match=r"\(m, 2, T, 2\) inputs"):
        StackedPALSTMs([_net(0), _net(1)])(torch.randn(5, 3, 8, 2))


def _set(seed: int, n: int) -> SetData:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 10, 1)).cumsum(1)
    return SetData(x=x, y=x[:, -1:, 0] + rng.normal(size=(n, 3)))


PARAMS = {"hidden": 6, "epochs": 8, "T1": 2, "T2": 4, "T3": 6, "refine_epochs": 2, "batch_size": 30, "s1": 0.1,
          "s0_init": 1e-4, "s0_end": 1e-5, "lam": 1e-3}


@pytest.mark.parametrize("calibration_kind", ["asymptotic", "conformal"])
def test_pa_lstm_fits_together_then_each_fit_takes_its_member(calibration_kind):
    """Each seed of a cell has its own split (as the runner's set problems do)."""
    splits = [(_set(10 * s, 120), _set(10 * s + 1, 60)) for s in range(3)]
    train, calibration, test = *splits[0], _set(2, 40)
    params = {**PARAMS, "calibration": calibration_kind}
    alone = [get_method("pa_lstm")(random_state=s, **params).fit(*split) for s, split in enumerate(splits)]
    cell = [get_method("pa_lstm")(random_state=s, **params) for s in range(3)]
    type(cell[0]).fit_together(cell, splits)
    for a, c, split in zip(alone, cell, splits):
        c.fit(*split)
        assert c.diagnostics()["trained_in_cell"] and not hasattr(c, "trained_together_")
        assert "trained_in_cell" not in a.diagnostics() and "train_seconds" not in c.diagnostics()
        assert c.diagnostics()["kept_weights"] == a.diagnostics()["kept_weights"]
        mine, theirs = c.predict_interval(test.x), a.predict_interval(test.x)
        np.testing.assert_allclose(mine.lower, theirs.lower, rtol=1e-5)  # the same network, to rounding
        np.testing.assert_allclose(mine.upper, theirs.upper, rtol=1e-5)
    # networks trained together on other data are not taken: the fit trains its own
    stray = get_method("pa_lstm")(random_state=0, **params)
    other = get_method("pa_lstm")(random_state=1, **params)
    type(stray).fit_together([stray, other], [(_set(5, 120), calibration)] * 2)
    stray.fit(train, calibration)
    assert "trained_in_cell" not in stray.diagnostics() and stray.diagnostics()["train_seconds"] > 0
    np.testing.assert_array_equal(stray.predict_interval(test.x).upper, alone[0].predict_interval(test.x).upper)
    with pytest.raises(ValueError, match="equal settings"):
        type(stray).fit_together([stray, get_method("pa_lstm")(random_state=1, **{**params, "hidden": 7})],
                                 [(train, calibration)] * 2)


def test_a_cell_that_cannot_train_as_one_says_why(monkeypatch):
    """Padded sets, and a stack with a diverged member (whose NaN reaches its cell-mates), are refused: the
    runner then trains each seed alone (its records say why)."""
    from pibench.methods.pa import lstm_method

    train, calibration = _set(0, 120), _set(1, 60)
    x = train.x.copy()
    x[0, -2:] = np.nan
    padded = SetData(x=x, y=train.y)
    with pytest.raises(ValueError, match="padded sequences"):
        lstm_method.PALSTM.fit_together([get_method("pa_lstm")(random_state=s, **PARAMS) for s in range(2)],
                                        [(padded, calibration)] * 2)
    trained = lstm_method.train_pa

    def one_diverges(stack, X, Y, settings, seed):
        masks = trained(stack, X, Y, settings, seed=seed)
        with torch.no_grad():
            stack.head.bias[1, 0] = float("nan")
        return masks
    monkeypatch.setattr(lstm_method, "train_pa", one_diverges)
    with pytest.raises(ValueError, match="diverged"):
        lstm_method.PALSTM.fit_together([get_method("pa_lstm")(random_state=s, **PARAMS) for s in range(2)],
                                        [(train, calibration)] * 2)
