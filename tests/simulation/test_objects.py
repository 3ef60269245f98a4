"""`evolve` makes a new version of an object: every field copied, only the ones named changed."""

import dataclasses

import pytest

from simulation import objects

EVOLVING = [objects.ObjectMeta, objects.Lease, objects.NodeCondition, objects.Node, objects.Pod, objects.Service,
            objects.EndpointSlice, objects.Event]


def filled(cls):
    """An instance whose every field holds a distinct marker."""
    values = {f.name: object() for f in dataclasses.fields(cls)}
    return cls(**values), values


@pytest.mark.parametrize("cls", EVOLVING, ids=lambda c: c.__name__)
def test_evolve_copies_every_field_and_changes_only_the_ones_named(cls):
    original, values = filled(cls)
    copy = original.evolve()
    assert copy is not original and copy == original
    for name in values:
        new_value = object()
        changed = original.evolve(**{name: new_value})
        assert {n: getattr(changed, n) for n in values} == {**values, name: new_value}
        assert getattr(original, name) is values[name]  # the old version stays as it was


def test_an_evolved_object_is_still_frozen():
    node = objects.Node(objects.ObjectMeta("node-1", "", "uid-1", 1, 0)).evolve(unschedulable=True)
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.unschedulable = False
