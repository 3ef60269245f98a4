"""One mapping from a Kubernetes object's change (old object -> new object) to the classroom's events.

A simulated run's API server records each write and the state changes it made (simulation/apiserver.py
``_summary``, ``_transitions``); a real cluster shows only the objects as they change. The watcher (``watch.py``)
and the audit-log replay (``auditlog.py``) both hand every change to one ``ChangeMapper``, which keeps the objects
it has seen and gives the same event dicts a simulated run publishes (docs/simulation-api.md, "Events"): a
``write`` per change that matters to node health, then its ``transition`` events.

Who made a change: an audit record says (``Actor``); a watch does not, so the mapper infers it from what changed
and lists the fields it inferred under ``"inferred"`` in the event (docs/observe.md, "What is inferred").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

RESOURCES = ("nodes", "leases", "pods", "endpointslices", "events")
LEASE_NAMESPACE = "kube-node-lease"  # the node Leases' namespace (pkg/kubelet/nodelease in kubernetes/kubernetes)
EVENTS_KEPT = 300  # Events a snapshot carries, the newest (as a simulated run's: Simulation.snapshot)
NLC = "node-lifecycle-controller"
TEC = "taint-eviction-controller"
NLC_USER = "system:serviceaccount:kube-system:node-controller"
TEC_USER = "system:serviceaccount:kube-system:taint-eviction-controller"
ADMIN = "kubernetes-admin"  # a person with kubectl: the classroom's "trainer" lane
# Taints a person sets (kubectl cordon, docs/kubernetes-node-health.md); the others on a node come from the
# node lifecycle controller (pkg/controller/nodelifecycle/node_lifecycle_controller.go)
PEOPLE_TAINTS = ("node.kubernetes.io/unschedulable", "node.kubernetes.io/out-of-service")
INFERRED_ACTOR = ["component", "user", "verb"]
# Lanes whose informers receive a change of each resource (as the simulation draws them: simulation/apiserver.py)
WATCHERS = {
    "nodes": [NLC, TEC, "kube-scheduler", "garbage-collector", "pod-garbage-collector"],
    "leases": [NLC],
    "pods": ["kubelet", NLC, TEC, "kube-scheduler", "endpointslice-controller", "replicaset-controller"],
    "endpointslices": [],
    "events": [],
}
# An Event's reporting component -> the lane it is drawn on
EVENT_LANES = {
    "node-controller": NLC, "kubelet": "kubelet", "taint-eviction-controller": TEC, "taint-controller": TEC,
    "default-scheduler": "kube-scheduler", "replicaset-controller": "replicaset-controller",
    "endpointslice-controller": "endpointslice-controller", "daemonset-controller": "daemonset-controller",
    "statefulset-controller": "statefulset-controller", "pod-garbage-collector": "pod-garbage-collector",
}
OWNER_LANES = {"ReplicaSet": "replicaset-controller", "DaemonSet": "daemonset-controller",
               "StatefulSet": "statefulset-controller"}


@dataclass(frozen=True)
class Actor:
    """Who made a change and how, when the source says so (an audit record)."""

    user: str
    component: str
    verb: str
    subresource: str = ""
    code: int = 200


@dataclass
class Change:
    """An object as it is after a change (``new`` None: it is gone), at ``t`` seconds on the run's time axis and
    wall time ``time`` (RFC 3339)."""

    resource: str
    namespace: str
    name: str
    new: dict | None
    t: float
    time: str
    actor: Actor | None = None
    received: str | None = None  # when the API server received the request (an audit record's)


@dataclass
class Write:
    """What the mapper decided a change was: who made it, and its one-line summary."""

    actor: Actor
    summary: str
    inferred: list[str] = field(default_factory=list)
    node: str | None = None


def rfc3339(seconds: float) -> str:
    """Unix seconds as the API's microsecond RFC 3339 (as simulation/clock.py writes them)."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def meta(obj: dict | None) -> dict:
    return (obj or {}).get("metadata") or {}


def condition(obj: dict | None, kind: str) -> dict | None:
    for cond in ((obj or {}).get("status") or {}).get("conditions") or ():
        if cond.get("type") == kind:
            return cond
    return None


def ready_status(node: dict | None) -> str | None:
    cond = condition(node, "Ready")
    return cond.get("status") if cond else None


