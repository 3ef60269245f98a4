"""The bytes of a checkpoint (`Simulation.checkpoint`, `Simulation.restore`): a pickle of the
whole run, made canonical, compressed.

Canonical: the same state gives the same bytes, in any process. Plain pickle does not: (1) it
writes a set in the order of its hash table, which depends on the set's history and on the
process's string hashes; (2) it shares one string between every place that holds that very
object, and which equal strings are one object changes when a run is restored (the unpickler
interns attribute names, a restored value is a fresh string). So this pickler writes every
set and frozenset sorted (as a persistent id, with its identity kept: a set two objects share
is one set after a restore), and every string as its interned self (equal strings are one
string in the pickle). A checkpoint of a restored run is then the same bytes as the checkpoint
it was restored from.
"""

from __future__ import annotations

import gc
import io
import pickle
import sys
import zlib
from typing import Any

MAGIC = b"heartbeat-simulation-checkpoint/1\n"  # a new format: a new number
COMPRESSION = 1  # zlib level: most of the size for a fraction of level 6's time
# pickle recurses once per level of the object graph; a run's graph is shallow (a few dozen
# levels), this is a margin against a C stack overflow, not a need
RECURSION_LIMIT = 10_000
_intern = sys.intern


def _sorted(items: set[Any] | frozenset[Any]) -> list[Any]:
    try:
        return sorted(items)
    except TypeError:  # mixed types: their reprs (a run's sets hold names and tuples of them)
        return sorted(items, key=repr)


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file, protocol=5)
        self._sets: dict[int, int] = {}  # id -> index in the stream
        self._seen: list[Any] = []  # keeps them alive, so that no id is reused meanwhile

    def persistent_id(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is str:
            return _intern(obj)
        if kind is set or kind is frozenset:
            index = self._sets.get(id(obj))
            if index is not None:
                return ("same", index)
            self._sets[id(obj)] = len(self._seen)
            self._seen.append(obj)
            return ("set" if kind is set else "frozenset", _sorted(obj))
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO) -> None:
        super().__init__(file)
        self._sets: list[Any] = []

    def persistent_load(self, pid: Any) -> Any:
        if type(pid) is str:
            return _intern(pid)
        kind, value = pid
        if kind == "same":
            return self._sets[value]
        made = set(value) if kind == "set" else frozenset(value)
        self._sets.append(made)
        return made


def dumps(obj: Any) -> bytes:
    """The checkpoint bytes of `obj` (with the cyclic collector off: it would walk for nothing)."""
    collecting = gc.isenabled()
    gc.disable()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        out = io.BytesIO()
        _Pickler(out).dump(obj)
    finally:
        sys.setrecursionlimit(limit)
        if collecting:
            gc.enable()
    return MAGIC + zlib.compress(out.getbuffer(), COMPRESSION)


def loads(data: bytes) -> Any:
    """What `dumps` wrote. The collector stays off while it builds the objects (it would run
    many times over them); the caller decides where they go afterwards."""
    if not data.startswith(MAGIC):
        raise ValueError("not a simulation checkpoint (or one of another format version)")
    raw = zlib.decompress(memoryview(data)[len(MAGIC):])
    collecting = gc.isenabled()
    gc.disable()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        return _Unpickler(io.BytesIO(raw)).load()
    finally:
        sys.setrecursionlimit(limit)
        if collecting:
            gc.enable()
