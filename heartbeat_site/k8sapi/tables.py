"""``Table`` (meta.k8s.io/v1) responses: the columns and cells a real API server gives kubectl.

Each printer follows its function in ``pkg/printers/internalversion/printers.go`` (Kubernetes
1.32), which the API server runs with ``Wide: true``; kubectl shows the columns of priority 0 and,
with ``-o wide``, the others. Ages are measured against the run's virtual clock.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

import orjson

NAME = {"name": "Name", "type": "string", "format": "name", "description": "Name must be unique within a namespace."}
AGE = {"name": "Age", "type": "string", "format": "",
       "description": "CreationTimestamp is a timestamp representing the server time when this object was created."}


def column(name: str, description: str, *, priority: int = 0, type_: str = "string") -> dict:
    return {"name": name, "type": type_, "format": "", "description": description, "priority": priority}


def human_duration(seconds: float) -> str:
    """kubectl's ages: ``HumanDuration`` of staging/src/k8s.io/apimachinery/pkg/util/duration/duration.go, of a
    duration in seconds (whole units, truncated as Go's integer division does). static/js/kubectl/duration.js is
    the panels' one; both answer tests/vectors/human-duration.json."""
    whole = int(seconds)  # Go's int(d.Seconds()): towards zero
    if whole < -1:
        return "<invalid>"  # up to a second in the future reads as now (clock skew)
    if whole < 0:
        return "0s"
    if whole < 2 * 60:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        return f"{minutes}m" if whole % 60 == 0 else f"{minutes}m{whole % 60}s"
    if minutes < 3 * 60:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        years, days = hours // 24 // 365, (hours // 24) % 365
        return f"{years}y" if days == 0 else f"{years}y{days}d"
    return f"{hours // 24 // 365}y"


@functools.lru_cache(maxsize=4096)
def _parsed(timestamp: str) -> datetime:
    """A timestamp read once: a run's 50,000 pods were created in a few hundred distinct seconds, and
    parsing was most of the time of a Table of them."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def since(timestamp: str | None, now: datetime) -> str:
    """``translateTimestampSince``: the age of ``timestamp`` at ``now``, or ``<unknown>``."""
    if not timestamp:
        return "<unknown>"
    return human_duration((now - _parsed(timestamp)).total_seconds())


class Ago(NamedTuple):
    """A cell measured against the run's clock: ``template`` with the age of ``timestamp`` for ``{}``.

    Cells are computed once per version of an object (``RowCache``) and these resolved per Table, once per
    distinct value: the cells of 50,000 pods take half a second to print, their ages a few hundredths."""

    timestamp: str | None
    template: str = "{}"

    def at(self, now: datetime) -> str:
        return self.template.format(since(self.timestamp, now))


def _age(obj: dict) -> Ago:
    return Ago((obj.get("metadata") or {}).get("creationTimestamp"))


def _name(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("name") or ""


# -- nodes ----------------------------------------------------------------------------------------

NODE_COLUMNS = [
    NAME,
    column("Status", "The status of the node"),
    column("Roles", "The roles of the node"),
    AGE,
    column("Version", "Kubelet Version reported by the node."),
    column("Internal-IP", "List of addresses reachable to the node.", priority=1),
    column("External-IP", "List of addresses reachable to the node.", priority=1),
    column("OS-Image", "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
           priority=1),
    column("Kernel-Version", "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
           priority=1),
    column("Container-Runtime", "ContainerRuntime Version reported by the node through runtime remote API "
           "(e.g. containerd://1.4.2).", priority=1),
]


def node_status(node: dict) -> str:
    ready = next((c for c in (node.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), None)
    status = ["Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"]
    if (node.get("spec") or {}).get("unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def node_roles(node: dict) -> list[str]:
    """``findNodeRoles``: ``node-role.kubernetes.io/<role>`` labels and ``kubernetes.io/role``."""
    roles = set()
    for key, value in ((node.get("metadata") or {}).get("labels") or {}).items():
        if key.startswith("node-role.kubernetes.io/") and key != "node-role.kubernetes.io/":
            roles.add(key.removeprefix("node-role.kubernetes.io/"))
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return sorted(roles)


def _address(node: dict, kind: str) -> str:
    found = [a["address"] for a in (node.get("status") or {}).get("addresses") or () if a.get("type") == kind]
    return found[0] if found else "<none>"


def node_cells(node: dict) -> list:
    info = (node.get("status") or {}).get("nodeInfo") or {}
    return [_name(node), node_status(node), ",".join(node_roles(node)) or "<none>", _age(node),
            info.get("kubeletVersion") or "", _address(node, "InternalIP"), _address(node, "ExternalIP"),
            info.get("osImage") or "<unknown>", info.get("kernelVersion") or "<unknown>",
            info.get("containerRuntimeVersion") or "<unknown>"]


# -- pods -----------------------------------------------------------------------------------------

POD_COLUMNS = [
    NAME,
    column("Ready", "The aggregate readiness state of this pod for accepting traffic."),
    column("Status", "The aggregate status of the containers in this pod."),
    column("Restarts", "The number of times the containers in this pod have been restarted and when the last "
           "container in this pod has restarted."),
    AGE,
    column("IP", "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet "
           "allocated.", priority=1),
    column("Node", "NodeName indicates in which node this pod is scheduled.", priority=1),
    column("Nominated Node", "nominatedNodeName is set when this pod preempts other pods on the node.", priority=1),
    column("Readiness Gates", "If specified, all readiness gates will be evaluated for pod readiness.", priority=1),
]
TERMINAL_PHASES = ("Succeeded", "Failed")
NODE_UNREACHABLE_POD_REASON = "NodeLost"  # pkg/util/node: NodeUnreachablePodReason


def pod_cells(pod: dict) -> list:
    """``printPod`` (no init containers in the simulation)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    phase = status.get("phase") or ""
    reason = status.get("reason") or phase
    for condition in status.get("conditions") or ():
        if condition.get("type") == "PodScheduled" and condition.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    restarts = ready = 0
    last_restart = ""
    has_running = False
    for container in reversed(status.get("containerStatuses") or []):
        restarts += int(container.get("restartCount") or 0)
        finished = ((container.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or ""
        last_restart = max(last_restart, finished)
        state = container.get("state") or {}
        waiting, terminated = state.get("waiting"), state.get("terminated")
        if waiting is not None and waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated is not None and terminated.get("reason"):
            reason = terminated["reason"]
        elif terminated is not None:
            signal = terminated.get("signal")
            reason = f"Signal:{signal}" if signal else f"ExitCode:{terminated.get('exitCode') or 0}"
        elif container.get("ready") and state.get("running") is not None:
            has_running = True
            ready += 1
    if reason == "Completed" and has_running:
        ready_condition = any(c.get("type") == "Ready" and c.get("status") == "True"
                              for c in status.get("conditions") or ())
        reason = "Running" if ready_condition else "NotReady"
    deleting = (pod.get("metadata") or {}).get("deletionTimestamp") is not None
    if deleting and status.get("reason") == NODE_UNREACHABLE_POD_REASON:
        reason = "Unknown"
    elif deleting and phase not in TERMINAL_PHASES:
        reason = "Terminating"
    restarts_text: str | Ago = str(restarts)
    if restarts and last_restart:
        restarts_text = Ago(last_restart, f"{restarts} ({{}} ago)")
    ips = status.get("podIPs") or []
    gates = spec.get("readinessGates") or []
    gates_text = "<none>"
    if gates:
        true = {c.get("type") for c in status.get("conditions") or () if c.get("status") == "True"}
        gates_text = f"{sum(1 for g in gates if g.get('conditionType') in true)}/{len(gates)}"
    return [_name(pod), f"{ready}/{len(spec.get('containers') or ())}", reason, restarts_text, _age(pod),
            (ips[0].get("ip") if ips else "") or "<none>", spec.get("nodeName") or "<none>",
            status.get("nominatedNodeName") or "<none>", gates_text]


def pod_conditions(pod: dict) -> list[dict] | None:
    """Rows of finished pods say so (``podSuccessConditions``, ``podFailedConditions``)."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return [{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed "
                 "successfully."}]
    if phase == "Failed":
        return [{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]
    return None


# -- the others -----------------------------------------------------------------------------------

NAMESPACE_COLUMNS = [NAME, column("Status", "The status of the namespace"), AGE]
LEASE_COLUMNS = [NAME, column("Holder", "The holder of the lease"), AGE]
SERVICE_COLUMNS = [
    NAME,
    column("Type", "type determines how the Service is exposed."),
    column("Cluster-IP", "clusterIP is the IP address of the service."),
    column("External-IP", "externalIPs is a list of IP addresses for which nodes in the cluster will also accept "
           "traffic for this service."),
    column("Port(s)", "The list of ports that are exposed by this service."),
    AGE,
    column("Selector", "Route service traffic to pods with label keys and values matching this selector.",
           priority=1),
]
ENDPOINTSLICE_COLUMNS = [
    NAME,
    column("AddressType", "The IP protocol for this slice"),
    column("Ports", "The ports for this slice"),
    column("Endpoints", "A list of unique endpoints in this slice"),
    AGE,
]
EVENT_COLUMNS = [
    column("Last Seen", "The time at which the most recent occurrence of this event was recorded."),
    column("Type", "Type of this event (Normal, Warning), new types could be added in the future"),
    column("Reason", "This should be a short, machine understandable string that gives the reason for the "
           "transition into the object's current status."),
    column("Object", "The object that this event is about."),
    column("Subobject", "The field of the object that this event is about.", priority=1),
    column("Source", "The component reporting this event.", priority=1),
    column("Message", "A human-readable description of the status of this operation."),
    column("First Seen", "The time at which the event was first recorded.", priority=1),
    column("Count", "The number of times this event has occurred.", priority=1),
    {**NAME, "priority": 1},
]


def namespace_cells(namespace: dict) -> list:
    return [_name(namespace), (namespace.get("status") or {}).get("phase") or "", _age(namespace)]


def lease_cells(lease: dict) -> list:
    return [_name(lease), (lease.get("spec") or {}).get("holderIdentity") or "", _age(lease)]


def _list_with_more(items: list[str], count: int, limit: int = 3) -> str:
    text = ",".join(items[:limit])
    if count > limit:
        return f"{text} + {count - limit} more..."
    return text or "<unset>"


def endpointslice_cells(slice_: dict) -> list:
    ports = [str(p["port"]) if p.get("port") is not None else p.get("name") or "*" for p in slice_.get("ports") or ()]
    addresses = [a for e in slice_.get("endpoints") or () for a in e.get("addresses") or ()]
    return [_name(slice_), slice_.get("addressType") or "", _list_with_more(ports, len(ports)),
            _list_with_more(addresses, len(addresses)), _age(slice_)]


def service_cells(service: dict) -> list:
    spec = service.get("spec") or {}
    ports = ",".join(f"{p['port']}/{p.get('protocol') or 'TCP'}" for p in spec.get("ports") or ()) or "<none>"
    selector = ",".join(f"{k}={v}" for k, v in sorted((spec.get("selector") or {}).items())) or "<none>"
    return [_name(service), spec.get("type") or "ClusterIP", spec.get("clusterIP") or "<none>",
            ",".join(spec.get("externalIPs") or ()) or "<none>", ports, _age(service), selector]


def event_cells(event: dict) -> list:
    """``printEvent``."""
    first = Ago(event.get("firstTimestamp") or event.get("eventTime"))
    last = Ago(event["lastTimestamp"]) if event.get("lastTimestamp") else first
    count = event.get("count") or 1
    involved = event.get("involvedObject") or {}
    kind = (involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return [last, event.get("type") or "", event.get("reason") or "", target, involved.get("fieldPath") or "",
            f"{component}, {instance}" if instance else component, (event.get("message") or "").strip(), first,
            count, _name(event)]


# -- apps/v1 --------------------------------------------------------------------------------------

CONTAINERS = column("Containers", "Names of each container in the template.", priority=1)
IMAGES = column("Images", "Images referenced by each container in the template.", priority=1)
DEPLOYMENT_COLUMNS = [
    NAME,
    column("Ready", "Number of the pod with ready state"),
    column("Up-to-date", "Total number of non-terminated pods targeted by this deployment that have the desired "
           "template spec."),
    column("Available", "Total number of available pods (ready for at least minReadySeconds) targeted by this "
           "deployment."),
    AGE, CONTAINERS, IMAGES,
    column("Selector", "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the "
           "ones affected by this deployment. It must match the pod template's labels.", priority=1),
]
REPLICASET_COLUMNS = [
    NAME,
    column("Desired", "Replicas is the number of desired pods.", type_="integer"),
    column("Current", "Replicas is the most recently observed number of non-terminating pods.", type_="integer"),
    column("Ready", "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition.",
           type_="integer"),
    AGE, CONTAINERS, IMAGES,
    column("Selector", "Selector is a label query over pods that should match the replica count.", priority=1),
]
DAEMONSET_COLUMNS = [
    NAME,
    column("Desired", "The total number of nodes that should be running the daemon pod.", type_="integer"),
    column("Current", "The number of nodes that are running at least 1 daemon pod and are supposed to run the "
           "daemon pod.", type_="integer"),
    column("Ready", "The number of nodes that should be running the daemon pod and have one or more of the daemon "
           "pod running with a Ready Condition.", type_="integer"),
    column("Up-to-date", "The total number of nodes that are running updated daemon pod", type_="integer"),
    column("Available", "The number of nodes that should be running the daemon pod and have one or more of the "
           "daemon pod running and available (ready for at least spec.minReadySeconds)", type_="integer"),
    column("Node Selector", "NodeSelector is a selector which must be true for the pod to fit on a node."),
    AGE, CONTAINERS, IMAGES,
    column("Selector", "A label query over pods that are managed by the daemon set.", priority=1),
]


def _labels(labels: dict | None) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, or ``<none>``."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


def _template_cells(obj: dict) -> list:
    """CONTAINERS, IMAGES and SELECTOR (``layoutContainerCells``, ``metav1.FormatLabelSelector``)."""
    spec = obj.get("spec") or {}
    containers = ((spec.get("template") or {}).get("spec") or {}).get("containers") or ()
    selector = (spec.get("selector") or {}).get("matchLabels")
    return [",".join(c.get("name") or "" for c in containers), ",".join(c.get("image") or "" for c in containers),
            _labels(selector) if selector else "<none>"]


def deployment_cells(deployment: dict) -> list:
    """``printDeployment``: READY is ready/desired replicas."""
    spec, status = deployment.get("spec") or {}, deployment.get("status") or {}
    return [_name(deployment), f"{status.get('readyReplicas') or 0}/{spec.get('replicas') or 0}",
            status.get("updatedReplicas") or 0, status.get("availableReplicas") or 0, _age(deployment),
            *_template_cells(deployment)]


def replicaset_cells(replicaset: dict) -> list:
    spec, status = replicaset.get("spec") or {}, replicaset.get("status") or {}
    return [_name(replicaset), spec.get("replicas") or 0, status.get("replicas") or 0,
            status.get("readyReplicas") or 0, _age(replicaset), *_template_cells(replicaset)]


def daemonset_cells(daemonset: dict) -> list:
    spec, status = daemonset.get("spec") or {}, daemonset.get("status") or {}
    selector = ((spec.get("template") or {}).get("spec") or {}).get("nodeSelector")
    return [_name(daemonset), status.get("desiredNumberScheduled") or 0, status.get("currentNumberScheduled") or 0,
            status.get("numberReady") or 0, status.get("updatedNumberScheduled") or 0,
            status.get("numberAvailable") or 0, _labels(selector), _age(daemonset), *_template_cells(daemonset)]


# -- StatefulSets and storage ---------------------------------------------------------------------

STATEFULSET_COLUMNS = [
    NAME,
    column("Ready", "Number of the pod with ready state"),
    AGE, CONTAINERS, IMAGES,
]
STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"  # pkg/apis/core: BetaStorageClassAnnotation
PERSISTENTVOLUME_COLUMNS = [
    NAME,
    column("Capacity", "capacity is the description of the persistent volume's resources and capacity."),
    column("Access Modes", "accessModes contains all ways the volume can be mounted."),
    column("Reclaim Policy", "persistentVolumeReclaimPolicy defines what happens to a persistent volume when "
           "released from its claim."),
    column("Status", "phase indicates if a volume is available, bound to a claim, or released by a claim."),
    column("Claim", "claimRef is part of a bi-directional binding between PersistentVolume and "
           "PersistentVolumeClaim."),
    column("StorageClass", "StorageClass of the pv"),
    column("VolumeAttributesClass", "VolumeAttributesClass of the pv"),
    column("Reason", "reason is a brief CamelCase string that describes any failure and is meant for machine "
           "parsing and tidy display in the CLI."),
    AGE,
    column("VolumeMode", "volumeMode defines if a volume is intended to be used with a formatted filesystem or "
           "to remain in raw block state.", priority=1),
]
PERSISTENTVOLUMECLAIM_COLUMNS = [
    NAME,
    column("Status", "phase represents the current phase of PersistentVolumeClaim."),
    column("Volume", "volumeName is the binding reference to the PersistentVolume backing this claim."),
    column("Capacity", "capacity represents the actual resources of the underlying volume."),
    column("Access Modes", "accessModes contains the actual access modes the volume backing the PVC has."),
    column("StorageClass", "StorageClass of the pvc"),
    column("VolumeAttributesClass", "VolumeAttributesClass of the pvc"),
    AGE,
    column("VolumeMode", "volumeMode defines what type of volume is required by the claim.", priority=1),
]
VOLUMEATTACHMENT_COLUMNS = [
    NAME,
    {**column("Attacher", "attacher indicates the name of the volume driver that MUST handle this request."),
     "format": "name"},
    column("PV", "persistentVolumeName represents the name of the persistent volume to attach."),
    column("Node", "nodeName represents the node that the volume should be attached to."),
    column("Attached", "attached indicates the volume is successfully attached.", type_="boolean"),
    AGE,
]
ACCESS_MODES = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
                ("ReadWriteOncePod", "RWOP"))


def access_modes(modes: list[str] | None) -> str:
    """``helper.GetAccessModesAsString``: always in the order RWO, ROX, RWX, RWOP, each once."""
    present = set(modes or ())
    return ",".join(short for mode, short in ACCESS_MODES if mode in present)


def _storage_class(obj: dict) -> str:
    """``helper.GetPersistentVolumeClass`` / ``GetPersistentVolumeClaimClass``: the beta annotation first."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if STORAGE_CLASS_ANNOTATION in annotations:
        return annotations[STORAGE_CLASS_ANNOTATION]
    return (obj.get("spec") or {}).get("storageClassName") or ""


def _phase(obj: dict) -> str:
    """A volume's or claim's phase, ``Terminating`` once it is being deleted."""
    if (obj.get("metadata") or {}).get("deletionTimestamp") is not None:
        return "Terminating"
    return (obj.get("status") or {}).get("phase") or ""


def statefulset_cells(statefulset: dict) -> list:
    """``printStatefulSet``: READY is ready/desired replicas."""
    spec, status = statefulset.get("spec") or {}, statefulset.get("status") or {}
    return [_name(statefulset), f"{status.get('readyReplicas') or 0}/{spec.get('replicas') or 0}",
            _age(statefulset), *_template_cells(statefulset)[:2]]


def persistentvolume_cells(volume: dict) -> list:
    """``printPersistentVolume``: CLAIM is ``<namespace>/<name>`` of its claimRef."""
    spec = volume.get("spec") or {}
    claim = spec.get("claimRef")
    return [_name(volume), (spec.get("capacity") or {}).get("storage") or "0", access_modes(spec.get("accessModes")),
            spec.get("persistentVolumeReclaimPolicy") or "", _phase(volume),
            f"{claim.get('namespace') or ''}/{claim.get('name') or ''}" if claim else "", _storage_class(volume),
            spec.get("volumeAttributesClassName") or "<unset>", (volume.get("status") or {}).get("reason") or "",
            _age(volume), spec.get("volumeMode") or "<unset>"]


def persistentvolumeclaim_cells(claim: dict) -> list:
    """``printPersistentVolumeClaim``: capacity and access modes are the bound volume's, once there is one."""
    spec, status = claim.get("spec") or {}, claim.get("status") or {}
    capacity = modes = ""
    if spec.get("volumeName"):
        capacity = (status.get("capacity") or {}).get("storage") or "0"
        modes = access_modes(status.get("accessModes"))
    return [_name(claim), _phase(claim), spec.get("volumeName") or "", capacity, modes, _storage_class(claim),
            spec.get("volumeAttributesClassName") or "<unset>", _age(claim), spec.get("volumeMode") or "<unset>"]


def volumeattachment_cells(attachment: dict) -> list:
    """``printVolumeAttachment`` (``pkg/printers/internalversion/printers.go``)."""
    spec = attachment.get("spec") or {}
    return [_name(attachment), spec.get("attacher") or "",
            (spec.get("source") or {}).get("persistentVolumeName") or "", spec.get("nodeName") or "",
            bool((attachment.get("status") or {}).get("attached")), _age(attachment)]


PRINTERS: dict[str, tuple[list[dict], Callable[[dict], list]]] = {
    "nodes": (NODE_COLUMNS, node_cells),
    "pods": (POD_COLUMNS, pod_cells),
    "namespaces": (NAMESPACE_COLUMNS, namespace_cells),
    "leases": (LEASE_COLUMNS, lease_cells),
    "services": (SERVICE_COLUMNS, service_cells),
    "endpointslices": (ENDPOINTSLICE_COLUMNS, endpointslice_cells),
    "events": (EVENT_COLUMNS, event_cells),
    "deployments": (DEPLOYMENT_COLUMNS, deployment_cells),
    "replicasets": (REPLICASET_COLUMNS, replicaset_cells),
    "daemonsets": (DAEMONSET_COLUMNS, daemonset_cells),
    "statefulsets": (STATEFULSET_COLUMNS, statefulset_cells),
    "persistentvolumes": (PERSISTENTVOLUME_COLUMNS, persistentvolume_cells),
    "persistentvolumeclaims": (PERSISTENTVOLUMECLAIM_COLUMNS, persistentvolumeclaim_cells),
    "volumeattachments": (VOLUMEATTACHMENT_COLUMNS, volumeattachment_cells),
}


INCLUDE_OBJECT = ("None", "Metadata", "Object")  # ``includeObject``: what a row carries of its object


@dataclass(slots=True)
class PrintedRow:
    """A row as printed from one version of ``obj``: its cells, those measured against the clock still
    ``Ago`` (``agos``: where), and the rest of the row (``object``, ``conditions``)."""

    obj: dict
    cells: list
    rest: dict
    agos: tuple[tuple[int, Ago], ...] = field(init=False)

    def __post_init__(self) -> None:
        self.agos = tuple((index, cell) for index, cell in enumerate(self.cells) if type(cell) is Ago)

    def at(self, now: datetime, ages: dict[Ago, str]) -> dict:
        """The row at ``now``; ``ages`` keeps the texts of the Table's ``Ago`` cells already resolved."""
        cells = self.cells
        if self.agos:
            cells = cells.copy()
            for index, ago in self.agos:
                text = ages.get(ago)
                if text is None:
                    text = ages[ago] = ago.at(now)
                cells[index] = text
        return {"cells": cells, **self.rest}


def printed(resource: str, obj: dict, include: str = "Metadata",
            serve: Callable[[dict], dict] | None = None) -> PrintedRow:
    """The row of ``obj``, with its metadata (``includeObject=Metadata``, the default), the whole object
    (``Object``: what ``kubectl get --sort-by`` asks for, to read its fields) or nothing (``None``).
    ``obj`` as stored (an events.k8s.io Event is printed from its core/v1 form, as the real server does;
    ``serve`` gives it in the resource's shape)."""
    rest: dict = {}
    if include == "Object":
        rest["object"] = serve(obj) if serve is not None else obj
    elif include != "None":
        rest["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                          "metadata": obj.get("metadata") or {}}
    if resource == "pods":
        conditions = pod_conditions(obj)
        if conditions:
            rest["conditions"] = conditions
    return PrintedRow(obj, PRINTERS[resource][1](obj), rest)


RowCache = dict[tuple[str, str], PrintedRow]  # (namespace, name): the row of the object's latest version


def _cached(cache: RowCache, resource: str, obj: dict, include: str,
            serve: Callable[[dict], dict] | None) -> PrintedRow:
    """The cached row of ``obj`` when printed from this very version of it, else printed now and kept, its
    ``rest`` already written as JSON (``orjson.Fragment``: most of a Table's bytes)."""
    metadata = obj.get("metadata") or {}
    key = (metadata.get("namespace") or "", metadata.get("name") or "")
    found = cache.get(key)
    if found is None or found.obj is not obj:
        found = cache[key] = printed(resource, obj, include, serve)
        found.rest = {k: orjson.Fragment(orjson.dumps(v)) for k, v in found.rest.items()}
    return found


def table(resource: str, objects: list[dict], now: datetime, meta: dict, *, headers: bool = True,
          include: str = "Metadata", serve: Callable[[dict], dict] | None = None,
          cache: RowCache | None = None) -> dict:
    """A Table of ``objects`` at ``now``. With ``cache`` (the rows of earlier Tables of the same resource
    and ``include``), only objects changed since are printed: a repeated ``kubectl get pods -A`` of a
    5,000-node run prints the few pods that changed, not 50,000. Such a Table is for orjson to write."""
    ages: dict[Ago, str] = {}
    if cache is None:
        rows = [printed(resource, obj, include, serve).at(now, ages) for obj in objects]
    else:
        rows = [_cached(cache, resource, obj, include, serve).at(now, ages) for obj in objects]
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": meta,
            "columnDefinitions": PRINTERS[resource][0] if headers else [], "rows": rows}
