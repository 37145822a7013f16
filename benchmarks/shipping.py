"""Method classes sent to workers by value, so every worker runs the code the run was prepared with.

A worker process that looks a plugin method up by name imports the plugin's module
itself: the file as it is on disk then, or an older copy still loaded from an
earlier run (loky keeps its workers), and a class defined in a notebook or script
(``__main__``) it cannot import at all. So the runner hands each task the class it
checked and named (:mod:`pibench.methods.code_identity`), pickled by value with
cloudpickle: its module's functions and classes travel as code, pibench and other
libraries by reference. pibench's own methods go by name, as the worker's pibench
is checked against the run's code version.

A worker forgets the helpers a method imports where it uses it that it imported for an
earlier run (:func:`~pibench.methods.code_identity.forget_lazy_helpers`): the method's
import then reads the file, which the task's identity names.

This pickle never touches a disk: it goes from the parent to its own workers, like
every joblib argument. Unpickled in the process that pickled it (dask's client does
so with LocalCluster), it is the original class: cloudpickle would otherwise update
the original in place with the pickled copies of its functions, whose globals are
frozen copies, so a global the user sets afterwards would no longer reach the class.
"""

from __future__ import annotations

import os
import pickle
import sys
import uuid
import weakref

import cloudpickle

from pibench.methods.code_identity import forget_lazy_helpers, is_pibench_class, snapshots


def _dumps_by_value(cls: type) -> bytes:
    """cloudpickle of ``cls`` with the top-level packages of its snapshots pickled by value (so the helpers
    its identity names travel with it)."""
    already = set(cloudpickle.list_registry_pickle_by_value())
    added = []
    for top in sorted({s.module.split(".")[0] for s in snapshots(cls) if s.module != "__main__"}):
        module = sys.modules.get(top)
        if module is not None and top not in already:
            cloudpickle.register_pickle_by_value(module)
            added.append(module)
    try:
        return cloudpickle.dumps(cls)
    finally:
        for module in added:
            cloudpickle.unregister_pickle_by_value(module)


#: (pid, token) of this process, and the classes it pickled by id: an unpickle here returns them as they are
_ORIGIN = (os.getpid(), uuid.uuid4().hex)
_PICKLED_HERE: weakref.WeakValueDictionary[int, type] = weakref.WeakValueDictionary()


class ShippedClass:
    """A method class that pickles by value (see the module docstring); ``.cls`` is the class. It is
    pickled once, the first time a task carrying it is sent, and the bytes reused for every other task."""

    def __init__(self, cls: type) -> None:
        self.cls = cls
        self._payload: bytes | None = None

    def __reduce__(self):
        if self._payload is None:
            self._payload = _dumps_by_value(self.cls)
            _PICKLED_HERE[id(self.cls)] = self.cls
        return _rebuild, (self._payload, _ORIGIN, id(self.cls))

    def __repr__(self) -> str:
        return f"ShippedClass({self.cls.__module__}.{self.cls.__qualname__})"


def _rebuild(payload: bytes, origin: tuple[int, str] | None = None, key: int = 0) -> ShippedClass:
    original = _PICKLED_HERE.get(key) if origin == (os.getpid(), _ORIGIN[1]) else None
    if original is None:  # a worker: what it imported of the class's modules for an earlier run may be older code
        original = pickle.loads(payload)
        forget_lazy_helpers(original)
    shipped = ShippedClass(original)
    shipped._payload = payload
    return shipped


def ship(cls: type) -> ShippedClass | None:
    """What a task carries to name its method class: None for pibench's own (found by name in the worker).
    Call it once per class: the tasks of one class share the one pickle."""
    return None if is_pibench_class(cls) else ShippedClass(cls)
