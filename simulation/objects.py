"""Kubernetes API objects as small immutable data classes, and their JSON shapes.

Objects are never changed in place: a write stores a new version (`evolve`),
so an event can keep a reference to the exact version it wrote and serialise it later.
Field names follow the Kubernetes API; `to_k8s` renders the shapes of docs/kubernetes-node-health.md §9.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from typing import Any, Self

from .clock import WallClock

# Well-known taint keys (k8s.io/api/core/v1/well_known_taints.go).
TAINT_NOT_READY = "node.kubernetes.io/not-ready"
TAINT_UNREACHABLE = "node.kubernetes.io/unreachable"
TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"
TAINT_MEMORY_PRESSURE = "node.kubernetes.io/memory-pressure"
TAINT_DISK_PRESSURE = "node.kubernetes.io/disk-pressure"
TAINT_PID_PRESSURE = "node.kubernetes.io/pid-pressure"
TAINT_NETWORK_UNAVAILABLE = "node.kubernetes.io/network-unavailable"

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_ZONE_BETA = "failure-domain.beta.kubernetes.io/zone"
LABEL_REGION_BETA = "failure-domain.beta.kubernetes.io/region"
LABEL_EXCLUDE_DISRUPTION = "node.kubernetes.io/exclude-disruption"

NODE_CONDITION_TYPES = ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")


# `obj.evolve(field=value, ...)` makes the new version of an object: dataclasses.replace for these
# frozen, slotted classes, written out for each class as dataclasses writes `__init__`. Each slot
# is stored through its member descriptor (`_slot_setters`), skipping the frozen `__setattr__`
# and `__init__`. It is the hottest call of a large run (every write makes a new version):
# three times faster than a loop over the slots with object.__setattr__ (2.4 -> 0.8 µs for
# ObjectMeta), and its keywords are its own (a generic `evolve(obj, **changes)` that passed
# them on cost as much again). Objects that are never changed this way have none.
KEEP: Any = object()  # the default of every evolve keyword: the field keeps its value
_new = object.__new__


def _slot_setters(cls: type[Any]) -> tuple[Callable[[Any, Any], None], ...]:
    """The `__set__` of each field's slot, in field order: how `evolve` stores a field."""
    return tuple(getattr(cls, f.name).__set__ for f in fields(cls))


@dataclass(frozen=True, slots=True)
class ObjectMeta:
    name: str
    namespace: str
    uid: str
    resource_version: int
    creation: int
    labels: dict[str, str] = field(default_factory=dict)
    owner_references: tuple[dict[str, Any], ...] = ()
    deletion_timestamp: int | None = None
    deletion_grace_seconds: int | None = None
    generate_name: str = ""

    def evolve(self, *, name: str = KEEP, namespace: str = KEEP, uid: str = KEEP, resource_version: int = KEEP,
               creation: int = KEEP, labels: dict[str, str] = KEEP, owner_references: tuple[dict[str, Any], ...] = KEEP,
               deletion_timestamp: int | None = KEEP, deletion_grace_seconds: int | None = KEEP,
               generate_name: str = KEEP) -> ObjectMeta:
        """A new version with the fields given changed (`KEEP`: unchanged)."""
        new = _new(ObjectMeta)
        _meta_name(new, self.name if name is KEEP else name)
        _meta_namespace(new, self.namespace if namespace is KEEP else namespace)
        _meta_uid(new, self.uid if uid is KEEP else uid)
        _meta_resource_version(new, self.resource_version if resource_version is KEEP else resource_version)
        _meta_creation(new, self.creation if creation is KEEP else creation)
        _meta_labels(new, self.labels if labels is KEEP else labels)
        _meta_owner_references(new, self.owner_references if owner_references is KEEP else owner_references)
        _meta_deletion_timestamp(new, self.deletion_timestamp if deletion_timestamp is KEEP else deletion_timestamp)
        _meta_deletion_grace_seconds(new, self.deletion_grace_seconds if deletion_grace_seconds is KEEP
                                     else deletion_grace_seconds)
        _meta_generate_name(new, self.generate_name if generate_name is KEEP else generate_name)
        return new


(_meta_name, _meta_namespace, _meta_uid, _meta_resource_version, _meta_creation, _meta_labels, _meta_owner_references,
 _meta_deletion_timestamp, _meta_deletion_grace_seconds, _meta_generate_name) = _slot_setters(ObjectMeta)


@dataclass(frozen=True, slots=True)
class Lease:
    metadata: ObjectMeta
    holder_identity: str
    lease_duration_seconds: int
    renew_time: int | None

    resource = "leases"

    def evolve(self, *, metadata: ObjectMeta = KEEP, holder_identity: str = KEEP, lease_duration_seconds: int = KEEP,
               renew_time: int | None = KEEP) -> Lease:
        """A new version with the fields given changed (`KEEP`: unchanged)."""
        new = _new(Lease)
        _lease_metadata(new, self.metadata if metadata is KEEP else metadata)
        _lease_holder_identity(new, self.holder_identity if holder_identity is KEEP else holder_identity)
        _lease_lease_duration_seconds(new, self.lease_duration_seconds if lease_duration_seconds is KEEP
                                      else lease_duration_seconds)
        _lease_renew_time(new, self.renew_time if renew_time is KEEP else renew_time)
        return new


