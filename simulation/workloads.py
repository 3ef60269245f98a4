"""ReplicaSet (behind each Deployment) and DaemonSet controllers (docs/kubernetes-node-health.md §5.3, §4.5).

A ReplicaSet counts only active pods (not terminal, no deletionTimestamp): a taint-deleted
pod that hangs in Terminating is replaced at once; a NotReady pod that still runs is not.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any

from .apiserver import Actor
from .objects import (
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_DISK_PRESSURE,
    TAINT_MEMORY_PRESSURE,
    TAINT_NOT_READY,
    TAINT_PID_PRESSURE,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
    Node,
    ObjectMeta,
    Pod,
    Toleration,
)

if TYPE_CHECKING:
    from .context import Context, PodsOnNode

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand


def random_suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice(ALPHANUMS) for _ in range(n))


def workload_tolerations(spec: dict[str, Any]) -> tuple[Toleration, ...]:
    return tuple(Toleration(key=t.get("key", ""), operator=t.get("operator", "Equal"), value=t.get("value", ""),
                            effect=t.get("effect", ""), toleration_seconds=t.get("tolerationSeconds"))
                 for t in spec.get("tolerations", []))


def new_pod(name: str, spec: dict[str, Any], owner_kind: str, owner_name: str, tolerations: tuple[Toleration, ...],
            node_selector: dict[str, str], owner_uid: str) -> Pod:
    labels = {"app": spec["name"]}
    return Pod(
        metadata=ObjectMeta(name=name, namespace="default", uid="", resource_version=0, creation=0, labels=labels,
                            generate_name=name.rsplit("-", 1)[0] + "-",
                            owner_references=({"apiVersion": "apps/v1", "kind": owner_kind, "name": owner_name,
                                               "uid": owner_uid, "controller": True, "blockOwnerDeletion": True},)),
        tolerations=tolerations,
        node_selector=node_selector,
        termination_grace_period_seconds=spec.get("terminationGracePeriodSeconds", 30),
        priority_class_name=spec.get("priorityClassName", ""),
        owner_kind=owner_kind,
        owner_name=spec["name"],
    )


class ReplicaSetController:
    """One per Deployment: keeps `replicas` active pods."""

    def __init__(self, ctx: Context, spec: dict[str, Any]) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.spec = spec
        self.rng = ctx.rng(f"replicaset:{spec['name']}")
        self.name = f"{spec['name']}-{''.join(self.rng.choice('0123456789abcdef') for _ in range(9))}"
        self.uid = ctx.api.uid()
        self.actor = Actor("system:serviceaccount:kube-system:replicaset-controller", "replicaset-controller")
        self.tolerations = workload_tolerations(spec)
        self.active: set[str] = set()
        self._queued = False
        self.api.watch("pods", "replicaset-controller", self._on_pod)

    def _mine(self, pod: Pod) -> bool:
        refs = pod.metadata.owner_references
        return bool(refs) and refs[0]["uid"] == self.uid

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        pod = new or old
        if pod is None or not self._mine(pod):
            return
        if new is not None and new.active:
            self.active.add(new.key)
        else:
            self.active.discard(pod.key)
        self.queue_sync()

    def queue_sync(self) -> None:
        if not self._queued:
            self._queued = True
            self.ctx.engine.call_later(0, self.sync)

    def sync(self) -> None:
        self._queued = False
        missing = self.spec["replicas"] - len(self.active)
        for _ in range(max(0, missing)):
            name = f"{self.name}-{random_suffix(self.rng)}"
            pod = new_pod(name, self.spec, "ReplicaSet", self.name, self.tolerations, self.spec.get("nodeSelector", {}),
                          self.uid)
            resp = self.api.create(self.actor, pod)
            if resp.ok:
                self.active.add(resp.obj.key)  # counted at once: the watch only confirms it


DAEMONSET_TOLERATIONS = (  # pkg/controller/daemon/util AddOrUpdateDaemonPodTolerations
    Toleration(TAINT_NOT_READY, "Exists", "", NO_EXECUTE),
    Toleration(TAINT_UNREACHABLE, "Exists", "", NO_EXECUTE),
    Toleration(TAINT_DISK_PRESSURE, "Exists", "", NO_SCHEDULE),
    Toleration(TAINT_MEMORY_PRESSURE, "Exists", "", NO_SCHEDULE),
    Toleration(TAINT_PID_PRESSURE, "Exists", "", NO_SCHEDULE),
    Toleration(TAINT_UNSCHEDULABLE, "Exists", "", NO_SCHEDULE),
)


class DaemonSetController:
    """One pod per eligible node; failed pods are deleted and replaced."""

    def __init__(self, ctx: Context, spec: dict[str, Any], pods_on_node: PodsOnNode) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.spec = spec
        self.rng = ctx.rng(f"daemonset:{spec['name']}")
        self.uid = ctx.api.uid()
        self.actor = Actor("system:serviceaccount:kube-system:daemon-set-controller", "daemonset-controller")
        own = workload_tolerations(spec)
        self.tolerations = own + tuple(t for t in DAEMONSET_TOLERATIONS
                                       if not any(o.key == t.key and o.effect == t.effect for o in own))
        self.pods_on_node = pods_on_node
        self.by_node: dict[str, str] = {}  # node -> pod key of the live daemon pod
        self._dirty: set[str] = set()
        self._queued = False
        self.api.watch("nodes", "daemonset-controller", self._on_node)
        self.api.watch("pods", "daemonset-controller", self._on_pod)
        for name in sorted(n.metadata.name for n in self.api.cache["nodes"].values()):
            self._queue(name)  # the informer's initial list

    def _on_node(self, old: Node | None, new: Node | None) -> None:
        node = new or old
        if node is not None:
            self._queue(node.metadata.name)

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        pod = new or old
        if pod is None or not pod.metadata.owner_references or pod.metadata.owner_references[0]["uid"] != self.uid:
            return
        target = pod.node_selector.get("metadata.name", pod.node_name)
        if (new is None or not new.active) and self.by_node.get(target) == pod.key:
            del self.by_node[target]
        self._queue(target)

    def _queue(self, node: str) -> None:
        self._dirty.add(node)
        if not self._queued:
            self._queued = True
            self.ctx.engine.call_later(0, self.sync)

    def should_run(self, node: Node) -> bool:
        """nodeShouldRunDaemonPod: selector matches and every NoSchedule/NoExecute taint is tolerated."""
        for k, v in self.spec.get("nodeSelector", {}).items():
            if node.metadata.labels.get(k) != v:
                return False
        return all(any(t.tolerates(taint) for t in self.tolerations)
                   for taint in node.taints if taint.effect in (NO_SCHEDULE, NO_EXECUTE))

    def sync(self) -> None:
        self._queued = False
        dirty, self._dirty = sorted(self._dirty), set()
        for name in dirty:
            node = self.api.cached("nodes", name)
            mine = [p for p in self.pods_on_node(name).values()
                    if p.metadata.owner_references and p.metadata.owner_references[0]["uid"] == self.uid]
            for pod in mine:
                if pod.phase == "Failed" and pod.metadata.deletion_timestamp is None:
                    self.api.delete(self.actor, "pods", pod.metadata.name, namespace="default", grace_seconds=0)
            if node is None or name in self.by_node:
                continue
            if any(p.active for p in mine):
                continue
            if not self.should_run(node):
                continue
            pod_name = f"{self.spec['name']}-{random_suffix(self.rng)}"
            selector = dict(self.spec.get("nodeSelector", {}))
            selector["metadata.name"] = name  # stands for the node affinity on metadata.name
            pod = new_pod(pod_name, self.spec, "DaemonSet", self.spec["name"], self.tolerations, selector, self.uid)
            resp = self.api.create(self.actor, pod)
            if resp.ok:
                self.by_node[name] = resp.obj.key
