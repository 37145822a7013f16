"""A fixed-shape training step replayed as a CUDA graph, with the eager call as its fallback.

A step that launches a few hundred small kernels (PA-RNN's SGHMC iteration: a
10-step recurrent forward and backward, the prior's gradient and the update of
every weight) is bound by the host on a GPU: each launch costs microseconds of
Python and dispatch, the kernels themselves less. Captured once as a CUDA graph
(``torch.cuda.CUDAGraph``), the whole step is one launch.

What a captured step may do (PyTorch's "CUDA Graphs" notes): read its per-call
inputs from tensors it captured (the caller writes them before each call), keep
its shapes, and never wait for the host. Random draws inside it come from the
generators registered with the graph before capture, and each replay advances
their Philox offsets by what the eager call would draw: a replay computes what
the eager call computes, kernel for kernel.

:class:`GraphedStep` runs the first ``warmup`` calls eagerly on a side stream (as
the notes ask: lazy initialisation, cuBLAS workspaces), the last of them under
``torch.cuda.set_sync_debug_mode("warn")``: a step that waits for the host there
is never captured and runs eagerly from then on (``fallback_reason`` says why;
``mode`` says which ran). Otherwise the next call is captured, with garbage
collection held off (a graph freed by the collector during another capture
invalidates it), and replayed. A capture that fails anyway raises: on torch 2.11
and 2.12 a failed capture leaves the CUDA generators marked as capturing, so no
eager step could follow it in that process; ``PIBENCH_CUDA_GRAPHS=0`` runs eagerly.
"""

from __future__ import annotations

import gc
import os
import warnings
from collections.abc import Callable, Iterable, Sequence

import torch

#: ``PIBENCH_CUDA_GRAPHS=0`` turns graph capture off (the eager step runs: the same numbers, slower)
GRAPHS_ENV_VAR = "PIBENCH_CUDA_GRAPHS"


def graphs_enabled() -> bool:
    """Whether steps on a GPU are captured as CUDA graphs (default yes; ``PIBENCH_CUDA_GRAPHS=0`` says no)."""
    return os.environ.get(GRAPHS_ENV_VAR, "1").strip().lower() not in ("0", "false", "no", "off")


#: what torch warns under ``set_sync_debug_mode("warn")`` when an operation waits for the GPU (c10/cuda)
SYNC_WARNING = "called a synchronizing CUDA operation"


def host_syncs(messages: Iterable[str]) -> list[str]:
    """The warnings among ``messages`` that report a host sync: torch's own text only. Setting the debug
    mode also warns, once per process, that "Synchronization debug mode is a prototype feature": that
    one is no sync (read as one, it kept every step of a fresh worker from being captured)."""
    return [m for m in messages if SYNC_WARNING in m]


class GraphCaptureFailed(RuntimeError):
    """A step passed the checks before capture but could not be captured (module doc)."""


class GraphedStep:
    """``step()`` captured as a CUDA graph after ``warmup`` eager calls (module doc); callable like it."""

    def __init__(self, step: Callable[[], None], generators: Sequence[torch.Generator] = (), warmup: int = 2,
                 enabled: bool = True) -> None:
        if warmup < 1:  # a step's first call may take another branch (SGHMC's first step clones the gradient)
            raise ValueError(f"warmup must be at least 1, got {warmup}")
        self.step, self.generators, self.warmup = step, list(generators), warmup
        self.graph: torch.cuda.CUDAGraph | None = None
        self.calls = 0
        self.fallback_reason: str | None = None if enabled else f"{GRAPHS_ENV_VAR}=0"

    @property
    def mode(self) -> str:
        """'cuda-graph' once captured, 'eager' while warming up or after a fallback."""
        return "cuda-graph" if self.graph is not None else "eager"

    def __call__(self) -> None:
        self.calls += 1
        if self.graph is not None:
            self.graph.replay()
        elif self.fallback_reason is not None:
            self.step()
        elif self.calls < self.warmup:
            self._on_side_stream()
        elif self.calls == self.warmup:
            self._checked_warmup()
        else:
            self._capture_and_replay()

    def _on_side_stream(self) -> None:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            self.step()
        torch.cuda.current_stream().wait_stream(side)

    def _checked_warmup(self) -> None:
        """The last warm-up call, watched for host syncs (which capture forbids)."""
        before = torch.cuda.get_sync_debug_mode()
        with warnings.catch_warnings():  # setting the mode warns once per process that it is a prototype
            warnings.simplefilter("ignore")
            torch.cuda.set_sync_debug_mode("warn")
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                self._on_side_stream()
        finally:
            torch.cuda.set_sync_debug_mode(before)
        syncs = host_syncs(str(w.message) for w in caught)
        if syncs:
            self.fallback_reason = f"the step waits for the host: {syncs[0].splitlines()[0][:160]}"

    def _capture_and_replay(self) -> None:
        graph = torch.cuda.CUDAGraph()
        for generator in self.generators:
            graph.register_generator_state(generator)
        capture = torch.cuda.Stream()
        capture.wait_stream(torch.cuda.current_stream())
        torch.cuda.synchronize()
        gc.collect()
        collecting = gc.isenabled()
        gc.disable()
        try:
            with torch.cuda.stream(capture):  # left even if capture_end raises
                graph.capture_begin()
                try:
                    self.step()
                finally:
                    graph.capture_end()
        except Exception as exc:
            cause = exc.__context__ or exc
            raise GraphCaptureFailed(
                f"CUDA graph capture failed ({type(cause).__name__}: {str(cause).splitlines()[0][:200]}); run with "
                f"{GRAPHS_ENV_VAR}=0 to train without graphs (the same numbers, slower)") from exc
        finally:
            if collecting:
                gc.enable()
        torch.cuda.current_stream().wait_stream(capture)
        self.graph = graph
        graph.replay()  # capture records the step without running it
