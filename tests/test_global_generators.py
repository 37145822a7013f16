"""A plugin that draws from the global generators (np.random, random, torch's default) instead of its
random_state repeats its numbers: the runner seeds them from the task's seed before building the method,
so neither the worker count nor what ran before in the process changes a result."""

import random

import numpy as np
import torch

from pibench.cli import main

PLUGIN = '''
import random

import numpy as np
import torch

from pibench import Interval, IntervalMethod, register


@register
class Jittery(IntervalMethod):
    """Last value +/- a width drawn from all three global generators at every step."""

    name = "jittery_global"

    def fit(self, data, calibration=None):
        self.last_ = data.y[-1]
        return self

    def predict_interval(self, X):
        half = 1.0 + np.random.rand() + random.random() + float(torch.rand(1))
        return Interval((self.last_ - half)[None], (self.last_ + half)[None], self.last_[None])

    def update(self, y):
        self.last_ = y[-1]
'''

SUITE = """
name = "jitter"
protocol = { kind = "online", window = 60, retrain_every = 30 }
[[datasets]]
name = "ar"
params = { n_train = 80, n_test = 100 }
[[methods]]
name = "jittery_global"
[[methods]]
name = "autoreg"
params = { lags = 1 }
"""


def _predictions(results) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((results / "tasks").glob("*.parquet"))}


def test_a_plugin_drawing_from_the_global_generators_repeats_its_numbers(tmp_path, capsys):
    plugin, suite = tmp_path / "jittery.py", tmp_path / "jitter.toml"
    plugin.write_text(PLUGIN)
    suite.write_text(SUITE)
    runs = []
    for name, jobs in (("a", "1"), ("b", "2"), ("c", "1")):
        random.seed(len(name) + ord(name))  # whatever the process drew before
        np.random.rand(ord(name))
        torch.rand(ord(name))
        out = tmp_path / name
        assert main(["run", "--suite", str(suite), "--plugin", str(plugin), "--results-dir", str(out), "-j", jobs,
                     "--no-progress"]) == 0
        runs.append(_predictions(out))
    capsys.readouterr()
    assert len(runs[0]) == 2 and runs[0] == runs[1] == runs[2]
