"""Patches of a Node applied as the API server applies them (heartbeat_site/k8sapi/patches.py), and the command
a change of its taints maps onto (writes.py): the out-of-service taint and nothing else, every refusal naming the
field."""

from __future__ import annotations

import pytest

from heartbeat_site.k8sapi import patches, writes
from heartbeat_site.k8sapi.status import K8sError

UNREACHABLE = [{"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule", "timeAdded": "2026-01-01T00:01:40Z"},
               {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute", "timeAdded": "2026-01-01T00:01:45Z"}]
NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-2", "labels": {"zone": "a"}},
        "spec": {"podCIDR": "10.244.2.0/24", "taints": UNREACHABLE}, "status": {"phase": ""}}
OUT_OF_SERVICE = {"key": "node.kubernetes.io/out-of-service", "value": "nodeshutdown", "effect": "NoExecute"}


def test_merge_patches_replace_the_taints_whole_and_null_removes():
    # what kubectl taint sends: the node's whole taint list after the change (no merge key on spec.taints)
    patched = patches.merge_patch(NODE, {"spec": {"taints": [*UNREACHABLE, OUT_OF_SERVICE]}}, strategic=True)
    assert patched["spec"]["taints"] == [*UNREACHABLE, OUT_OF_SERVICE]
    assert patched["spec"]["podCIDR"] == "10.244.2.0/24"
    assert NODE["spec"]["taints"] == UNREACHABLE  # the stored node is left as it was
    assert patches.changed_fields(NODE, patched) == ["spec.taints"]
    uncordoned = patches.merge_patch({**NODE, "spec": {**NODE["spec"], "unschedulable": True}},
                                     {"spec": {"unschedulable": None}})
    assert "unschedulable" not in uncordoned["spec"]
    with pytest.raises(patches.PatchError) as refused:
        patches.merge_patch(NODE, {"spec": {"$setElementOrder/taints": []}}, strategic=True)
    assert refused.value.field == "spec.$setElementOrder/taints"


def test_json_patches_add_at_the_end_and_name_the_failing_operation():
    patched = patches.json_patch(NODE, [{"op": "add", "path": "/spec/taints/-", "value": OUT_OF_SERVICE}])
    assert patched["spec"]["taints"] == [*UNREACHABLE, OUT_OF_SERVICE]
    moved = patches.json_patch(NODE, [{"op": "test", "path": "/metadata/labels/zone", "value": "a"},
                                      {"op": "replace", "path": "/spec/taints/0/effect", "value": "NoExecute"}])
    assert moved["spec"]["taints"][0]["effect"] == "NoExecute"
    with pytest.raises(patches.PatchError) as refused:
        patches.json_patch(NODE, [{"op": "remove", "path": "/spec/taints/5"}])
    assert str(refused.value) == "JSON patch operation 0 (remove /spec/taints/5): index 5 is out of the list's 2 items"
    with pytest.raises(patches.PatchError) as missing:
        patches.json_patch(NODE, [{"op": "replace", "path": "/spec/unschedulable", "value": True}])
    assert str(missing.value).endswith("(replace /spec/unschedulable): 'unschedulable' is missing")
    with pytest.raises(K8sError) as bad:
        patches.json_patch(NODE, {"op": "add"})
    assert bad.value.code == 400


def command(taints: list[dict]) -> dict:
    return writes._taint_command("node-2", NODE, {**NODE, "spec": {**NODE["spec"], "taints": taints}})


def test_adding_or_removing_the_out_of_service_taint_are_its_commands():
    assert command([*UNREACHABLE, OUT_OF_SERVICE]) == {"action": "taint-out-of-service", "node": "node-2"}
    tainted = {**NODE, "spec": {**NODE["spec"], "taints": [*UNREACHABLE, OUT_OF_SERVICE]}}
    assert writes._taint_command("node-2", tainted, NODE) == {"action": "untaint-out-of-service", "node": "node-2"}


@pytest.mark.parametrize(("taints", "says"), [
    ([*UNREACHABLE, {"key": "dedicated", "value": "db", "effect": "NoSchedule"}],
     "spec.taints: the dedicated taint cannot be added; only adding or removing the node.kubernetes.io/out-of-service"),
    (UNREACHABLE[:1], "spec.taints: the node.kubernetes.io/unreachable taint is the controllers' to remove"),
    (UNREACHABLE + [{**OUT_OF_SERVICE, "effect": "NoSchedule"}, OUT_OF_SERVICE],
     "spec.taints: the node.kubernetes.io/out-of-service taint cannot be added"),
    ([*UNREACHABLE, {"key": "node.kubernetes.io/out-of-service", "effect": "NoSchedule"}],
     "spec.taints: the simulation's out-of-service taint is node.kubernetes.io/out-of-service=nodeshutdown:NoExecute, "
     "not node.kubernetes.io/out-of-service:NoSchedule"),
    ([*UNREACHABLE, {"key": "node.kubernetes.io/out-of-service", "effect": "NoWhere"}],
     "spec.taints[2].effect: Unsupported value: 'NoWhere': supported values: NoSchedule, PreferNoSchedule, NoExecute"),
    ([*UNREACHABLE, {"effect": "NoExecute"}], "spec.taints[2].key: Required value"),
])
def test_other_taint_changes_are_refused_naming_the_field(taints, says):
    with pytest.raises(K8sError) as refused:
        command(taints)
    assert refused.value.code == 422
    assert refused.value.reason == "Invalid"
    assert refused.value.message.startswith(f'Node "node-2" is invalid: {says}')
    field = says.split(":")[0]
    assert refused.value.details["causes"][0]["field"] == field  # what kubectl prints after "is invalid: "
    assert refused.value.details["kind"] == "Node"
