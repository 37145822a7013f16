"""Effective structure after sparsification: kept weights that cannot reach the output are dropped."""

import pytest
import torch

from pibench.methods.pa.intervals import fit_asymptotic_normal
from pibench.methods.pa.networks import MLP, ElmanRNN, LastStep, StackedMLPs
from pibench.methods.pa.structure import drop_idle_units, live_masks
from pibench.methods.pa.trainer import PASettings, train_pa
from pibench.methods.sequence.network import SequenceNet


def _prune(model, masks):
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.mul_(masks[name])


def test_mlp_unit_without_outgoing_weight_loses_its_incoming_weights():
    torch.manual_seed(0)
    model = MLP(3, 4)
    masks = {name: torch.ones_like(p, dtype=torch.bool) for name, p in model.named_parameters()}
    masks["out.weight"][0, 1] = False  # unit 1 feeds nothing
    masks["hidden.weight"][2, 0] = False  # an ordinary pruned input weight
    _prune(model, masks)
    live = live_masks(model, masks, torch.randn(50, 3), torch.Generator().manual_seed(1))
    expected_hidden = masks["hidden.weight"].clone()
    expected_hidden[1] = False
    assert torch.equal(live["hidden.weight"], expected_hidden)
    assert torch.equal(live["hidden.bias"], torch.tensor([True, False, True, True]))
    assert torch.equal(live["out.weight"], masks["out.weight"])
    assert bool(live["out.bias"].all())


def test_rnn_unit_reaching_the_output_only_through_recurrence_stays_live():
    torch.manual_seed(0)
    rnn = ElmanRNN(2, 3)
    model = LastStep(rnn)
    masks = {f"rnn.{name}": torch.ones_like(p, dtype=torch.bool) for name, p in rnn.named_parameters()}
    masks["rnn.out.weight"][0, 0] = False  # unit 0: no read-out ...
    masks["rnn.recurrent.weight"][1:, 0] = False  # ... and feeds no other unit: dead
    masks["rnn.out.weight"][0, 2] = False  # unit 2: no read-out, but feeds unit 1: live
    _prune(model, masks)
    live = live_masks(model, masks, torch.randn(40, 5, 2), torch.Generator().manual_seed(2))
    assert not bool(live["rnn.input.weight"][0].any())  # so lag inputs into unit 0 are not "selected"
    assert not bool(live["rnn.recurrent.weight"][0].any())  # what drives unit 0 is dead too
    assert bool(live["rnn.input.weight"][1:].all())
    assert bool(live["rnn.recurrent.weight"][1:, 1:].all())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_live_masks_of_an_lstm_on_cuda_are_those_on_the_cpu():
    """torch's LSTM runs cuDNN's kernels on a GPU, which refuse a backward pass in eval mode: the probe
    must still find each live weight, exactly as on the CPU."""
    torch.manual_seed(0)
    model = SequenceNet(2, 6, 3)
    masks = {name: torch.rand(p.shape) > 0.4 for name, p in model.named_parameters()}
    masks["head.weight"][:, 0] = False  # unit 0 reaches the outputs only through the recurrence
    _prune(model, masks)
    X = torch.randn(40, 7, 2)
    cpu = live_masks(model, masks, X, torch.Generator().manual_seed(3))
    gpu = live_masks(model.cuda(), {k: v.cuda() for k, v in masks.items()}, X.cuda(),
                     torch.Generator().manual_seed(3))
    assert set(gpu) == set(cpu)
    for name in cpu:
        assert torch.equal(gpu[name].cpu(), cpu[name]), name
    assert not bool(cpu["head.weight"][:, 0].any()) and 0 < int(cpu["lstm.weight_hh_l0"].sum()) < 4 * 6 * 6
    assert all(bool((cpu[name] <= masks[name]).all()) for name in cpu)  # live weights are kept ones