_lease_metadata, _lease_holder_identity, _lease_lease_duration_seconds, _lease_renew_time = _slot_setters(Lease)


@dataclass(frozen=True, slots=True)
class NodeCondition:
    type: str
    status: str
    reason: str
    message: str
    last_heartbeat_time: int
    last_transition_time: int

    def evolve(self, *, type: str = KEEP, status: str = KEEP, reason: str = KEEP, message: str = KEEP,
               last_heartbeat_time: int = KEEP, last_transition_time: int = KEEP) -> NodeCondition:
        """A new version with the fields given changed (`KEEP`: unchanged)."""
        new = _new(NodeCondition)
        _condition_type(new, self.type if type is KEEP else type)
        _condition_status(new, self.status if status is KEEP else status)
        _condition_reason(new, self.reason if reason is KEEP else reason)
        _condition_message(new, self.message if message is KEEP else message)
        _condition_last_heartbeat_time(new, self.last_heartbeat_time if last_heartbeat_time is KEEP
                                       else last_heartbeat_time)
        _condition_last_transition_time(new, self.last_transition_time if last_transition_time is KEEP
                                        else last_transition_time)
        return new


(_condition_type, _condition_status, _condition_reason, _condition_message, _condition_last_heartbeat_time,
 _condition_last_transition_time) = _slot_setters(NodeCondition)


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    effect: str
    value: str = ""
    time_added: int | None = None


@dataclass(frozen=True, slots=True)
class Node:
    metadata: ObjectMeta
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    conditions: tuple[NodeCondition, ...] = ()
    pod_cidr: str = ""
    address: str = ""
    kubelet_version: str = ""
    capacity: tuple[tuple[str, str], ...] = ()
    # status.volumesInUse (the kubelet's volume manager) and status.volumesAttached (the attach/detach
    # controller's node status updater): unique volume names, kubernetes.io/csi/<driver>^<handle>
    volumes_in_use: tuple[str, ...] = ()
    volumes_attached: tuple[str, ...] = ()

    resource = "nodes"

    def condition(self, type_: str) -> NodeCondition | None:
        for c in self.conditions:
            if c.type == type_:
                return c
        return None

    def ready_status(self) -> str | None:
        c = self.condition("Ready")
        return c.status if c else None

    def has_taint(self, key: str, effect: str) -> bool:
        # a loop, not any(<generator>): called for every Unknown node in every monitor pass
        for t in self.taints:  # noqa: SIM110
            if t.key == key and t.effect == effect:
                return True
        return False

    def evolve(self, *, metadata: ObjectMeta = KEEP, unschedulable: bool = KEEP, taints: tuple[Taint, ...] = KEEP,
               conditions: tuple[NodeCondition, ...] = KEEP, pod_cidr: str = KEEP, address: str = KEEP,
               kubelet_version: str = KEEP, capacity: tuple[tuple[str, str], ...] = KEEP,
               volumes_in_use: tuple[str, ...] = KEEP, volumes_attached: tuple[str, ...] = KEEP) -> Node:
        """A new version with the fields given changed (`KEEP`: unchanged)."""
        new = _new(Node)
        _node_metadata(new, self.metadata if metadata is KEEP else metadata)
        _node_unschedulable(new, self.unschedulable if unschedulable is KEEP else unschedulable)
        _node_taints(new, self.taints if taints is KEEP else taints)
        _node_conditions(new, self.conditions if conditions is KEEP else conditions)
        _node_pod_cidr(new, self.pod_cidr if pod_cidr is KEEP else pod_cidr)
        _node_address(new, self.address if address is KEEP else address)
        _node_kubelet_version(new, self.kubelet_version if kubelet_version is KEEP else kubelet_version)
        _node_capacity(new, self.capacity if capacity is KEEP else capacity)
        _node_volumes_in_use(new, self.volumes_in_use if volumes_in_use is KEEP else volumes_in_use)
        _node_volumes_attached(new, self.volumes_attached if volumes_attached is KEEP else volumes_attached)
        return new


