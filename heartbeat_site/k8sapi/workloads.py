"""apps/v1 Deployments, ReplicaSets and DaemonSets as the simulation has them.

The simulation keeps no objects for its workloads (``simulation/workloads.py``): a Deployment is a
ReplicaSet controller whose pods are owned by kind ReplicaSet, a DaemonSet a controller whose pods
are owned by kind DaemonSet, all applied at ``WORKLOADS_APPLIED_AT`` (``simulation/simulation.py``).
This module gives them the objects a real cluster would have: spec from the scenario's
``cluster.workloads``, status counted from the pods, as the controllers count
(``pkg/controller/replicaset/replica_set_utils.go`` ``calculateStatus``, ``pkg/controller/daemon``):
a pod counts while it is active (not terminal, no deletionTimestamp), and as ready while its Ready
condition is True (``minReadySeconds`` 0: available is ready).

Counts are kept per pod change (``pod_changed``), so a 45,000-pod run costs nothing per request.
A DaemonSet's DESIRED is the number of its active pods: the simulation's controller creates one
for every node that should run one at once, so what a real status calls desired but not yet
scheduled exists only for an instant.
"""

from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from simulation.clock import US
from simulation.simulation import WORKLOADS_APPLIED_AT

WORKLOAD_RESOURCES = ("deployments", "replicasets", "daemonsets")
WORKLOAD_KINDS = ("Deployment", "DaemonSet")  # the scenario's workloads this module gives objects to
NAMESPACE = "default"  # simulation/workloads.py new_pod
TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass
class Counts:
    active: int = 0
    ready: int = 0
    scheduled: int = 0
    available: bool | None = None  # a Deployment's Available condition, and since when
    available_since: datetime | None = None


def pod_state(pod: dict) -> tuple[str, str, str, bool, bool, bool] | None:
    """(workload name, owner kind, owner uid, active, ready, scheduled) of a workload's pod, else None."""
    meta = pod.get("metadata") or {}
    owners = meta.get("ownerReferences") or ()
    app = (meta.get("labels") or {}).get("app")
    if not owners or not app or owners[0].get("kind") not in ("ReplicaSet", "DaemonSet"):
        return None
    status = pod.get("status") or {}
    active = meta.get("deletionTimestamp") is None and status.get("phase") not in TERMINAL_PHASES
    ready = active and any(c.get("type") == "Ready" and c.get("status") == "True"
                           for c in status.get("conditions") or ())
    scheduled = active and bool((pod.get("spec") or {}).get("nodeName"))
    return app, owners[0]["kind"], owners[0].get("uid") or "", active, ready, scheduled


