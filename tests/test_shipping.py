"""Method classes shipped to workers by value (benchmarks/shipping.py): a worker gets the class's code, and
the process that pickled it keeps its own class untouched."""

import pickle
import subprocess
import sys
import types

import numpy as np

from pibench.benchmarks.shipping import ShippedClass
from pibench.methods.base import Interval, IntervalMethod

CELL = '''
Z = 1.0

def widen(sd):
    return Z * sd

class Shipped(IntervalMethod):
    name = "shipped_cell"

    def fit(self, data, calibration=None):
        return self

    def predict_interval(self, X):
        return Interval(X[..., 0] - widen(1.0), X[..., 0] + widen(1.0), X[..., 0])
'''


def _cell_class() -> tuple[type, dict]:
    namespace = {"__name__": "shipping_cell", "IntervalMethod": IntervalMethod, "Interval": Interval}
    exec(compile(CELL, "<cell>", "exec"), namespace)
    return namespace["Shipped"], namespace


def test_unpickled_where_it_was_pickled_it_is_the_original_class_untouched():
    cls, namespace = _cell_class()
    function = cls.predict_interval
    back = pickle.loads(pickle.dumps(ShippedClass(cls)))
    assert back.cls is cls and cls.predict_interval is function and function.__globals__ is namespace
    namespace["Z"] = 3.0  # a later cell's global still reaches the class
    X = np.zeros((1, 1, 1))
    assert cls().predict_interval(X).upper.item() == 3.0


def test_unpickled_in_another_process_it_is_the_code_as_pickled():
    cls, namespace = _cell_class()
    payload = pickle.dumps(ShippedClass(cls))
    namespace["Z"] = 5.0  # after pickling: the copy carries Z = 1.0
    script = ("import pickle, sys, numpy as np; shipped = pickle.loads(sys.stdin.buffer.read()); "
              "print(shipped.cls().predict_interval(np.zeros((1, 1, 1))).upper.item())")
    done = subprocess.run([sys.executable, "-c", script], input=payload, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert float(done.stdout.decode().strip()) == 1.0
    assert isinstance(cls.predict_interval, types.FunctionType) and cls.predict_interval.__globals__ is namespace
