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
the notes ask: lazy initialisation, cuBLAS workspaces), captures the next, then
replays. Anything that goes wrong in capture leaves the graph off for good and
runs the step eagerly; ``mode`` says which ran and ``fallback_reason`` why.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

import torch

#: ``PIBENCH_CUDA_GRAPHS=0`` turns graph capture off (the eager step runs: the same numbers, slower)
GRAPHS_ENV_VAR = "PIBENCH_CUDA_GRAPHS"


def graphs_enabled() -> bool:
    """Whether steps on a GPU are captured as CUDA graphs (default yes; ``PIBENCH_CUDA_GRAPHS=0`` says no)."""
    return os.environ.get(GRAPHS_ENV_VAR, "1").strip().lower() not in ("0", "false", "no", "off")


class GraphedStep:
    """``step()`` captured as a CUDA graph after ``warmup`` eager calls (module doc); callable like it."""

    def __init__(self, step: Callable[[], None], generators: Sequence[torch.Generator] = (), warmup: int = 2,
                 enabled: bool = True) -> None:
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
        elif self.calls <= self.warmup:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                self.step()
            torch.cuda.current_stream().wait_stream(side)
        else:
            self._capture_and_replay()

    def _capture_and_replay(self) -> None:
        graph = torch.cuda.CUDAGraph()
        try:
            for generator in self.generators:
                graph.register_generator_state(generator)
            with torch.cuda.graph(graph):
                self.step()
        except Exception as exc:  # any failure to capture: the eager step, for good
            self.fallback_reason = f"capture failed: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            torch.cuda.synchronize()
            self.step()
            return
        self.graph = graph
        graph.replay()  # capture records the step without running it
