"""StatefulSets, PersistentVolumeClaims, PersistentVolumes and VolumeAttachments as the per-run API describes and
prints them (heartbeat_site/k8sapi/resources.py, tables.py): the discovery entries kubectl maps its short names
with, and the cells of the real printers (``pkg/printers/internalversion/printers.go``), from objects in the shape
a real API server serves."""

from __future__ import annotations

from datetime import UTC, datetime

from heartbeat_site.k8sapi import resources, tables

NOW = datetime(2026, 1, 1, 0, 10, tzinfo=UTC)
CREATED = "2026-01-01T00:00:15Z"  # 9m45s before NOW

STATEFULSET = {
    "apiVersion": "apps/v1", "kind": "StatefulSet",
    "metadata": {"name": "db", "namespace": "default", "creationTimestamp": CREATED},
    "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
             "template": {"metadata": {"labels": {"app": "db"}},
                          "spec": {"containers": [{"name": "db", "image": "registry.example/db:1.0"}]}},
             "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                       "spec": {"accessModes": ["ReadWriteOnce"],
                                                "resources": {"requests": {"storage": "1Gi"}}}}]},
    "status": {"replicas": 3, "readyReplicas": 2, "currentReplicas": 3, "availableReplicas": 2},
}
CLAIM = {
    "apiVersion": "v1", "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data-db-1", "namespace": "default", "creationTimestamp": CREATED},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
             "storageClassName": "standard", "volumeMode": "Filesystem",
             "volumeName": "pvc-4f0c2a71-1d2e-4e8e-9a55-0c1b2d3e4f50"},
    "status": {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}},
}
VOLUME = {
    "apiVersion": "v1", "kind": "PersistentVolume",
    "metadata": {"name": "pvc-4f0c2a71-1d2e-4e8e-9a55-0c1b2d3e4f50", "creationTimestamp": CREATED},
    "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
             "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "standard", "volumeMode": "Filesystem",
             "claimRef": {"kind": "PersistentVolumeClaim", "namespace": "default", "name": "data-db-1"},
             "csi": {"driver": "csi.example.com", "volumeHandle": "vol-1"}},
    "status": {"phase": "Bound"},
}
ATTACHMENT = {
    "apiVersion": "storage.k8s.io/v1", "kind": "VolumeAttachment",
    "metadata": {"name": "csi-0d3c5b1e9f", "creationTimestamp": CREATED},
    "spec": {"attacher": "csi.example.com", "nodeName": "node-2",
             "source": {"persistentVolumeName": "pvc-4f0c2a71-1d2e-4e8e-9a55-0c1b2d3e4f50"}},
    "status": {"attached": True},
}


def names(resource: str) -> tuple[list[str], list[str]]:
    """The column names kubectl shows, and those it adds with ``-o wide``."""
    columns = tables.PRINTERS[resource][0]
    return ([c["name"] for c in columns if not c.get("priority")], [c["name"] for c in columns if c.get("priority")])


def cells(resource: str, obj: dict) -> list:
    return tables.table(resource, [obj], NOW, {})["rows"][0]["cells"]


def test_discovery_names_the_resources_kubectl_maps_its_short_names_with():
    core = {r["name"]: r for r in resources.resource_list("", "v1")["resources"]}
    assert core["persistentvolumeclaims"] == {"name": "persistentvolumeclaims",
                                              "singularName": "persistentvolumeclaim", "namespaced": True,
                                              "kind": "PersistentVolumeClaim", "verbs": ["get", "list", "watch"],
                                              "shortNames": ["pvc"]}
    assert core["persistentvolumes"]["namespaced"] is False
    assert core["persistentvolumes"]["shortNames"] == ["pv"]
    assert "delete" in core["pods"]["verbs"]  # kubectl delete pod --force (writes.py)
    apps = {r["name"]: r for r in resources.resource_list("apps", "v1")["resources"]}
    assert apps["statefulsets"]["shortNames"] == ["sts"]
    assert apps["statefulsets"]["categories"] == ["all"]  # kubectl get all lists them; claims and volumes not
    assert "categories" not in core["persistentvolumeclaims"]
    assert "categories" not in core["persistentvolumes"]
    assert "storage.k8s.io" in [g["name"] for g in resources.api_group_list()["groups"]]
    assert resources.api_group("storage.k8s.io")["preferredVersion"] == {"groupVersion": "storage.k8s.io/v1",
                                                                          "version": "v1"}
    storage = resources.resource_list("storage.k8s.io", "v1")["resources"]
    assert [(r["name"], r["kind"], r["namespaced"]) for r in storage] == [
        ("volumeattachments", "VolumeAttachment", False)]


