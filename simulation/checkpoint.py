"""The bytes of a checkpoint (`Simulation.checkpoint`, `Simulation.restore`): a pickle of the
whole run, made canonical, compressed.

Canonical: the same state gives the same bytes, in any process. Plain pickle does not: (1) it
writes a set in the order of its hash table, which depends on the set's history and on the
process's string hashes; (2) it shares one string between every place that holds that very
object, and a restore changes which places hold one object: the unpickler interns attribute
names, so a name that the run also holds as a value (a resource "nodes" beside an attribute
`nodes`) was one string and comes back as two.

So this pickler writes every set and frozenset sorted, found from the instances that hold them
(`reducer_override`, which pickle calls once per instance it has not written yet, never for a
string, a number or a plain container: a set two objects share stays one set), and starts with a
vocabulary: the strings of the simulation's code (its names, attribute names, short constants,
its modules' and classes' names), sorted. The checkpoint's first pickle interns each word
(`sys.intern`, one C call each) into the unpickler's memo; the run's pickle then refers to a word
the run holds by its memo index, and writes any other string by value, once per object. A
restore gets the interned words back, the very objects the restoring process's code and
attribute names use, so nothing splits, and every other string as one object per object it was:
a checkpoint of a restored run is the same bytes as the checkpoint it was restored from. (A
one-character string is the interpreter's shared one after a restore: the run must hold that
one, not one `str()` made.) Random streams are written packed (`_packed_random`).

Earlier versions got there with `persistent_id` and `persistent_load`, a Python call for every
object written (numbers and strings included: 4 million at 1,000 nodes) and for every string
read, two thirds of the pickling time and a third of the restore (docs/simulation-model.md,
"Checkpoints"). The vocabulary travels in the checkpoint, so a restore does not depend on the
restoring process building the same one; a process checkpointing a restored run builds its own,
the same for the same code.
"""

from __future__ import annotations

import array
import copyreg
import dataclasses
import functools
import gc
import importlib
import inspect
import io
import pickle
import pkgutil
import random
import struct
import sys
import types
import zlib
from collections.abc import Iterator
from itertools import chain
from typing import Any

MAGIC = b"heartbeat-simulation-checkpoint/2\n"  # a new format: a new number
COMPRESSION = 1  # zlib level: most of the size for a fraction of level 6's time
# pickle recurses once per level of the object graph; a run's graph is shallow (a few dozen
# levels), this is a margin against a C stack overflow, not a need
RECURSION_LIMIT = 10_000
# constants longer than this are docstrings and messages, not names a run holds as values
WORD_MAX = 80
_intern = sys.intern


def _sorted(items: set[Any] | frozenset[Any]) -> list[Any]:
    try:
        return sorted(items)
    except TypeError:  # mixed types: their reprs (a run's sets hold names and tuples of them)
        return sorted(items, key=repr)


