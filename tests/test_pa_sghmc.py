"""SGHMC optimizer of PA (docs/guide/methods.md)."""

from __future__ import annotations

import math

import pytest
import torch

from pibench.methods.pa.sghmc import SGHMC

LR, M, N = 0.01, 0.9, 500


def _model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 1)).double()


def _data():
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(32, 4, generator=gen, dtype=torch.float64)
    return x, x.sum(dim=1, keepdim=True).sin()


def _run(model, opt, steps):
    x, y = _data()
    snapshots = []
    for _ in range(steps):
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
        snapshots.append([p.detach().clone() for p in model.parameters()])
    return snapshots


def test_temperature_zero_is_momentum_sgd():
    m_ref, m_hmc = _model(), _model()
    ref = _run(m_ref, torch.optim.SGD(m_ref.parameters(), lr=LR, momentum=M), 5)
    gen = torch.Generator().manual_seed(0)
    hmc = _run(m_hmc, SGHMC(m_hmc.parameters(), lr=LR, momentum=M, temperature=0.0, n=N, generator=gen), 5)
    for step_ref, step_hmc in zip(ref, hmc):
        for a, b in zip(step_ref, step_hmc):
            assert torch.equal(b, a)  # bit-for-bit


def test_positive_temperature_first_step_noiseless_then_differs():
    m_ref, m_hmc = _model(), _model()
    ref = _run(m_ref, torch.optim.SGD(m_ref.parameters(), lr=LR, momentum=M), 3)
    gen = torch.Generator().manual_seed(0)
    hmc = _run(m_hmc, SGHMC(m_hmc.parameters(), lr=LR, momentum=M, temperature=1.0, n=N, generator=gen), 3)
    for a, b in zip(ref[0], hmc[0]):
        assert torch.equal(b, a)  # bit-for-bit
    for later in (1, 2):
        assert any(not torch.allclose(a, b) for a, b in zip(ref[later], hmc[later]))


def test_noise_scale_with_zero_gradient():
    lr, m, tau, n, size = 1e-3, 0.9, 2.0, 1000, 100_000
    beta = torch.nn.Parameter(torch.randn(size, dtype=torch.float64))
    opt = SGHMC([beta], lr=lr, momentum=m, temperature=tau, n=n, generator=torch.Generator().manual_seed(3))
    beta.grad = torch.zeros_like(beta)
    opt.step()  # first step: buf = grad = 0, no noise, no move
    start = beta.detach().clone()
    assert torch.equal(opt.state[beta]["momentum_buffer"], torch.zeros_like(beta))
    opt.step()  # one noisy step: buf = m * 0 + 0 + noise
    buf = opt.state[beta]["momentum_buffer"]
    expected_std = math.sqrt(2 * (1 - m) * tau / (n * lr))  # = sqrt(0.4)
    assert buf.std().item() == pytest.approx(expected_std, rel=0.02)
    assert abs(buf.mean().item()) < 5 * expected_std / math.sqrt(size)
    torch.testing.assert_close(beta.detach() - start, -lr * buf, rtol=1e-9, atol=1e-15)


def test_temperature_can_be_changed_per_group():
    beta = torch.nn.Parameter(torch.zeros(1000, dtype=torch.float64))
    opt = SGHMC([beta], lr=0.01, n=100, temperature=1.0, generator=torch.Generator().manual_seed(0))
    beta.grad = torch.zeros_like(beta)
    opt.step()
    opt.param_groups[0]["temperature"] = 0.0
    opt.step()
    assert torch.equal(beta.detach(), torch.zeros_like(beta))  # no noise at temperature 0
    opt.set_temperature(1.0)
    opt.step()
    assert beta.detach().abs().sum() > 0


def _noisy_run(seed):
    model = _model()
    opt = SGHMC(model.parameters(), lr=LR, momentum=M, temperature=1.0, n=N,
                generator=torch.Generator().manual_seed(seed))
    return _run(model, opt, 4)[-1]


