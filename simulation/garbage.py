"""Clean-up controllers that finish what a vanished node leaves behind: the garbage collector
(the Lease owned by a deleted Node), PodGC (pods bound to a Node that no longer exists, after a
40 s quarantine; Terminating pods on a not-Ready node with the out-of-service taint) and the cloud
node lifecycle controller (deletes the Node of a terminated instance once it is not Ready)."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from .apiserver import Actor
from .clock import US
from .objects import TAINT_OUT_OF_SERVICE, Node, Pod, set_pod_condition

if TYPE_CHECKING:
    from .context import Context, PodsOnNode
    from .engine import Timer

GC_DELAY = 1 * US
PODGC_CHECK_PERIOD = 20 * US  # gcCheckPeriod (pkg/controller/podgc/gc_controller.go)
PODGC_QUARANTINE = 40 * US  # quarantineTime (same file)
PODGC_SOURCE = "pkg/controller/podgc/gc_controller.go"
CLOUD_MONITOR_PERIOD = 5 * US


class GarbageCollector:
    """Deletes dependents whose owner is gone; here: kube-node-lease/<node> after its Node."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.actor = Actor("system:serviceaccount:kube-system:generic-garbage-collector", "garbage-collector")
        ctx.api.watch("nodes", "garbage-collector", self._on_node)

    def _on_node(self, old: Node | None, new: Node | None) -> None:
        if new is None and old is not None:
            self.ctx.engine.call_later(GC_DELAY, self._collect, old.metadata.name, old.metadata.uid)

    def _collect(self, name: str, uid: str) -> None:
        lease = self.ctx.api.current("leases", name, "kube-node-lease")
        if lease is not None and any(r.get("uid") == uid for r in lease.metadata.owner_references):
            self.ctx.api.delete(self.actor, "leases", name, namespace="kube-node-lease")


