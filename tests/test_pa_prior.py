"""PA mixture Gaussian prior and prior-annealing schedule (docs/guide/methods.md)."""

from __future__ import annotations

import math

import pytest
import torch

from pibench.methods.pa.prior import MixtureGaussianPrior
from pibench.methods.pa.schedule import AnnealingSchedule


def _b_values(threshold: float) -> torch.Tensor:
    gen = torch.Generator().manual_seed(0)
    parts = [
        torch.randn(50, generator=gen, dtype=torch.float64) * scale
        for scale in (1e-6, 1e-4, 1e-3, 1e-2, 1e-1, 1.0)
    ]
    near = threshold * (1.0 + 0.05 * torch.randn(50, generator=gen, dtype=torch.float64))
    return torch.cat(parts + [near, -near, torch.tensor([threshold, -threshold], dtype=torch.float64)])


# ---------------------------------------------------------------------- prior
def test_gradient_matches_autograd():
    prior = MixtureGaussianPrior(lam=1e-7, s0=1e-5, s1=0.01)
    b = _b_values(prior.threshold()).requires_grad_(True)
    (auto,) = torch.autograd.grad(prior.log_density(b), b)
    analytic = prior.grad_log_density(b.detach())
    torch.testing.assert_close(analytic, auto, rtol=1e-6, atol=0.0)


def test_log_density_matches_direct_formula():
    lam, s0, s1 = 1e-7, 1e-5, 0.01
    prior = MixtureGaussianPrior(lam=lam, s0=s0, s1=s1)
    b = torch.linspace(-0.5, 0.5, 201, dtype=torch.float64)

    def normal(x, var):
        return torch.exp(-x * x / (2 * var)) / math.sqrt(2 * math.pi * var)

    direct = torch.log(lam * normal(b, s1) + (1 - lam) * normal(b, s0))
    assert torch.isfinite(direct).all()  # no underflow on this range
    torch.testing.assert_close(prior.log_density(b), direct.sum(), rtol=1e-10, atol=0.0)
    for bi, di in zip(b[::20], direct[::20]):  # elementwise too
        assert prior.log_density(bi.reshape(1)).item() == pytest.approx(di.item(), rel=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_log_density_and_gradient_finite_far_in_the_slab(dtype):
    prior = MixtureGaussianPrior(lam=1e-7, s0=1e-8, s1=0.01)
    b = torch.tensor([10.0, -10.0], dtype=dtype)
    ld = prior.log_density(b)
    assert torch.isfinite(ld)
    # far from 0 only the slab matters: 2 * (log lam + log N(10; 0, s1))
    slab = math.log(1e-7) - 0.5 * math.log(2 * math.pi * 0.01) - 100.0 / (2 * 0.01)
    assert ld.item() == pytest.approx(2 * slab, rel=1e-6)
    g = prior.grad_log_density(b)
    assert torch.isfinite(g).all()
    torch.testing.assert_close(g, -b / 0.01)
    # the same with s0 = 1e-7 (brief: no underflow at |b| = 10)
    assert torch.isfinite(prior.with_s0(1e-7).log_density(b))


def test_inclusion_probability_around_threshold():
    prior = MixtureGaussianPrior(lam=1e-7, s0=1e-5, s1=0.01)
    thr = prior.threshold()
    at = prior.inclusion_probability(torch.tensor([thr, -thr], dtype=torch.float64))
    torch.testing.assert_close(at, torch.full((2,), 0.5, dtype=torch.float64), rtol=0.0, atol=1e-9)
    inside = torch.tensor([0.0, 0.5 * thr, -0.9 * thr, 0.999 * thr], dtype=torch.float64)
    outside = torch.tensor([1.001 * thr, -1.1 * thr, 2 * thr, 10.0], dtype=torch.float64)
    assert (prior.inclusion_probability(inside) < 0.5).all()
    assert (prior.inclusion_probability(outside) > 0.5).all()
    # spike + slab probabilities add to one
    b = _b_values(thr)
    torch.testing.assert_close(prior.inclusion_probability(b) + prior.spike_probability(b), torch.ones_like(b))


def test_fesp_threshold_literal():
    # lam = 1e-7, s1 = 0.01, s0 = 1e-6:
    #   (1 - lam)/lam * sqrt(s1/s0) = 9_999_999 * 100 = 999_999_900,  log(.) = 20.7232657369464
    #   1/(2 s0) - 1/(2 s1) = 500_000 - 50 = 499_950
    #   threshold = sqrt(20.7232657369464 / 499_950) = sqrt(4.14506...e-5) = 0.00643821998238...
    prior = MixtureGaussianPrior(lam=1e-7, s0=1e-6, s1=0.01)
    assert prior.threshold() == pytest.approx(0.006438219982382, rel=1e-12)


def test_with_s0_and_validation():
    prior = MixtureGaussianPrior(lam=1e-7, s0=1e-5, s1=0.01)
    smaller = prior.with_s0(1e-6)
    assert (smaller.lam, smaller.s0, smaller.s1) == (1e-7, 1e-6, 0.01)
    assert prior.s0 == 1e-5  # original untouched (frozen)
    assert smaller.threshold() < prior.threshold()
    with pytest.raises(ValueError, match="lam"):
        MixtureGaussianPrior(lam=0.0, s0=1e-5, s1=0.01)
    with pytest.raises(ValueError, match="lam"):
        MixtureGaussianPrior(lam=1.0, s0=1e-5, s1=0.01)
    with pytest.raises(ValueError, match="s0 < s1"):
        MixtureGaussianPrior(lam=0.1, s0=0.01, s1=0.01)
    with pytest.raises(ValueError, match="s0 < s1"):
        MixtureGaussianPrior(lam=0.1, s0=0.0, s1=0.01)
    with pytest.raises(ValueError, match="s0 < s1"):
        prior.with_s0(0.1)


# ------------------------------------------------------------------- schedule
@pytest.mark.parametrize(
    "t, phase, weight, s0, temperature",
    [
        (0, "initial", 0.0, 1e-5, 0.0),
        (149, "initial", 0.0, 1e-5, 0.0),
        (150, "anneal_prior", 0.0, 1e-5, 1.0),
        (155, "anneal_prior", 0.5, 1e-5, 1.0),
        (160, "anneal_s0", 1.0, 1e-5, 1.0),
        (210, "anneal_s0", 1.0, 5.5e-6, 1.0),
        (260, "cool", 1.0, 1e-6, 1.0),
        (261, "cool", 1.0, 1e-6, 1.0),
        (270, "cool", 1.0, 1e-6, 0.1),
    ],
)
def test_schedule_boundaries(t, phase, weight, s0, temperature):
    sched = AnnealingSchedule(T1=150, T2=160, T3=260, s0_init=1e-5, s0_end=1e-6, tau=1.0)
    assert sched.phase(t) == phase
    assert sched.prior_weight(t) == pytest.approx(weight, abs=1e-15)
    assert sched.s0(t) == pytest.approx(s0, rel=1e-12)
    assert sched.temperature(t) == pytest.approx(temperature, rel=1e-12)


def test_schedule_degenerate_T1_equals_T2():
    # MIMIC setting (the paper's appendix): T1 = T2 = 40, T3 = 55 -> no prior-weight ramp
    sched = AnnealingSchedule(T1=40, T2=40, T3=55, s0_init=1e-5, s0_end=1e-6, tau=1.0)
    assert (sched.phase(39), sched.prior_weight(39), sched.temperature(39)) == ("initial", 0.0, 0.0)
    assert (sched.phase(40), sched.prior_weight(40), sched.s0(40), sched.temperature(40)) == (
        "anneal_s0", 1.0, 1e-5, 1.0)
    assert sched.s0(47.5) == pytest.approx(5.5e-6, rel=1e-12)
    assert (sched.phase(55), sched.s0(55), sched.temperature(55)) == ("cool", 1e-6, 1.0)
    assert sched.temperature(60) == pytest.approx(0.2)
    assert "anneal_prior" not in {sched.phase(t) for t in range(0, 70)}


def test_schedule_degenerate_T2_equals_T3_and_validation():
    sched = AnnealingSchedule(T1=10, T2=20, T3=20, s0_init=1e-5, s0_end=1e-6, tau=2.0)
    assert sched.phase(19) == "anneal_prior" and sched.s0(19) == 1e-5
    assert (sched.phase(20), sched.prior_weight(20), sched.s0(20), sched.temperature(20)) == (
        "cool", 1.0, 1e-6, 2.0)
    assert sched.temperature(24) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="T1 <= T2 <= T3"):
        AnnealingSchedule(T1=20, T2=10, T3=30, s0_init=1e-5, s0_end=1e-6)
    with pytest.raises(ValueError, match="T1 <= T2 <= T3"):
        AnnealingSchedule(T1=10, T2=20, T3=15, s0_init=1e-5, s0_end=1e-6)
    with pytest.raises(ValueError, match="> 0"):
        AnnealingSchedule(T1=1, T2=2, T3=3, s0_init=1e-5, s0_end=0.0)
    with pytest.raises(ValueError, match="s0_end <= s0_init"):
        AnnealingSchedule(T1=1, T2=2, T3=3, s0_init=1e-6, s0_end=1e-5)


