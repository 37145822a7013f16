"""The code a method class runs, taken from the loaded class, not from a file that may have changed since.

DESIGN "Identity is what runs": a task's identity must name the code that will
compute it. pibench's own source is named by ``code_version`` (the files of the
checkout or install). A method defined elsewhere (a plugin package, a module of
the user's, a notebook cell) is named by a :class:`SourceSnapshot` of the module
that defines it, taken when its ``class`` statement runs
(``IntervalMethod.__init_subclass__``): that is the moment the loaded code came
from that source. Reading the file later would name whatever the file holds then,
which is how an edit after the import got the old code's numbers stored under the
new code's name.

A class with no source file (a notebook cell, ``python -c``) is named by a
digest of its own code objects (bytecode, constants and names, recursively), so
an edited and re-run cell is new code too.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
import types
from dataclasses import dataclass
from pathlib import Path

#: The class attribute that holds a class's own snapshot (read from ``cls.__dict__``: never inherited).
SNAPSHOT_ATTRIBUTE = "_pibench_source_snapshot"


@dataclass(frozen=True)
class SourceSnapshot:
    """The source of the module that defines a method class, as it was when the class was created."""

    module: str          #: e.g. "mypi.rolling_gauss"; "__main__" for a script or a notebook
    path: str | None     #: the file it was read from; None without one (a notebook cell, ``python -c``)
    sha256: str          #: of the module's source bytes, or "code:" + a digest of the class's code objects

    @property
    def display(self) -> str:
        """How messages name it: the file under its package root (``mypi/rolling_gauss.py``)."""
        if self.path is None:
            return f"{self.module} (no source file: a notebook cell or `python -c`)"
        if self.module == "__main__":
            return Path(self.path).name
        name = self.module.replace(".", "/")
        return f"{name}/__init__.py" if Path(self.path).name == "__init__.py" else f"{name}.py"

    def on_disk(self) -> str | None:
        """sha256 of the file now; None if there is no file or it cannot be read."""
        if self.path is None:
            return None
        try:
            return hashlib.sha256(Path(self.path).read_bytes()).hexdigest()
        except OSError:
            return None

    def is_stale(self) -> bool:
        """Whether the file on disk differs from the source the class was created from."""
        now = self.on_disk()
        return now is not None and now != self.sha256


def is_pibench_class(cls: type) -> bool:
    """A class of pibench's own source, whose identity is the code version."""
    return cls.__module__ == "pibench" or cls.__module__.startswith("pibench.")


def _code_digest(obj, h) -> None:
    """Feed ``h`` with what defines a code object or function: bytecode, constants (nested code
    recursively), names and defaults. Line numbers and file names are left out."""
    if isinstance(obj, (staticmethod, classmethod)):
        obj = obj.__func__
    if isinstance(obj, property):
        for part in (obj.fget, obj.fset, obj.fdel):
            _code_digest(part, h)
        return
    if isinstance(obj, types.FunctionType):
        _code_digest(obj.__code__, h)
        h.update(repr(obj.__defaults__).encode() + repr(obj.__kwdefaults__).encode())
        return
    if isinstance(obj, types.CodeType):
        h.update(obj.co_code + repr((obj.co_names, obj.co_varnames, obj.co_freevars)).encode())
        for const in obj.co_consts:
            if isinstance(const, types.CodeType):
                _code_digest(const, h)
            else:
                h.update(repr(const).encode())
        return
    h.update(repr(obj).encode())


def class_code_digest(cls: type) -> str:
    """A digest of the class's own attributes: its functions' code, its other values' reprs."""
    h = hashlib.sha256(cls.__qualname__.encode())
    for name in sorted(vars(cls)):
        if name in ("__dict__", "__weakref__", "__module__", "__doc__", SNAPSHOT_ATTRIBUTE) or name.startswith("_abc_"):
            continue
        h.update(name.encode() + b"=")
        _code_digest(vars(cls)[name], h)
    return h.hexdigest()


