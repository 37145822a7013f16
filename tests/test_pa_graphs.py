"""PA's SGHMC iterations with the schedule in device tensors (TensorScalarIterations) and their CUDA graphs.

On the CPU: the tensor-scalar iterations train the network the eager loop trains (same minibatches and
noise, float32 rounding apart), for one network and a stack of members, with the schedule moving every
value they read. On a GPU (skipped without one): a graphed run equals the eager one bit for bit, and a
step that cannot be captured falls back to the eager step with the reason.
"""

from __future__ import annotations

import pytest
import torch

from pibench.methods.cuda_graph import GRAPHS_ENV_VAR, GraphedStep, graphs_enabled, host_syncs
from pibench.methods.device import use_device
from pibench.methods.pa.networks import AfterBurnIn, ElmanRNN, StackedElmanRNNs
from pibench.methods.pa.trainer import PASettings, PATraining, TensorScalarIterations

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

#: every phase: plain SGD (t < 8), the prior's weight ramping (8-15), s0 annealing (16-27), cooling, refining
SETTINGS = PASettings(epochs=40, lr=2e-3, batch_size=16, T1=8, T2=16, T3=28, s1=0.05, s0_init=1e-3, s0_end=1e-4,
                      lam=1e-2, tau=0.1, refine_epochs=6, unit="iteration")