(_node_metadata, _node_unschedulable, _node_taints, _node_conditions, _node_pod_cidr, _node_address,
 _node_kubelet_version, _node_capacity, _node_volumes_in_use, _node_volumes_attached) = _slot_setters(Node)


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = ""  # "" means Equal
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def tolerates(self, taint: Taint) -> bool:
        """core/v1 Toleration.ToleratesTaint."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value  # "" or "Equal"


@dataclass(frozen=True, slots=True)
class PodCondition:
    type: str
    status: str
    last_transition_time: int
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class Pod:
    metadata: ObjectMeta
    node_name: str = ""
    tolerations: tuple[Toleration, ...] = ()
    node_selector: dict[str, str] = field(default_factory=dict)
    termination_grace_period_seconds: int = 30
    priority_class_name: str = ""
    phase: str = "Pending"
    conditions: tuple[PodCondition, ...] = ()
    pod_ip: str = ""
    host_ip: str = ""
    start_time: int | None = None
    container_ready: bool = False
    container_state: str = "waiting"  # waiting | running | terminated
    container_reason: str = "ContainerCreating"
    restart_count: int = 0
    reason: str = ""
    message: str = ""
    owner_kind: str = ""
    owner_name: str = ""
    # spec.volumes that name a PersistentVolumeClaim: (volume name, claim name)
    volumes: tuple[tuple[str, str], ...] = ()

    resource = "pods"

    def condition(self, type_: str) -> PodCondition | None:
        for c in self.conditions:
            if c.type == type_:
                return c
        return None

    def is_ready(self) -> bool:
        c = self.condition("Ready")
        return c is not None and c.status == "True"

    @property
    def terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @property
    def active(self) -> bool:
        """ReplicaSet's notion: not terminal and not being deleted."""
        return not self.terminal and self.metadata.deletion_timestamp is None

    @property
    def key(self) -> str:
        return f"{self.metadata.namespace}/{self.metadata.name}"

    def evolve(self, *, metadata: ObjectMeta = KEEP, node_name: str = KEEP, tolerations: tuple[Toleration, ...] = KEEP,
               node_selector: dict[str, str] = KEEP, termination_grace_period_seconds: int = KEEP,
               priority_class_name: str = KEEP, phase: str = KEEP, conditions: tuple[PodCondition, ...] = KEEP,
               pod_ip: str = KEEP, host_ip: str = KEEP, start_time: int | None = KEEP, container_ready: bool = KEEP,
               container_state: str = KEEP, container_reason: str = KEEP, restart_count: int = KEEP, reason: str = KEEP,
               message: str = KEEP, owner_kind: str = KEEP, owner_name: str = KEEP,
               volumes: tuple[tuple[str, str], ...] = KEEP) -> Pod:
        """A new version with the fields given changed (`KEEP`: unchanged)."""
        new = _new(Pod)
        _pod_metadata(new, self.metadata if metadata is KEEP else metadata)
        _pod_node_name(new, self.node_name if node_name is KEEP else node_name)
        _pod_tolerations(new, self.tolerations if tolerations is KEEP else tolerations)
        _pod_node_selector(new, self.node_selector if node_selector is KEEP else node_selector)
        _pod_termination_grace_period_seconds(
            new, self.termination_grace_period_seconds if termination_grace_period_seconds is KEEP
            else termination_grace_period_seconds)
        _pod_priority_class_name(new, self.priority_class_name if priority_class_name is KEEP else priority_class_name)
        _pod_phase(new, self.phase if phase is KEEP else phase)
        _pod_conditions(new, self.conditions if conditions is KEEP else conditions)
        _pod_pod_ip(new, self.pod_ip if pod_ip is KEEP else pod_ip)
        _pod_host_ip(new, self.host_ip if host_ip is KEEP else host_ip)
        _pod_start_time(new, self.start_time if start_time is KEEP else start_time)
        _pod_container_ready(new, self.container_ready if container_ready is KEEP else container_ready)
        _pod_container_state(new, self.container_state if container_state is KEEP else container_state)
        _pod_container_reason(new, self.container_reason if container_reason is KEEP else container_reason)
        _pod_restart_count(new, self.restart_count if restart_count is KEEP else restart_count)
        _pod_reason(new, self.reason if reason is KEEP else reason)
        _pod_message(new, self.message if message is KEEP else message)
        _pod_owner_kind(new, self.owner_kind if owner_kind is KEEP else owner_kind)
        _pod_owner_name(new, self.owner_name if owner_name is KEEP else owner_name)
        _pod_volumes(new, self.volumes if volumes is KEEP else volumes)
        return new


(_pod_metadata, _pod_node_name, _pod_tolerations, _pod_node_selector, _pod_termination_grace_period_seconds,
 _pod_priority_class_name, _pod_phase, _pod_conditions, _pod_pod_ip, _pod_host_ip, _pod_start_time,
 _pod_container_ready, _pod_container_state, _pod_container_reason, _pod_restart_count, _pod_reason, _pod_message,
 _pod_owner_kind, _pod_owner_name, _pod_volumes) = _slot_setters(Pod)


@dataclass(frozen=True, slots=True)
class Service:
    metadata: ObjectMeta
    selector: dict[str, str]
    cluster_ip: str = ""

    resource = "services"

    def evolve(self, *, metadata: ObjectMeta = KEEP, selector: dict[str, str] = KEEP,
               cluster_ip: str = KEEP) -> Service:
        """A new version with the fields given changed (`KEEP`: unchanged)."""
        new = _new(Service)
        _service_metadata(new, self.metadata if metadata is KEEP else metadata)
        _service_selector(new, self.selector if selector is KEEP else selector)
        _service_cluster_ip(new, self.cluster_ip if cluster_ip is KEEP else cluster_ip)
        return new


_service_metadata, _service_selector, _service_cluster_ip = _slot_setters(Service)


@dataclass(frozen=True, slots=True)
class Endpoint:
    address: str
    ready: bool
    serving: bool
    terminating: bool
    node_name: str
    zone: str
    pod_name: str
    pod_uid: str


@dataclass(frozen=True, slots=True)
class EndpointSlice:
    metadata: ObjectMeta
    service_name: str
    endpoints: tuple[Endpoint, ...] = ()

    resource = "endpointslices"

    def evolve(self, *, metadata: ObjectMeta = KEEP, service_name: str = KEEP,
               endpoints: tuple[Endpoint, ...] = KEEP) -> EndpointSlice:
        """A new version with the fields given changed (`KEEP`: unchanged)."""
        new = _new(EndpointSlice)
        _slice_metadata(new, self.metadata if metadata is KEEP else metadata)
        _slice_service_name(new, self.service_name if service_name is KEEP else service_name)
        _slice_endpoints(new, self.endpoints if endpoints is KEEP else endpoints)
        return new


