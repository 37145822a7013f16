"""The code a method class runs, taken from the loaded class, not from a file that may have changed since.

DESIGN "Identity is what runs": a task's identity must name the code that will
compute it. pibench's own source is named by ``code_version`` (the files of the
checkout or install). A method defined elsewhere is named by snapshots taken when
its ``class`` statement runs (``IntervalMethod.__init_subclass__``), the moment the
loaded code came from its source:

* a class of a module file (a plugin package, a module of the user's, a script) is
  named by the source of every module of its top-level package loaded at that
  moment (the module that defines it and the helpers it imported: a change of a
  helper is a change of the method); a module imported only later, inside a
  function, is not seen;
* a class with no source file (a notebook cell, ``python -c``) is named by a digest
  of its own code: bytecode, constants and names of its functions, their defaults
  and closures, and the globals they read (functions and classes of the same module
  recursively, other values by a canonical repr). An edited and re-run cell, or an
  edited cell it relies on, is new code.

Reading the files later would name whatever they hold then, which is how an edit
after the import got the old code's numbers stored under the new code's name.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
import types
from dataclasses import dataclass
from pathlib import Path

#: The class attribute that holds a class's own snapshots (read from ``cls.__dict__``: never inherited).
SNAPSHOT_ATTRIBUTE = "_pibench_source_snapshot"


@dataclass(frozen=True)
class SourceSnapshot:
    """One piece of the code outside pibench a method class runs, as it was when the class was created."""

    module: str          #: e.g. "mypi.rolling_gauss"; "__main__" for a script or a notebook
    path: str | None     #: the file it was read from; None without one (a notebook cell, ``python -c``)
    sha256: str          #: of the module's source bytes, or "code:" + a digest of the class's code
    qualname: str = ""   #: the class a code digest is of ("" for a module file)

    @property
    def key(self) -> str:
        """What names it in a task's identity: the module, or module:class for a class with no file."""
        return f"{self.module}:{self.qualname}" if self.path is None else self.module

    @property
    def display(self) -> str:
        """How messages name it: the file under its package root (``mypi/rolling_gauss.py``)."""
        if self.path is None:
            return f"{self.module}.{self.qualname} (no source file: a notebook cell or `python -c`)"
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


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def canonical_repr(value: object) -> str:
    """A repr that is the same in every process: sets by their sorted elements, memory addresses removed."""
    if isinstance(value, (set, frozenset)):
        return f"{type(value).__name__}({sorted(canonical_repr(v) for v in value)})"
    if isinstance(value, (tuple, list)):
        return f"{type(value).__name__}({[canonical_repr(v) for v in value]})"
    if isinstance(value, dict):
        return f"dict({sorted((canonical_repr(k), canonical_repr(v)) for k, v in value.items())})"
    return _ADDRESS.sub("", repr(value))


