"""Node level: what viewers of a large run get instead of every object and every event.

docs/websocket-protocol.md ("Detail levels") is the contract. A 5,000-node run has ~50,000
pods and renews 500 Leases a virtual second: sent whole, joining costs ~100 MB and a viewer
~4.5 MB/s at 10x. At node level the snapshot holds trimmed Nodes and Leases with pod counts
per node, and frames hold the events about nodes, zones and controllers' node decisions,
Lease renewals condensed to ``{node: renewTime}`` and the new pod counts of the nodes whose
pods changed. A viewer that opens a node asks for its full objects (``node_detail``) and
then gets that node's full events in ``details`` of each frame.

The driver builds these once per frame; consumers forward the text unchanged.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Iterable, Sequence

from django.conf import settings

from simulation import Simulation

DETAIL = "nodes"
OBJECTS_ASK = "objects"  # an ask (``detail_asks.take_asks``) for the run's whole API state: ``cluster_objects``
RECENT_NODE_EVENTS = 300  # core/v1 Events about Nodes kept in a node-level snapshot
KEPT_LABELS = ("kubernetes.io/hostname", "topology.kubernetes.io/zone")
# Transitions of single pods and their endpoints: at node level they show as pod counts.
POD_TRANSITIONS = frozenset({"pod-ready", "pod-phase", "pod-terminating", "pod-deleted", "pod-created", "pod-scheduled",
                             "pod-disruption-target", "endpoint"})
POD_RESOURCES = frozenset({"pods", "endpointslices"})
# Kubelets' own requests: in a zone outage 1,667 of them fail again and again (each kubelet retries
# its Lease every few seconds); at node level they are counts per node (``failed``).
KUBELET_COMPONENTS = frozenset({"kubelet-lease", "kubelet-status", "kubelet"})


def is_node_level(node_count: int) -> bool:
    """Runs larger than ``HEARTBEAT_NODE_LEVEL_NODES`` are sent at node level."""
    return node_count > settings.HEARTBEAT["NODE_LEVEL_NODES"]


# -- trimmed objects ----------------------------------------------------------------------------


def trim_node(node: dict) -> dict:
    """A Node with what the overview and ``kubectl get nodes`` read; the full one is a detail.

    Of its conditions, Ready always, the others (memory, disk, PID pressure) only when they are
    True: a node's three "no pressure" conditions would be half of its size, and when its kubelet
    goes silent the controller turns all three Unknown with Ready, which Ready already tells.
    """
    meta = node.get("metadata") or {}
    spec = node.get("spec") or {}
    labels = meta.get("labels") or {}
    out_meta = {key: meta[key] for key in ("name", "resourceVersion", "creationTimestamp", "deletionTimestamp")
                if key in meta}
    out_meta["labels"] = {key: labels[key] for key in KEPT_LABELS if key in labels}
    out_spec = {key: spec[key] for key in ("taints", "unschedulable") if key in spec}
    conditions = [
        {key: c[key] for key in ("type", "status", "reason", "lastHeartbeatTime", "lastTransitionTime") if key in c}
        for c in (node.get("status") or {}).get("conditions") or ()
        if c.get("type") == "Ready" or c.get("status") == "True"
    ]
    return {"metadata": out_meta, "spec": out_spec, "status": {"conditions": conditions}}


def trim_lease(lease: dict) -> dict:
    """A Lease's name and spec: a renewal, sent as a renewTime, changes nothing else."""
    meta = lease.get("metadata") or {}
    return {"metadata": {key: meta[key] for key in ("name", "namespace") if key in meta},
            "spec": lease.get("spec") or {}}


HEALTHY_KUBELET = {"running": True, "powered": True, "reachable": True, "runtimeUp": True, "shuttingDown": False,
                   "pressure": []}


def unusual_kubelets(kubelets: dict) -> dict:
    """The kubelets whose flags are not those of a healthy node (the rest: HEALTHY_KUBELET)."""
    out = {}
    for name, flags in kubelets.items():
        state = {key: flags[key] for key in HEALTHY_KUBELET if key in flags}
        if state != {key: HEALTHY_KUBELET[key] for key in state}:
            out[name] = state
    return out


def _is_about_node(core_event: dict) -> bool:
    return (core_event.get("involvedObject") or {}).get("kind") == "Node"


# -- snapshots --------------------------------------------------------------------------------


def node_snapshot(sim: Simulation) -> dict:
    """The node-level snapshot of ``sim`` (no pods, no EndpointSlices; pod counts instead)."""
    snapshot = sim.snapshot(pods=False)
    objects = snapshot["objects"]
    objects["nodes"] = [trim_node(node) for node in objects["nodes"]]
    objects["leases"] = [trim_lease(lease) for lease in objects["leases"]]
    objects["events"] = [e for e in objects["events"] if _is_about_node(e)][-RECENT_NODE_EVENTS:]
    # the controller's per-node records come with its monitor passes' decisions; the kubelets'
    # flags only where a node is not healthy (the pages take a missing one as healthy)
    snapshot["nodeLifecycle"] = {key: value for key, value in snapshot["nodeLifecycle"].items() if key != "nodes"}
    snapshot["kubelets"] = unusual_kubelets(snapshot["kubelets"])
    names = [node["metadata"]["name"] for node in objects["nodes"]]
    snapshot["podCounts"] = sim.pod_counts([*names, ""])
    snapshot["detail"] = DETAIL
    return snapshot


