"""Load the reference worker state machine (../shared/reference) with the minimal
stand-ins for the parts of dask and distributed it imports (shim/).

`load_seed(ordered=True)` loads a variant whose sets iterate in insertion order, as
JavaScript's do (the conformance vectors were checked against such a variant): the
module-level name `set` is bound to `OrderedSet`, and the one set comprehension whose
order matters becomes a `set(...)` call. The original iterates sets in hash and memory
address order.
"""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import MutableSet

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.environ.get(
    "WEFT_REFERENCE", os.path.join(HERE, "..", "..", "..", "shared", "reference")
)


class OrderedSet(MutableSet):
    """A set that iterates in insertion order (a dict's keys)."""

    __slots__ = ("_d",)
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, items=()):
        self._d = dict.fromkeys(items)

    def __contains__(self, x):
        return x in self._d

    def __iter__(self):
        return iter(self._d)

    def __len__(self):
        return len(self._d)

    def __repr__(self):
        return "{" + ", ".join(map(repr, self._d)) + "}" if self._d else "set()"

    def add(self, x):
        self._d[x] = None

    def discard(self, x):
        self._d.pop(x, None)

    def remove(self, x):
        del self._d[x]

    def pop(self):
        if not self._d:
            raise KeyError("pop from an empty set")
        x = next(iter(self._d))
        del self._d[x]
        return x

    def clear(self):
        self._d.clear()

    def copy(self):
        return OrderedSet(self._d)

    def update(self, *others):
        for o in others:
            for x in o:
                self._d[x] = None

    def difference_update(self, *others):
        for o in others:
            for x in o:
                self._d.pop(x, None)

    def union(self, *others):
        out = self.copy()
        out.update(*others)
        return out

    def difference(self, *others):
        out = self.copy()
        out.difference_update(*others)
        return out

    def intersection(self, *others):
        return OrderedSet(x for x in self._d if all(x in o for o in others))

    def issubset(self, other):
        return all(x in other for x in self._d)

    def issuperset(self, other):
        return all(x in self._d for x in other)


def _load(name: str, path: str, ordered: bool, patch=lambda src: src):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if ordered:
        module.set = OrderedSet  # type: ignore[attr-defined]
    with open(path) as f:
        source = patch(f.read())
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def _ordered_comprehensions(src: str) -> str:
    before = "to_gather_keys = {ts.key for ts in to_gather_tasks}"
    if before not in src:
        raise RuntimeError("the reference changed: update tools/oracle/seed.py")
    return src.replace(before, "to_gather_keys = set(ts.key for ts in to_gather_tasks)")


def load_seed(ordered: bool = False):
    """The reference's `distributed.worker_state_machine` module."""
    if "distributed.worker_state_machine" in sys.modules:
        return sys.modules["distributed.worker_state_machine"]
    sys.path.insert(0, os.path.join(HERE, "shim"))
    imports = os.path.join(REFERENCE, "imports")
    _load(
        "distributed.collections",
        os.path.join(imports, "distributed_collections.py"),
        ordered,
    )
    _load("distributed._stories", os.path.join(imports, "distributed_stories.py"), False)
    return _load(
        "distributed.worker_state_machine",
        os.path.join(REFERENCE, "worker_state_machine.py"),
        ordered,
        _ordered_comprehensions if ordered else lambda s: s,
    )