_slice_metadata, _slice_service_name, _slice_endpoints = _slot_setters(EndpointSlice)


@dataclass(frozen=True, slots=True)
class Event:
    """core/v1 Event (what `kubectl describe` lists under Events)."""

    metadata: ObjectMeta
    involved_kind: str
    involved_name: str
    involved_namespace: str
    involved_uid: str
    reason: str
    message: str
    type: str
    source_component: str
    source_host: str = ""
    first_timestamp: int = 0
    last_timestamp: int = 0
    count: int = 1

    resource = "events"

    def evolve(self, *, metadata: ObjectMeta = KEEP, involved_kind: str = KEEP, involved_name: str = KEEP,
               involved_namespace: str = KEEP, involved_uid: str = KEEP, reason: str = KEEP, message: str = KEEP,
               type: str = KEEP, source_component: str = KEEP, source_host: str = KEEP, first_timestamp: int = KEEP,
               last_timestamp: int = KEEP, count: int = KEEP) -> Event:
        """A new version with the fields given changed (`KEEP`: unchanged)."""
        new = _new(Event)
        _event_metadata(new, self.metadata if metadata is KEEP else metadata)
        _event_involved_kind(new, self.involved_kind if involved_kind is KEEP else involved_kind)
        _event_involved_name(new, self.involved_name if involved_name is KEEP else involved_name)
        _event_involved_namespace(new, self.involved_namespace if involved_namespace is KEEP else involved_namespace)
        _event_involved_uid(new, self.involved_uid if involved_uid is KEEP else involved_uid)
        _event_reason(new, self.reason if reason is KEEP else reason)
        _event_message(new, self.message if message is KEEP else message)
        _event_type(new, self.type if type is KEEP else type)
        _event_source_component(new, self.source_component if source_component is KEEP else source_component)
        _event_source_host(new, self.source_host if source_host is KEEP else source_host)
        _event_first_timestamp(new, self.first_timestamp if first_timestamp is KEEP else first_timestamp)
        _event_last_timestamp(new, self.last_timestamp if last_timestamp is KEEP else last_timestamp)
        _event_count(new, self.count if count is KEEP else count)
        return new


(_event_metadata, _event_involved_kind, _event_involved_name, _event_involved_namespace, _event_involved_uid,
 _event_reason, _event_message, _event_type, _event_source_component, _event_source_host, _event_first_timestamp,
 _event_last_timestamp, _event_count) = _slot_setters(Event)


# -- storage and StatefulSets -------------------------------------------------------------------
# These objects exist only in runs with a StatefulSet; none is on a hot path, so `evolve` is
# dataclasses.replace.


class _Replaceable:
    __slots__ = ()

    def evolve(self, **changes: Any) -> Self:
        """A new version with the fields given changed."""
        return replace(self, **changes)  # type: ignore[type-var]

TAINT_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service"  # k8s.io/api/core/v1/well_known_taints.go
CSI_DRIVER = "disk.csi.example.com"  # the simulated CSI driver (an attachable block-disk driver)


@dataclass(frozen=True, slots=True)
class ClaimTemplate:
    """One entry of a StatefulSet's spec.volumeClaimTemplates."""

    name: str
    storage: str  # spec.resources.requests.storage, e.g. "1Gi"
    access_modes: tuple[str, ...] = ("ReadWriteOnce",)
    storage_class_name: str = "standard"


@dataclass(frozen=True, slots=True)
class StatefulSet(_Replaceable):
    """apps/v1 StatefulSet: spec and the status counts its controller writes."""

    metadata: ObjectMeta
    replicas: int
    pod_management_policy: str = "OrderedReady"  # or "Parallel"
    service_name: str = ""
    claim_templates: tuple[ClaimTemplate, ...] = ()
    termination_grace_period_seconds: int = 30
    update_revision: str = ""
    # status
    status_replicas: int = 0
    ready_replicas: int = 0
    current_replicas: int = 0
    updated_replicas: int = 0
    available_replicas: int = 0
    observed_generation: int = 0

    resource = "statefulsets"


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim(_Replaceable):
    """v1 PersistentVolumeClaim: Pending until the volume controller binds it to a PersistentVolume."""

    metadata: ObjectMeta
    storage: str
    access_modes: tuple[str, ...] = ("ReadWriteOnce",)
    storage_class_name: str = "standard"
    volume_name: str = ""
    phase: str = "Pending"

    resource = "persistentvolumeclaims"


@dataclass(frozen=True, slots=True)
class PersistentVolume(_Replaceable):
    """v1 PersistentVolume backed by the simulated CSI driver (spec.csi)."""

    metadata: ObjectMeta
    storage: str
    driver: str
    volume_handle: str
    access_modes: tuple[str, ...] = ("ReadWriteOnce",)
    storage_class_name: str = "standard"
    claim_ref: tuple[str, str, str] | None = None  # (namespace, name, uid) of the bound claim
    reclaim_policy: str = "Delete"
    phase: str = "Available"

    resource = "persistentvolumes"

    @property
    def unique_name(self) -> str:
        """The volume's unique name in volumesInUse / volumesAttached: kubernetes.io/csi/<driver>^<handle>
        (pkg/volume/csi/csi_plugin.go GetVolumeName, pkg/volume/util/volumehelper)."""
        return f"kubernetes.io/csi/{self.driver}^{self.volume_handle}"


