"""The code a method class runs: its source files as loaded, and its own code as it stands when a run starts.

DESIGN "Identity is what runs": a task's identity must name the code that will
compute it. pibench's own source is named by ``code_version`` (the files of the
checkout or install). A method defined elsewhere is named by two things:

* the source files it was loaded from (their tokens, :func:`source_digest`: an
  edit of a comment or a blank line is no new code), snapshotted when its ``class``
  statement runs (``IntervalMethod.__init_subclass__``), the moment the loaded code
  came from them: every module of its top-level package loaded then (the module that defines
  it, and the package helpers it imported), and every module of the user's own
  (a file outside the standard library, site-packages and pibench: a sibling
  ``my_helpers.py``) whose functions, classes or module the class reads, or that an
  ``import`` in its code names (one where a method uses it, imported or not yet), and
  those such modules read or import in turn. Reading the files later would name whatever they hold
  then, which is how an edit after the import got the old code's numbers stored
  under the new code's name; a changed file is imported again before a run
  (:func:`reload_if_stale`). A module whose file was edited before the class was
  created but not imported again since (a notebook's class cell run again over an
  edited helper) runs other code than its file: its functions are compared with
  the file's, compiled (:func:`_runs_its_file`), and such a snapshot is stale from
  the start;
* a digest of each of its classes' own code, taken when a run is prepared
  (:func:`method_code_identity`; the class then travels to the workers by value,
  which check its files, :func:`source_identity`): bytecode, constants and names of
  its functions, their defaults and closures, its bases, and the globals they load
  (functions and classes of the same module recursively, also behind ``functools.partial``,
  ``lru_cache`` and ``cached_property``; immutable plain values, numbers of any kind, strings
  and tuples of them, as they are; for a class with no source file of its own, a notebook
  cell's, or of a script run as a file (``__main__``), containers of data too, lists, dicts,
  sets, numeric arrays and pandas Series and DataFrames, by their contents, since no file holds
  a cell's settings and a script may rebind its own between runs; any other object, such as a
  logger, or a cache the method of an imported module fills, by its type only, so state that
  changes as the method runs never changes its name (a cell's or a script's such globals are
  named before a run, :func:`globals_named_by_type`): a cache of data in a script's own globals
  makes each run in it new code). So a second class of the same name in one script, a global or a dict of
  settings a loop sets between runs, a class cell run again with another dict of settings, or a
  helper cell edited and run again without the class's cell is new code. It is all that
  names a class with no source file (a notebook cell, ``python -c``). What it cannot see:
  the contents of other mutable objects (an object's attributes), code
  reached only through such objects, and a helper module's plain global edited in its
  file without importing it again (a module may set its own globals as it runs, so they
  are not compared). A helper a method imports where it uses it is read from its file
  in a worker when it was not imported as the class was created
  (:func:`forget_lazy_helpers`); one imported then, and imported again inside the
  method, is the worker's copy, which may be older where loky kept the worker from an
  earlier run (its package's own modules are not dropped: they would register the
  method again).

A changed helper file is imported again in the order the helpers import each other.
"""

from __future__ import annotations

import dis
import enum
import functools
import graphlib
import hashlib
import importlib
import importlib.machinery
import importlib.util
import inspect
import io
import numbers
import os
import re
import site
import sys
import sysconfig
import tokenize
import types
import warnings
from dataclasses import dataclass, replace
from pathlib import Path

#: The class attribute that holds a class's own snapshots (read from ``cls.__dict__``: never inherited).
SNAPSHOT_ATTRIBUTE = "_pibench_source_snapshot"


@dataclass(frozen=True)
class SourceSnapshot:
    """One source file outside pibench a method class runs, as it was when the class was created."""

    module: str          #: e.g. "mypi.rolling_gauss"; "__main__" for a script
    path: str            #: the file it was read from
    sha256: str          #: :func:`source_digest` of the file
    #: whether the loaded module ran that file's code (False: the file was edited after the module was imported,
    #: and the class was created later, as when a notebook runs a class cell again without importing its helper)
    runs_file: bool = True
    #: whether the module was imported when the snapshot was taken (False: a helper a method imports where it uses
    #: it, whose code is the file's when it is imported: :func:`snapshots`)
    imported: bool = True

    @property
    def key(self) -> str:
        """What names it in a task's identity: the module."""
        return self.module

    @property
    def display(self) -> str:
        """How messages name it: the file under its package root (``mypi/rolling_gauss.py``)."""
        if self.module == "__main__":
            return Path(self.path).name
        name = self.module.replace(".", "/")
        return f"{name}/__init__.py" if Path(self.path).name == "__init__.py" else f"{name}.py"

    def on_disk(self) -> str | None:
        """:func:`source_digest` of the file now; None if it cannot be read."""
        try:
            return source_digest(Path(self.path).read_bytes())
        except OSError:
            return None

    def is_stale(self) -> bool:
        """Whether the code that runs is not the file on disk: the file changed after the class was created,
        or the module had not been imported again after an earlier edit (``runs_file``)."""
        now = self.on_disk()
        return not self.runs_file or (now is not None and now != self.sha256)


