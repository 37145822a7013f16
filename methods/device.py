"""Where a task's torch tensors live: ``pibench run --device {cpu,cuda,auto}`` (or a suite's ``device``).

The runner enters :func:`use_device` around each task, the way it pins threads;
the torch code reads :func:`current_device` only where it creates tensors and
modules (the stacked MLP trainer, PA's trainer and intervals, the sequence
networks' training loop). Initial weights are drawn on the CPU. The random numbers
of every training iteration (minibatch orders, SGHMC noise) come from
:func:`task_generator`, a generator seeded from the task's seed on the device where
the weights live: on the CPU the CPU generator as always (results unchanged), on
CUDA a Philox generator on the GPU, so an iteration never waits for the host. The
two families give different streams, so a CUDA run draws other minibatches and
noise than a CPU run of the same seed; records name the family (:func:`generator_family`).

On CUDA, torch's deterministic algorithms are switched on (``warn_only``: an
operation without a deterministic kernel warns instead of failing) and cuBLAS gets
the fixed workspace it needs for reproducible GEMMs, so that a rerun on the same
GPU model can repeat its numbers. CPU and GPU results agree only to float32
rounding, compounded over training: the kernels sum in other orders (docs/guide/gpu.md).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import torch

DEVICE_CHOICES = ("cpu", "cuda", "auto")

_CPU = torch.device("cpu")
# None: no use_device() in force, so the CPU (a ContextVar default should not be a mutable object)
_current: ContextVar[torch.device | None] = ContextVar("pibench_device", default=None)


def resolve_device(name: str, announce=print) -> str:
    """'cpu' or 'cuda' for a requested device; 'auto' is cuda when torch sees one, else cpu
    (``announce`` gets one line saying so). 'cuda' without a GPU is an error that says what to do."""
    if name not in DEVICE_CHOICES:
        raise ValueError(f"device={name!r}; use one of {', '.join(DEVICE_CHOICES)}.")
    if name == "cpu":
        return "cpu"
    if torch.cuda.is_available():
        return "cuda"
    if name == "auto":
        announce("device auto: torch sees no CUDA device here, so the networks train on the cpu.")
        return "cpu"
    raise ValueError("device 'cuda' was asked for, but torch sees no CUDA device (torch "
                     f"{torch.__version__}); run with --device cpu, or --device auto to use a GPU only when "
                     "there is one.")


def describe_device(name: str) -> str:
    """What a record stores: 'cpu', or 'cuda: <GPU name>'."""
    if name == "cuda":
        return f"cuda: {torch.cuda.get_device_name(torch.cuda.current_device())}"
    return name


def generator_family(name: str) -> str:
    """What a record stores of the generators that drew a task's per-iteration random numbers."""
    return "cuda-philox" if name == "cuda" else "cpu-mt19937"


def task_generator(seed: int) -> torch.Generator:
    """A ``torch.Generator`` seeded with ``seed`` on :func:`current_device` (see the module doc)."""
    return torch.Generator(device=current_device()).manual_seed(int(seed))


def current_device() -> torch.device:
    """The device the running task's tensors go to (cpu outside :func:`use_device`)."""
    device = _current.get()
    return _CPU if device is None else device


@contextmanager
def use_device(name: str) -> Iterator[torch.device]:
    """Make ``name`` ('cpu' or 'cuda', as :func:`resolve_device` returns) the current device."""
    device = torch.device(name)
    deterministic = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    if device.type == "cuda":
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # read when cuBLAS starts
        torch.use_deterministic_algorithms(True, warn_only=True)
    token = _current.set(device)
    try:
        yield device
    finally:
        _current.reset(token)
        torch.use_deterministic_algorithms(deterministic[0], warn_only=deterministic[1])
