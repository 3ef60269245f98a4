"""kube-scheduler, reduced to what this flow needs (reference 5.1).

Filters: TaintToleration (untolerated NoSchedule or NoExecute), NodeUnschedulable,
nodeSelector, DaemonSet node affinity, and the node's pod capacity (110). Score: the feasible
node with the fewest pods, ties broken by name. Unschedulable pods are retried whenever a node
changes.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

from .apiserver import Actor
from .objects import NO_EXECUTE, NO_SCHEDULE, TAINT_UNSCHEDULABLE, Node, Pod, Taint, evolve, set_pod_condition

if TYPE_CHECKING:
    from .context import Context

LANE = "kube-scheduler"
MAX_PODS = 110


class Scheduler:
    def __init__(self, ctx: Context, pods_on_node) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.actor = Actor("system:kube-scheduler", LANE)
        self.pods_on_node = pods_on_node
        self.pending: dict[str, Pod] = {}
        self.counts: dict[str, int] = {}  # node -> pods bound to it (assumed ones included)
        self.placed: dict[str, str] = {}  # pod key -> node it is counted on
        self._candidates: list[tuple[int, str]] = []  # (count, node) heap; stale entries skipped
        self.last_failure: dict[str, str] = {}
        self._queued = False
        self.api.watch("pods", LANE, self._on_pod)
        self.api.watch("nodes", LANE, self._on_node)

    # -- the scheduler cache -----------------------------------------------------------------

    def _set_count(self, node: str, delta: int) -> None:
        if node in self.counts:
            self.counts[node] += delta
            heapq.heappush(self._candidates, (self.counts[node], node))

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
        if new is not None and new.metadata.name not in self.counts:
            self.counts[new.metadata.name] = sum(1 for n in self.placed.values() if n == new.metadata.name)
            heapq.heappush(self._candidates, (self.counts[new.metadata.name], new.metadata.name))
        elif new is None and old is not None:
            self.counts.pop(old.metadata.name, None)
        if self.pending and (old is None or new is None or old.taints != new.taints
                             or old.unschedulable != new.unschedulable):
            self._requeue()

    def _requeue(self) -> None:
        if not self._queued and self.pending:
            self._queued = True
            self.ctx.engine.call_later(0, self._schedule_pending)

    def _schedule_pending(self) -> None:
        self._queued = False
        if len(self._candidates) > 4 * len(self.counts) + 64:
            self._candidates = [(c, n) for n, c in self.counts.items()]
            heapq.heapify(self._candidates)
        for key in sorted(self.pending, key=lambda k: (self.pending[k].metadata.creation, k)):
            pod = self.pending.get(key)
            if pod is not None:
                self.schedule_one(pod)

    # -- one pod ----------------------------------------------------------------------------------

    def schedule_one(self, pod: Pod) -> None:
        """Walk the nodes from the fewest pods up (ties by name); the first feasible one wins."""
        target = None
        popped: list[tuple[int, str]] = []
        pinned = pod.node_selector.get("metadata.name")  # a DaemonSet pod can only go to its node
        if pinned is not None:
            node = self.api.cached("nodes", pinned)
            if node is not None and not self._filter(pod, node):
                target = pinned
        while target is None and pinned is None and self._candidates:
            count, name = heapq.heappop(self._candidates)
            if self.counts.get(name) != count or (popped and popped[-1] == (count, name)):
                continue  # stale entry (or a duplicate of the one just seen)
            popped.append((count, name))
            node = self.api.cached("nodes", name)
            if node is not None and not self._filter(pod, node):
                target = name
                break
        for entry in popped:
            if entry[1] != target:
                heapq.heappush(self._candidates, entry)
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
                              lambda p: evolve(p, node_name=target,
                                                conditions=set_pod_condition(p.conditions, "PodScheduled", "True", now)),
                              namespace=pod.metadata.namespace, subresource="binding", verb="create")
        if resp.ok:
            self.pending.pop(pod.key, None)
            self._place(pod.key, target)  # assumed until the watch confirms it
            self.api.record_event(self.actor, pod, "Scheduled",
                                  f"Successfully assigned {pod.key} to {target}", source_component="default-scheduler")
        else:
            heapq.heappush(self._candidates, (self.counts.get(target, 0), target))

    def _filter(self, pod: Pod, node: Node) -> str:
        if pod.owner_kind == "DaemonSet" and pod.node_selector.get("metadata.name", node.metadata.name) != node.metadata.name:
            return "didn't match Pod's node affinity/selector"
        for k, v in pod.node_selector.items():
            if k != "metadata.name" and node.metadata.labels.get(k) != v:
                return "didn't match Pod's node affinity/selector"
        if node.unschedulable and not any(t.tolerates(Taint(TAINT_UNSCHEDULABLE, NO_SCHEDULE)) for t in pod.tolerations):
            return "were unschedulable"
        for taint in node.taints:
            if taint.effect in (NO_SCHEDULE, NO_EXECUTE) and not any(t.tolerates(taint) for t in pod.tolerations):
                return f"had untolerated taint {{{taint.key}: {taint.value}}}"
        if self.counts.get(node.metadata.name, 0) >= MAX_PODS:
            return "Too many pods"
        return ""

    def _unschedulable(self, pod: Pod, total: int, reasons: dict[str, int]) -> None:
        detail = ", ".join(f"{n} node(s) {why}" if not why.startswith("Too") else f"{n} {why}"
                           for why, n in sorted(reasons.items()))
        message = (f"0/{total} nodes are available: {detail}. preemption: 0/{total} nodes are available: "
                   f"{total} Preemption is not helpful for scheduling.") if total else "no nodes available to schedule pods"
        if self.last_failure.get(pod.key) == message:
            return
        self.last_failure[pod.key] = message
        now = self.ctx.engine.now
        self.api.patch(self.actor, "pods", pod.metadata.name,
                       lambda p: evolve(p, conditions=set_pod_condition(p.conditions, "PodScheduled", "False", now,
                                                                         "Unschedulable", message)),
                       namespace=pod.metadata.namespace, subresource="status")
        self.api.record_event(self.actor, pod, "FailedScheduling", message, type_="Warning",
                              source_component="default-scheduler")
        self.ctx.recorder.decision(LANE, "scheduler.unschedulable", None, {"reasons": reasons, "nodes": total},
                                   "pod stays Pending", message,
                                   "pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go", pod=pod.metadata.name)