class _CodeDigest:
    """Feeds a hash with what defines a class, function or code object (module docstring), following the
    functions and classes of ``module`` that the code reads, each once."""

    def __init__(self, module: str):
        self.module = module
        self.h = hashlib.sha256()
        self.seen: set[int] = set()

    def add(self, obj: object) -> None:
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, property):
            for part in (obj.fget, obj.fset, obj.fdel):
                self.add(part)
        elif isinstance(obj, types.FunctionType):
            if id(obj) in self.seen:
                return
            self.seen.add(id(obj))
            self._code(obj.__code__)
            self.h.update(canonical_repr((obj.__defaults__, obj.__kwdefaults__)).encode())
            for cell in obj.__closure__ or ():  # a decorated function's wrapped function, its arguments
                try:
                    self.add(cell.cell_contents)
                except ValueError:  # an empty cell
                    pass
            for name in self._names(obj.__code__):
                if name in obj.__globals__:
                    self.h.update(name.encode() + b"=")
                    self._global(obj.__globals__[name])
        elif isinstance(obj, type) and getattr(obj, "__module__", None) == self.module:
            if id(obj) in self.seen:
                return
            self.seen.add(id(obj))
            self.h.update(obj.__qualname__.encode())
            for name in sorted(vars(obj)):
                if name in ("__dict__", "__weakref__", "__module__", "__doc__", SNAPSHOT_ATTRIBUTE) \
                        or name.startswith("_abc_"):
                    continue
                self.h.update(name.encode() + b"=")
                self.add(vars(obj)[name])
        else:
            self.h.update(canonical_repr(obj).encode())

    def _code(self, code: types.CodeType) -> None:
        self.h.update(code.co_code + canonical_repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self._code(const)
            else:
                self.h.update(canonical_repr(const).encode())

    def _names(self, code: types.CodeType) -> list[str]:
        names = list(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                names += self._names(const)
        return sorted(set(names))

    def _global(self, value: object) -> None:
        if isinstance(value, types.ModuleType):
            self.h.update(b"module " + value.__name__.encode())
        elif isinstance(value, (types.FunctionType, type)) and getattr(value, "__module__", None) != self.module:
            self.h.update(f"{value.__module__}.{value.__qualname__}".encode())  # a library's: named, not read
        else:
            self.add(value)


def class_code_digest(cls: type) -> str:
    """The digest of a class's own code and what it reads (:class:`_CodeDigest`)."""
    digest = _CodeDigest(cls.__module__)
    digest.add(cls)
    return digest.h.hexdigest()


def _package_files(module_name: str) -> list[tuple[str, str]]:
    """(name, file) of every loaded module of ``module_name``'s top-level package that has a source file."""
    top = module_name.split(".")[0]
    found = []
    for name, module in list(sys.modules.items()):
        if name == top or name.startswith(top + ".") or name == module_name:
            path = getattr(module, "__file__", None)
            if path and str(path).endswith(".py"):
                found.append((name, str(path)))
    return sorted(set(found))


def _code_files(cls: type) -> set[str]:
    """The files the class's own functions were compiled from (empty for a class without functions)."""
    files = set()
    for value in vars(cls).values():
        function = getattr(value, "__func__", value)
        code = getattr(function, "__code__", None)
        if code is not None:
            files.add(code.co_filename)
    return files


def _defined_in_its_module_file(cls: type) -> bool:
    """Whether ``cls`` was compiled from its module's source file (not, say, from a cell or a string run by
    ``exec`` in a module whose file is another program's, such as a documentation builder's ``__main__``)."""
    if not _has_file(cls.__module__):
        return False
    module_file = Path(str(sys.modules[cls.__module__].__file__)).resolve()
    files = _code_files(cls)
    if not files:
        return True  # no functions of its own: its module's file is all there is to name
    return all(not f.startswith("<") and Path(f).resolve() == module_file for f in files)


def take_snapshot(cls: type) -> tuple[SourceSnapshot, ...]:
    """The snapshots of ``cls`` now (none for pibench's own classes). Never raises: a class that pibench
    cannot read is named by its code."""
    if is_pibench_class(cls):
        return ()
    snaps = []
    for name, path in (_package_files(cls.__module__) if _defined_in_its_module_file(cls) else []):
        try:
            snaps.append(SourceSnapshot(name, path, hashlib.sha256(Path(path).read_bytes()).hexdigest()))
        except OSError:
            continue
    if not any(s.module == cls.__module__ for s in snaps):
        snaps.append(SourceSnapshot(cls.__module__, None, "code:" + class_code_digest(cls), cls.__qualname__))
    return tuple(snaps)


def _has_file(module_name: str) -> bool:
    path = getattr(sys.modules.get(module_name), "__file__", None)
    return bool(path) and str(path).endswith(".py")


def snapshots(cls: type) -> list[SourceSnapshot]:
    """The snapshots of ``cls`` and of its method base classes defined outside pibench, base-most first
    (one per key: a subclass's, taken later, wins)."""
    found: dict[str, SourceSnapshot] = {}
    for klass in reversed(cls.__mro__):
        for snapshot in vars(klass).get(SNAPSHOT_ATTRIBUTE) or ():
            if isinstance(snapshot, SourceSnapshot):
                found.pop(snapshot.key, None)
                found[snapshot.key] = snapshot
    return list(found.values())


def method_code_identity(cls: type) -> dict[str, str]:
    """{module (or module:class): sha256 prefix} of the code outside pibench that ``cls`` runs; {} for a
    pibench method."""
    return {s.key: s.sha256[:17] if s.sha256.startswith("code:") else s.sha256[:12] for s in snapshots(cls)}


def describe_change(before: dict[str, str] | None, after: dict[str, str] | None) -> str | None:
    """One line naming the modules whose code differs between two :func:`method_code_identity` values."""
    before, after = before or {}, after or {}
    if before == after:
        return None
    changed = sorted(m for m in set(before) | set(after) if before.get(m) != after.get(m))
    return "plugin source changed: " + ", ".join(display_name(m) for m in changed)


def display_name(key: str) -> str:
    """A module's file as messages name it, from its identity key alone (``mypi.rolling_gauss`` ->
    ``mypi/rolling_gauss.py``; ``__main__:Cls`` -> the class in the running script or notebook)."""
    module, _, qualname = key.partition(":")
    if qualname:
        return f"{qualname} in {'the running script or notebook' if module == '__main__' else module}"
    return "__main__ (the running script or notebook)" if module == "__main__" else module.replace(".", "/") + ".py"


class StaleSourceError(ValueError):
    """A method's source file changed after it was imported, and it could not be reloaded."""


def reload_if_stale(cls: type) -> type | None:
    """If a file ``cls``'s code was read from has changed on disk, import its modules again (helpers
    first, then the modules of the class and its bases, base-most first; byte-code caches dropped so the
    new source is compiled) and return the new class of the same qualified name; None if nothing changed.
    StaleSourceError if the code cannot be reloaded (a class of ``__main__``, a module gone from
    ``sys.modules``, a new source that fails to import or no longer defines the method under its name)."""
    chain = [s for s in snapshots(cls) if s.path is not None]
    stale = [s for s in chain if s.is_stale()]
    if not stale:
        return None
    names = ", ".join(s.display for s in stale)
    label = getattr(cls, "name", cls.__qualname__)
    defining = [k.__module__ for k in reversed(cls.__mro__) if not is_pibench_class(k)]
    order = sorted({s.module for s in chain} - set(defining)) + list(dict.fromkeys(m for m in defining
                                                                               if m in {s.module for s in chain}))
    for module_name in order:
        if module_name == "__main__" or module_name not in sys.modules:
            raise StaleSourceError(
                f"{names} changed on disk after method {label!r} was loaded, and {module_name} cannot be imported "
                "again in this process: restart Python (or rerun the notebook) so that the code which runs is "
                "the code on disk.")
    for module_name in order:
        path = next(s.path for s in chain if s.module == module_name)
        try:
            if path is not None:
                Path(importlib.util.cache_from_source(path)).unlink(missing_ok=True)  # a same-second edit's bytecode
        except (OSError, NotImplementedError):
            pass  # a read-only location: the import checks the cache's stamp itself
        try:
            importlib.reload(sys.modules[module_name])
        except Exception as exc:
            raise StaleSourceError(f"{names} changed on disk after it was imported, and importing it again "
                                   f"failed ({type(exc).__name__}: {exc}); fix the file and run again.") from None
    new: object = sys.modules[cls.__module__]
    for part in cls.__qualname__.split("."):
        new = getattr(new, part, None)
    if not isinstance(new, type):
        raise StaleSourceError(f"{names} changed on disk and no longer defines {cls.__qualname__}; register the "
                               "method again under its new class, or restart Python.")
    if getattr(new, "name", None) != label:
        raise StaleSourceError(f"{names} changed on disk and {cls.__qualname__} is now named "
                               f"{getattr(new, 'name', None)!r}, not {label!r}; run it under its new name.")
    return new