#: Python 3.12+ tokenizes an f-string into parts (3.11: one STRING); a digest reads it whole, as 3.11 does.
_FSTRING_START, _FSTRING_END = getattr(tokenize, "FSTRING_START", None), getattr(tokenize, "FSTRING_END", None)


def source_digest(source: bytes) -> str:
    """sha256 of a Python file's tokens, comments and blank lines left out, an indent and a line's end by their
    place alone, an f-string as its exact text (one token, as Python 3.11 reads it, so that every Python
    version names a file alike): what Python compiles from it (docstrings are in; a file that does not
    tokenize is read as its bytes). An edit of a comment, a blank line, the spaces between tokens or the
    line endings (CRLF, normalised first as ``compile`` does) is not new code, so it keeps the results of the
    code it names."""
    source = source.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    digest = hashlib.sha256()
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(source).readline)[0]
        lines = [line.decode(encoding) for line in io.BytesIO(source).readlines()]  # as tokenize reads them
        depth, opened = 0, (0, 0)
        for token in tokenize.tokenize(io.BytesIO(source).readline):
            if token.type in (_FSTRING_START, _FSTRING_END):
                depth += 1 if token.type == _FSTRING_START else -1
                if depth == 1 and token.type == _FSTRING_START:
                    opened = token.start
                if depth > 0:
                    continue
                kind, text = "STRING", _between(lines, opened, token.end)
            elif depth > 0 or token.type in (tokenize.COMMENT, tokenize.NL):
                continue
            else:
                kind = tokenize.tok_name[token.type]
                text = "" if token.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.NEWLINE) else token.string
            digest.update(f"{kind} {len(text)} {text}\n".encode())
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):  # (an unterminated string, a bad indent, ...)
        return hashlib.sha256(source).hexdigest()
    return digest.hexdigest()


def _between(lines: list[str], start: tuple[int, int], end: tuple[int, int]) -> str:
    """The source text from token position ``start`` to ``end`` ((row from 1, column))."""
    (r0, c0), (r1, c1) = start, end
    if r0 == r1:
        return lines[r0 - 1][c0:c1]
    return lines[r0 - 1][c0:] + "".join(lines[r0:r1 - 1]) + lines[r1 - 1][:c1]


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


def _plain(value: object) -> bool:
    """Immutable plain data, which a digest reads as it is (``WIDTH = 2.0``, a tuple of levels): numbers (also
    ``Fraction``, ``Decimal`` and numpy's scalars), strings, bytes, None, enum members, and tuples and frozensets
    of them."""
    if value is None or isinstance(value, (str, bytes, enum.Enum)):
        return True
    if isinstance(value, numbers.Number):  # numpy's scalars by their bytes (data_content): a repr follows printoptions
        return not type(value).__module__.startswith("numpy")
    return isinstance(value, (tuple, frozenset)) and all(_plain(v) for v in value)


#: Data held by a value larger than this is named by its type only (a dataset a notebook holds, say).
MAX_DATA_BYTES = 256 * 2**20


def data_content(value: object, budget: list[int] | None = None, _open: set[int] | None = None) -> bytes | None:
    """The bytes of a container of data, the same in every process: lists, dicts, sets and tuples of plain
    values (:func:`_plain`) and of such containers, and numpy arrays and scalars of numbers (dtype, shape,
    bytes); None for anything else (a masked array, a container that holds itself), or past
    :data:`MAX_DATA_BYTES` of leaves in all, checked before a leaf is copied."""
    import numpy as np

    budget = [MAX_DATA_BYTES] if budget is None else budget
    _open = set() if _open is None else _open
    if type(value).__module__.startswith("pandas"):
        return _pandas_content(value, budget)
    if isinstance(value, (np.ndarray, np.generic)) and not isinstance(value, np.ma.MaskedArray):
        if value.dtype.kind not in "biufcmM" or value.nbytes > budget[0]:
            return None
        budget[0] -= value.nbytes
        return f"{type(value).__name__}({value.dtype.str}, {value.shape})".encode() + np.ascontiguousarray(
            value).tobytes()
    if _plain(value):
        leaf = canonical_repr(value).encode()
        budget[0] -= len(leaf)
        return leaf if budget[0] >= 0 else None
    if not isinstance(value, (list, tuple, set, frozenset, dict)) or id(value) in _open:
        return None
    _open.add(id(value))
    try:
        if isinstance(value, dict):
            if not all(_plain(k) for k in value):
                return None
            pairs = []
            for k, v in value.items():
                part = data_content(v, budget, _open)
                if part is None:
                    return None
                pairs.append(canonical_repr(k).encode() + b":" + part)
            return b"dict[" + b",".join(sorted(pairs)) + b"]"
        items = []
        for v in value:
            part = data_content(v, budget, _open)
            if part is None:
                return None
            items.append(part)
        return f"{type(value).__name__}[".encode() + b",".join(
            sorted(items) if isinstance(value, (set, frozenset)) else items) + b"]"
    finally:
        _open.discard(id(value))