def take_snapshot(cls: type) -> SourceSnapshot | None:
    """The snapshot of ``cls``'s defining module now (None for pibench's own classes). Never raises: a
    class that pibench cannot read is named by its code."""
    if is_pibench_class(cls):
        return None
    module = sys.modules.get(cls.__module__)
    path = getattr(module, "__file__", None)
    if path and str(path).endswith(".py"):
        try:
            return SourceSnapshot(cls.__module__, str(path), hashlib.sha256(Path(path).read_bytes()).hexdigest())
        except OSError:
            pass
    return SourceSnapshot(cls.__module__, None, "code:" + class_code_digest(cls))


def snapshots(cls: type) -> list[SourceSnapshot]:
    """The snapshots of ``cls`` and of its method base classes defined outside pibench, base-most first."""
    found: list[SourceSnapshot] = []
    for klass in reversed(cls.__mro__):
        snapshot = vars(klass).get(SNAPSHOT_ATTRIBUTE)
        if isinstance(snapshot, SourceSnapshot) and snapshot not in found:
            found.append(snapshot)
    return found


def method_code_identity(cls: type) -> dict[str, str]:
    """{module: sha256 prefix} of the code outside pibench that ``cls`` runs; {} for a pibench method."""
    return {s.module: s.sha256[:17] if s.sha256.startswith("code:") else s.sha256[:12] for s in snapshots(cls)}


def describe_change(before: dict[str, str] | None, after: dict[str, str] | None) -> str | None:
    """One line naming the modules whose code differs between two :func:`method_code_identity` values."""
    before, after = before or {}, after or {}
    if before == after:
        return None
    changed = sorted(m for m in set(before) | set(after) if before.get(m) != after.get(m))
    return "plugin source changed: " + ", ".join(display_name(m) for m in changed)


def display_name(module: str) -> str:
    """A module's file as messages name it, from its name alone (``mypi.rolling_gauss`` ->
    ``mypi/rolling_gauss.py``)."""
    return "__main__ (the running script or notebook)" if module == "__main__" else module.replace(".", "/") + ".py"


class StaleSourceError(ValueError):
    """A method's source file changed after it was imported, and it could not be reloaded."""


def reload_if_stale(cls: type) -> type | None:
    """If a file ``cls`` was created from has changed on disk, import its modules again (base-most first,
    byte-code caches dropped so the new source is compiled) and return the new class of the same
    qualified name; None if nothing changed. StaleSourceError if the code cannot be reloaded (a class
    of ``__main__``, a module gone from ``sys.modules``, or the new source fails to import)."""
    chain = snapshots(cls)
    stale = [s for s in chain if s.is_stale()]
    if not stale:
        return None
    names = ", ".join(s.display for s in stale)
    for snapshot in chain:
        module = sys.modules.get(snapshot.module)
        if snapshot.module == "__main__" or module is None:
            raise StaleSourceError(
                f"{names} changed on disk after method {getattr(cls, 'name', cls.__qualname__)!r} was loaded, and "
                f"{snapshot.module} cannot be imported again in this process: restart Python (or rerun the "
                "notebook) so that the code which runs is the code on disk.")
    for snapshot in chain:
        if snapshot.path is not None:
            cached = Path(importlib.util.cache_from_source(snapshot.path))
            cached.unlink(missing_ok=True)  # a same-second, same-size edit would otherwise load the old bytecode
        try:
            importlib.reload(sys.modules[snapshot.module])
        except Exception as exc:
            raise StaleSourceError(f"{names} changed on disk after it was imported, and importing it again "
                                   f"failed ({type(exc).__name__}: {exc}); fix the file and run again.") from None
    new: object = sys.modules[cls.__module__]
    for part in cls.__qualname__.split("."):
        new = getattr(new, part, None)
    if not isinstance(new, type):
        raise StaleSourceError(f"{names} changed on disk and no longer defines {cls.__qualname__}; register the "
                               "method again under its new class, or restart Python.")
    return new