@dataclass(frozen=True, slots=True)
class VolumeAttachment(_Replaceable):
    """storage.k8s.io/v1 VolumeAttachment: the attach/detach controller's request to attach a CSI volume
    to a node; the CSI attacher answers in status.attached. `finalizer`: the attacher's finalizer
    (external-attacher/<driver>), which keeps a deleted attachment until the volume is detached."""

    metadata: ObjectMeta
    attacher: str
    node_name: str
    persistent_volume_name: str
    attached: bool = False
    finalizer: bool = False

    resource = "volumeattachments"


def attachment_name(volume_handle: str, driver: str, node: str) -> str:
    """pkg/volume/csi/csi_attacher.go getAttachmentName: csi-<sha256(handle + driver + node)>."""
    return "csi-" + hashlib.sha256(f"{volume_handle}{driver}{node}".encode()).hexdigest()


def set_pod_condition(conditions: tuple[PodCondition, ...], ctype: str, status: str, now: int,
                      reason: str = "", message: str = "") -> tuple[PodCondition, ...]:
    """pkg/api/v1/pod/util.go UpdatePodCondition: lastTransitionTime moves only when the status changes."""
    out = []
    found = False
    for c in conditions:
        if c.type == ctype:
            found = True
            transition = c.last_transition_time if c.status == status else now
            out.append(PodCondition(ctype, status, transition, reason, message))
        else:
            out.append(c)
    if not found:
        out.append(PodCondition(ctype, status, now, reason, message))
    return tuple(out)


AnyObject = (Lease | Node | Pod | Service | EndpointSlice | Event | StatefulSet | PersistentVolumeClaim
             | PersistentVolume | VolumeAttachment)

API_VERSION = {
    "leases": ("coordination.k8s.io/v1", "Lease", "coordination.k8s.io"),
    "nodes": ("v1", "Node", ""),
    "pods": ("v1", "Pod", ""),
    "services": ("v1", "Service", ""),
    "endpointslices": ("discovery.k8s.io/v1", "EndpointSlice", "discovery.k8s.io"),
    "events": ("v1", "Event", ""),
    "statefulsets": ("apps/v1", "StatefulSet", "apps"),
    "persistentvolumeclaims": ("v1", "PersistentVolumeClaim", ""),
    "persistentvolumes": ("v1", "PersistentVolume", ""),
    "volumeattachments": ("storage.k8s.io/v1", "VolumeAttachment", "storage.k8s.io"),
}
KIND_API_VERSION = {kind: api_version for api_version, kind, _group in API_VERSION.values()}


def with_meta(obj: Any, **changes: Any) -> Any:
    """A new version of `obj` whose metadata has `changes`."""
    return obj.evolve(metadata=obj.metadata.evolve(**changes))


def with_version(obj: Any, resource_version: int) -> Any:
    """`with_meta(obj, resource_version=...)` without the keyword packing: every update and
    patch (2 M of them at 5,000 nodes) makes one."""
    return obj.evolve(metadata=obj.metadata.evolve(resource_version=resource_version))


# ---------------------------------------------------------------------------------------
# JSON shapes


def _meta(obj: Any, clock: WallClock) -> dict[str, Any]:
    m: ObjectMeta = obj.metadata
    out: dict[str, Any] = {"name": m.name}
    if m.generate_name:
        out["generateName"] = m.generate_name
    if m.namespace:
        out["namespace"] = m.namespace
    out["uid"] = m.uid
    out["resourceVersion"] = str(m.resource_version)
    out["creationTimestamp"] = clock.time(m.creation)
    if m.deletion_timestamp is not None:
        out["deletionTimestamp"] = clock.time(m.deletion_timestamp)
        out["deletionGracePeriodSeconds"] = m.deletion_grace_seconds
    if m.labels:
        out["labels"] = dict(m.labels)
    if m.owner_references:
        out["ownerReferences"] = [dict(r) for r in m.owner_references]
    return out


def _head(obj: Any) -> dict[str, Any]:
    api_version, kind, _group = API_VERSION[obj.resource]
    return {"apiVersion": api_version, "kind": kind}


def lease_to_k8s(lease: Lease, clock: WallClock) -> dict[str, Any]:
    return {
        **_head(lease),
        "metadata": _meta(lease, clock),
        "spec": {
            "holderIdentity": lease.holder_identity,
            "leaseDurationSeconds": lease.lease_duration_seconds,
            "renewTime": clock.micro(lease.renew_time),
        },
    }


def taint_to_k8s(t: Taint, clock: WallClock) -> dict[str, Any]:
    out: dict[str, Any] = {"key": t.key}
    if t.value:
        out["value"] = t.value
    out["effect"] = t.effect
    if t.time_added is not None:
        out["timeAdded"] = clock.time(t.time_added)
    return out


