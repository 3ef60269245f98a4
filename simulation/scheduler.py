"""kube-scheduler, reduced to what this flow needs (docs/kubernetes-node-health.md §5.1).

Filters: TaintToleration (untolerated NoSchedule or NoExecute), NodeUnschedulable,
nodeSelector, DaemonSet node affinity, and the node's pod capacity (110). Score: the feasible
node with the fewest pods, ties broken by name. That score is the simulation's choice: the real
default profile adds up several score plugins (spreading, resource balance, image locality...) and
picks at random among the nodes with the best total (selectHost in
pkg/scheduler/schedule_one.go). Unschedulable pods are retried whenever a node changes.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from .apiserver import Actor
from .objects import NO_EXECUTE, NO_SCHEDULE, TAINT_UNSCHEDULABLE, Node, Pod, Taint, set_pod_condition

if TYPE_CHECKING:
    from .context import Context, PodsOnNode

LANE = "kube-scheduler"
MAX_PODS = 110
UNSCHEDULABLE = Taint(TAINT_UNSCHEDULABLE, NO_SCHEDULE)

# What TaintToleration and NodeUnschedulable look at: the node's NoSchedule and NoExecute
# taints without their timeAdded, in the node's order, and spec.unschedulable.
Restrictions = tuple[tuple[Taint, ...], bool]


def restrictions(node: Node) -> Restrictions:
    return (tuple(Taint(t.key, t.effect, t.value) for t in node.taints if t.effect in (NO_SCHEDULE, NO_EXECUTE)),
            node.unschedulable)


class Scheduler:
    def __init__(self, ctx: Context, pods_on_node: PodsOnNode) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.actor = Actor("system:kube-scheduler", LANE)
        self.pods_on_node = pods_on_node
        self.pending: dict[str, Pod] = {}
        self.counts: dict[str, int] = {}  # node -> pods bound to it (assumed ones included)
        self.placed: dict[str, str] = {}  # pod key -> node it is counted on
        # Nodes grouped by their restrictions, each group a (count, node) heap (stale entries
        # skipped): a pod that does not tolerate a group's taints skips the whole group instead
        # of looking at each of its nodes (a zone outage taints a third of the cluster; at
        # start-up every node is not-ready for a while).
        self._group_of: dict[str, Restrictions] = {}
        self._groups: dict[Restrictions, list[tuple[int, str]]] = {}
        self.last_failure: dict[str, str] = {}
        self._queued = False
        self.api.watch("pods", LANE, self._on_pod)
        self.api.watch("nodes", LANE, self._on_node)

    # -- the scheduler cache -----------------------------------------------------------------

    def _set_count(self, node: str, delta: int) -> None:
        if node in self.counts:
            self.counts[node] += delta
            self._push(node)

    def _push(self, node: str) -> None:
        heapq.heappush(self._groups[self._group_of[node]], (self.counts[node], node))

    def _join_group(self, node: Node) -> None:
        name, group = node.metadata.name, restrictions(node)
        if self._group_of.get(name) != group:
            self._group_of[name] = group
            self._groups.setdefault(group, [])
            self._push(name)

    def _place(self, key: str, node: str | None) -> None:
        before = self.placed.pop(key, None)
        if before is not None:
            self._set_count(before, -1)
        if node is not None:
            self.placed[key] = node
            self._set_count(node, +1)

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        if new is None:
            if old is not None:
                self.pending.pop(old.key, None)
                self.last_failure.pop(old.key, None)
                self._place(old.key, None)
                self._requeue()  # a freed slot can help
            return
        if new.node_name:
            self.pending.pop(new.key, None)
            self.last_failure.pop(new.key, None)
            if new.terminal:
                self._place(new.key, None)
            elif self.placed.get(new.key) != new.node_name:
                self._place(new.key, new.node_name)
            return
        if new.metadata.deletion_timestamp is None and not new.terminal:
            self.pending[new.key] = new
            self._requeue()

    def _on_node(self, old: Node | None, new: Node | None) -> None:
        if new is not None:
            if new.metadata.name not in self.counts:
                self.counts[new.metadata.name] = sum(1 for n in self.placed.values() if n == new.metadata.name)
            self._join_group(new)
        elif old is not None:
            self.counts.pop(old.metadata.name, None)
            self._group_of.pop(old.metadata.name, None)
        if self.pending and (old is None or new is None or old.taints != new.taints
                             or old.unschedulable != new.unschedulable):
            self._requeue()

    def _requeue(self) -> None:
        if not self._queued and self.pending:
            self._queued = True
            self.ctx.engine.call_later(0, self._schedule_pending)

    def _schedule_pending(self) -> None:
        self._queued = False
        if sum(len(heap) for heap in self._groups.values()) > 4 * len(self.counts) + 64:
            self._groups = {}
            for name, count in self.counts.items():
                self._groups.setdefault(self._group_of[name], []).append((count, name))
            for heap in self._groups.values():
                heapq.heapify(heap)
        for key in sorted(self.pending, key=lambda k: (self.pending[k].metadata.creation, k)):
            pod = self.pending.get(key)
            if pod is not None:
                self.schedule_one(pod)

    # -- one pod ----------------------------------------------------------------------------------

    def schedule_one(self, pod: Pod) -> None:
        """The feasible node with the fewest pods (ties by name) wins."""
        target = None
        pinned = pod.node_selector.get("metadata.name")  # a DaemonSet pod can only go to its node
        if pinned is not None:
            node = self.api.cached("nodes", pinned)
            if node is not None and not self._filter(pod, node):
                target = pinned
        else:
            best = None
            for group, heap in self._groups.items():
                if heap and not self._restricted(pod, group):
                    best = self._first_feasible(pod, group, heap, best) or best
            target = best[1] if best is not None else None
        if target is None:
            nodes = sorted(self.api.cache["nodes"].values(), key=lambda n: n.metadata.name)
            reasons: dict[str, int] = {}
            for node in nodes:
                why = self._filter(pod, node)
                reasons[why] = reasons.get(why, 0) + 1
            self._unschedulable(pod, len(nodes), reasons)
            return
        now = self.ctx.engine.now
        resp = self.api.patch(self.actor, "pods", pod.metadata.name,
                              lambda p: p.evolve(node_name=target, conditions=set_pod_condition(
                                  p.conditions, "PodScheduled", "True", now)),
                              namespace=pod.metadata.namespace, subresource="binding", verb="create")
        if resp.ok:
            self.pending.pop(pod.key, None)
            self._place(pod.key, target)  # assumed until the watch confirms it
            self.api.record_event(self.actor, pod, "Scheduled",
                                  f"Successfully assigned {pod.key} to {target}", source_component="default-scheduler")

    def _first_feasible(self, pod: Pod, group: Restrictions, heap: list[tuple[int, str]],
                        better: tuple[int, str] | None) -> tuple[int, str] | None:
        """Walk one group from the fewest pods up (ties by name), stopping at `better`."""
        found = None
        popped: list[tuple[int, str]] = []
        while heap and (better is None or heap[0] < better):
            entry = heapq.heappop(heap)
            count, name = entry
            if self.counts.get(name) != count or self._group_of.get(name) != group or (popped and popped[-1] == entry):
                continue  # stale entry (or a duplicate of the one just seen)
            popped.append(entry)
            node = self.api.cached("nodes", name)
            if node is not None and not self._filter(pod, node):
                found = entry
                break
        for entry in popped:
            heapq.heappush(heap, entry)
        return found

    def _filter(self, pod: Pod, node: Node) -> str:
        name = node.metadata.name
        if pod.owner_kind == "DaemonSet" and pod.node_selector.get("metadata.name", name) != name:
            return "didn't match Pod's node affinity/selector"
        for k, v in pod.node_selector.items():
            if k != "metadata.name" and node.metadata.labels.get(k) != v:
                return "didn't match Pod's node affinity/selector"
        why = self._restricted(pod, self._group_of.get(node.metadata.name) or restrictions(node))
        if why:
            return why
        if self.counts.get(node.metadata.name, 0) >= MAX_PODS:
            return "Too many pods"
        return ""

    @staticmethod
    def _restricted(pod: Pod, group: Restrictions) -> str:
        """NodeUnschedulable and TaintToleration: why the pod cannot go to such a node ("" if it can)."""
        taints, unschedulable = group
        if unschedulable and not any(t.tolerates(UNSCHEDULABLE) for t in pod.tolerations):
            return "were unschedulable"
        for taint in taints:
            if not any(t.tolerates(taint) for t in pod.tolerations):
                return f"had untolerated taint {{{taint.key}: {taint.value}}}"
        return ""

    def _unschedulable(self, pod: Pod, total: int, reasons: dict[str, int]) -> None:
        detail = ", ".join(f"{n} node(s) {why}" if not why.startswith("Too") else f"{n} {why}"
                           for why, n in sorted(reasons.items()))
        if total:
            message = (f"0/{total} nodes are available: {detail}. preemption: 0/{total} nodes are available: "
                       f"{total} Preemption is not helpful for scheduling.")
        else:
            message = "no nodes available to schedule pods"
        if self.last_failure.get(pod.key) == message:
            return
        self.last_failure[pod.key] = message
        now = self.ctx.engine.now
        self.api.patch(self.actor, "pods", pod.metadata.name,
                       lambda p: p.evolve(conditions=set_pod_condition(p.conditions, "PodScheduled", "False", now,
                                                                         "Unschedulable", message)),
                       namespace=pod.metadata.namespace, subresource="status")
        self.api.record_event(self.actor, pod, "FailedScheduling", message, type_="Warning",
                              source_component="default-scheduler")
        self.ctx.recorder.decision(LANE, "scheduler.unschedulable", None, {"reasons": reasons, "nodes": total},
                                   "pod stays Pending", message,
                                   "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go",
                                   pod=pod.metadata.name)