def taints(node: dict | None) -> list[tuple[str, str]]:
    return [(t.get("key", ""), t.get("effect", "")) for t in ((node or {}).get("spec") or {}).get("taints") or ()]


def pod_ready(pod: dict | None) -> bool:
    cond = condition(pod, "Ready")
    return bool(cond and cond.get("status") == "True")


def pod_node(pod: dict | None) -> str | None:
    return ((pod or {}).get("spec") or {}).get("nodeName") or None


def phase(pod: dict | None) -> str | None:
    return ((pod or {}).get("status") or {}).get("phase")


class ChangeMapper:
    """Turns each change into events, numbered from 1 in the order they are given (one mapper per run)."""

    def __init__(self) -> None:
        self.seq = 0
        self.objects: dict[str, dict[tuple[str, str], dict]] = {resource: {} for resource in RESOURCES}
        # per node: when its kubelet was last seen renewing its Lease and posting its status (seconds)
        self.kubelets: dict[str, dict[str, float | None]] = {}
        self.ready_since: dict[str, float] = {}  # per node: when its Ready condition last changed, as seen
        self._handlers: dict[str, Callable[[dict | None, dict | None, Change], tuple[Write | None, list[dict]]]] = {
            "nodes": self._node, "leases": self._lease, "pods": self._pod, "endpointslices": self._endpointslice,
            "events": self._event,
        }

    def get(self, resource: str, namespace: str, name: str) -> dict | None:
        return self.objects[resource].get((namespace, name))

    def apply(self, change: Change) -> list[dict]:
        """The events of one change; none when nothing the classroom draws changed (a status field it does not
        show, the same version seen again after a re-list)."""
        store = self.objects[change.resource]
        key = (change.namespace, change.name)
        old = store.get(key)
        new = change.new
        if new is None:
            store.pop(key, None)
        else:
            store[key] = new
            if change.resource == "events" and len(store) > 2 * EVENTS_KEPT:
                for stale in sorted(store, key=lambda k: event_age(store[k]))[:EVENTS_KEPT]:
                    del store[stale]
        if old is None and new is None:
            return []
        if old is not None and new is not None and _rv(old) == _rv(new) and _rv(new):
            return []
        write, transitions = self._handlers[change.resource](old, new, change)
        if write is None:
            return []
        events = [self._write_event(change, old, new, write), *transitions]
        for event in events:
            self.seq += 1
            event["seq"] = self.seq
        return events

    def bare(self, change: Change) -> list[dict]:
        """A write whose object the source left out (an audit log below level RequestResponse): who wrote what,
        without transitions; the objects kept are left as they were."""
        actor = change.actor or Actor("", "trainer", "update")
        resource, name = change.resource, change.name
        node: str | None = name if resource in ("nodes", "leases") else None
        if resource == "pods":
            node = pod_node(self.get("pods", change.namespace, name))
        verb = "renew" if resource == "leases" and actor.verb == "update" else actor.verb
        kind = {"nodes": "Node", "leases": "Lease", "pods": "Pod", "endpointslices": "EndpointSlice",
                "events": "Event"}[resource]
        summary = f"{verb} {kind} {name}{'/' + actor.subresource if actor.subresource else ''}"
        event = self._write_event(change, None, None, Write(actor, summary, node=node))
        event["removed"] = actor.verb == "delete"
        self.seq += 1
        event["seq"] = self.seq
        return [event]

    # -- events ---------------------------------------------------------------------------

    def _write_event(self, change: Change, old: dict | None, new: dict | None, write: Write) -> dict:
        actor = write.actor
        event = {
            "seq": 0, "t": change.t, "time": change.time, "type": "write", "component": actor.component,
            "node": write.node, "user": actor.user, "verb": actor.verb, "resource": change.resource,
            "subresource": actor.subresource, "namespace": change.namespace, "name": change.name, "code": actor.code,
            "message": None, "removed": new is None, "watchers": WATCHERS[change.resource],
            "summary": write.summary, "object": new if new is not None else old,
            "requestReceivedTimestamp": change.received or change.time,
        }
        if write.inferred:
            event["inferred"] = write.inferred
        if write.node and actor.code < 400:
            seen = self.kubelets.setdefault(write.node, {"lastRenew": None, "lastStatusReport": None})
            if actor.component == "kubelet-lease" and change.resource == "leases":
                seen["lastRenew"] = change.t
            elif actor.component == "kubelet-status" and change.resource == "nodes":
                seen["lastStatusReport"] = change.t
        return event

    @staticmethod
    def _transition(change: Change, component: str, kind: str, node: str | None, before: Any, after: Any, *,
                    pod: str | None = None, key: str | None = None, effect: str | None = None) -> dict:
        return {"seq": 0, "t": change.t, "time": change.time, "type": "transition", "component": component,
                "node": node, "kind": kind, "from": before, "to": after, "pod": pod, "key": key, "effect": effect}

    def _decide(self, change: Change, inferred: Actor, summary: str, node: str | None) -> Write:
        """The change's actor: the audit record's when there is one, else the inferred one (so marked)."""
        if change.actor is not None:
            return Write(change.actor, summary, node=node)
        return Write(inferred, summary, inferred=INFERRED_ACTOR, node=node)

    # -- nodes ----------------------------------------------------------------------------

    def _node(self, old: dict | None, new: dict | None, change: Change) -> tuple[Write | None, list[dict]]:
        name = change.name
        kubelet = f"system:node:{name}"
        if new is None:
            lane = "cloud-node-lifecycle-controller"
            write = self._decide(change, Actor(f"system:serviceaccount:kube-system:{lane}", lane, "delete"),
                                 f"delete Node {name}", name)
            return write, [self._transition(change, write.actor.component, "node-deleted", name, ready_status(old),
                                            None)]
        added = [t for t in taints(new) if t not in taints(old)]
        gone = [t for t in taints(old) if t not in taints(new)] if old else []
        before, after = ready_status(old), ready_status(new)
        if old is None:
            guess = Actor(kubelet, "kubelet-status", "create")
            summary = f"create Node {name}"
        elif before != after and after == "Unknown":
            # only the node lifecycle controller writes Unknown: tryUpdateNodeHealth in
            # pkg/controller/nodelifecycle/node_lifecycle_controller.go
            guess = Actor(NLC_USER, NLC, "patch", "status")
            summary = f"patch Node {name} status (Ready=Unknown)"
        elif added or gone:
            by_person = all(key in PEOPLE_TAINTS for key, _ in (*added, *gone))
            guess = Actor(ADMIN, "trainer", "patch") if by_person else Actor(NLC_USER, NLC, "patch")
            parts = sorted([f"+{key.split('/')[-1]}:{effect}" for key, effect in added]
                           + [f"-{key.split('/')[-1]}:{effect}" for key, effect in gone])
            summary = f"taint Node {name} {' '.join(parts)}"
        elif _status_changed(old, new):
            guess = Actor(kubelet, "kubelet-status", "patch", "status")
            summary = f"patch Node {name} status (Ready={after})" if after else f"patch Node {name} status (no Ready)"
        else:
            return None, []  # labels, annotations, images: nothing the classroom draws
        write = self._decide(change, guess, summary, name)
        component = write.actor.component
        out = []
        if old is None:
            out.append(self._transition(change, component, "node-created", name, None, after))
        old_conditions = {c.get("type"): c.get("status") for c in ((old or {}).get("status") or {}).get("conditions")
                          or ()}
        for cond in (new.get("status") or {}).get("conditions") or ():
            was = old_conditions.get(cond.get("type"))
            if was != cond.get("status"):
                kind = "node-ready" if cond.get("type") == "Ready" else "node-condition"
                out.append(self._transition(change, component, kind, name, was, cond.get("status"),
                                            key=cond.get("type")))
                if kind == "node-ready":
                    self.ready_since[name] = change.t
        for key, effect in added:
            out.append(self._transition(change, component, "taint-added", name, None, None, key=key, effect=effect))
        for key, effect in gone:
            out.append(self._transition(change, component, "taint-removed", name, None, None, key=key, effect=effect))
        was_off = bool(((old or {}).get("spec") or {}).get("unschedulable"))
        now_off = bool((new.get("spec") or {}).get("unschedulable"))
        if old is not None and was_off != now_off:
            out.append(self._transition(change, component, "node-unschedulable", name, was_off, now_off))
        return write, out

    # -- leases ---------------------------------------------------------------------------

    def _lease(self, old: dict | None, new: dict | None, change: Change) -> tuple[Write | None, list[dict]]:
        if change.namespace != LEASE_NAMESPACE:
            return None, []
        lease = new if new is not None else old
        node = ((lease or {}).get("spec") or {}).get("holderIdentity") or change.name
        if new is None:
            # a node's Lease is owned by its Node: the garbage collector removes it with the node
            return self._decide(change, Actor("system:serviceaccount:kube-system:generic-garbage-collector",
                                              "garbage-collector", "delete"), f"delete Lease {change.name}", node), []
        renewed = (new.get("spec") or {}).get("renewTime")
        if old is not None and renewed == ((old.get("spec") or {}).get("renewTime")):
            return None, []
        verb = "create" if old is None else "update"
        summary = f"{'renew' if verb == 'update' else verb} Lease {change.name}"
        return self._decide(change, Actor(f"system:node:{node}", "kubelet-lease", verb), summary, node), []

    # -- pods -----------------------------------------------------------------------------

    def _pod(self, old: dict | None, new: dict | None, change: Change) -> tuple[Write | None, list[dict]]:
        name = change.name
        node = pod_node(new) or pod_node(old)
        if old is None:
            owners: list[dict] = meta(new).get("ownerReferences") or []
            lane = OWNER_LANES.get(str(owners[0].get("kind"))) if owners else None
            guess = (Actor(f"system:serviceaccount:kube-system:{lane}", lane, "create") if lane
                     else Actor(ADMIN, "trainer", "create"))
            write = self._decide(change, guess, f"create Pod {name}", node)
            return write, [self._transition(change, write.actor.component, "pod-created", node, None, phase(new),
                                            pod=name)]
        if new is None:
            lane = "kubelet" if ready_status(self.get("nodes", "", node or "")) == "True" else "pod-garbage-collector"
            user = f"system:node:{node}" if lane == "kubelet" else f"system:serviceaccount:kube-system:{lane}"
            write = self._decide(change, Actor(user, lane, "delete"), f"remove Pod {name}", node)
            return write, [self._transition(change, write.actor.component, "pod-deleted", node, phase(old), None,
                                            pod=name)]
        found, summary = self._pod_actor(old, new, name, node)
        if found is None:
            return None, []
        write = self._decide(change, found, summary, node)
        return write, self._pod_transitions(old, new, change, write.actor.component, name, node)

    def _pod_actor(self, old: dict, new: dict, name: str, node: str | None) -> tuple[Actor | None, str]:
        """Who changed a pod, from what changed (the first that applies)."""
        on_node = self.get("nodes", "", node or "")
        tainted = any(effect == "NoExecute" for _, effect in taints(on_node))
        if meta(new).get("deletionTimestamp") and not meta(old).get("deletionTimestamp"):
            # pkg/controller/tainteviction/taint_eviction.go deletes the pods of a NoExecute-tainted node
            actor = Actor(TEC_USER, TEC, "delete") if tainted else Actor(ADMIN, "trainer", "delete")
            return actor, f"delete (graceful) Pod {name}"
        if _disruption_reason(new) and not _disruption_reason(old):
            return Actor(TEC_USER, TEC, "patch", "status"), f"patch Pod {name}/status"
        if pod_node(new) and not pod_node(old):
            return Actor("system:kube-scheduler", "kube-scheduler", "create", "binding"), f"create Pod {name}/binding"
        if pod_ready(old) and not pod_ready(new) and ready_status(on_node) != "True":
            # MarkPodsNotReady (pkg/controller/util/node/controller_utils.go) for a node not Ready
            return Actor(NLC_USER, NLC, "patch", "status"), f"patch Pod {name}/status"
        if (new.get("status") or {}) != (old.get("status") or {}):
            return Actor(f"system:node:{node}", "kubelet", "patch", "status"), f"patch Pod {name}/status"
        return None, ""

    def _pod_transitions(self, old: dict, new: dict, change: Change, component: str, name: str,
                         node: str | None) -> list[dict]:
        out = []
        if pod_node(new) and not pod_node(old):
            out.append(self._transition(change, component, "pod-scheduled", node, None, pod_node(new), pod=name))
        if pod_ready(old) != pod_ready(new) and (condition(old, "Ready") or condition(new, "Ready")):
            out.append(self._transition(change, component, "pod-ready", node, pod_ready(old), pod_ready(new),
                                        pod=name))
        if phase(old) != phase(new):
            out.append(self._transition(change, component, "pod-phase", node, phase(old), phase(new), pod=name))
        reason = _disruption_reason(new)
        if reason and not _disruption_reason(old):
            out.append(self._transition(change, component, "pod-disruption-target", node, None, reason, pod=name,
                                        key=reason))
        if meta(new).get("deletionTimestamp") and not meta(old).get("deletionTimestamp"):
            grace = meta(new).get("deletionGracePeriodSeconds") or 0
            out.append(self._transition(change, component, "pod-terminating", node, None,
                                        round(change.t + grace, 6), pod=name))
        return out

    # -- EndpointSlices and Events ----------------------------------------------------------

    def _endpointslice(self, old: dict | None, new: dict | None,
                       change: Change) -> tuple[Write | None, list[dict]]:
        service = (meta(new or old).get("labels") or {}).get("kubernetes.io/service-name")
        before, after = _endpoints(old), _endpoints(new)
        verb = "create" if old is None else "delete" if new is None else "update"
        kind = "EndpointSlice"
        write = self._decide(change, Actor("system:serviceaccount:kube-system:endpointslice-controller",
                                           "endpointslice-controller", verb), f"{verb} {kind} {change.name}", None)
        component = write.actor.component
        out = []
        for pod, (node, state) in after.items():
            was = before.get(pod)
            if was is None or was[1] != state:
                out.append(self._transition(change, component, "endpoint", node, was[1] if was else None, state,
                                            pod=pod, key=service))
        for pod, (node, state) in before.items():
            if pod not in after:
                out.append(self._transition(change, component, "endpoint", node, state, None, pod=pod, key=service))
        if old is not None and new is not None and not out:
            return None, []
        return write, out

    def _event(self, old: dict | None, new: dict | None, change: Change) -> tuple[Write | None, list[dict]]:
        if new is None:
            return None, []  # Events expire (--event-ttl): nothing happened to the cluster
        source = new.get("reportingComponent") or (new.get("source") or {}).get("component") or ""
        lane = EVENT_LANES.get(source)
        about = new.get("involvedObject") or {}
        if lane is None or about.get("kind") not in ("Node", "Pod"):
            return None, []
        if about.get("kind") == "Node":
            node = about.get("name")
        else:
            node = pod_node(self.get("pods", about.get("namespace") or "", about.get("name") or ""))
        verb = "create" if old is None else "patch"
        summary = f"Event {new.get('reason')} on {about.get('kind')} {about.get('name')}"
        user = f"system:node:{node}" if lane == "kubelet" else f"system:serviceaccount:kube-system:{source}"
        return self._decide(change, Actor(user, lane, verb), summary, node), []