def node_to_k8s(node: Node, clock: WallClock) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if node.pod_cidr:
        spec["podCIDR"] = node.pod_cidr
        spec["podCIDRs"] = [node.pod_cidr]
    if node.unschedulable:
        spec["unschedulable"] = True
    if node.taints:
        spec["taints"] = [taint_to_k8s(t, clock) for t in node.taints]
    status: dict[str, Any] = {}
    if node.capacity:
        status["capacity"] = dict(node.capacity)
        status["allocatable"] = dict(node.capacity)
    if node.conditions:
        status["conditions"] = [
            {
                "type": c.type,
                "status": c.status,
                "lastHeartbeatTime": clock.time(c.last_heartbeat_time),
                "lastTransitionTime": clock.time(c.last_transition_time),
                "reason": c.reason,
                "message": c.message,
            }
            for c in node.conditions
        ]
    if node.address:
        status["addresses"] = [
            {"type": "InternalIP", "address": node.address},
            {"type": "Hostname", "address": node.metadata.name},
        ]
    if node.kubelet_version:
        status["daemonEndpoints"] = {"kubeletEndpoint": {"Port": 10250}}
        status["nodeInfo"] = node_info(node.metadata.uid, node.kubelet_version)
    if node.volumes_in_use:  # k8s.io/api/core/v1 NodeStatus: omitempty, after nodeInfo and images
        status["volumesInUse"] = list(node.volumes_in_use)
    if node.volumes_attached:  # a CSI volume's devicePath is empty (pkg/volume/csi/csi_attacher.go Attach)
        status["volumesAttached"] = [{"name": v, "devicePath": ""} for v in node.volumes_attached]
    return {**_head(node), "metadata": _meta(node, clock), "spec": spec, "status": status}


OS_IMAGE = "Debian GNU/Linux 12 (bookworm)"
KERNEL_VERSION = "6.1.0-28-cloud-amd64"
CONTAINER_RUNTIME_VERSION = "containerd://1.7.24"


def node_info(uid: str, kubelet_version: str) -> dict[str, str]:
    """``status.nodeInfo``: every NodeSystemInfo field a kubelet reports (``k8s.io/api/core/v1/types.go``; all
    are required, and clients that check, such as the Python client, refuse a Node without one). The
    machine's ids are derived from the Node's uid, so the same seed gives the same bytes."""
    return dict(_node_info(uid, kubelet_version))  # a dict of the caller's own: the cached one stays as it is


@functools.lru_cache(maxsize=8192)
def _node_info(uid: str, kubelet_version: str) -> dict[str, str]:
    return {
        "machineID": hashlib.sha256(f"machine-id/{uid}".encode()).hexdigest()[:32],
        "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_OID, f"system-uuid/{uid}")),
        "bootID": str(uuid.uuid5(uuid.NAMESPACE_OID, f"boot-id/{uid}")),
        "kernelVersion": KERNEL_VERSION,
        "osImage": OS_IMAGE,
        "containerRuntimeVersion": CONTAINER_RUNTIME_VERSION,
        "kubeletVersion": kubelet_version,
        "kubeProxyVersion": kubelet_version,
        "operatingSystem": "linux",
        "architecture": "amd64",
    }


@functools.lru_cache(maxsize=1024)
def image_id(image: str) -> str:
    """A container status's ``imageID``, the pulled image's digest (``registry.example/web@sha256:...``):
    deterministic from the image's name, as the simulation pulls no image."""
    return f"{image.rsplit(':', 1)[0]}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def toleration_to_k8s(t: Toleration) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if t.key:
        out["key"] = t.key
    if t.operator:
        out["operator"] = t.operator
    if t.value:
        out["value"] = t.value
    if t.effect:
        out["effect"] = t.effect
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out


