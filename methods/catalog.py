"""Which methods exist: every module under ``methods/`` plus the ``pibench.methods`` entry points, and the
Python files a user names (``--plugin``).

Built-in methods register themselves (``@register``) when their module is
imported; this catalog imports every module of the ``methods`` package once, so a
new method is one file dropped into the package and nothing else is edited
(benchopt's auto-discovery). No module of ``methods`` imports the catalog: the
runner, the suite loader and the CLI do.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from types import ModuleType

import pibench.methods as methods
from pibench.data_loaders.validation import did_you_mean
from pibench.methods.base import IntervalMethod, register, registered_methods

ENTRY_POINT_GROUP = "pibench.methods"
#: {method: the file given to ``--plugin`` that registered it} (a class it imports from a module beside it too)
PLUGIN_FILES: dict[str, str] = {}


@functools.cache
def import_builtin_methods() -> None:
    """Import pibench's own method modules (registering their classes); a no-op once they are."""
    for info in pkgutil.walk_packages(methods.__path__, prefix=f"{methods.__name__}."):
        if info.name != __name__:
            importlib.import_module(info.name)


def _plugin_entry_points() -> tuple[EntryPoint, ...]:
    """The ``pibench.methods`` entry points of the distributions on ``sys.path`` (read once per path: reading
    every distribution's metadata took 12 ms, and a run looks methods up hundreds of times)."""
    return _entry_points_on(tuple(sys.path))


@functools.lru_cache(maxsize=8)
def _entry_points_on(path: tuple[str, ...]) -> tuple[EntryPoint, ...]:
    return tuple(entry_points(group=ENTRY_POINT_GROUP))


def _load_plugins() -> None:
    known = registered_methods()
    for ep in _plugin_entry_points():
        if ep.name in known:
            continue
        cls = ep.load()
        if not (isinstance(cls, type) and issubclass(cls, IntervalMethod)):
            raise ValueError(
                f"entry point {ep.name!r} in group {ENTRY_POINT_GROUP!r} must point to an "
                f"IntervalMethod subclass, got {cls!r}."
            )
        if cls.name != ep.name:
            raise ValueError(f"entry point {ep.name!r} points to a method named {cls.name!r}; make the two agree.")
        register(cls)


def import_method_file(path: str | Path) -> ModuleType:
    """Import a Python file of the user's that defines and registers methods (``pibench run --plugin
    my_method.py``), as the module named by its stem with its folder first on ``sys.path`` (so the helpers
    beside it import too); a file imported already is not imported again. ValueError with the fix."""
    path = Path(path)
    if path.suffix != ".py" or not path.is_file():
        raise ValueError(f"--plugin {path}: no such Python file; give the path of a .py file that defines and "
                         "registers your method (@register).")
    name = path.stem
    if not name.isidentifier():
        raise ValueError(f"--plugin {path}: {name!r} cannot be a module name; rename the file (letters, digits, _).")
    loaded = sys.modules.get(name)
    if loaded is not None:
        if Path(str(getattr(loaded, "__file__", ""))).resolve() == path.resolve():
            return loaded
        raise ValueError(f"--plugin {path}: a module named {name!r} is imported already (from "
                         f"{getattr(loaded, '__file__', None) or 'a built-in'}); rename your file.")
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    import_builtin_methods()  # so that what the file registers is told apart from the built-in methods
    _load_plugins()  # and from the installed plugins (a file that asks for them loads them)
    before = dict(registered_methods())
    try:
        module = importlib.import_module(name)
    except Exception as exc:
        raise ValueError(f"--plugin {path}: importing it failed ({type(exc).__name__}: {exc}); fix the file and "
                         "run again.") from None
    after = registered_methods()
    holds = {id(value) for value in vars(module).values()}  # a file that imports registered classes from another
    defined = [key for key, cls in after.items() if before.get(key) is not cls or id(cls) in holds]
    if not defined:
        sys.modules.pop(name, None)  # the file, once fixed, is imported afresh
        raise ValueError(f"--plugin {path}: the file registers no method; put @register (from pibench import "
                         "register) above your IntervalMethod class, with name = \"my_method\" in it.")
    PLUGIN_FILES.update(dict.fromkeys(defined, str(path)))
    return module


def command_line_source(method: str) -> tuple[str, str | None]:
    """How a command line run would load ``method``, as this process has it: ("builtin", None) for pibench's
    methods and installed plugins (the ``pibench.methods`` entry points), ("file", FILE) for the file ``--plugin``
    imported it from, or a module of the user's that ``--plugin FILE`` imports as it is named (one outside any
    package), ("python", None) for a class only a Python call can run again (of a running script or notebook, or
    of the user's package), and ("unknown", None) for a method not registered here."""
    from pibench.methods.code_identity import is_pibench_class, users_file

    cls = available_methods().get(method)
    if cls is None:
        return "unknown", None
    module = cls.__module__
    if is_pibench_class(cls) or any(ep.name == method for ep in _plugin_entry_points()):
        return "builtin", None
    if method in PLUGIN_FILES:
        return "file", PLUGIN_FILES[method]
    path = users_file(module) if module != "__main__" else None
    if path is not None and "." not in module and Path(path).stem == module:
        return "file", path
    return "python", None


def available_methods() -> dict[str, type[IntervalMethod]]:
    """All methods by name (built-in and entry-point plugins), sorted."""
    import_builtin_methods()
    _load_plugins()
    return dict(sorted(registered_methods().items()))


def get_method(name: str) -> type[IntervalMethod]:
    """The method class registered as ``name``; a ValueError lists the choices."""
    known = available_methods()
    if name not in known:
        raise ValueError(
            f"unknown method {name!r}.{did_you_mean(name, known)} Available: {', '.join(known)}. "
            "Run `pibench list` to see methods, datasets and suites. A method of your own is known once the file "
            "that registers it is imported: pibench run --plugin FILE.py (in Python, import it or run its cell)."
        )
    return known[name]