def _pandas_content(value: object, budget: list[int]) -> bytes | None:
    """The bytes of a pandas Series, DataFrame or Index of numbers, strings, booleans or dates (its type, labels,
    dtypes and pandas' own hash of its values and index, :func:`pandas.util.hash_pandas_object`); None for other
    pandas objects, for cells of other objects (whose text may hold a memory address), for anything pandas cannot
    hash or measure, or past the budget."""
    import pandas as pd

    if not isinstance(value, (pd.Series, pd.DataFrame, pd.Index)):
        return None
    try:
        frame = value.to_frame() if isinstance(value, (pd.Series, pd.Index)) else value
        kinds = {pd.api.types.infer_dtype(frame[c], skipna=True) for c in frame.columns} if len(frame.columns) \
            else set()
        if kinds - _PLAIN_CELLS:
            return None
        size = int(frame.memory_usage(index=True, deep=True).sum())
        if size > budget[0]:
            return None
        budget[0] -= size
        hashed = pd.util.hash_pandas_object(value, index=not isinstance(value, pd.Index)).to_numpy().tobytes()
    except (TypeError, ValueError, AttributeError):
        return None
    labels = list(value.columns) if isinstance(value, pd.DataFrame) else [value.name]
    dtypes = list(value.dtypes) if isinstance(value, pd.DataFrame) else [value.dtype]
    return f"{type(value).__name__}({canonical_repr(labels)}, {[str(d) for d in dtypes]}, {len(value)})".encode() \
        + hashed


#: What pandas may infer a column of cells as for :func:`_pandas_content` to read it (no objects of other kinds).
_PLAIN_CELLS = {"string", "empty", "integer", "floating", "mixed-integer-float", "decimal", "complex", "boolean",
                "datetime64", "datetime", "date", "timedelta64", "timedelta", "period", "categorical", "bytes"}