def pod_to_k8s(pod: Pod, clock: WallClock) -> dict[str, Any]:
    image = f"registry.example/{pod.owner_name or 'app'}:1.0"
    container: dict[str, Any] = {"name": pod.owner_name or "app", "image": image}
    spec: dict[str, Any] = {"containers": [container]}
    if pod.volumes:
        container["volumeMounts"] = [{"name": v, "mountPath": f"/var/lib/{v}"} for v, _claim in pod.volumes]
        spec["volumes"] = [{"name": v, "persistentVolumeClaim": {"claimName": claim}} for v, claim in pod.volumes]
    if pod.owner_kind == "StatefulSet":  # pkg/controller/statefulset/stateful_set_utils.go updateIdentity
        spec["hostname"] = pod.metadata.name
        spec["subdomain"] = pod.owner_name
    spec["terminationGracePeriodSeconds"] = pod.termination_grace_period_seconds
    if pod.node_name:
        spec["nodeName"] = pod.node_name
    selector = {k: v for k, v in pod.node_selector.items() if k != "metadata.name"}
    if selector:
        spec["nodeSelector"] = selector
    if "metadata.name" in pod.node_selector:  # DaemonSet pods: node affinity on the node's name
        match = {"key": "metadata.name", "operator": "In", "values": [pod.node_selector["metadata.name"]]}
        spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchFields": [match]}]}}}
    if pod.priority_class_name:
        spec["priorityClassName"] = pod.priority_class_name
    if pod.tolerations:
        spec["tolerations"] = [toleration_to_k8s(t) for t in pod.tolerations]
    status: dict[str, Any] = {"phase": pod.phase}
    if pod.conditions:
        conds = []
        for c in pod.conditions:
            d: dict[str, Any] = {
                "type": c.type,
                "status": c.status,
                "lastProbeTime": None,
                "lastTransitionTime": clock.time(c.last_transition_time),
            }
            if c.reason:
                d["reason"] = c.reason
            if c.message:
                d["message"] = c.message
            conds.append(d)
        status["conditions"] = conds
    if pod.reason:
        status["reason"] = pod.reason
    if pod.message:
        status["message"] = pod.message
    if pod.host_ip:
        status["hostIP"] = pod.host_ip
    if pod.pod_ip:
        status["podIP"] = pod.pod_ip
        status["podIPs"] = [{"ip": pod.pod_ip}]
    if pod.start_time is not None:
        status["startTime"] = clock.time(pod.start_time)
    if pod.node_name:
        state: dict[str, Any]
        if pod.container_state == "running":
            state = {"running": {"startedAt": clock.time(pod.start_time)}}
        elif pod.container_state == "terminated":
            state = {"terminated": {"exitCode": 137, "reason": pod.container_reason or "Error"}}
        else:
            state = {"waiting": {"reason": pod.container_reason or "ContainerCreating"}}
        status["containerStatuses"] = [
            {
                "name": pod.owner_name or "app",
                "ready": pod.container_ready,
                "restartCount": pod.restart_count,
                "started": pod.container_state == "running",
                "state": state,
                "image": image,
                # required; empty until the image is pulled (the container was never started)
                "imageID": image_id(image) if pod.container_state in ("running", "terminated") else "",
            }
        ]
    return {**_head(pod), "metadata": _meta(pod, clock), "spec": spec, "status": status}


def service_to_k8s(svc: Service, clock: WallClock) -> dict[str, Any]:
    return {
        **_head(svc),
        "metadata": _meta(svc, clock),
        "spec": {"selector": dict(svc.selector), "clusterIP": svc.cluster_ip,
                 "ports": [{"port": 80, "protocol": "TCP"}]},
    }


def endpointslice_to_k8s(es: EndpointSlice, clock: WallClock) -> dict[str, Any]:
    return {
        **_head(es),
        "metadata": _meta(es, clock),
        "addressType": "IPv4",
        "endpoints": [
            {
                "addresses": [e.address],
                "conditions": {"ready": e.ready, "serving": e.serving, "terminating": e.terminating},
                "nodeName": e.node_name,
                **({"zone": e.zone} if e.zone else {}),
                "targetRef": {"kind": "Pod", "namespace": es.metadata.namespace, "name": e.pod_name, "uid": e.pod_uid},
            }
            for e in es.endpoints
        ],
        "ports": [{"name": "", "port": 80, "protocol": "TCP"}],
    }


def event_to_k8s(ev: Event, clock: WallClock) -> dict[str, Any]:
    api_version = KIND_API_VERSION.get(ev.involved_kind, "v1")
    involved: dict[str, Any] = {"kind": ev.involved_kind, "name": ev.involved_name, "uid": ev.involved_uid,
                                "apiVersion": api_version}
    if ev.involved_namespace:
        involved["namespace"] = ev.involved_namespace
    source: dict[str, Any] = {"component": ev.source_component}
    if ev.source_host:
        source["host"] = ev.source_host
    return {
        **_head(ev),
        "metadata": _meta(ev, clock),
        "involvedObject": involved,
        "reason": ev.reason,
        "message": ev.message,
        "source": source,
        "firstTimestamp": clock.time(ev.first_timestamp),
        "lastTimestamp": clock.time(ev.last_timestamp),
        "count": ev.count,
        "type": ev.type,
    }


def _storage_request(storage: str) -> dict[str, Any]:
    return {"requests": {"storage": storage}}


def statefulset_to_k8s(ss: StatefulSet, clock: WallClock) -> dict[str, Any]:
    labels = {"app": ss.metadata.name}
    templates = []
    for t in ss.claim_templates:
        templates.append({
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": t.name},
            "spec": {"accessModes": list(t.access_modes), "resources": _storage_request(t.storage),
                     "storageClassName": t.storage_class_name, "volumeMode": "Filesystem"},
            "status": {"phase": "Pending"},
        })
    container: dict[str, Any] = {"name": ss.metadata.name, "image": f"registry.example/{ss.metadata.name}:1.0"}
    if ss.claim_templates:
        container["volumeMounts"] = [{"name": t.name, "mountPath": f"/var/lib/{t.name}"} for t in ss.claim_templates]
    spec: dict[str, Any] = {
        "replicas": ss.replicas,
        "selector": {"matchLabels": labels},
        "serviceName": ss.service_name,
        "podManagementPolicy": ss.pod_management_policy,
        "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [container],
                              "terminationGracePeriodSeconds": ss.termination_grace_period_seconds}},
        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
        "revisionHistoryLimit": 10,
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Retain", "whenScaled": "Retain"},
    }
    if templates:
        spec["volumeClaimTemplates"] = templates
    status: dict[str, Any] = {"observedGeneration": ss.observed_generation, "replicas": ss.status_replicas,
                              "availableReplicas": ss.available_replicas}
    counts = (("readyReplicas", ss.ready_replicas), ("currentReplicas", ss.current_replicas),
              ("updatedReplicas", ss.updated_replicas))
    status.update((key, n) for key, n in counts if n)  # omitempty
    if ss.update_revision:
        status["currentRevision"] = ss.update_revision
        status["updateRevision"] = ss.update_revision
        status["collisionCount"] = 0
    meta = _meta(ss, clock)
    meta["generation"] = 1
    return {**_head(ss), "metadata": meta, "spec": spec, "status": status}