def _code_strings(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    stack: list[Any] = list(code.co_consts)
    while stack:
        const = stack.pop()
        if type(const) is str:
            if len(const) <= WORD_MAX:
                yield const
        elif isinstance(const, tuple | frozenset):  # keyword names, `in (...)` tests
            stack.extend(const)
        elif isinstance(const, types.CodeType):
            yield from _code_strings(const)


def _global_names(value: type | types.FunctionType) -> Iterator[str]:
    """The names pickle writes for a class or function of the package (its module, qualified
    name and name), made the interned strings in place. They are whatever string objects the
    import made, so whether they were the vocabulary's words depended on the process's history:
    one process wrote a module's name by value, another as a word."""
    for attribute in ("__module__", "__qualname__", "__name__"):
        name = getattr(value, attribute)
        if type(name) is str:  # a function made by exec may have no module
            name = _intern(name)
            setattr(value, attribute, name)
            yield name


def _module_strings(module: types.ModuleType) -> Iterator[str]:
    for name, value in vars(module).items():
        if name.startswith("__") and name.endswith("__"):
            continue  # the module's file, its warnings registry once one was issued: not the same everywhere
        yield name
        if isinstance(value, type) and value.__module__ == module.__name__:
            yield from _global_names(value)
            yield from vars(value)  # attribute and field names, as their class spells them
            yield from getattr(value, "__slots__", ())
            for member in vars(value).values():
                function = inspect.unwrap(member.__func__ if isinstance(member, classmethod | staticmethod)
                                          else member)
                if isinstance(function, types.FunctionType):
                    yield from _global_names(function)
                    yield from _code_strings(function.__code__)
        elif isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            yield from _global_names(value)
            yield from _code_strings(value.__code__)
        elif type(value) is str and len(value) <= WORD_MAX:
            yield value


@functools.cache
def vocabulary() -> tuple[str, ...]:
    """The simulation package's words, sorted, each the interned object this process uses.

    Interning a constant that is not an identifier (a component's name with dashes) makes that
    very constant the canonical one, so a run holding it refers to a word. The same code gives
    the same words in any process; the package's modules are imported for it (all but
    `__main__`), which a process that checkpoints has mostly done already."""
    import simulation

    words: set[str] = set()
    for info in pkgutil.walk_packages(simulation.__path__, "simulation."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue
        words.update(_module_strings(importlib.import_module(info.name)))
    return tuple(_intern(word) for word in sorted(words))


def _prologue(words: tuple[str, ...]) -> bytes:
    """A pickle that leaves `sys.intern` in memo slot 0 and word k interned in slot k + 1, and
    loads as None: per word, intern(word) then MEMOIZE (opcodes as pickletools names them)."""
    out = [b"\x80\x05csys\nintern\n\x94"]  # PROTO 5, GLOBAL sys.intern, MEMOIZE
    for word in words:
        raw = word.encode("utf-8", "surrogatepass")
        if len(raw) < 256:
            out.append(b"h\x00\x8c" + bytes((len(raw),)) + raw)  # BINGET 0, SHORT_BINUNICODE
        else:
            out.append(b"h\x00X" + struct.pack("<I", len(raw)) + raw)  # BINGET 0, BINUNICODE
        out.append(b"\x85R\x940")  # TUPLE1, REDUCE, MEMOIZE, POP
    out.append(b"N.")  # NONE, STOP
    return b"".join(out)


def _packed_random(stream: random.Random) -> tuple[Any, tuple[Any, ...]]:
    """A random stream as its state's 625 words in one bytes object (little-endian), not a tuple
    of 625 numbers: a run has two streams per node, which were a third of a checkpoint's pickle
    and of the time to write and read it, and `random.Random()` seeded each one from the system
    before `setstate` replaced it (`_unpacked_random` seeds from 0: no system call)."""
    version, words, gauss_next = stream.getstate()
    packed = array.array("I", words)
    if sys.byteorder == "big":
        packed.byteswap()
    return _unpacked_random, (version, packed.tobytes(), gauss_next)


def _unpacked_random(version: int, packed: bytes, gauss_next: float | None) -> random.Random:
    words = array.array("I")
    words.frombytes(packed)
    if sys.byteorder == "big":
        words.byteswap()
    stream = random.Random(0)
    stream.setstate((version, tuple(words), gauss_next))
    return stream


assert array.array("I").itemsize == 4, "a random stream's words are 32 bits"


class _SortedSet:
    """Stands for a set while it is pickled: written as `set(sorted items)`. One per set, so a
    set that two objects share is one set after a restore."""

    __slots__ = ("items",)

    def __init__(self, items: set[Any] | frozenset[Any]) -> None:
        self.items = items


class _Pickler(pickle.Pickler):
    """Writes sets sorted without a Python call per object written, random streams packed.

    Pickle asks `reducer_override` about every object it has not written yet except the exact
    builtins (strings, numbers, dicts, lists, tuples and sets themselves), so sets are found
    from their holders: for an instance, this makes the reduction pickle would (its
    `__reduce_ex__`) and looks through its arguments and state, down through plain dicts, lists
    and tuples (not into other instances: each has its own call). A set found there is replaced
    by its `_SortedSet`, and each container on the way by a copy, the same copy wherever that
    container is held (identity kept, as for the sets)."""

    def __init__(self, file: io.BytesIO, words: tuple[str, ...]) -> None:
        super().__init__(file, protocol=5)
        # copyreg's as it is now (a module imported since may have added a type: Twisted adds bound
        # methods, and a restore that finds its function imports it), and the random streams
        self.dispatch_table = {**copyreg.dispatch_table, random.Random: _packed_random}
        # the memo as `_prologue` leaves the unpickler's: a word the run holds is a memo reference
        seeded: dict[int, tuple[int, Any]] = {id(_intern): (0, _intern)}
        for index, word in enumerate(words, 1):
            seeded[id(word)] = (index, word)
        # pickle accepts a dict of id -> (index, object) for its memo
        self.memo = seeded
        # id -> its stand-in (a _SortedSet, or a container's copy), with the original kept alive
        # so that no id is reused meanwhile
        self._stand_ins: dict[int, tuple[Any, Any]] = {}

    def reducer_override(self, obj: Any) -> Any:
        kind = type(obj)
        if kind is _SortedSet:
            items = obj.items  # sorted, and any set among them (a set of frozensets) in turn
            return type(items), (self._replace_sets(_sorted(items)),)
        if kind in self.dispatch_table:
            return NotImplemented  # as copyreg says
        may_hold = _MAY_HOLD_SETS.get(kind)
        if may_hold is None:
            may_hold = _MAY_HOLD_SETS[kind] = _may_hold_sets(kind)
        if not may_hold:
            return NotImplemented  # pickle's own way
        reduced = obj.__reduce_ex__(5)
        if type(reduced) is not tuple or not _holds_set(reduced):  # the common case: as pickle would
            return reduced
        return self._replace_sets(reduced)

    def _replace_sets(self, value: Any) -> Any:
        """`value` with every set in it (through plain containers) replaced by its stand-in,
        and every container that holds one by its copy; `value` itself when it holds none."""
        kind = type(value)
        if kind is set or kind is frozenset:
            known = self._stand_ins.get(id(value))
            if known is None:
                known = self._stand_ins[id(value)] = (_SortedSet(value), value)
            return known[0]
        if kind not in _CONTAINERS or not _holds_set(value):
            return value
        known = self._stand_ins.get(id(value))
        if known is None:
            if kind is dict:
                copy: Any = {self._replace_sets(k): self._replace_sets(v) for k, v in value.items()}
            else:
                copy = kind(map(self._replace_sets, value))
            known = self._stand_ins[id(value)] = (copy, value)
        return known[0]


def _holds_set(value: dict[Any, Any] | list[Any] | tuple[Any, ...]) -> bool:
    """Whether a set is in `value` or in the plain containers it holds (not in instances).
    One loop, no call per item: it runs over every instance's reduction."""
    stack = [value]
    pop, push = stack.pop, stack.append
    while stack:
        container = pop()
        for item in chain(container, container.values()) if type(container) is dict else container:
            kind = type(item)
            if kind is set or kind is frozenset:
                return True
            if kind is tuple or kind is list or kind is dict:
                push(item)
    return False


_CONTAINERS = frozenset({dict, list, tuple})
_MAY_HOLD_SETS: dict[type, bool] = {}


def _may_hold_sets(kind: type) -> bool:
    """Whether an instance of `kind` needs looking through for sets, decided once per class.
    Not: what pickle writes by name (classes, functions), a bound method (its object has its own
    call), a random stream (625 numbers), a frozen dataclass
    none of whose fields is declared a set (the API objects and their parts: JSON-like fields,
    half the objects of a run, `objects.fast_pickling`)."""
    if issubclass(kind, type | types.FunctionType | types.BuiltinFunctionType | types.MethodType | random.Random):
        return False
    if dataclasses.is_dataclass(kind) and kind.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        return any("set" in str(field.type) for field in dataclasses.fields(kind))
    return True


def dumps(obj: Any) -> bytes:
    """The checkpoint bytes of `obj` (with the cyclic collector off: it would walk for nothing)."""
    words = vocabulary()
    collecting = gc.isenabled()
    gc.disable()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        out = io.BytesIO()
        out.write(_prologue(words))
        _Pickler(out, words).dump(obj)
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
    # this process's constants become the canonical strings first, as in the process that wrote it
    vocabulary()
    raw = zlib.decompress(memoryview(data)[len(MAGIC):])
    collecting = gc.isenabled()
    gc.disable()
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
    try:
        unpickler = pickle.Unpickler(io.BytesIO(raw))
        if unpickler.load() is not None:  # the prologue: the words, in the memo
            raise ValueError("a simulation checkpoint without its vocabulary")
        return unpickler.load()
    finally:
        sys.setrecursionlimit(limit)
        if collecting:
            gc.enable()
