"""Progress inside one task: the steps of a long fit (refits, training epochs) told to whoever listens in this
thread, the runner's bar when tasks run in its own process; nothing where nobody listens (a worker process, a
method used alone), at the cost of one lookup per step."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: stage ("fits", "epochs"), steps done, steps in all -> None
Listener = Callable[[str, int, int], None]

_LISTENER: ContextVar[Listener | None] = ContextVar("pibench_task_progress", default=None)


def report(stage: str, done: int, total: int) -> None:
    """Tell the listener, if any, that ``done`` of ``total`` steps of ``stage`` are done."""
    listener = _LISTENER.get()
    if listener is not None:
        listener(stage, done, total)


@contextmanager
def listening(listener: Listener) -> Iterator[None]:
    """Within the block, :func:`report` calls ``listener``."""
    token = _LISTENER.set(listener)
    try:
        yield
    finally:
        _LISTENER.reset(token)
