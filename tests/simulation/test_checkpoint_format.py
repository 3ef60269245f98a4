"""The checkpoint's bytes (simulation/checkpoint.py): canonical (sets sorted, strings the same
objects after a restore as before it) and identity-keeping (what two objects share, they still
share after a restore), without a Python call per object pickled."""

from __future__ import annotations

import copyreg
import zlib

import pytest

from simulation import Simulation, checkpoint


class Holder:
    """A component: an instance with a plain __dict__."""

    def __init__(self, **attrs: object) -> None:
        self.__dict__.update(attrs)


class Slotted:
    """A slotted object (a Timer, a Process)."""

    __slots__ = ("args", "name")

    def __init__(self, args: tuple[object, ...], name: str) -> None:
        self.args = args
        self.name = name


def graph(names: list[str]) -> Holder:
    """Sets of these names held in several ways: an attribute, a dict's value, a slotted object's
    tuple, a frozenset in a set, a frozenset as a dict key, a set of tuples; and one set shared
    by two holders."""
    shared = set(names)
    return Holder(
        shared=shared,
        other=Holder(same=shared, by_key={frozenset(names): [set(names[1:]) | {names[0]}]}),
        timer=Slotted((shared, {"nested": (frozenset(names),)}), "timer"),
        in_a_set={frozenset(names)},
        of_tuples={(n, len(n)) for n in names},
    )


NAMES = [f"node-{i}" for i in range(40)]


def test_sets_are_written_sorted_whatever_their_history():
    """Two sets with the same members but another history (another order in their hash table)
    give the same bytes: without sorting, the bytes would depend on the history and, for
    strings, on the process's hash seed."""
    plain = graph(NAMES)
    churned = graph(list(reversed(NAMES)))
    for holder_set in (churned.shared,):
        for i in range(500):  # grow and shrink the table: another layout, the same members
            holder_set.add(f"tmp-{i}")
        for i in range(500):
            holder_set.discard(f"tmp-{i}")
    assert list(plain.shared) != list(churned.shared)
    assert checkpoint.dumps(plain) == checkpoint.dumps(churned)


def test_a_restore_keeps_what_objects_share():
    data = checkpoint.dumps(graph(NAMES))
    restored = checkpoint.loads(data)
    assert restored.other.same is restored.shared  # one set, as before
    assert restored.timer.args[0] is restored.shared
    assert restored.shared == set(NAMES)
    assert restored.other.by_key == {frozenset(NAMES): [set(NAMES)]}
    assert restored.timer.args[1] == {"nested": (frozenset(NAMES),)}
    assert restored.in_a_set == {frozenset(NAMES)}
    assert restored.of_tuples == {(n, len(n)) for n in NAMES}
    assert checkpoint.dumps(restored) == data


def test_a_name_held_as_a_value_stays_one_string():
    """An attribute name the run also holds as a value ("nodes", a resource) is one string in
    the process; the unpickler interns attribute names, so without the vocabulary the value
    came back as a second string, and the restored run's checkpoint was other bytes."""
    holder = Holder(nodes={"nodes": ["nodes", "pods"]}, resource="nodes", pods="pods")
    data = checkpoint.dumps(holder)
    restored = checkpoint.loads(data)
    assert restored.resource is "nodes"  # noqa: F632 (the very object: the interned name)
    assert checkpoint.dumps(restored) == data


def test_strings_are_written_once_per_object():
    """A string the run holds in 10,000 places is written once; the vocabulary's words are not
    written at all past the checkpoint's first pickle."""
    name = "-".join(["a", "name", "made", "at", "run", "time"])
    data = checkpoint.dumps(Holder(many=[name] * 10_000, words=["nodes"] * 10_000))
    raw = zlib.decompress(data[len(checkpoint.MAGIC):])
    assert raw.count(name.encode()) == 1
    assert raw.count(b"\x8c\x05nodes") == 1  # the word, in the vocabulary


def test_a_checkpoint_of_another_format_is_refused():
    """A checkpoint an older version wrote (format 1): the callers replay from 0 instead."""
    with pytest.raises(ValueError, match="format"):
        Simulation.restore(b"heartbeat-simulation-checkpoint/1\n" + zlib.compress(b"x"))


class Registered:
    """A type some module registers with copyreg after the checkpoint module was imported (as
    Twisted does for bound methods: a restore that finds its function imports it)."""


def _registered_again() -> Registered:
    made = Registered()
    made.__dict__["by_copyreg"] = True
    return made


def test_a_reduction_registered_with_copyreg_later_is_used():
    """Otherwise the process that checkpoints and the one that restores and checkpoints again
    write such an object in two ways."""
    copyreg.pickle(Registered, lambda obj: (_registered_again, ()))
    try:
        restored = checkpoint.loads(checkpoint.dumps(Holder(it=Registered())))
    finally:
        del copyreg.dispatch_table[Registered]
    assert restored.it.by_copyreg