def _rv(obj: dict) -> str:
    return str(meta(obj).get("resourceVersion") or "")


def event_age(event: dict) -> tuple[str, str]:
    """An Event's place among the others, oldest first: when it last happened, then its name."""
    return str(event.get("lastTimestamp") or event.get("eventTime") or meta(event).get("creationTimestamp") or ""), \
        str(meta(event).get("name"))


def _status_changed(old: dict, new: dict) -> bool:
    """A kubelet's status post: a condition (its heartbeat included) or the addresses changed."""
    old_status, new_status = old.get("status") or {}, new.get("status") or {}
    return any(old_status.get(part) != new_status.get(part) for part in ("conditions", "addresses", "volumesInUse",
                                                                         "volumesAttached"))


def _disruption_reason(pod: dict | None) -> str | None:
    cond = condition(pod, "DisruptionTarget")
    return cond.get("reason") if cond and cond.get("status") == "True" else None


def _endpoints(slice_: dict | None) -> dict[str, tuple[str | None, dict]]:
    """An EndpointSlice's endpoints by pod: (node, {ready, serving, terminating})."""
    out = {}
    for endpoint in (slice_ or {}).get("endpoints") or ():
        pod = (endpoint.get("targetRef") or {}).get("name")
        if not pod:
            continue
        conditions = endpoint.get("conditions") or {}
        # an unset condition means ready/serving (discovery/v1 EndpointConditions), not terminating
        state = {"ready": conditions.get("ready", True) is not False,
                 "serving": conditions.get("serving", True) is not False,
                 "terminating": bool(conditions.get("terminating"))}
        out[pod] = (endpoint.get("nodeName"), state)
    return out
