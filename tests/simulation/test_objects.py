"""`evolve` makes a new version of an object: every field copied, only the ones named changed."""

import dataclasses

import pytest

from simulation import objects

EVOLVING = [objects.ObjectMeta, objects.Lease, objects.NodeCondition, objects.Node, objects.Pod, objects.Service,
            objects.EndpointSlice, objects.Event, objects.StatefulSet, objects.PersistentVolumeClaim,
            objects.PersistentVolume, objects.VolumeAttachment]


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


def test_storage_objects_render_as_kubernetes_json():
    """The shapes kubectl and the Python client read (k8s.io/api apps/v1, core/v1, storage/v1)."""
    from simulation.clock import WallClock, parse_start_time

    clock = WallClock(parse_start_time("2026-01-01T00:00:00Z"))
    meta = objects.ObjectMeta("node-2", "", "uid-n", 7, 0)
    volume = "kubernetes.io/csi/disk.csi.example.com^pvc-1"
    node = objects.to_k8s(objects.Node(meta, volumes_in_use=(volume,), volumes_attached=(volume,)), clock)
    assert node["status"]["volumesInUse"] == [volume]
    assert node["status"]["volumesAttached"] == [{"name": volume, "devicePath": ""}]
    assert "volumesInUse" not in objects.to_k8s(objects.Node(meta), clock)["status"]  # omitempty
    va = objects.VolumeAttachment(objects.ObjectMeta("csi-abc", "", "uid-v", 8, 0), objects.CSI_DRIVER, "node-2",
                                  "pvc-1", attached=True, finalizer=True)
    out = objects.to_k8s(va, clock)
    assert out["apiVersion"] == "storage.k8s.io/v1" and out["kind"] == "VolumeAttachment"
    assert out["spec"] == {"attacher": "disk.csi.example.com", "nodeName": "node-2",
                           "source": {"persistentVolumeName": "pvc-1"}}
    assert out["status"] == {"attached": True}
    assert out["metadata"]["finalizers"] == ["external-attacher/disk-csi-example-com"]
    pv = objects.PersistentVolume(objects.ObjectMeta("pvc-1", "", "uid-p", 9, 0), "1Gi", objects.CSI_DRIVER, "pvc-1",
                                  claim_ref=("default", "data-db-0", "uid-c"), phase="Bound")
    assert pv.unique_name == volume
    spec = objects.to_k8s(pv, clock)["spec"]
    assert spec["claimRef"]["name"] == "data-db-0" and spec["csi"]["volumeHandle"] == "pvc-1"
    pvc = objects.PersistentVolumeClaim(objects.ObjectMeta("data-db-0", "default", "uid-c", 10, 0), "1Gi",
                                        volume_name="pvc-1", phase="Bound")
    rendered = objects.to_k8s(pvc, clock)
    assert rendered["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    assert rendered["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    sts = objects.StatefulSet(objects.ObjectMeta("db", "default", "uid-s", 11, 0), 3,
                              claim_templates=(objects.ClaimTemplate("data", "1Gi"),), status_replicas=3,
                              ready_replicas=2)
    rendered = objects.to_k8s(sts, clock)
    assert rendered["apiVersion"] == "apps/v1" and rendered["spec"]["podManagementPolicy"] == "OrderedReady"
    assert rendered["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    assert (rendered["status"]["replicas"], rendered["status"]["readyReplicas"]) == (3, 2)
    pod = objects.Pod(objects.ObjectMeta("db-0", "default", "uid-0", 12, 0), owner_kind="StatefulSet",
                      owner_name="db", volumes=(("data", "data-db-0"),))
    spec = objects.to_k8s(pod, clock)["spec"]
    assert spec["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]
    assert (spec["hostname"], spec["subdomain"]) == ("db-0", "db")
    assert objects.attachment_name("pvc-1", objects.CSI_DRIVER, "node-2").startswith("csi-")