class _CodeDigest:
    """Feeds a hash with what defines a class, function or code object (module docstring), following the
    functions and classes of ``module`` that the code reads, each once; ``other_modules`` collects the
    modules whose functions, classes or selves it reads, which are named, not read. A value that is not
    :func:`_plain` (a dict a method fills as a cache, a logger, an array) is named by its type only: state
    the method changes as it runs, or a repr that differs between processes, never changes the digest;
    unless ``read_data`` (a class with no source file of its own, a notebook cell's, or a script's), where
    containers of data are read (:func:`data_content`): a cell's settings are not in any file, and a script
    may rebind its own between runs."""

    def __init__(self, module: str, read_data: bool = False):
        self.module = module
        self.read_data = read_data
        self.h = hashlib.sha256()
        self.seen: set[int] = set()
        self.other_modules: set[str] = set()
        self.reading = ""  # the global (or class attribute) being read
        self.by_type: dict[str, str] = {}  # with read_data: global -> the type it was named by, its contents unread
        self.imports: set[str] = set()  # modules its ``import`` statements may load (:func:`_imported_names`)

    def add(self, obj: object) -> None:
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, functools.cached_property):
            obj = obj.func
        if isinstance(obj, property):
            for part in (obj.fget, obj.fset, obj.fdel):
                self.add(part)
        elif isinstance(obj, (functools.partial, functools.partialmethod)):  # its function and its arguments
            self.h.update(b"partial ")
            self._global(obj.func)
            for value in obj.args:
                self._global(value)
            for key, value in sorted(obj.keywords.items()):
                self.h.update(key.encode() + b"=")
                self._global(value)
        elif not isinstance(obj, (types.FunctionType, type)) and isinstance(
                getattr(obj, "__wrapped__", None), types.FunctionType):  # functools.lru_cache, cache
            self.h.update(f"<{type(obj).__qualname__}> ".encode())
            self._global(obj.__wrapped__)  # type: ignore[attr-defined]
        elif isinstance(obj, types.FunctionType):
            if id(obj) in self.seen:
                return
            self.seen.add(id(obj))
            self._code(obj.__code__)
            for value in obj.__defaults__ or ():
                self._global(value)
            for key, value in sorted((obj.__kwdefaults__ or {}).items()):
                self.h.update(key.encode() + b"=")
                self._global(value)
            for cell in obj.__closure__ or ():  # a decorated function's wrapped function, its arguments
                try:
                    self._global(cell.cell_contents)
                except ValueError:  # an empty cell
                    pass
            for name in self._names(obj.__code__):
                if name in obj.__globals__:
                    self.h.update(name.encode() + b"=")
                    self.reading = name
                    self._global(obj.__globals__[name])
        elif isinstance(obj, type) and getattr(obj, "__module__", None) == self.module:
            if id(obj) in self.seen:
                return
            self.seen.add(id(obj))
            self.h.update(obj.__qualname__.encode())
            for base in obj.__bases__:  # a method class of its own is digested under its own key
                self.h.update(b"base ")
                if SNAPSHOT_ATTRIBUTE in vars(base) and not is_pibench_class(base):
                    self.h.update(f"{base.__module__}.{base.__qualname__}".encode())
                else:
                    self._global(base)
            for name in sorted(vars(obj)):
                value = vars(obj)[name]
                if name == SNAPSHOT_ATTRIBUTE or name.startswith("_abc_") or (
                        name.startswith("__") and name.endswith("__") and not _is_code(value)):
                    continue  # bookkeeping (__dict__, __module__, __abstractmethods__, ...) a copy may lack
                self.h.update(name.encode() + b"=")
                if _is_code(value):
                    self.add(value)
                else:
                    self.reading = f"{obj.__qualname__}.{name}"
                    self._global(value)
        elif _plain(obj):
            self.h.update(canonical_repr(obj).encode())
        elif self.read_data and (content := data_content(obj)) is not None:
            self.h.update(hashlib.sha256(content).digest())
        else:
            kind = f"{type(obj).__module__}.{type(obj).__qualname__}"
            self.h.update(f"<{kind}>".encode())
            if self.read_data and self.reading and not _is_routine(obj) and not _holds_no_settings(obj):
                self.by_type.setdefault(self.reading, kind)

    def _code(self, code: types.CodeType) -> None:
        self.h.update(code.co_code + canonical_repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
        self.imports |= _imported_names(code, _package_of(self.module))
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self._code(const)
            else:
                self.h.update(canonical_repr(const).encode())

    def _names(self, code: types.CodeType) -> list[str]:
        """The global names the code loads (not ``co_names``, which also holds attribute names: ``data.y``
        must not make a global ``y`` part of the method)."""
        names = [i.argval for i in dis.get_instructions(code) if i.opname in ("LOAD_GLOBAL", "LOAD_NAME")]
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                names += self._names(const)
        return sorted(set(names))

    def _global(self, value: object) -> None:
        other = _module_of(value)
        if other is not None and other != self.module:  # another module's: named, not read (its file is)
            self.other_modules.add(other)
            self.h.update(f"{other}.{getattr(value, '__qualname__', '')}".encode())
        else:
            self.add(value)


def _is_routine(value: object) -> bool:
    """A function of C code (``math.sqrt``, ``np.exp``): code of a library, which holds no settings."""
    import numpy as np

    return isinstance(value, (types.BuiltinFunctionType, types.MethodDescriptorType, np.ufunc))


#: Kinds of objects (module.qualname prefixes) a method reads that hold no settings of its: not worth a note.
_NO_SETTINGS = ("logging.", "torch.dtype", "torch.device", "numpy.dtype", "numpy.dtypes.", "re.Pattern", "typing.",
                "_thread.", "threading.")


def _holds_no_settings(value: object) -> bool:
    """A logger, a torch dtype or device, a numpy dtype, a compiled pattern, a lock, or a scipy distribution family
    (``norm``, not a frozen ``norm(0, 2)``): objects whose edit is no edit of a method's settings."""
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    return kind.startswith(_NO_SETTINGS) or any(k.__name__ == "rv_generic" for k in type(value).__mro__) and not \
        any(k.__name__ == "rv_frozen" for k in type(value).__mro__)


def _is_code(value: object) -> bool:
    return isinstance(value, (types.FunctionType, staticmethod, classmethod, property, functools.cached_property,
                              functools.partialmethod))


def _module_of(value: object) -> str | None:
    """The module a module, function or class global belongs to; None for other values."""
    if isinstance(value, types.ModuleType):
        return value.__name__
    if isinstance(value, (types.FunctionType, type)):
        return getattr(value, "__module__", None)
    return None


def _class_digest(cls: type) -> _CodeDigest:
    # a cell's settings are in no file, and a script's may be rebound between its runs (its file stays the same)
    digest = _CodeDigest(cls.__module__, read_data=cls.__module__ == "__main__" or not _defined_in_its_module_file(cls))
    digest.add(cls)
    return digest


def class_code_digest(cls: type) -> str:
    """The digest of a class's own code and what it reads (:class:`_CodeDigest`)."""
    return _class_digest(cls).h.hexdigest()


def globals_named_by_type(cls: type) -> dict[str, str]:
    """{global: its type} of the globals a notebook's or script's method classes (``cls`` and its own bases) read
    whose contents no digest reads (a frozen scipy distribution, a fitted model, a random generator): an edit of
    one is no new code, so a run would serve the numbers stored before."""
    found: dict[str, str] = {}
    for k in _own_classes(cls):
        found |= _class_digest(k).by_type
    return found


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
    """The files the class's own functions were written in, each unwrapped (``functools.wraps``); code a tool
    generated (``@dataclass``'s methods, compiled from "<string>") is not counted. Empty for a class without
    functions."""
    return {f.__code__.co_filename for value in vars(cls).values() for f in _functions(value, cls.__module__)
            if not hasattr(f, "__wrapped__") and not f.__code__.co_filename.startswith("<")}  # the innermost


def _defined_in_its_module_file(cls: type) -> bool:
    """Whether ``cls`` was compiled from its module's source file (not, say, from a cell or a string run by
    ``exec`` in a module whose file is another program's, such as a documentation builder's ``__main__``): its
    module has a file and the class's own code was written there (a decorator's wrapper from another file, or
    the methods ``@dataclass`` generates, do not make a file's class a cell's)."""
    if not _has_file(cls.__module__):
        return False
    module_file = Path(str(sys.modules[cls.__module__].__file__)).resolve()
    files = _code_files(cls)
    if not files:
        return True  # no functions of its own: its module's file is all there is to name
    return module_file in {Path(f).resolve() for f in files}


@functools.cache
def _library_roots() -> tuple[Path, ...]:
    """Where the standard library and installed packages live: modules there are not the user's."""
    paths = sysconfig.get_paths()
    roots = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths]
    roots += [*site.getsitepackages(), site.getusersitepackages()]
    return tuple(dict.fromkeys(Path(r).resolve() for r in roots))