def persistentvolumeclaim_to_k8s(pvc: PersistentVolumeClaim, clock: WallClock) -> dict[str, Any]:
    spec: dict[str, Any] = {"accessModes": list(pvc.access_modes), "resources": _storage_request(pvc.storage),
                            "storageClassName": pvc.storage_class_name, "volumeMode": "Filesystem"}
    if pvc.volume_name:
        spec["volumeName"] = pvc.volume_name
    status: dict[str, Any] = {"phase": pvc.phase}
    if pvc.phase == "Bound":
        status["accessModes"] = list(pvc.access_modes)
        status["capacity"] = {"storage": pvc.storage}
    return {**_head(pvc), "metadata": _meta(pvc, clock), "spec": spec, "status": status}


def persistentvolume_to_k8s(pv: PersistentVolume, clock: WallClock) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "accessModes": list(pv.access_modes),
        "capacity": {"storage": pv.storage},
        "csi": {"driver": pv.driver, "volumeHandle": pv.volume_handle, "fsType": "ext4"},
        "persistentVolumeReclaimPolicy": pv.reclaim_policy,
        "storageClassName": pv.storage_class_name,
        "volumeMode": "Filesystem",
    }
    if pv.claim_ref is not None:
        namespace, name, uid = pv.claim_ref
        spec["claimRef"] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": namespace,
                            "name": name, "uid": uid}
    return {**_head(pv), "metadata": _meta(pv, clock), "spec": spec, "status": {"phase": pv.phase}}


def volumeattachment_to_k8s(va: VolumeAttachment, clock: WallClock) -> dict[str, Any]:
    meta = _meta(va, clock)
    if va.finalizer:
        meta["finalizers"] = [f"external-attacher/{va.attacher.replace('.', '-')}"]
    return {
        **_head(va),
        "metadata": meta,
        "spec": {"attacher": va.attacher, "nodeName": va.node_name,
                 "source": {"persistentVolumeName": va.persistent_volume_name}},
        "status": {"attached": va.attached},
    }


_SERIALISERS: dict[str, Callable[[Any, WallClock], dict[str, Any]]] = {
    "leases": lease_to_k8s,
    "nodes": node_to_k8s,
    "pods": pod_to_k8s,
    "services": service_to_k8s,
    "endpointslices": endpointslice_to_k8s,
    "events": event_to_k8s,
    "statefulsets": statefulset_to_k8s,
    "persistentvolumeclaims": persistentvolumeclaim_to_k8s,
    "persistentvolumes": persistentvolume_to_k8s,
    "volumeattachments": volumeattachment_to_k8s,
}


def to_k8s(obj: Any, clock: WallClock) -> dict[str, Any]:
    return _SERIALISERS[obj.resource](obj, clock)


def fast_pickling(cls: type) -> type:
    """Give a frozen, slotted dataclass a quicker `__getstate__`/`__setstate__` than the ones
    dataclasses adds (those call `fields()` for every object: two thirds of the time a
    checkpoint of a large run took). The state is the same: the fields' values in order.

    `__setstate__` is written out for the class's fields (one `object.__setattr__` per field,
    no loop), as dataclasses writes `__init__`: a restore calls it for every API object, half a
    million at 5,000 nodes, and the written-out form takes half the time of a loop over the
    names (docs/simulation-model.md, "Checkpoints")."""
    names = tuple(f.name for f in fields(cls))
    get = operator.attrgetter(*names)

    if len(names) == 1:
        def __getstate__(self: Any) -> tuple[Any, ...]:
            return (get(self),)
    else:
        def __getstate__(self: Any) -> tuple[Any, ...]:
            return get(self)

    values = [f"_{i}" for i in range(len(names))]
    source = (f"def __setstate__(self, state):\n    {', '.join(values)}, = state\n"
              + "".join(f"    set_field(self, {name!r}, {value})\n" for name, value in zip(names, values, strict=True)))
    namespace: dict[str, Any] = {"set_field": object.__setattr__}
    exec(source, namespace)  # the source is made above from the class's own field names
    __setstate__ = namespace["__setstate__"]
    __setstate__.__qualname__ = f"{cls.__qualname__}.__setstate__"
    __setstate__.__module__ = cls.__module__

    setattr(cls, "__getstate__", __getstate__)  # noqa: B010 (a method of the class, set after it is made)
    setattr(cls, "__setstate__", __setstate__)  # noqa: B010
    return cls


for _cls in list(globals().values()):
    if isinstance(_cls, type) and _cls.__module__ == __name__ and "__dataclass_fields__" in _cls.__dict__ \
            and _cls.__dataclass_params__.frozen and "__slots__" in _cls.__dict__:  # type: ignore[attr-defined]
        fast_pickling(_cls)
