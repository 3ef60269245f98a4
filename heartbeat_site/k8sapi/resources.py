"""The resources the per-run API serves, and the discovery documents that describe them.

kubectl 1.32 first asks for aggregated discovery (``apidiscovery.k8s.io/v2``); answered with the
legacy documents (``APIVersions``, ``APIGroupList``, ``APIResourceList``) as plain JSON, it falls
back to them, as against any server without aggregated discovery (client-go
``discovery/aggregated_discovery.go``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from heartbeat_site.k8sapi.eventsv1 import event_v1

READ_VERBS = ("get", "list", "watch")


@dataclass(frozen=True)
class Resource:
    name: str  # plural, as in the URL
    group: str  # "" for core
    version: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = READ_VERBS
    store: str = ""  # the name of the objects in ``cluster.RunObjects``, when it holds them
    categories: tuple[str, ...] = ()
    serve: Callable[[dict], dict] | None = None  # the stored object in this resource's shape, when it differs

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``leases.coordination.k8s.io``, as Status messages name a resource."""
        return f"{self.name}.{self.group}" if self.group else self.name


RESOURCES = (
    Resource("namespaces", "", "v1", "Namespace", False, ("ns",)),
    Resource("nodes", "", "v1", "Node", False, ("no",), (*READ_VERBS, "patch", "delete"), "nodes"),
    Resource("pods", "", "v1", "Pod", True, ("po",), (*READ_VERBS, "delete"), "pods", ("all",)),
    Resource("services", "", "v1", "Service", True, ("svc",), store="services", categories=("all",)),
    Resource("events", "", "v1", "Event", True, ("ev",), store="events"),
    Resource("leases", "coordination.k8s.io", "v1", "Lease", True, store="leases"),
    Resource("endpointslices", "discovery.k8s.io", "v1", "EndpointSlice", True, store="endpointslices"),
    Resource("deployments", "apps", "v1", "Deployment", True, ("deploy",), store="deployments", categories=("all",)),
    Resource("replicasets", "apps", "v1", "ReplicaSet", True, ("rs",), store="replicasets", categories=("all",)),
    Resource("daemonsets", "apps", "v1", "DaemonSet", True, ("ds",), store="daemonsets", categories=("all",)),
    Resource("events", "events.k8s.io", "v1", "Event", True, store="events", serve=event_v1),
    # StatefulSets are in the "all" category, claims, volumes and attachments are not, as on a real server
    # (pkg/registry/apps/statefulset/storage/storage.go Categories; the storage registries define none)
    Resource("statefulsets", "apps", "v1", "StatefulSet", True, ("sts",), store="statefulsets", categories=("all",)),
    Resource("persistentvolumeclaims", "", "v1", "PersistentVolumeClaim", True, ("pvc",),
             store="persistentvolumeclaims"),
    Resource("persistentvolumes", "", "v1", "PersistentVolume", False, ("pv",), store="persistentvolumes"),
    Resource("volumeattachments", "storage.k8s.io", "v1", "VolumeAttachment", False, store="volumeattachments"),
)
BY_PATH = {(r.group, r.version, r.name): r for r in RESOURCES}
GROUPS = tuple(dict.fromkeys(r.group for r in RESOURCES if r.group))


def find(group: str, version: str, name: str) -> Resource | None:
    return BY_PATH.get((group, version, name))


def api_versions() -> dict:
    """``GET /api``."""
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}]}


def group_document(group: str) -> dict:
    version = {"groupVersion": f"{group}/v1", "version": "v1"}
    return {"name": group, "versions": [version], "preferredVersion": version}


def api_group_list() -> dict:
    """``GET /apis``."""
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [group_document(g) for g in GROUPS]}


def api_group(group: str) -> dict | None:
    """``GET /apis/<group>``."""
    if group not in GROUPS:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **group_document(group)}


def resource_list(group: str, version: str) -> dict | None:
    """``GET /api/v1`` or ``GET /apis/<group>/<version>``."""
    found = [r for r in RESOURCES if r.group == group and r.version == version]
    if not found:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": found[0].api_version,
        "resources": [
            {"name": r.name, "singularName": r.kind.lower(), "namespaced": r.namespaced, "kind": r.kind,
             "verbs": list(r.verbs), **({"shortNames": list(r.short_names)} if r.short_names else {}),
             **({"categories": list(r.categories)} if r.categories else {})}
            for r in found
        ],
    }
