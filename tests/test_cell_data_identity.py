"""A notebook cell's settings are part of its method's name: data a class without a source file reads (class
attributes and globals holding lists, dicts, sets or arrays), and helpers behind functools wrappers."""

import sys
import warnings

import numpy as np
import pytest

import pibench.methods.base as base
from pibench import run
from pibench.methods.code_identity import MAX_DATA_BYTES, data_content, method_code_identity

HEAD = "import functools\nimport numpy as np\nfrom pibench import Interval, IntervalMethod, register\n"

CLASS_CELL = '''
@register
class Banded(IntervalMethod):
    name = "banded_cell"
    LEVELS = {levels}

    def fit(self, data, calibration=None):
        self.last_ = data.y[-1]
        return self

    def predict_interval(self, X):
        half = {half}
        point = self.last_[None, :]
        return Interval(point - half, point + half, point)

    def update(self, y):
        self.last_ = y[-1]
'''


def cell_class(namespace: dict, levels: str = "{'scale': 1.0}", half: str = "self.LEVELS['scale']",
               extra: str = "") -> type:
    """Run the class cell (after ``extra``, a helper cell) in ``namespace``, a notebook's ``__main__``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", base.MethodReplaced)
        exec(compile(HEAD + extra, "<cell 1>", "exec"), namespace)
        exec(compile(CLASS_CELL.format(levels=levels, half=half), "<cell 2>", "exec"), namespace)
    return namespace["Banded"]


@pytest.fixture
def notebook():
    yield {"__name__": "notebook_data"}
    base._REGISTRY.pop("banded_cell", None)


@pytest.mark.parametrize("first, second", [
    ("{'scale': 1.0}", "{'scale': 0.5}"),   # a dict of settings
    ("[1.0, 2.0]", "[1.0, 0.5]"),           # a list
    ("{1.0, 2.0}", "{1.0, 0.5}"),           # a set
    ("np.array([1.0, 2.0])", "np.array([1.0, 0.5])"),
    ("np.array([1.0, 2.0])", "np.array([1.0, 2.0], dtype=np.float32)"),
])
def test_a_class_cell_run_again_with_other_data_in_an_attribute_is_new_code(notebook, first, second):
    before = method_code_identity(cell_class(notebook, first))
    assert method_code_identity(cell_class(notebook, first)) == before  # the same cell again: the same name
    assert method_code_identity(cell_class(notebook, second)) != before


def test_a_global_array_or_dict_of_a_cell_edited_or_replaced_is_new_code(notebook):
    """A settings cell edited and run again, or an array edited in place: the class reads other data."""
    cls = cell_class(notebook, half="SETTINGS['half'] * WEIGHTS[0]",
                     extra="SETTINGS = {'half': 1.0}\nWEIGHTS = np.array([1.0, 2.0])\n")
    before = method_code_identity(cls)
    notebook["WEIGHTS"][0] = 0.5
    edited = method_code_identity(cls)
    exec("WEIGHTS = np.array([1.0, 2.0])\nSETTINGS = {'half': 2.0}", notebook)
    replaced = method_code_identity(cls)
    exec("SETTINGS = {'half': 1.0}", notebook)
    assert len({str(before), str(edited), str(replaced)}) == 3 and method_code_identity(cls) == before


@pytest.mark.parametrize("helper, edited", [
    ("@functools.lru_cache\ndef factor():\n    return 1.0\n", "@functools.lru_cache\ndef factor():\n    return 0.5\n"),
    ("@functools.cache\ndef factor():\n    return 1.0\n", "@functools.cache\ndef factor():\n    return 0.5\n"),
    ("def _f(x):\n    return x\nfactor = functools.partial(_f, 1.0)\n",
     "def _f(x):\n    return x\nfactor = functools.partial(_f, 0.5)\n"),
    ("def _f(x):\n    return x\nfactor = functools.partial(_f, x=1.0)\n",
     "def _f(x):\n    return 2 * x\nfactor = functools.partial(_f, x=1.0)\n"),
])
def test_a_helper_behind_a_functools_wrapper_edited_is_new_code(notebook, helper, edited):
    before = method_code_identity(cell_class(notebook, half="factor()", extra=helper))
    assert method_code_identity(cell_class(notebook, half="factor()", extra=helper)) == before
    assert method_code_identity(cell_class(notebook, half="factor()", extra=edited)) != before


def test_a_cached_property_edited_in_the_class_cell_is_new_code(notebook):
    source = CLASS_CELL.replace('    LEVELS = {levels}\n', '    @functools.cached_property\n'
                                '    def width(self):\n        return {levels}\n')
    identities = []
    for width in ("1.0", "0.5"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", base.MethodReplaced)
            exec(compile(HEAD + source.format(levels=width, half="self.width"), "<cell>", "exec"), notebook)
        identities.append(method_code_identity(notebook["Banded"]))
    assert identities[0] != identities[1]


def test_objects_that_are_not_data_stay_named_by_their_type(notebook):
    """A dict of objects (a logger, a cache of fitted models) is state, not settings: filling it is no new code."""
    cls = cell_class(notebook, half="1.0 if STATE is not None else 0.0", extra="STATE = {'a': object()}\n")
    before = method_code_identity(cls)
    notebook["STATE"]["b"] = object()
    assert method_code_identity(cls) == before


def test_numpy_scalars_in_a_cells_settings_are_data(notebook):
    """A setting that came out of numpy (``np.float32(0.5)``, an ``argmax``) edited: new code, not the old name."""
    before = method_code_identity(cell_class(notebook, "{'scale': np.float32(1.0), 'k': np.int64(3)}"))
    assert method_code_identity(cell_class(notebook, "{'scale': np.float32(0.5), 'k': np.int64(3)}")) != before
    assert method_code_identity(cell_class(notebook, "{'scale': np.float32(1.0), 'k': np.int64(4)}")) != before


@pytest.mark.parametrize("first, second", [
    ("Fraction(2)", "Fraction(3)"), ("Decimal('2.0')", "Decimal('3.0')"),
    ("pd.Series({'half': 2.0})", "pd.Series({'half': 3.0})"),
    ("pd.DataFrame({'half': [2.0]})", "pd.DataFrame({'half': [3.0]})"),
    ("pd.DataFrame({'half': [2.0]})", "pd.DataFrame({'width': [2.0]})"),  # a column renamed
    ("pd.Series([2.0], index=['a'])", "pd.Series([2.0], index=['b'])"),
    ("pd.Index(['a', 'b'])", "pd.Index(['a', 'c'])"),  # (an Index crashed every run: review)
    ("pd.RangeIndex(3)", "pd.RangeIndex(4)"),
])
def test_numbers_of_any_kind_and_pandas_settings_of_a_cell_are_data(notebook, first, second):
    """A Fraction, a Decimal, a Series or a DataFrame of settings rebound by a settings cell: the run served the
    numbers stored before (named by their type only)."""
    head = "from fractions import Fraction\nfrom decimal import Decimal\nimport pandas as pd\n"
    identities = [method_code_identity(cell_class(notebook, half="float(1.0 if SETTINGS is None else 2.0)",
                                                  extra=f"{head}SETTINGS = {value}\n"))
                  for value in (first, first, second)]
    assert identities[0] == identities[1] != identities[2]


def test_a_digest_is_the_same_in_every_process_whatever_numpy_prints_and_objects_in_a_frame(notebook):
    """Review: numpy scalars read by their repr changed with np.set_printoptions(legacy=...), and a DataFrame with a
    column of objects was hashed through their text, memory addresses and all: a digest differed between processes."""
    code = ("import sys, warnings\nimport numpy as np, pandas as pd\n"
            "from pibench import Interval, IntervalMethod, register\n"
            "from pibench.methods.code_identity import method_code_identity\n"
            "class Model:\n    pass\n"
            "K = np.int64(3)\nTABLE = pd.DataFrame({'w': [1.0, 2.0], 'model': [Model(), Model()]})\n"
            "if sys.argv[1] == 'legacy':\n    np.set_printoptions(legacy='1.25')\n"
            "@register\nclass Band(IntervalMethod):\n    name = 'band_stable'\n"
            "    def fit(self, data, calibration=None):\n        return self\n"
            "    def predict_interval(self, X):\n        w = float(TABLE['w'].iloc[0]) * K\n"
            "        return Interval(X[:, :1] - w, X[:, :1] + w, X[:, :1])\n"
            "print(method_code_identity(Band)['__main__:Band'])\n")
    import subprocess

    digests = {subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, check=True).stdout
               for how in ("plain", "legacy", "plain")}
    assert len(digests) == 1, digests


def test_a_cells_global_whose_contents_are_unread_is_named_before_the_run(notebook):
    """A frozen scipy distribution (or any object) rebound by a settings cell is no new code: the run says so
    instead of serving the stored numbers without a word; library functions (math.sqrt, np.exp), a distribution
    family (norm, not frozen) and a logger are not named (review: they were)."""
    from pibench.methods.code_identity import globals_named_by_type

    cls = cell_class(notebook, half="float(DIST.std()) * sqrt(1.0) * np.exp(0.0) * exp(0.0) + SETTINGS['k'] + 0 * "
                                    "norm.pdf(0.0) + 0 * (LOG is None)",
                     extra="import logging\nfrom math import sqrt\nfrom numpy import exp\n"
                           "from scipy.stats import norm\nDIST = norm(0, 2.0)\nSETTINGS = {'k': 0.0}\n"
                           "LOG = logging.getLogger('band')\n")
    assert globals_named_by_type(cls) == {"DIST": "scipy.stats._distn_infrastructure.rv_continuous_frozen"}
    before = method_code_identity(cls)
    exec("DIST = norm(0, 3.0)", notebook)
    assert method_code_identity(cls) == before  # what the note is for
    from pibench.benchmarks.preflight import prepare_tasks
    from pibench.benchmarks.suite import build_tasks, load_suite

    tasks = build_tasks(load_suite("default", quick=True), methods=["banded_cell"], datasets=["ar1"])
    _, notes = prepare_tasks(tasks)
    assert any(note.startswith("method 'banded_cell' reads DIST (a scipy.stats._distn_infrastructure."
                               "rv_continuous_frozen), whose contents pibench cannot read") for note in notes)


DECORATOR = """
import functools