def node_detail(sim: Simulation, node: str) -> dict | None:
    """A node's full objects for a viewer that opened it; None if the run has no such node."""
    return sim.node_objects(node)


def cluster_objects(sim: Simulation) -> dict:
    """Every object of the run as Kubernetes JSON, for its Kubernetes API (``heartbeat_site/k8sapi/cluster.py``),
    which cannot rebuild a large run in time: ``{"type": "objects", "t", "objects"}``, what
    ``Simulation.snapshot`` holds. The driver answers an ask of kind ``OBJECTS_ASK`` with it right
    after a flush, so the objects are those of its last published seq, which it adds.

    A drill hides nothing here: its cause is in events and kubelet flags, never in the objects
    (``simulation/lessons/drills.py``). The collector stays off meanwhile: the objects of a
    5,000-node run are ~60,000 dicts, and collections over the simulation's heap would cost more
    than building them (``Simulation.run_until`` does the same).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        snapshot = sim.snapshot()
    finally:
        if collecting:
            gc.enable()
    return {"type": OBJECTS_ASK, "t": snapshot["t"], "objects": snapshot["objects"]}


# -- frames -----------------------------------------------------------------------------------


def _kept(event: dict) -> bool:
    """Whether a node-level frame carries ``event`` as it is."""
    kind = event["type"]
    if kind == "write":
        resource = event.get("resource")
        if resource in POD_RESOURCES:
            return False
        if resource == "events":
            return _is_about_node(event.get("object") or {})
        if resource == "leases":  # renewals go into ``renewals``; creates, deletes and failures stay
            return not (event.get("verb") == "update" and (event.get("code") or 0) < 400)
        return True
    if kind == "read":
        return event.get("resource") in ("nodes", "leases")
    if kind == "transition":
        return event.get("kind") not in POD_TRANSITIONS
    if kind == "decision":
        return not event.get("pod")
    return True


def _failed_kubelet_request(event: dict) -> bool:
    """A kubelet's request that failed (no answer, or an error code): it changed nothing."""
    if event.get("component") not in KUBELET_COMPONENTS:
        return False
    return event["type"] == "request-failed" or (event["type"] == "write" and (event.get("code") or 0) >= 400)


def _changed_pod_nodes(events: Iterable[dict]) -> set[str]:
    """Nodes whose pods may have changed ("" for pods not placed yet)."""
    nodes = set()
    for event in events:
        if event["type"] == "write" and event.get("resource") == "pods":
            obj = event.get("object") or {}
            nodes.add((obj.get("spec") or {}).get("nodeName") or event.get("node") or "")
        elif event["type"] == "transition" and event.get("kind") in POD_TRANSITIONS:
            nodes.add(event.get("node") or "")
            if event.get("kind") in ("pod-created", "pod-scheduled"):
                nodes.add("")  # a pod joined or left the unscheduled ones
    return nodes


def _concerns(event: dict, node: str) -> bool:
    """Whether ``event`` changes what a viewer holds of ``node`` after asking for its detail."""
    if event.get("node") == node:
        return True
    if event["type"] == "write" and event.get("resource") == "endpointslices":
        endpoints = (event.get("object") or {}).get("endpoints") or ()
        return any(endpoint.get("nodeName") == node for endpoint in endpoints)
    return False


def node_frame(events: Sequence[dict], clock: dict, sim: Simulation, watched: Iterable[str], sent_at: int) -> dict:
    """The node-level frame of ``events`` (consecutive seqs, the slice just simulated)."""
    watched = set(watched)
    kept: list[dict] = []
    omitted: Counter[str] = Counter()
    renewals: dict[str, str | None] = {}  # a Lease written without spec.renewTime: None
    failed: Counter[str] = Counter()
    for event in events:
        if _failed_kubelet_request(event) and event.get("node") not in watched:
            omitted[event["type"]] += 1
            failed[event.get("node") or ""] += 1
            continue
        if _kept(event):
            if event["type"] == "write" and event.get("object") is not None:
                if event.get("resource") == "nodes":
                    event = {**event, "object": trim_node(event["object"])}
                elif event.get("resource") == "leases":
                    event = {**event, "object": trim_lease(event["object"])}
            kept.append(event)
            continue
        omitted[event["type"]] += 1
        if event["type"] == "write" and event.get("resource") == "leases":
            renewals[event["name"]] = ((event.get("object") or {}).get("spec") or {}).get("renewTime")
    message: dict = {
        "type": "frame",
        "seq": [events[0]["seq"], events[-1]["seq"]],
        "events": kept,
        "clock": clock,
        "sent_at": sent_at,
        "detail": DETAIL,
    }
    if omitted:
        message["omitted"] = dict(sorted(omitted.items()))
    if renewals:
        message["renewals"] = renewals
    if failed:
        message["failed"] = dict(failed)
    changed = _changed_pod_nodes(events)
    if changed:
        message["podCounts"] = sim.pod_counts(sorted(changed))
    details = {node: [e for e in events if _concerns(e, node)] for node in sorted(watched)}
    details = {node: found for node, found in details.items() if found}
    if details:
        message["details"] = details
    return message