def test_stacked_mlps_train_exactly_like_separate_networks():
    """At temperature 0 (no injected noise) the stack and G separate MLPs see the same batches,
    priors and thresholds, so they end with the same weights and masks."""
    g = torch.Generator().manual_seed(3)
    X = torch.randn(60, 2, 3, generator=g)
    y = (torch.stack([X[:, 0, 0] - 0.5 * X[:, 0, 1], torch.sin(X[:, 1, 2])], dim=1)
         + 0.1 * torch.randn(60, 2, generator=g))
    # lr / (s0 n) = 0.05 / (2e-3 * 60) < 2 (1 + m): stable on the spike, so float rounding is not amplified
    settings = PASettings(epochs=30, lr=0.05, batch_size=16, T1=10, T2=15, T3=25, s1=0.05, s0_init=1e-2,
                          s0_end=2e-3, lam=1e-3, tau=0.0, refine_epochs=5)
    torch.manual_seed(0)
    stack = StackedMLPs(2, 3, hidden=4)
    separate = [stack.group(k) for k in range(2)]
    masks = train_pa(stack, X, y, settings, seed=7)
    for k, mlp in enumerate(separate):
        own = train_pa(mlp, X[:, k], y[:, k], settings, seed=7)
        for name, mask in stack.group_masks(masks, k).items():
            assert torch.equal(mask, own[name]), name
        for (name, a), b in zip(stack.group(k).named_parameters(), mlp.parameters()):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5, msg=name)
    pruned = sum(int((~m).sum()) for m in masks.values())
    assert pruned > 0  # the prior did prune something, so masks were compared non-trivially


def test_a_unit_saturated_in_float32_is_not_taken_for_dead():
    torch.manual_seed(0)
    model = MLP(3, 4)
    with torch.no_grad():
        model.hidden.bias[0] = 20.0  # sigmoid(~20) == 1.0 exactly in float32
    masks = {name: torch.ones_like(p, dtype=torch.bool) for name, p in model.named_parameters()}
    live = live_masks(model, masks, torch.randn(30, 3), torch.Generator().manual_seed(1))
    assert all(bool(m.all()) for m in live.values())


def test_live_masks_check_names_and_fill_absent_parameters():
    torch.manual_seed(0)
    model = MLP(2, 3)
    only_out = {"out.weight": torch.tensor([[True, False, True]])}
    live = live_masks(model, only_out, torch.randn(20, 2))
    assert set(live) == {"hidden.weight", "hidden.bias", "out.weight", "out.bias"}
    assert bool(live["hidden.weight"].all())  # absent = kept; model weights are not pruned here
    with pytest.raises(ValueError, match="unknown parameters"):
        live_masks(model, {"nope": torch.ones(1, dtype=torch.bool)}, torch.randn(5, 2))


def test_idle_rnn_units_are_dropped_without_changing_the_function_or_the_interval():
    torch.manual_seed(0)
    rnn = ElmanRNN(2, 6).double()
    masks = {f"rnn.{name}": torch.rand(p.shape) > 0.3 for name, p in rnn.named_parameters()}
    for unit in (1, 4):  # no kept weight touches units 1 and 4
        for name in ("rnn.input.weight", "rnn.input.bias", "rnn.recurrent.weight"):
            masks[name][unit] = False
        masks["rnn.recurrent.weight"][:, unit] = False
        masks["rnn.out.weight"][:, unit] = False
    masks["rnn.input.weight"][3] = masks["rnn.recurrent.weight"][3] = masks["rnn.recurrent.weight"][:, 3] = False
    masks["rnn.out.weight"][0, 3] = False
    masks["rnn.input.bias"][3] = masks["rnn.recurrent.weight"][0, 3] = True  # unit 3: a constant fed to unit 0: kept
    _prune(LastStep(rnn), masks)
    small, small_masks = drop_idle_units(rnn, masks)
    assert small.recurrent.in_features == 4
    assert sum(int(m.sum()) for m in small_masks.values()) == sum(int(m.sum()) for m in masks.values())
    X = torch.randn(200, 5, 2, dtype=torch.float64)
    y = LastStep(rnn)(X).detach() + 0.1 * torch.randn(200, dtype=torch.float64)
    assert torch.allclose(small(X), rnn(X), atol=1e-12)
    full_fit = fit_asymptotic_normal(LastStep(rnn), masks, X, y, hessian="ggn")
    small_fit = fit_asymptotic_normal(LastStep(small), small_masks, X, y, hessian="ggn")
    full, compact = full_fit.predict(X[:7], 0.1), small_fit.predict(X[:7], 0.1)
    for a, b in zip(full, compact):
        assert torch.allclose(torch.as_tensor(a), torch.as_tensor(b), atol=1e-9)
    # nothing kept in the cell: one unit, its weights at 0, the output the read-out bias
    only_bias = {name: torch.zeros_like(m) if name != "rnn.out.bias" else torch.ones_like(m)
                 for name, m in masks.items()}
    small, small_masks = drop_idle_units(rnn, only_bias)
    assert small.recurrent.in_features == 1
    assert not any(bool(m.any()) for k, m in small_masks.items() if k != "rnn.out.bias")
    assert torch.allclose(small(X), rnn.out.bias.detach().expand(200), atol=1e-12)