@pytest.mark.parametrize(("name", "length"), [("pa", "epochs"), ("pa_rnn", "iterations"), ("pa_lstm", "epochs")])
def test_a_training_that_ends_before_the_annealing_is_refused_with_the_schedule_scaled(name, length):
    """docs/guide/methods.md: T1 <= T2 <= T3 <= T_end. PA with epochs = 10 and the defaults (T3 = 260) ran plain SGD and
    was reported as PA; it is now refused before any work, with the schedule scaled to the given length."""
    from pibench.methods.catalog import get_method

    cls = get_method(name)
    defaults = cls()
    short = {length: 10}
    with pytest.raises(ValueError, match=rf"{length}=10 ends before the annealing does .*T3={defaults.T3}\b"):
        cls(**short).check_params()
    scaled = {name: round(getattr(defaults, name) * 10 / defaults.T3) for name in ("T1", "T2", "T3")}
    cls(**short, **scaled).check_params()
    cls(**{length: defaults.T3}).check_params()  # ending with the annealing is allowed (NLAR's paper schedule)


def test_a_conformal_methods_pa_base_says_where_its_schedule_goes():
    """aci with base = "pa" and epochs = 50 was told to give T1, T2, T3, which aci refuses: they go in
    base_params, and that scaled schedule is accepted."""
    from pibench.methods.catalog import get_method

    aci = get_method("aci")
    with pytest.raises(ValueError, match=r"the PA base \(its settings T1, T2, T3, .* go in base_params = \{ \.\.\. \}\)"
                                         r".*T1 = 29, T2 = 31, T3 = 50"):
        aci(base="pa", epochs=50).check_params()
    aci(base="pa", epochs=50, base_params={"T1": 29, "T2": 31, "T3": 50}).check_params()
    with pytest.raises(ValueError) as own:  # a parameter of aci's own: no word of base_params
        aci(base="pa", lr=-1.0).check_params()
    assert "lr=-1.0" in str(own.value) and "base_params" not in str(own.value)