def logged(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)
    return wrapper
"""

FILE_METHOD = """
import dataclasses
from pibench import Interval, IntervalMethod
from deco_helpers import logged

SEEN = {}  # a cache the method fills as it runs


class WideFile(IntervalMethod):
    name = "wide_file"
    _memo = {}

    @logged
    def fit(self, data, calibration=None):
        self._memo[len(self._memo)] = 1.0
        SEEN[len(SEEN)] = 2.0
        self.last_ = data.y[-1]
        return self

    def predict_interval(self, X):
        return Interval(self.last_[None, :] - 1.0, self.last_[None, :] + 1.0, self.last_[None, :])


@dataclasses.dataclass
class Settings:
    width: float = 1.0
"""


def test_a_class_in_a_file_with_a_wrapped_method_is_still_a_files_class(tmp_path, monkeypatch):
    """A method wrapped by a decorator from another file, beside a dataclass of the same file: the class is
    named by its file (snapshotted), and the caches it fills never change its name."""
    from pibench.methods.code_identity import _defined_in_its_module_file, source_identity

    (tmp_path / "deco_helpers.py").write_text(DECORATOR)
    (tmp_path / "wide_file_method.py").write_text(FILE_METHOD)
    monkeypatch.syspath_prepend(str(tmp_path))
    import wide_file_method as module

    try:
        cls = module.WideFile
        assert _defined_in_its_module_file(cls) and _defined_in_its_module_file(module.Settings)
        assert "wide_file_method" in source_identity(cls)
        before = method_code_identity(cls)
        cls().fit(type("D", (), {"y": np.zeros((3, 1))})())
        assert module.SEEN and cls._memo and method_code_identity(cls) == before
    finally:
        for name in ("wide_file_method", "deco_helpers"):
            sys.modules.pop(name, None)


def test_data_content_is_exact_and_bounded():
    assert data_content({"b": [1, 2], "a": (3.0,)}) == data_content({"a": (3.0,), "b": [1, 2]})
    assert data_content([1, 2]) != data_content((1, 2)) != data_content({1, 2})
    assert data_content(np.arange(3)) != data_content(np.arange(3).reshape(3, 1))
    assert data_content(np.arange(3)) != data_content(np.arange(3, dtype=np.int32))
    assert data_content([object()]) is None and data_content(np.array([object()])) is None
    assert data_content({(1, 2): 1.0}) is not None and data_content({object(): 1.0}) is None
    assert data_content(np.zeros(MAX_DATA_BYTES // 8 + 1)) is None  # too big to read at every run: its type names it
    assert data_content([np.zeros(MAX_DATA_BYTES // 16 + 1)] * 2) is None  # the leaves count, in all
    assert data_content([[[np.zeros(MAX_DATA_BYTES // 16)]]]) is not None  # nesting does not count them again
    looped: list = [1.0]
    looped.append(looped)
    assert data_content(looped) is None and data_content(np.ma.masked_array([1.0, 2.0], [0, 1])) is None
    assert data_content(np.float32(0.5)) != data_content(np.float32(1.0)) != data_content(np.float64(1.0))


SUITE = """
name = "cell_data"
protocol = { kind = "online", window = 100, retrain_every = 50 }
[[datasets]]
name = "ar"
params = { n_train = 150, n_test = 100 }
[[methods]]
name = "banded_cell"
"""


def test_a_settings_dict_edited_in_the_class_cell_runs_again_with_the_new_numbers(notebook, tmp_path):
    """The notebook loop end to end: the class cell run again with {'scale': 0.5} computes anew (it used to
    skip the task and show the old numbers), and with the first settings again finds the first record."""
    (tmp_path / "suite.toml").write_text(SUITE)

    def lengths(levels):
        cell_class(notebook, levels)
        result = run(tmp_path / "suite.toml", results_dir=tmp_path / "r", progress=False)
        return len(result.run_report.executed), result.records[0]["mean_length"]

    first, second, again = lengths("{'scale': 1.0}"), lengths("{'scale': 0.5}"), lengths("{'scale': 1.0}")
    assert first[0] == 1 and second[0] == 1 and second[1] == pytest.approx(first[1] / 2, rel=1e-12)
    assert again == (0, first[1])