class Workloads:
    """The workload objects of one run, their counts kept current from its pods."""

    def __init__(self, document: dict, zero: datetime, uid_space: uuid.UUID, seed: int) -> None:
        # a StatefulSet is an object of the simulation's own (simulation/objects.py), served as it is stored
        self.specs = {spec["name"]: spec for spec in document["cluster"].get("workloads") or ()
                      if spec["kind"] in WORKLOAD_KINDS}
        self.created = zero + timedelta(seconds=WORKLOADS_APPLIED_AT / US)
        self.applied_at = WORKLOADS_APPLIED_AT / US
        self.uid_space = uid_space
        self.seed = seed
        self.counts: dict[str, Counts] = {name: Counts() for name in self.specs}
        self.owner_uids: dict[str, str] = {}  # the uid pods name as their owner (the ReplicaSet or DaemonSet)
        self.changed: set[str] = set(self.specs)
        self.exist = False

    def reset(self, pods) -> None:
        self.counts = {name: Counts() for name in self.specs}
        self.changed = set(self.specs)
        self.exist = False
        for pod in pods:
            self.pod_changed(None, pod)

    def pod_changed(self, old: dict | None, new: dict | None) -> None:
        for pod, sign in ((old, -1), (new, 1)):
            state = pod_state(pod) if pod is not None else None
            if state is None or state[0] not in self.counts:
                continue
            name, _kind, owner_uid, active, ready, scheduled = state
            counts = self.counts[name]
            counts.active += sign * active
            counts.ready += sign * ready
            counts.scheduled += sign * scheduled
            if owner_uid:
                self.owner_uids[name] = owner_uid
            self.changed.add(name)

    def objects(self, t: float, rv: int, *, only_changed: bool = False) -> dict[str, dict]:
        """The objects of the workloads (those whose counts changed since the last call when
        ``only_changed``), by resource and key; none before the workloads are applied."""
        if t < self.applied_at:
            return {}
        if not self.exist:
            self.exist, only_changed = True, False
        names = self.changed if only_changed else set(self.specs)
        self.changed = set()
        out: dict[str, dict] = {resource: {} for resource in WORKLOAD_RESOURCES}
        now = self.created + timedelta(seconds=t - self.applied_at)
        for name in sorted(names):
            spec, counts = self.specs[name], self.counts[name]
            if spec["kind"] == "DaemonSet":
                out["daemonsets"][(NAMESPACE, name)] = self.daemonset(spec, counts, rv)
            else:
                out["deployments"][(NAMESPACE, name)] = self.deployment(spec, counts, rv, now)
                replicaset = self.replicaset(spec, counts, rv)
                out["replicasets"][(NAMESPACE, replicaset["metadata"]["name"])] = replicaset
        return {resource: found for resource, found in out.items() if found}

    # -- the objects ----------------------------------------------------------------------------

    def _uid(self, kind: str, name: str) -> str:
        return str(uuid.uuid5(self.uid_space, f"{kind}/{name}"))

    def _meta(self, name: str, uid: str, rv: int) -> dict:
        return {"name": name, "namespace": NAMESPACE, "uid": uid, "resourceVersion": str(rv), "generation": 1,
                "creationTimestamp": self.created.strftime("%Y-%m-%dT%H:%M:%SZ"), "labels": {"app": name}}

    def replicaset_name(self, name: str) -> str:
        """``simulation/workloads.py`` ``ReplicaSetController``: the name its pods carry as owner."""
        rng = random.Random(f"{self.seed}:replicaset:{name}")
        return f"{name}-{''.join(rng.choice('0123456789abcdef') for _ in range(9))}"

    def deployment(self, spec: dict, counts: Counts, rv: int, now: datetime) -> dict:
        name, replicas = spec["name"], spec["replicas"]
        max_unavailable = replicas * 25 // 100  # the default strategy's maxUnavailable, 25% rounded down
        available = counts.ready >= replicas - max_unavailable
        if counts.available != available:
            counts.available_since = self.created if counts.available is None else now
            counts.available = available
        since = (counts.available_since or self.created).strftime("%Y-%m-%dT%H:%M:%SZ")
        created = self.created.strftime("%Y-%m-%dT%H:%M:%SZ")
        meta = self._meta(name, self._uid("Deployment", name), rv)
        meta["annotations"] = {"deployment.kubernetes.io/revision": "1"}
        status = _omit_zero({"observedGeneration": 1, "replicas": counts.active, "updatedReplicas": counts.active,
                             "readyReplicas": counts.ready, "availableReplicas": counts.ready,
                             "unavailableReplicas": max(0, replicas - counts.ready)})
        status["conditions"] = [
            {"type": "Available", "status": "True" if available else "False", "lastUpdateTime": since,
             "lastTransitionTime": since,
             "reason": "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
             "message": f"Deployment {'has' if available else 'does not have'} minimum availability."},
            {"type": "Progressing", "status": "True", "lastUpdateTime": created, "lastTransitionTime": created,
             "reason": "NewReplicaSetAvailable",
             "message": f'ReplicaSet "{self.replicaset_name(name)}" has successfully progressed.'},
        ]
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
                "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                         "template": _template(spec),
                         "strategy": {"type": "RollingUpdate",
                                      "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
                         "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
                "status": status}

    def replicaset(self, spec: dict, counts: Counts, rv: int) -> dict:
        name = spec["name"]
        rs_name = self.replicaset_name(name)
        meta = self._meta(rs_name, self.owner_uids.get(name) or self._uid("ReplicaSet", rs_name), rv)
        meta["labels"] = {"app": name}
        surge = -(-spec["replicas"] // 4)  # maxSurge 25%, rounded up
        meta["annotations"] = {"deployment.kubernetes.io/desired-replicas": str(spec["replicas"]),
                               "deployment.kubernetes.io/max-replicas": str(spec["replicas"] + surge),
                               "deployment.kubernetes.io/revision": "1"}
        meta["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": name,
                                    "uid": self._uid("Deployment", name), "controller": True,
                                    "blockOwnerDeletion": True}]
        status = {"replicas": counts.active,  # the one count without omitempty
                  **_omit_zero({"fullyLabeledReplicas": counts.active, "readyReplicas": counts.ready,
                                "availableReplicas": counts.ready}),
                  "observedGeneration": 1}
        return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta,
                "spec": {"replicas": spec["replicas"], "selector": {"matchLabels": {"app": name}},
                         "template": _template(spec)},
                "status": status}

    def daemonset(self, spec: dict, counts: Counts, rv: int) -> dict:
        name = spec["name"]
        meta = self._meta(name, self.owner_uids.get(name) or self._uid("DaemonSet", name), rv)
        meta["annotations"] = {"deprecated.daemonset.template.generation": "1"}
        status = {"currentNumberScheduled": counts.scheduled, "numberMisscheduled": 0,
                  "desiredNumberScheduled": counts.scheduled, "numberReady": counts.ready,
                  "observedGeneration": 1,
                  **_omit_zero({"updatedNumberScheduled": counts.scheduled, "numberAvailable": counts.ready,
                                "numberUnavailable": max(0, counts.scheduled - counts.ready)})}
        return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
                "spec": {"selector": {"matchLabels": {"app": name}}, "template": _template(spec),
                         "updateStrategy": {"type": "RollingUpdate",
                                            "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}},
                         "revisionHistoryLimit": 10},
                "status": status}


def _template(spec: dict) -> dict:
    """The pod template: what ``simulation/workloads.py`` ``new_pod`` and ``objects.pod_to_k8s`` give a pod."""
    pod: dict = {"containers": [{"name": spec["name"], "image": f"registry.example/{spec['name']}:1.0"}],
                 "terminationGracePeriodSeconds": spec.get("terminationGracePeriodSeconds", 30)}
    if spec.get("nodeSelector"):
        pod["nodeSelector"] = dict(spec["nodeSelector"])
    if spec.get("tolerations"):
        pod["tolerations"] = [dict(t) for t in spec["tolerations"]]
    if spec.get("priorityClassName"):
        pod["priorityClassName"] = spec["priorityClassName"]
    return {"metadata": {"labels": {"app": spec["name"]}}, "spec": pod}


def _omit_zero(counts: dict) -> dict:
    """Status counts are ``omitempty`` in apps/v1: a zero is left out, as the real server does."""
    return {key: value for key, value in counts.items() if value}