def _data(members: int | None, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    shape = (200,) if members is None else (200, members)
    return torch.randn(*shape, 6, 4, generator=g), torch.randn(*shape, 3, generator=g)


def _model(members: int | None) -> torch.nn.Module:
    def rnn(b: int) -> ElmanRNN:
        torch.manual_seed(b)
        return ElmanRNN(4, 24, init_bound=0.2)
    if members is None:
        return AfterBurnIn(rnn(0), 3)
    return StackedElmanRNNs.from_members([rnn(b) for b in range(members)], burn_in=3)


def _train(members: int | None, tensor_scalars: bool, graphs: bool = False) -> tuple[dict, dict, str]:
    X, y = _data(members)
    model = _model(members)
    seed = 5 if members is None else [5 + b for b in range(members)]
    training = PATraining(model, X, y, SETTINGS, seed, graphs=graphs)
    if tensor_scalars and training.iterations is None:  # the CPU: ask for them (a GPU uses them by default)
        training.iterations = TensorScalarIterations(training.model, training.X, training.y, SETTINGS,
                                                     training.generator, graphs=False)
    for t in range(SETTINGS.epochs):
        training.unit(t)
    if graphs and training.iterations is not None:  # every step that ran past its warm-up was captured
        steps = training.iterations._steps.values()
        assert all(s.graph is not None for s in steps if s.calls > s.warmup), [s.fallback_reason for s in steps]
    masks = training.sparsify_and_refine()
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, masks, training.step_mode


@pytest.mark.parametrize("members", [None, 3])
def test_tensor_scalar_iterations_train_what_the_eager_loop_trains(members):
    torch.set_num_threads(1)
    initial = {k: v.clone() for k, v in _model(members).state_dict().items()}
    eager, eager_masks, mode = _train(members, tensor_scalars=False)
    tensor, tensor_masks, tensor_mode = _train(members, tensor_scalars=True)
    assert (mode, tensor_mode) == ("eager", "eager")
    for name in eager_masks:
        assert torch.equal(eager_masks[name], tensor_masks[name]), name
    for name in eager:
        moved = (eager[name] - initial[name]).abs().max()
        assert moved > 1e-3, f"{name} did not train: the comparison would be empty"
        assert (tensor[name] - eager[name]).abs().max() <= 1e-4 * moved, name


def test_a_wrong_schedule_value_would_show():
    """The comparison above has teeth: the tensor-scalar iterations with the noise scale doubled differ."""
    torch.set_num_threads(1)
    eager, _, _ = _train(None, tensor_scalars=False)
    X, y = _data(None)
    model = _model(None)
    training = PATraining(model, X, y, SETTINGS, 5, graphs=False)
    iterations = TensorScalarIterations(training.model, training.X, training.y, SETTINGS, training.generator, False)
    training.iterations = iterations
    doubled = training.opt.noise_std
    training.opt.noise_std = lambda: 2 * doubled()  # type: ignore[method-assign]
    for t in range(SETTINGS.epochs):
        training.unit(t)
    training.sparsify_and_refine()
    assert max((model.state_dict()[k] - eager[k]).abs().max() for k in eager) > 1e-3


def test_graphs_switch_and_disabled_step():
    calls = []
    step = GraphedStep(lambda: calls.append(1), enabled=False)
    step(), step(), step()
    assert len(calls) == 3 and step.mode == "eager" and step.fallback_reason == f"{GRAPHS_ENV_VAR}=0"


@pytest.mark.parametrize("value, enabled", [(None, True), ("1", True), ("0", False), ("off", False), ("no", False)])
def test_graphs_enabled_reads_the_environment(monkeypatch, value, enabled):
    if value is None:
        monkeypatch.delenv(GRAPHS_ENV_VAR, raising=False)
    else:
        monkeypatch.setenv(GRAPHS_ENV_VAR, value)
    assert graphs_enabled() is enabled


@needs_cuda
@pytest.mark.parametrize("members", [None, 3])
def test_on_cuda_graphed_iterations_equal_the_eager_ones_bit_for_bit(members):
    with use_device("cuda"):
        graphed, graphed_masks, mode = _train(members, tensor_scalars=True, graphs=True)
        eager, eager_masks, eager_mode = _train(members, tensor_scalars=True, graphs=False)
    assert mode == "cuda-graph", mode
    assert eager_mode == f"eager ({GRAPHS_ENV_VAR}=0)", eager_mode
    for name in eager_masks:
        assert torch.equal(graphed_masks[name], eager_masks[name]), name
    for name in eager:
        diff = (graphed[name] - eager[name]).abs().max().item()
        assert diff == 0.0, f"{name}: graphed and eager differ by {diff}"


def test_only_torchs_sync_warning_counts_as_a_host_sync():
    """The prototype notice that setting the debug mode prints (as the H200 run of 2026-11-27 logged it) is
    no sync; torch's sync warning is, whatever surrounds it."""
    notice = ("Synchronization debug mode is a prototype feature and does not yet detect all synchronizing "
              "operations (Triggered internally at /pytorch/torch/csrc/cuda/Module.cpp:910.)")
    sync = "called a synchronizing CUDA operation (Triggered internally at /pytorch/c10/cuda/CUDAFunctions.cpp:152.)"
    assert host_syncs([notice]) == []
    assert host_syncs([notice, sync, "some other warning"]) == [sync]


def test_a_step_needs_a_warm_up_call():
    with pytest.raises(ValueError, match="warmup must be at least 1"):
        GraphedStep(lambda: None, warmup=0)


@needs_cuda
def test_on_cuda_a_step_that_waits_for_the_host_is_never_captured_and_runs_eagerly_with_the_reason():
    with use_device("cuda"):
        total = torch.zeros((), device="cuda")
        seen = []

        def step():
            total.add_(1.0)
            seen.append(float(total.item()))  # a host sync: not allowed while capturing
        graphed = GraphedStep(step, warmup=1)
        for _ in range(4):
            graphed()
        torch.cuda.synchronize()
    assert graphed.mode == "eager" and "waits for the host" in (graphed.fallback_reason or "")
    assert total.item() == 4.0 and seen == [1.0, 2.0, 3.0, 4.0]


@needs_cuda
def test_on_cuda_a_captured_step_replays_with_its_generator():
    """A graph of a step drawing from a registered CUDA generator draws, replay by replay, what eager calls draw."""
    with use_device("cuda"):
        def draws(graphs: bool) -> list[torch.Tensor]:
            generator = torch.Generator(device="cuda").manual_seed(11)
            out = torch.zeros(4, device="cuda")
            seen = []

            def step():
                out.copy_(torch.randn(4, generator=generator, device="cuda"))
            graphed = GraphedStep(step, [generator], warmup=2, enabled=graphs)
            for _ in range(6):
                graphed()
                seen.append(out.clone())
            assert graphed.mode == ("cuda-graph" if graphs else "eager")
            return seen
        graphed, eager = draws(True), draws(False)
    assert all(torch.equal(a, b) for a, b in zip(graphed, eager))
    assert not torch.equal(graphed[4], graphed[5])  # each replay draws anew