class PodGarbageCollector:
    """PodGC's gc pass runs every 20 s (gcCheckPeriod) on the grid from the controller's start. Its
    gcOrphaned and gcTerminating parts only act after a Node was deleted or got the out-of-service
    taint, so a pass is scheduled on that grid only then: the other passes would do nothing."""

    def __init__(self, ctx: Context, pods_on_node: PodsOnNode) -> None:
        self.ctx = ctx
        self.pods_on_node = pods_on_node
        self.actor = Actor("system:serviceaccount:kube-system:pod-garbage-collector", "pod-garbage-collector")
        self._terminating_pass: Timer | None = None
        ctx.api.watch("nodes", "pod-garbage-collector", self._on_node)

    def _next_tick(self) -> int:
        now = self.ctx.engine.now
        return -(-(now + 1) // PODGC_CHECK_PERIOD) * PODGC_CHECK_PERIOD

    def _on_node(self, old: Node | None, new: Node | None) -> None:
        if new is not None and new.taints and (self._terminating_pass is None or not self._terminating_pass.active):
            for t in new.taints:
                if t.key == TAINT_OUT_OF_SERVICE:
                    self._terminating_pass = self.ctx.engine.call_at(self._next_tick(), self._gc_terminating)
                    break
        if new is None and old is not None:
            # the node is quarantined for 40 s, then checked at the next 20 s gc pass
            when = self.ctx.engine.now + PODGC_QUARANTINE
            when = -(-when // PODGC_CHECK_PERIOD) * PODGC_CHECK_PERIOD
            self.ctx.engine.call_at(when, self._gc_orphaned, old.metadata.name)

    def _gc_orphaned(self, node: str) -> None:
        api = self.ctx.api
        if api.get(self.actor, "nodes", node, record=False).ok:
            return
        for pod in sorted(self.pods_on_node(node).values(), key=lambda p: p.metadata.name):
            now = self.ctx.engine.now
            if not pod.terminal:
                api.patch(self.actor, "pods", pod.metadata.name, partial(_failed_by_podgc, now=now),
                          namespace=pod.metadata.namespace, subresource="status")
            api.delete(self.actor, "pods", pod.metadata.name, namespace=pod.metadata.namespace, grace_seconds=0)
        self.ctx.recorder.decision("pod-garbage-collector", "podgc.orphaned", node, {"quarantine": 40},
                                   "orphaned pods force-deleted",
                                   "The pods' Node no longer exists (checked after a 40 s quarantine): PodGC deletes "
                                   "them with grace 0.",
                                   PODGC_SOURCE)


    def _gc_terminating(self) -> None:
        """gcTerminating (NodeOutOfServiceVolumeDetach, on in every version modelled): a pod with a
        deletionTimestamp on a node that is not Ready and has the out-of-service taint is patched to
        phase Failed and deleted with grace 0, oldest first (byEvictionAndCreationTimestamp)."""
        self._terminating_pass = None
        api = self.ctx.api
        tainted = []
        victims: list[Pod] = []
        for name in api.node_names():
            node = api.cached("nodes", name)
            if node is None or not any(t.key == TAINT_OUT_OF_SERVICE for t in node.taints):
                continue
            tainted.append(name)
            if node.ready_status() == "True":  # nodeutil.IsNodeReady
                continue
            victims.extend(p for p in self.pods_on_node(name).values() if p.metadata.deletion_timestamp is not None)
        victims.sort(key=lambda p: (p.reason != "Evicted", p.metadata.creation, p.metadata.name))
        for pod in victims:
            if not pod.terminal:
                api.patch(self.actor, "pods", pod.metadata.name, lambda p: p.evolve(phase="Failed"),
                          namespace=pod.metadata.namespace, subresource="status")
            api.delete(self.actor, "pods", pod.metadata.name, namespace=pod.metadata.namespace, grace_seconds=0)
            self.ctx.recorder.decision("pod-garbage-collector", "podgc.terminating-out-of-service", pod.node_name,
                                       {"taint": f"{TAINT_OUT_OF_SERVICE}", "nodeReady": False,
                                        "deletionTimestamp": (pod.metadata.deletion_timestamp or 0) / US,
                                        "gcCheckPeriod": PODGC_CHECK_PERIOD / US,
                                        "nodeOutOfServiceVolumeDetach": self.ctx.profile.out_of_service_stage},
                                       f"{pod.metadata.name} force-deleted",
                                       f"{pod.metadata.name} was Terminating on {pod.node_name}, which is not Ready "
                                       "and carries the node.kubernetes.io/out-of-service taint: PodGC marks it "
                                       "Failed and deletes it with grace 0, without waiting for the kubelet.",
                                       PODGC_SOURCE, pod=pod.metadata.name)
        if tainted:
            self._terminating_pass = self.ctx.engine.call_at(self._next_tick(), self._gc_terminating)


class CloudNodeLifecycleController:
    """cloud-controller-manager: a Node that is not Ready and whose instance is gone is deleted."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.actor = Actor("system:serviceaccount:kube-system:cloud-node-lifecycle-controller",
                           "cloud-node-lifecycle-controller")
        self.terminated: set[str] = set()
        self._timer: Timer | None = None

    def instance_terminated(self, node: str) -> None:
        self.terminated.add(node)
        if self._timer is None or not self._timer.active:
            now = self.ctx.engine.now
            self._timer = self.ctx.engine.call_at(-(-(now + 1) // CLOUD_MONITOR_PERIOD) * CLOUD_MONITOR_PERIOD,
                                                  self._monitor_nodes)

    def _monitor_nodes(self) -> None:
        api = self.ctx.api
        for name in sorted(self.terminated):
            node = api.cached("nodes", name)
            if node is None:
                self.terminated.discard(name)
                continue
            if node.ready_status() == "True":
                continue
            api.record_event(self.actor, node, "DeletingNode",
                             f"Deleting node {name} because it does not exist in the cloud provider",
                             source_component="cloud-node-lifecycle-controller")
            api.delete(self.actor, "nodes", name)
            self.terminated.discard(name)
            self.ctx.recorder.decision("cloud-node-lifecycle-controller", "cloud.delete-node", name,
                                       {"ready": node.ready_status()}, "Node deleted",
                                       "The node is not Ready and the cloud provider says its instance no longer "
                                       "exists.",
                                       "staging/src/k8s.io/cloud-provider/controllers/nodelifecycle/node_lifecycle_controller.go")
        if self.terminated:
            self._timer = self.ctx.engine.call_later(CLOUD_MONITOR_PERIOD, self._monitor_nodes)


def _failed_by_podgc(pod: Pod, now: int) -> Pod:
    """The status patch before PodGC's force delete: phase Failed, DisruptionTarget (DeletionByPodGC)."""
    return pod.evolve(phase="Failed", conditions=set_pod_condition(pod.conditions, "DisruptionTarget", "True", now,
                                                                   "DeletionByPodGC", "PodGC: node no longer exists"))