def users_file(name: str) -> str | None:
    """The source file of module ``name`` if it is the user's: outside pibench and :func:`_library_roots` (a
    script's sibling ``my_helpers.py``, a package of the user's). A module not imported yet is found as an import
    would find it (:func:`_spec_without_import`), never imported here; None for anything else."""
    if name == "pibench" or name.startswith("pibench."):
        return None
    if name in sys.modules:
        path = str(getattr(sys.modules[name], "__file__", None) or "") if _has_file(name) else ""
    else:
        spec = _spec_without_import(name)
        path = str(getattr(spec, "origin", None) or "")
    if not path.endswith(".py"):
        return None
    resolved = Path(path).resolve()
    return None if any(resolved.is_relative_to(root) for root in _library_roots()) else path


def _spec_without_import(name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec an import of ``name`` would load, found without importing it or its packages (a package not
    imported yet is searched in its parent's folders); None if there is none."""
    parent, _, _ = name.rpartition(".")
    try:
        if not parent:
            return importlib.util.find_spec(name)
        if parent in sys.modules:
            folders = getattr(sys.modules[parent], "__path__", None)
        else:
            folders = getattr(_spec_without_import(parent), "submodule_search_locations", None)
        return importlib.machinery.PathFinder.find_spec(name, list(folders)) if folders else None
    except (ImportError, ValueError, AttributeError):
        return None


_IMPORT_NAME = dis.opmap["IMPORT_NAME"]


def _package_of(module: str, path: str | None = None) -> str:
    """The package a relative import in ``module`` (its file ``path``, if not imported) starts from."""
    loaded = getattr(sys.modules.get(module), "__package__", None)
    if loaded is not None:
        return loaded
    return module if path is not None and Path(path).name == "__init__.py" else module.rpartition(".")[0]


def _imported_names(code: types.CodeType, package: str) -> set[str]:
    """The modules the ``import`` statements of ``code`` (not of the code objects it holds) may load, relative
    ones resolved against ``package``: ``import a.b`` a and a.b, ``from .c import d`` the package's c and c.d (d
    may be a module)."""
    found: set[str] = set()
    if _IMPORT_NAME not in code.co_code[::2]:  # no import here (the opcodes of 2-byte words): nothing to read
        return found
    instructions = [x for x in dis.get_instructions(code) if x.opname not in ("EXTENDED_ARG", "CACHE")]
    for i, instruction in enumerate(instructions):
        if instruction.opname != "IMPORT_NAME":
            continue
        before = [x.argval for x in instructions[max(0, i - 2):i]]  # the level and the names from it
        level = before[0] if len(before) == 2 and isinstance(before[0], int) else 0
        names = before[-1] if before and isinstance(before[-1], tuple) else ()
        try:
            base = importlib.util.resolve_name("." * level + instruction.argval, package) if level else \
                instruction.argval
        except (ImportError, ValueError):
            continue
        parts = base.split(".")
        found |= {".".join(parts[:k]) for k in range(1, len(parts) + 1)}
        found |= {f"{base}.{n}" for n in names if n != "*"}
    return found


def _file_imports(name: str, path: str) -> frozenset[str]:
    """The modules every ``import`` of the file of module ``name`` may load, its functions' too (the helpers a
    helper imports where it uses them); read once per version of the file."""
    try:
        stat = Path(path).stat()
    except OSError:
        return frozenset()
    return _file_imports_of(name, path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=4096)
def _file_imports_of(name: str, path: str, mtime_ns: int, size: int) -> frozenset[str]:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pending = [compile(Path(path).read_bytes(), path, "exec", dont_inherit=True)]
    except (OSError, SyntaxError, ValueError):
        return frozenset()
    found: set[str] = set()
    while pending:
        code = pending.pop()
        found |= _imported_names(code, _package_of(name, path))
        pending += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    return frozenset(found)


def _helper_files(cls: type) -> list[tuple[str, str]]:
    """(module, file) of the user's modules (:func:`users_file`) other than its own that ``cls``'s code reads a
    function, class or module of, or imports where it uses it (``from my_helpers import widen`` inside a method,
    imported or not yet), and those these read or import in turn (a module is read as a whole file)."""
    digest = _CodeDigest(cls.__module__)
    digest.add(cls)
    pending, found = sorted(digest.other_modules | digest.imports), {}
    while pending:
        name = pending.pop()
        if name in found or name == cls.__module__ or (path := users_file(name)) is None:
            continue
        found[name] = path
        if name in sys.modules:
            pending += [m for m in map(_module_of, list(vars(sys.modules[name]).values())) if m is not None]
        pending += sorted(_file_imports(name, path))
    return sorted(found.items())


def _functions(value: object, module: str, seen: set[type] | None = None) -> list[types.FunctionType]:
    """The functions ``value`` is or holds: itself and what it wraps (``functools.wraps``, ``lru_cache``),
    a class of ``module``'s methods, class and static methods, properties' accessors, cached properties
    and nested classes."""
    seen = set() if seen is None else seen
    if isinstance(value, type):
        if value.__module__ != module or value in seen:
            return []
        seen.add(value)
        return [f for member in list(vars(value).values()) for f in _functions(member, module, seen)]
    member = getattr(value, "__func__", value)
    candidates: list[object] = [member.fget, member.fset, member.fdel] if isinstance(member, property) else [
        member.func if isinstance(member, functools.cached_property) else member]
    found: list[types.FunctionType] = []
    for candidate in candidates:
        if not callable(candidate):
            continue
        try:
            inner = inspect.unwrap(candidate)
        except ValueError:  # a cycle of __wrapped__
            inner = candidate
        found += [f for f in dict.fromkeys([candidate, inner]) if isinstance(f, types.FunctionType)]
    return found


def _runs_its_file(module_name: str, source: bytes) -> bool:
    """Whether the loaded module runs ``source`` (its file's bytes now): each function compiled from its file,
    top-level, wrapped by a decorator or of its classes, equals (bytecode, constants, names; not its line
    numbers, which a comment moves) the function of the same qualified name that ``source`` compiles to.
    False after an edit the module was not imported again for. Not compared (True): a module whose code an
    import hook rewrote (pytest's assertions, a type checker's), which no plain compile equals; a function the
    file no longer has (``importlib.reload`` leaves it in the module); plain globals (a module may set them as
    it runs)."""
    module = sys.modules[module_name]
    if type(getattr(getattr(module, "__spec__", None), "loader", None)) is not importlib.machinery.SourceFileLoader:
        return True
    filename = str(module.__file__)
    with warnings.catch_warnings():  # the import warned already (an invalid escape, say); -W error must not fail it
        warnings.simplefilter("ignore")
        try:
            top = compile(source, filename, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            return False
    on_disk: dict[str, list[types.CodeType]] = {}
    pending = [top]
    while pending:
        for const in pending.pop().co_consts:
            if isinstance(const, types.CodeType):
                on_disk.setdefault(const.co_qualname, []).append(_without_lines(const))
                pending.append(const)
    for value in list(vars(module).values()):
        for function in _functions(value, module_name):
            code = function.__code__
            if code.co_filename == filename and code.co_qualname in on_disk and \
                    _without_lines(code) not in on_disk[code.co_qualname]:
                return False  # (a function of another file, a decorator's wrapper say, is not this file's)
    return True


def _without_lines(code: types.CodeType) -> types.CodeType:
    """``code`` and the code objects it holds with no line numbers, so that equality compares what runs."""
    consts = tuple(_without_lines(c) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_firstlineno=1, co_linetable=b"", co_consts=consts)


def take_snapshot(cls: type) -> tuple[SourceSnapshot, ...]:
    """The source files of ``cls`` now (module doc; none for pibench's own classes): its package's loaded
    modules if it was compiled from its module's file, and the user's modules its code reads. Never raises:
    a file that cannot be read is left out, and the class's code digest names it still."""
    if is_pibench_class(cls):
        return ()
    files = _package_files(cls.__module__) if _defined_in_its_module_file(cls) else []
    try:
        files += _helper_files(cls)
    except Exception:  # a class pibench cannot read is named by its own files and code
        pass
    snaps = []
    for name, path in sorted(set(files)):
        try:
            source = Path(path).read_bytes()
        except OSError:
            continue
        try:  # its own module is running now; a helper not imported yet will run the file when imported
            runs_file = name == cls.__module__ or name not in sys.modules or _runs_its_file(name, source)
        except Exception:  # a module pibench cannot read is named by its file still
            runs_file = True
        snaps.append(SourceSnapshot(name, path, source_digest(source), runs_file, name in sys.modules))
    return tuple(snaps)


def _has_file(module_name: str) -> bool:
    path = getattr(sys.modules.get(module_name), "__file__", None)
    return bool(path) and str(path).endswith(".py")


def snapshots(cls: type) -> list[SourceSnapshot]:
    """The snapshots of ``cls`` and of its method base classes defined outside pibench, base-most first
    (one per key: a subclass's, taken later, wins), a helper not imported when the class was created as it would
    run now (:func:`_as_it_would_run`)."""
    found: dict[str, SourceSnapshot] = {}
    for klass in reversed(cls.__mro__):
        for snapshot in vars(klass).get(SNAPSHOT_ATTRIBUTE) or ():
            if isinstance(snapshot, SourceSnapshot):
                found.pop(snapshot.key, None)
                found[snapshot.key] = snapshot
    return [_as_it_would_run(s) for s in found.values()]


def _as_it_would_run(snapshot: SourceSnapshot) -> SourceSnapshot:
    """``snapshot``; for a helper not imported when it was taken (one a method imports where it uses it), its file
    now, stale if this process imported that module and it does not run the file (:func:`_runs_its_file`). A
    module imported then is named as it was: its code is what runs, here or shipped to a worker by value."""
    if snapshot.module == "__main__" or snapshot.imported:
        return snapshot
    try:
        source = Path(snapshot.path).read_bytes()
    except OSError:
        return snapshot
    try:
        runs = snapshot.module not in sys.modules or _runs_its_file(snapshot.module, source)
    except Exception:  # a module pibench cannot read is named by its file still
        runs = True
    return replace(snapshot, sha256=source_digest(source), runs_file=runs)


def forget_lazy_helpers(cls: type) -> None:
    """In a worker process, which may have imported an older version of a helper for an earlier run (loky keeps its
    workers): drop from ``sys.modules`` the helpers of ``cls`` not imported when it was created (imported where a
    method uses them), so that the method's import reads the file, whose digest the task's identity names
    (:func:`snapshots`). The modules imported then travel with the class, by value, and are left alone."""
    for klass in cls.__mro__:
        for snapshot in vars(klass).get(SNAPSHOT_ATTRIBUTE) or ():
            if isinstance(snapshot, SourceSnapshot) and not snapshot.imported and snapshot.module != "__main__":
                sys.modules.pop(snapshot.module, None)


def _own_classes(cls: type) -> list[type]:
    """``cls`` and its method base classes defined outside pibench, base-most first."""
    return [k for k in reversed(cls.__mro__) if SNAPSHOT_ATTRIBUTE in vars(k) and not is_pibench_class(k)]


def source_files(cls: type) -> dict[str, str]:
    """{module: the file it was read from} of :func:`source_identity`'s modules (a record keeps them, so that a
    report can tell an edit of them wherever it runs: :func:`files_changed_on_disk`)."""
    return {s.key: str(Path(s.path).resolve()) for s in snapshots(cls) if s.module != "__main__"}


def source_identity(cls: type) -> dict[str, str]:
    """{module: sha256 prefix of its file as loaded}: the source files part of :func:`method_code_identity`,
    what a worker checks (the classes' own code is digested where a run is prepared, and travels from there
    with the class)."""
    return {s.key: s.sha256[:12] for s in snapshots(cls)}


def files_part(identity: dict[str, str]) -> dict[str, str]:
    """The source files of a :func:`method_code_identity` (its ``module`` keys; ``module:class`` keys are the
    classes' code digests)."""
    return {key: value for key, value in identity.items() if ":" not in key}


def _users_file_here(module: str) -> str | None:
    """:func:`users_file`, looked for in the working folder too where ``sys.path`` does not hold it; None for a
    name of the standard library (whose finders may import to find it: setuptools' distutils)."""
    if not module or module.partition(".")[0] in sys.stdlib_module_names:
        return None
    path = users_file(module)
    try:
        here = os.getcwd()
    except OSError:  # a working folder removed since
        return path
    if path is None and not {here, ""} & set(sys.path):
        sys.path.insert(0, here)
        try:
            path = users_file(module)
        finally:
            sys.path.remove(here)
    return path


#: A stored path to a file larger than this is not read (a record is untrusted: it may name anything).
LARGEST_SOURCE = 20 * 2**20


def _digest_of_file(path: str | None) -> str | None:
    """:func:`source_digest` prefix of a regular file of at most :data:`LARGEST_SOURCE` bytes (no FIFO, no device
    a read would block on); None otherwise."""
    try:
        file = Path(path) if path else None
        if file is None or not file.is_file() or file.stat().st_size > LARGEST_SOURCE:
            return None
        return source_digest(file.read_bytes())[:12]
    except (OSError, ValueError):
        return None


def files_changed_on_disk(identity: dict[str, str], files: dict[str, str] | None = None) -> list[str]:
    """The modules of a stored identity's files part (:func:`files_part`) whose file reads otherwise than when the
    task ran: what a report can tell of a plugin it has not loaded, never importing anything. A module's file is the
    one its record names (``files``, :func:`source_files`); for records without it, the user's file found as an
    import would find it (:func:`users_file`), on ``sys.path``, then in the working folder (where ``--plugin FILE``
    usually found it; the ``pibench`` command's path does not hold that folder). A module not found, or
    ``__main__`` (a script or notebook), is not named: it cannot be checked."""
    changed: list[str] = []
    if not isinstance(identity, dict):  # a hand-edited record's: nothing to check
        return changed
    named = files if isinstance(files, dict) else {}
    for module, digest in sorted(files_part(identity).items()):
        if not isinstance(module, str) or not isinstance(digest, str) or module == "__main__":
            continue
        stored = named.get(module)
        now = _digest_of_file(stored if isinstance(stored, str) else _users_file_here(module))
        if now is not None and now != digest:
            changed.append(module)
    return changed


def method_code_identity(cls: type) -> dict[str, str]:
    """:func:`source_identity` and {module:class: "code:" + digest prefix of the class's code now} of the code
    outside pibench that ``cls`` runs (module doc); {} for a pibench method."""
    return source_identity(cls) | {f"{k.__module__}:{k.__qualname__}": "code:" + class_code_digest(k)[:12]
                                   for k in _own_classes(cls)}


def describe_change(before: dict[str, str] | None, after: dict[str, str] | None) -> str | None:
    """One line naming the modules whose code differs between two :func:`method_code_identity` values."""
    before, after = before or {}, after or {}
    if before == after:
        return None
    changed = sorted(m for m in set(before) | set(after) if before.get(m) != after.get(m))
    files = [m for m in changed if m in files_part(before) or m in files_part(after)]
    if files:  # what the classes' code reads came from these files: their digests changed with them
        return "plugin source changed: " + ", ".join(map(display_name, files))
    return "plugin code changed: " + ", ".join(map(display_name, changed))


def display_name(key: str) -> str:
    """A module's file as messages name it, from its identity key alone (``mypi.rolling_gauss`` ->
    ``mypi/rolling_gauss.py``; ``__main__:Cls`` -> the class in the running script or notebook)."""
    module, _, qualname = key.partition(":")
    if qualname:
        return f"{qualname} in {'the running script or notebook' if module == '__main__' else module}"
    return "__main__ (the running script or notebook)" if module == "__main__" else module.replace(".", "/") + ".py"


def _dependency_order(modules: list[str]) -> list[str]:
    """``modules`` with each after those of them it refers to (a helper that imports a function of another is
    imported again after it, so it takes the new function); sorted where they form a cycle."""
    names = set(modules)
    graph = {m: {r for r in map(_module_of, list(vars(sys.modules[m]).values())) if r in names and r != m}
             for m in modules if m in sys.modules}
    try:
        return list(graphlib.TopologicalSorter(graph).static_order()) + [m for m in modules if m not in graph]
    except graphlib.CycleError:
        return modules


class StaleSourceError(ValueError):
    """A method's source file changed after it was imported, and it could not be reloaded."""


def reload_if_stale(cls: type) -> type | None:
    """If a file ``cls``'s code was read from has changed on disk, import its modules again (helpers
    first, then the modules of the class and its bases, base-most first; byte-code caches dropped so the
    new source is compiled) and return the new class of the same qualified name; None if nothing changed.
    StaleSourceError if the code cannot be reloaded (a class of ``__main__``, a module that defines it gone from
    ``sys.modules``, a new source that fails to import or no longer defines the method under its name)."""
    chain = snapshots(cls)
    stale = [s for s in chain if s.is_stale()]
    if not stale:
        return None
    names = ", ".join(s.display for s in stale)
    label = getattr(cls, "name", cls.__qualname__)
    files = {s.module: s.path for s in chain}
    defining = list(dict.fromkeys(k.__module__ for k in _own_classes(cls)))
    for module_name in defining:  # a class of a cell or a script would keep reading the helpers it imported
        if module_name == "__main__" or module_name not in sys.modules or module_name not in files:
            raise StaleSourceError(
                f"{names} changed on disk after it was imported, so method {label!r} would not run the file's "
                f"code, and the code that defines the method "
                f"({module_name}) cannot be imported again: import the changed module again (importlib.reload) "
                "and run the cell or script that defines the method again, or restart Python, so that the code "
                "which runs is the code on disk.")
    # a helper not imported (yet, as one imported where a method uses it, or again) is read from its file when it
    # is: nothing of its old code runs
    order = [m for m in _dependency_order(sorted(set(files) - set(defining))) if m in sys.modules] + defining
    for module_name in order:
        try:
            Path(importlib.util.cache_from_source(files[module_name])).unlink(missing_ok=True)  # a same-second edit
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
    if not isinstance(new, type) or new is cls:  # a reload keeps the module's old names: the class of before
        raise StaleSourceError(f"{names} changed on disk and no longer defines {cls.__qualname__}; register the "
                               "method again under its new class, or restart Python.")
    if getattr(new, "name", None) != label:
        raise StaleSourceError(f"{names} changed on disk and {cls.__qualname__} is now named "
                               f"{getattr(new, 'name', None)!r}, not {label!r}; run it under its new name.")
    return new
