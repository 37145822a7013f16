"""The static view of the code: ruff and mypy pass on pibench, and a plugin author's strictly typed method
checks under mypy --strict and pyright strict against the editable install the README makes, while bad
overrides are caught. pyright runs as basedpyright, the pyright fork whose wheel carries the checker (no
download at test time), in pyright's own strict mode."""

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

TYPED_PLUGIN = '''
"""Two fully annotated plugin methods: one for series, one for sets of sequences."""

from __future__ import annotations

import numpy as np

from pibench import Interval, IntervalMethod, SeriesData, SetData, register


@register
class TypedRollingGauss(IntervalMethod):
    """Rolling mean +/- 1.645 sd of the last ``lookback`` steps."""

    name = "typed_rolling_gauss"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, lookback: int = 50) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.lookback = lookback

    def fit(self, data: SeriesData, calibration: SetData | None = None) -> TypedRollingGauss:
        self.history_: list[np.ndarray] = list(data.y[-self.lookback:])
        return self

    def predict_interval(self, X: np.ndarray) -> Interval:
        recent = np.asarray(self.history_[-self.lookback:])
        mean, sd = recent.mean(axis=0), recent.std(axis=0)
        return Interval((mean - 1.645 * sd)[None], (mean + 1.645 * sd)[None], mean[None])

    def update(self, y: np.ndarray) -> None:
        self.history_.append(y[-1])


@register
class TypedNaiveBand(IntervalMethod):
    """Last input + per-horizon quantiles of the change, Bonferroni over the horizons."""

    name = "typed_naive_band"
    shape = "set"

    def fit(self, data: SetData, calibration: SetData | None = None) -> TypedNaiveBand:
        change = data.y - data.x[:, -1, :1]
        level = self.alpha / data.y.shape[1]
        self.low_, self.high_ = np.quantile(change, [level / 2, 1 - level / 2], axis=0)
        return self

    def predict_interval(self, X: np.ndarray) -> Interval:
        point = np.repeat(X[:, -1, :1], len(self.low_), axis=1)
        return Interval(point + self.low_, point + self.high_, point)


series_method = TypedRollingGauss(lookback=20)  # register keeps each class's own constructor
set_method: TypedNaiveBand = register(TypedNaiveBand)(alpha=0.2)
'''

BAD_PLUGIN = '''
from __future__ import annotations

import numpy as np

from pibench import IntervalMethod, register


@register
class Bad(IntervalMethod):
    name = "bad"

    def __init__(self, alpha: float = 0.1, random_state: int = 0, lookback: int = 50) -> None:
        super().__init__(alpha=alpha, random_state=random_state)
        self.lookback = lookback

    def fit(self, data: int, calibration: None = None) -> Bad:
        return self

    def predict_interval(self, X: np.ndarray) -> str:
        return "not an Interval"


Bad(lookbak=3)
'''


def tool(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("plugin_author")
    (folder / "typed_plugin.py").write_text(textwrap.dedent(TYPED_PLUGIN))
    (folder / "bad_plugin.py").write_text(textwrap.dedent(BAD_PLUGIN))
    (folder / "pyrightconfig.json").write_text(json.dumps({"typeCheckingMode": "strict"}))
    return folder


def test_the_checkout_is_installed_editable_without_an_import_hook():
    """What the README's install makes: an editable install whose .pth file is a plain path (the checkout),
    which static checkers follow, and no import-hook finder module."""
    site = Path(sysconfig.get_paths()["purelib"])  # this interpreter's site-packages, not the checkout's egg-info
    (info,) = site.glob("pibench-*.dist-info")
    direct = json.loads((info / "direct_url.json").read_text())
    assert direct.get("dir_info", {}).get("editable") is True, direct
    (pth,) = site.glob("__editable__.pibench*.pth")
    assert Path(pth.read_text().strip()).resolve() == ROOT
    assert not list(site.glob("__editable__*pibench*finder.py"))


def test_ruff_passes_on_the_repository():
    done = tool("ruff", "check", ".", cwd=ROOT)
    assert done.returncode == 0, done.stdout[-4000:]


def test_mypy_passes_on_the_package(tmp_path):
    done = tool("mypy", "-p", "pibench", "--cache-dir", str(tmp_path / "cache"), cwd=ROOT)
    assert done.returncode == 0, done.stdout[-4000:]


def test_a_strictly_typed_plugin_passes_mypy_strict_and_a_bad_one_does_not(plugin_dir, tmp_path):
    good = tool("mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "typed_plugin.py", cwd=plugin_dir)
    assert good.returncode == 0, good.stdout[-4000:]
    bad = tool("mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "bad_plugin.py", cwd=plugin_dir)
    assert bad.returncode == 1
    for message in ('Argument 2 of "fit" is incompatible with supertype', 'Return type "str" of "predict_interval"',
                    'Unexpected keyword argument "lookbak" for "Bad"'):
        assert message in bad.stdout, bad.stdout


def test_a_strictly_typed_plugin_passes_pyright_strict_and_a_bad_one_does_not(plugin_dir):
    good = tool("basedpyright", "--pythonpath", sys.executable, "typed_plugin.py", cwd=plugin_dir)
    assert good.returncode == 0 and "0 errors, 0 warnings" in good.stdout, good.stdout[-4000:]
    bad = tool("basedpyright", "--pythonpath", sys.executable, "bad_plugin.py", cwd=plugin_dir)
    assert bad.returncode == 1
    for message in ('Method "fit" overrides class "IntervalMethod" in an incompatible manner',
                    'Method "predict_interval" overrides class "IntervalMethod" in an incompatible manner',
                    'No parameter named "lookbak"'):
        assert message in bad.stdout, bad.stdout
