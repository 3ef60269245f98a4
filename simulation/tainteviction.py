"""Taint eviction controller (pkg/controller/tainteviction/taint_eviction.go; docs/kubernetes-node-health.md §4).

Per pod: pick the first toleration that tolerates each NoExecute taint; any untolerated taint
deletes at once; otherwise the minimum tolerationSeconds over the picked ones, counted from
when this controller observes the taint. An existing schedule is kept as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .apiserver import Actor
from .clock import MS, US
from .engine import Timer
from .objects import NO_EXECUTE, Node, Pod, PodCondition, Taint, Toleration, set_pod_condition

if TYPE_CHECKING:
    from .context import Context, PodsOnNode

LANE = "taint-eviction-controller"
RETRIES = 5


@dataclass
class ScheduledEviction:
    node: str
    created_at: int
    fire_at: int
    timer: Timer


def get_matching_tolerations(taints: tuple[Taint, ...],
                             tolerations: tuple[Toleration, ...]) -> tuple[bool, list[Toleration]]:
    """v1helper.GetMatchingTolerations: the FIRST toleration (spec order) per taint."""
    if not taints:
        return True, []
    used = []
    for taint in taints:
        match = next((t for t in tolerations if t.tolerates(taint)), None)
        if match is None:
            return False, []
        used.append(match)
    return True, used


def get_min_toleration_time(used: list[Toleration]) -> int | None:
    """Seconds to wait; None means "tolerate forever"."""
    if not used:
        return 0
    values = [t.toleration_seconds for t in used if t.toleration_seconds is not None]
    if any(v <= 0 for v in values):
        return 0
    if not values:
        return None
    return min(values)


class TaintEvictionController:
    def __init__(self, ctx: Context, pods_on_node: PodsOnNode) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.actor = Actor("system:serviceaccount:kube-system:node-controller", LANE)
        self.pods_on_node = pods_on_node
        self.running = False
        self.tainted: dict[str, tuple[Taint, ...]] = {}
        self.scheduled: dict[str, ScheduledEviction] = {}
        self.api.watch("nodes", LANE, self._on_node)
        self.api.watch("pods", LANE, self._on_pod)

    @property
    def source(self) -> str:
        return self.ctx.profile.tec_source_file

    def start(self) -> None:
        """A (re)started controller knows nothing: it sees every node as added."""
        self.running = True
        for node in sorted(self.api.cache["nodes"].values(), key=lambda n: n.metadata.name):
            self._on_node(None, node)

    def stop(self) -> None:
        self.running = False
        for s in self.scheduled.values():
            s.timer.cancel()
        self.scheduled.clear()
        self.tainted.clear()

    # -- handlers ----------------------------------------------------------------------------

    def _on_node(self, old: Node | None, new: Node | None) -> None:
        if not self.running:
            return
        if new is None:
            if old is not None:
                self.tainted.pop(old.metadata.name, None)
            return
        name = new.metadata.name
        taints = tuple(t for t in new.taints if t.effect == NO_EXECUTE)
        before = self.tainted.get(name, ())
        if {(t.key, t.value) for t in taints} == {(t.key, t.value) for t in before} and (old is not None or not taints):
            return
        if taints:
            self.tainted[name] = taints
        else:
            self.tainted.pop(name, None)
        pods = sorted(self.pods_on_node(name).values(), key=lambda p: p.metadata.name)
        if not taints:
            for pod in pods:
                self._cancel(pod, "no NoExecute taint left on the node")
            return
        now = self.ctx.engine.now
        for pod in pods:
            self._process_pod_on_node(pod, name, taints, now)

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        if not self.running:
            return
        if new is None:
            if old is not None:
                s = self.scheduled.pop(old.key, None)
                if s:
                    s.timer.cancel()
            return
        if new.terminal:
            return
        if old is not None and old.node_name == new.node_name and old.tolerations == new.tolerations:
            return
        if not new.node_name:
            return
        taints = self.tainted.get(new.node_name, ())
        if taints:
            self._process_pod_on_node(new, new.node_name, taints, self.ctx.engine.now)

    def _process_pod_on_node(self, pod: Pod, node: str, taints: tuple[Taint, ...], now: int) -> None:
        all_tolerated, used = get_matching_tolerations(taints, pod.tolerations)
        inputs: dict[str, Any] = {
            "taints": [f"{t.key}:{t.effect}" for t in taints],
            "tolerations": [_tol_text(t) for t in pod.tolerations],
            "chosen": [_tol_text(t) for t in used],
            "observedAt": now / US,
        }
        if not all_tolerated:
            self._cancel(pod, None)
            self._decide(pod, node, inputs, "delete now (untolerated taint)",
                         "A NoExecute taint is not tolerated by any of the pod's tolerations: it is deleted at once.")
            self._schedule(pod, node, now, now)
            return
        seconds = get_min_toleration_time(used)
        if seconds is None:
            self._cancel(pod, "tolerates forever")
            self._decide(pod, node, inputs, "never evicted",
                         "Every NoExecute taint is tolerated by a toleration without tolerationSeconds: the pod stays.")
            return
        existing = self.scheduled.get(pod.key)
        if existing is not None and existing.created_at < now:
            self._decide(pod, node, {**inputs, "fireAt": existing.fire_at / US}, "keep the running countdown",
                         "A deletion is already scheduled for this pod: the countdown keeps its original deadline.")
            return
        start = existing.created_at if existing is not None else now
        if existing is not None:
            existing.timer.cancel()
        fire = start + seconds * US
        self._decide(pod, node, {**inputs, "tolerationSeconds": seconds, "fireAt": fire / US},
                     f"delete at +{seconds}s",
                     f"The first matching toleration per taint gives at most {seconds} s; the countdown starts now, "
                     "when this controller observes the taint.")
        self._schedule(pod, node, start, fire)

    def _decide(self, pod: Pod, node: str, inputs: dict[str, Any], outcome: str, explain: str) -> None:
        self.ctx.recorder.decision(LANE, "tec.process-pod", node, inputs, outcome, explain, self.source,
                                   pod=pod.metadata.name)

    def _schedule(self, pod: Pod, node: str, created: int, fire: int) -> None:
        timer = self.ctx.engine.call_at(fire, self._delete_pod, pod.key, pod.metadata.name, pod.metadata.namespace)
        self.scheduled[pod.key] = ScheduledEviction(node, created, fire, timer)

    def _cancel(self, pod: Pod, why: str | None) -> None:
        s = self.scheduled.pop(pod.key, None)
        if s is None:
            return
        s.timer.cancel()
        self.api.record_event(self.actor, pod, "TaintManagerEviction", f"Cancelling deletion of Pod {pod.key}",
                              source_component=self.ctx.profile.tec_event_source)
        if why:
            self._decide(pod, s.node, {"fireAt": s.fire_at / US, "reason": why}, "deletion cancelled",
                         f"The scheduled deletion is cancelled: {why}.")

    def _delete_pod(self, key: str, name: str, namespace: str) -> None:
        self.scheduled.pop(key, None)
        pod = self.api.cached("pods", name, namespace)
        if pod is not None:
            self.api.record_event(self.actor, pod, "TaintManagerEviction", f"Marking for deletion Pod {key}",
                                  source_component=self.ctx.profile.tec_event_source)
        self._attempt_delete(name, namespace, 0)

    def _attempt_delete(self, name: str, namespace: str, attempt: int) -> None:
        """addConditionAndDeletePod: DisruptionTarget via a status PATCH, then a graceful DELETE."""
        resp = self.api.get(self.actor, "pods", name, namespace, record=False)
        if resp.ok:
            pod: Pod = resp.obj
            now = self.ctx.engine.now
            conditions = set_pod_condition(pod.conditions, "DisruptionTarget", "True", now, "DeletionByTaintManager",
                                           "Taint manager: deleting due to NoExecute taint")
            ok = True
            if conditions != pod.conditions:
                ok = self.api.patch(self.actor, "pods", name, lambda p: _with_conditions(p, conditions),
                                    namespace=namespace, subresource="status").ok
            if ok and self.api.delete(self.actor, "pods", name, namespace=namespace).ok:
                return
        if attempt + 1 < RETRIES and resp.code != 404:
            self.ctx.engine.call_later(10 * MS, self._attempt_delete, name, namespace, attempt + 1)

    def describe(self) -> dict[str, Any]:
        return {key: {"node": s.node, "scheduledAt": s.created_at / US, "fireAt": s.fire_at / US}
                for key, s in sorted(self.scheduled.items())}


def _with_conditions(pod: Pod, conditions: tuple[PodCondition, ...]) -> Pod:
    return pod.evolve(conditions=conditions)


def _tol_text(t: Toleration) -> str:
    key = t.key or "*"
    op = t.operator or "Equal"
    eff = t.effect or "*"
    secs = f" for {t.toleration_seconds}s" if t.toleration_seconds is not None else ""
    value = f"={t.value}" if t.value else ""
    return f"{key}{value} {op} {eff}{secs}"