def test_statefulset_prints_ready_of_desired_and_its_containers_when_wide():
    assert names("statefulsets") == (["Name", "Ready", "Age"], ["Containers", "Images"])
    assert cells("statefulsets", STATEFULSET) == ["db", "2/3", "9m45s", "db", "registry.example/db:1.0"]
    empty = {**STATEFULSET, "status": {"replicas": 0}}  # readyReplicas omitted when 0
    assert cells("statefulsets", empty)[1] == "0/3"


def test_claim_prints_its_volume_capacity_and_modes_once_bound():
    assert names("persistentvolumeclaims") == (
        ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass", "VolumeAttributesClass", "Age"],
        ["VolumeMode"])
    assert cells("persistentvolumeclaims", CLAIM) == [
        "data-db-1", "Bound", "pvc-4f0c2a71-1d2e-4e8e-9a55-0c1b2d3e4f50", "1Gi", "RWO", "standard", "<unset>",
        "9m45s", "Filesystem"]
    pending = {**CLAIM, "spec": {k: v for k, v in CLAIM["spec"].items() if k not in ("volumeName", "volumeMode")},
               "status": {"phase": "Pending"}}
    assert cells("persistentvolumeclaims", pending) == ["data-db-1", "Pending", "", "", "", "standard", "<unset>",
                                                        "9m45s", "<unset>"]
    deleting = {**CLAIM, "metadata": {**CLAIM["metadata"], "deletionTimestamp": "2026-01-01T00:09:00Z"}}
    assert cells("persistentvolumeclaims", deleting)[1] == "Terminating"
    annotated = {**CLAIM, "metadata": {**CLAIM["metadata"],
                                       "annotations": {"volume.beta.kubernetes.io/storage-class": "old"}}}
    assert cells("persistentvolumeclaims", annotated)[5] == "old"  # the beta annotation wins, as in the helper


def test_volume_prints_its_claim_as_namespace_slash_name():
    assert names("persistentvolumes") == (
        ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim", "StorageClass",
         "VolumeAttributesClass", "Reason", "Age"], ["VolumeMode"])
    assert cells("persistentvolumes", VOLUME) == [
        "pvc-4f0c2a71-1d2e-4e8e-9a55-0c1b2d3e4f50", "1Gi", "RWO", "Delete", "Bound", "default/data-db-1", "standard",
        "<unset>", "", "9m45s", "Filesystem"]
    released = {**VOLUME, "spec": {k: v for k, v in VOLUME["spec"].items() if k != "claimRef"},
                "status": {"phase": "Released"}}
    assert cells("persistentvolumes", released)[4:6] == ["Released", ""]


def test_access_modes_in_the_helpers_order_each_once():
    assert tables.access_modes(["ReadWriteMany", "ReadWriteOnce", "ReadWriteOnce", "ReadWriteOncePod"]) == \
        "RWO,RWX,RWOP"
    assert tables.access_modes(None) == ""


def test_volume_attachment_prints_attacher_volume_node_and_attached():
    assert names("volumeattachments") == (["Name", "Attacher", "PV", "Node", "Attached", "Age"], [])
    assert cells("volumeattachments", ATTACHMENT) == [
        "csi-0d3c5b1e9f", "csi.example.com", "pvc-4f0c2a71-1d2e-4e8e-9a55-0c1b2d3e4f50", "node-2", True, "9m45s"]
    detaching = {**ATTACHMENT, "status": {}}  # attached omitted while false
    assert cells("volumeattachments", detaching)[4] is False