def test_deterministic_with_same_generator_seed():
    a, b, c = _noisy_run(7), _noisy_run(7), _noisy_run(8)
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert any(not torch.equal(x, z) for x, z in zip(a, c))


@pytest.mark.parametrize("how", ["constructor", "set_masks"])
def test_masked_entries_stay_exactly_zero(how):
    model = _model()
    params = list(model.parameters())
    gen = torch.Generator().manual_seed(5)
    masks = [torch.rand(p.shape, generator=gen) > 0.5 for p in params]
    with torch.no_grad():
        for p, mask in zip(params, masks):
            p.masked_fill_(~mask, 0.0)
    kwargs = dict(lr=LR, momentum=M, temperature=1.0, n=N, generator=torch.Generator().manual_seed(0))
    if how == "constructor":
        opt = SGHMC(params, masks=dict(zip(params, masks)), **kwargs)
    else:
        opt = SGHMC(params, **kwargs)
        opt.set_masks(masks)
    start = [p.detach().clone() for p in params]
    _run(model, opt, 20)
    for p, p0, mask in zip(params, start, masks):
        assert torch.equal(p.detach()[~mask], torch.zeros_like(p)[~mask])
        assert (p.detach()[mask] != p0[mask]).all()  # kept entries do move
        assert torch.equal(opt.state[p]["momentum_buffer"][~mask], torch.zeros_like(p)[~mask])


def test_validation():
    p = torch.nn.Parameter(torch.zeros(3))
    with pytest.raises(TypeError):
        SGHMC([p], lr=0.1)  # n is required
    with pytest.raises(ValueError, match="n"):
        SGHMC([p], lr=0.1, n=0)
    with pytest.raises(ValueError, match="temperature"):
        SGHMC([p], lr=0.1, n=10, temperature=-1.0)
    with pytest.raises(ValueError, match="momentum"):
        SGHMC([p], lr=0.1, n=10, momentum=1.0)
    opt = SGHMC([p], lr=0.1, n=10)
    with pytest.raises(ValueError, match="shape"):
        opt.set_masks([torch.ones(4, dtype=torch.bool)])
    with pytest.raises(ValueError, match="bool"):
        opt.set_masks([torch.ones(3)])
    with pytest.raises(ValueError, match="masks for"):
        opt.set_masks([])


def _quadratic_path(k: float, lr: float, steps: int, implicit: bool) -> list[float]:
    """SGHMC at temperature 0 on U(b) = k b^2 / 2 from b = 1, the k b term explicit or implicit."""
    b = torch.nn.Parameter(torch.tensor([1.0], dtype=torch.float64))
    opt = SGHMC([b], lr=lr, momentum=M, temperature=0.0, n=N)
    path = []
    for _ in range(steps):
        opt.zero_grad()
        b.grad = torch.zeros_like(b) if implicit else k * b.detach().clone()
        opt.step(stiffness={b: torch.full_like(b, k)} if implicit else None)
        path.append(float(b.detach()))
    return path


def test_implicit_stiffness_by_hand_first_order_and_stable():
    # first step: buf = (0 + k b) / (1 + lr k), b = 1 - lr buf
    k, lr = 3.0, 0.1
    assert _quadratic_path(k, lr, 1, implicit=True)[0] == pytest.approx(1 - lr * k / (1 + lr * k), rel=1e-15)
    # lr k small: the implicit and the explicit step agree to first order in lr k
    implicit, explicit = _quadratic_path(1e-3, LR, 50, True), _quadratic_path(1e-3, LR, 50, False)
    moved = 1 - explicit[-1]
    assert moved > 1e-3 and max(abs(a - b) for a, b in zip(implicit, explicit)) < 1e-3 * moved
    # lr k = 67 (PA-LSTM on EEG) is far past momentum SGD's bound 2 (1 + m) = 3.8: explicit blows up,
    # implicit goes to the minimum
    assert abs(_quadratic_path(6700.0, LR, 20, implicit=False)[-1]) > 1e6
    assert abs(_quadratic_path(6700.0, LR, 20, implicit=True)[-1]) < 1e-3
