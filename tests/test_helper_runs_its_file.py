"""Whether a loaded helper module runs its file (code_identity._runs_its_file): no false alarm in normal use,
an alarm for an edit the module was not imported again for."""

import importlib
import sys
import textwrap
import uuid
import warnings

import pytest

from pibench.methods.code_identity import _runs_its_file

HELPER = textwrap.dedent('''
    from __future__ import annotations
    import functools

    SCALE = 2.0


    def _logged(f):
        @functools.wraps(f)
        def wrapper(*args):
            return f(*args)
        return wrapper


    @_logged
    def widen(x: float) -> float:
        return SCALE * x


    @functools.lru_cache
    def cached(x):
        return x + 1


    def pattern():
        return "\\d+"  # an invalid escape: a warning at compile time


    class Holder:
        @property
        def width(self):
            return [i * 2 for i in range(3)]

        @staticmethod
        def twice(v):
            return (lambda w: 2 * w)(v)

        @functools.cached_property
        def lazy(self):
            return 3

        class Inner:
            def deep(self):
                return 4
''')


@pytest.fixture
def helper(tmp_path, monkeypatch):
    """A fresh helper module (a unique name) and its file; edit(old, new) rewrites the file, not the module."""
    name = f"helper_{uuid.uuid4().hex[:8]}"
    path = tmp_path / f"{name}.py"
    path.write_text(HELPER)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the invalid escape
        module = importlib.import_module(name)
    for _ in range(200):  # specialised bytecode compares as the plain one
        module.widen(1.0), module.cached(2), module.Holder().width, module.Holder.twice(1)

    def edit(old: str, new: str) -> bytes:
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new))
        return path.read_bytes()

    yield name, module, path, edit
    sys.modules.pop(name, None)


def test_an_unedited_module_runs_its_file_with_warnings_as_errors(helper):
    name, _, path, _ = helper
    assert _runs_its_file(name, path.read_bytes())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the invalid escape must not read as a broken file
        assert _runs_its_file(name, path.read_bytes())


@pytest.mark.parametrize("old, new", [
    ("return SCALE * x", "return 3.0 * x"),                     # under a functools.wraps decorator
    ("return x + 1", "return x + 2"),                           # under lru_cache
    ("return [i * 2 for", "return [i * 3 for"),                 # a property's comprehension
    ("return (lambda w: 2 * w)(v)", "return (lambda w: 3 * w)(v)"),  # a static method's lambda
    ("return 3\n", "return 5\n"),                               # a cached property
    ("return 4", "return 6"),                                   # a nested class's method
])
def test_an_edit_not_imported_again_is_seen(helper, old, new):
    name, _, _, edit = helper
    assert not _runs_its_file(name, edit(old, new))


def test_lines_a_comment_moved_are_the_same_code(helper):
    """A comment line moves every function below it: their line numbers differ, what they run does not."""
    name, _, _, edit = helper
    assert _runs_its_file(name, edit("SCALE = 2.0\n", "SCALE = 2.0\n# a line more moves every function below\n"))
    assert not _runs_its_file(name, edit("return x + 1", "return x + 2"))  # (and an edit below them is still seen)


def test_a_global_edited_in_the_file_is_not_compared(helper):
    name, _, _, edit = helper
    assert _runs_its_file(name, edit("SCALE = 2.0", "SCALE = 5.0"))  # documented: the module may set it itself


def test_after_a_reload_a_function_the_file_dropped_raises_no_alarm(helper):
    """importlib.reload leaves a function the new file no longer defines in the module."""
    name, module, _, edit = helper
    source = edit("def cached(x):", "def renamed(x):")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        importlib.reload(module)
    assert hasattr(module, "cached") and hasattr(module, "renamed")
    assert _runs_its_file(name, source)


def test_a_module_an_import_hook_loaded_is_not_compared(helper):
    """pytest rewrites its test modules' asserts (as type checkers' hooks rewrite code): no plain compile equals
    them, so only modules of the plain source loader are compared."""
    name, module, _, edit = helper
    source = edit("return x + 1", "return x + 2")
    module.__spec__.loader = type("RewritingLoader", (importlib.machinery.SourceFileLoader,), {})(name, module.__file__)
    assert _runs_its_file(name, source)
