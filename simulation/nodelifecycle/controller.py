"""NodeLifecycleController: monitorNodeHealth, taint passes, zones and disruption.

Follows pkg/controller/nodelifecycle/node_lifecycle_controller.go (docs/kubernetes-node-health.md
§3) function by function, with the Go names in snake_case, including its quirks (the status branch forgets
the remembered Lease; a Ready that vanishes does not refresh the probe; decisions use Ready as
observed at the start of the pass). All timing uses the controller's own clock; the Lease's
leaseDurationSeconds is never read. Each decision is also recorded as an event with its inputs.

What it does not do itself: skip the nodes whose outcome is already known. That is in
`shortcuts.py` (the steady and settled nodes), which this module asks at a few marked points.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from ..apiserver import Actor
from ..clock import MS, US
from ..engine import Process, Timer
from ..objects import (
    LABEL_EXCLUDE_DISRUPTION,
    LABEL_REGION,
    LABEL_REGION_BETA,
    LABEL_ZONE,
    LABEL_ZONE_BETA,
    NO_EXECUTE,
    NO_SCHEDULE,
    TAINT_DISK_PRESSURE,
    TAINT_MEMORY_PRESSURE,
    TAINT_NETWORK_UNAVAILABLE,
    TAINT_NOT_READY,
    TAINT_PID_PRESSURE,
    TAINT_UNREACHABLE,
    TAINT_UNSCHEDULABLE,
    Node,
    NodeCondition,
    Pod,
    Taint,
    set_pod_condition,
)
from .health import NodeHealth, PassRecord, lease_is_news
from .rate_limited_queue import RateLimitedTimedQueue, TimedValue
from .shortcuts import MonitorShortcuts

if TYPE_CHECKING:
    from ..context import Context, PodsOnNode

LANE = "node-lifecycle-controller"
SOURCE = "pkg/controller/nodelifecycle/node_lifecycle_controller.go"
UTIL_SOURCE = "pkg/controller/util/node/controller_utils.go"
NODE_EVICTION_PERIOD = 100 * MS  # doNoExecuteTaintingPass
PASS_DURATION = 10 * MS  # docs/kubernetes-node-health.md §10: passes take time, so Unknown lands ~P+50, not P+55
RETRY_SLEEP = 20 * MS
NODE_HEALTH_UPDATE_RETRY = 5

STATE_INITIAL = "Initial"
STATE_NORMAL = "Normal"
STATE_FULL = "FullDisruption"
STATE_PARTIAL = "PartialDisruption"

CONDITION_TAINTS = {  # nodeConditionToTaintKeyStatusMap
    "Ready": {"False": TAINT_NOT_READY, "Unknown": TAINT_UNREACHABLE},
    "MemoryPressure": {"True": TAINT_MEMORY_PRESSURE},
    "DiskPressure": {"True": TAINT_DISK_PRESSURE},
    "PIDPressure": {"True": TAINT_PID_PRESSURE},
    "NetworkUnavailable": {"True": TAINT_NETWORK_UNAVAILABLE},
}
CONDITION_TAINT_KEYS = {k for m in CONDITION_TAINTS.values() for k in m.values()}
UNKNOWN_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


# A node a monitor pass looks at: (name, the Node as the informer cache has it at the start of
# the pass, its zone). A plain tuple: a zone outage at 5,000 nodes makes a million of them.
NodeVisit = tuple[str, Node, str]


class HealthUpdate(NamedTuple):
    """tryUpdateNodeHealth's answer: Ready as observed at the start and as it is now (None: the
    node has none), and the Node the controller wrote, if it wrote one."""

    ok: bool
    observed: str | None
    current: str | None
    written: Node | None


def zone_key(node: Node) -> str:
    """GetZoneKey: region + ":\\0:" + zone, shown as "region/zone" (or just the zone)."""
    return _zone_key(node.metadata.labels)


def _zone_key(labels: dict[str, str]) -> str:
    zone = labels.get(LABEL_ZONE_BETA) or labels.get(LABEL_ZONE, "")
    region = labels.get(LABEL_REGION_BETA) or labels.get(LABEL_REGION, "")
    if not zone and not region:
        return ""
    return f"{region}/{zone}" if region else zone


class NodeLifecycleController:
    def __init__(self, ctx: Context, pods_on_node: PodsOnNode, *,
                 steady_nodes: bool = True, settled_nodes: bool = True) -> None:
        """`steady_nodes`, `settled_nodes`: the cost shortcuts of `shortcuts.py`, on by default."""
        self.ctx = ctx
        self.api = ctx.api
        self.cm = ctx.cm
        self.actor = Actor("system:serviceaccount:kube-system:node-controller", LANE)
        self.pods_on_node = pods_on_node
        self.steady_nodes = steady_nodes
        self.settled_nodes = settled_nodes
        self.running = False
        self.next_pass_at: int | None = None
        self._process: Process | None = None
        self._tick_timer: Timer | None = None
        self._no_schedule_queued: set[str] = set()
        self.api.watch("nodes", LANE, self._node_updated)
        self.api.watch("pods", LANE, self._pod_updated)
        self.api.watch("leases", LANE)  # read in each pass, no handler
        self.reset()

    def reset(self) -> None:
        """A new leader starts with an empty memory."""
        self.known_nodes: dict[str, str] = {}  # knownNodeSet: name -> uid
        self.health: dict[str, NodeHealth] = {}  # nodeHealthMap
        self.zone_states: dict[str, str] = {}
        self.zone_sizes: dict[str, int] = {}
        self.queues: dict[str, RateLimitedTimedQueue] = {}  # zoneNoExecuteTainter
        self.nodes_to_retry: set[str] = set()
        self._waiting: set[tuple[str, str]] = set()  # (node, Ready) whose enqueue decision was recorded
        self.last_pass: dict[str, PassRecord] = {}
        self._zones: dict[str, tuple[dict[str, str], str]] = {}  # see _zone_of
        self.shortcuts = MonitorShortcuts(self, self.api, self.cm.node_monitor_grace_period,
                                          steady_nodes=self.steady_nodes, settled_nodes=self.settled_nodes)
        self.started_at = self.ctx.engine.now

    # -- Run ------------------------------------------------------------------------------------

    def start(self) -> None:
        self.reset()
        self.running = True
        self._process = Process()
        self.ctx.engine.sleep(self._process, 0, self._monitor_pass)
        for node in self.api.cache["nodes"].values():
            self._queue_no_schedule(node.metadata.name)

    def stop(self) -> None:
        self.running = False
        if self._process is not None:
            self._process.kill()
        if self._tick_timer is not None:
            self._tick_timer.cancel()
            self._tick_timer = None
        self.next_pass_at = None
        self._no_schedule_queued.clear()

    def _monitor_pass(self) -> None:
        """wait.UntilWithContext(monitorNodeHealth, nodeMonitorPeriod): sliding, from the end of a
        pass (a pass takes PASS_DURATION)."""
        self.monitor_node_health()
        assert self._process is not None
        self.ctx.engine.sleep(self._process, PASS_DURATION, self._pass_done)

    def _pass_done(self) -> None:
        self.next_pass_at = self.ctx.engine.now + self.cm.node_monitor_period
        assert self._process is not None
        self.ctx.engine.sleep(self._process, self.cm.node_monitor_period, self._monitor_pass)

    # -- monitorNodeHealth -----------------------------------------------------------------------

    def monitor_node_health(self) -> None:
        now = self.ctx.engine.now
        # nodeLister.List: the informer cache. The real list has no defined order and a real pass
        # visits it with 8 parallel workers; walking it one node at a time in name order is this
        # simulation's choice, so nodes queued in the same pass are tainted in name order here
        # (the real TimedQueue orders by the time of adding only: rate_limited_queue.go).
        nodes = self.api.node_names()
        shortcuts = self.shortcuts
        shortcuts.start_pass(now)  # shortcut: the steady nodes with news get their look first
        visits = self._visits(shortcuts.nodes_to_visit(nodes))  # shortcut: the steady nodes are skipped
        added, deleted, new_zone_representatives = self.classify_nodes(visits, nodes)
        for zone in new_zone_representatives:
            self.add_pod_evictor_for_new_zone(zone)
        for name, node, zone in added:
            self.api.record_event(self.actor, node, "RegisteredNode",
                                  f"Node {name} event: Registered Node {name} in Controller",
                                  source_component="node-controller")
            self.known_nodes[name] = node.metadata.uid
            self.add_pod_evictor_for_new_zone(zone)
            self.mark_node_as_reachable(node, reason="first time this controller sees the node")
        for name in deleted:
            del self.known_nodes[name]
            shortcuts.node_deleted(name)
            self.health.pop(name, None)
            self.last_pass.pop(name, None)

        # zoneToNodeConditions, counted: [Ready=True, the others] per zone
        zone_counts = shortcuts.zone_counts()  # shortcut: the steady nodes, all Ready=True
        for name, node, zone in visits:  # updateNodeFunc, one node after the other
            observed: str | None
            current: str | None
            settled = shortcuts.settled_verdict(name, node, zone, now)  # shortcut: an Unknown node, unchanged
            if settled is not None:
                observed, current = settled
            else:
                observed, current, node = self._poll_update_node_health(node, zone)
                if observed is not None:
                    shortcuts.after_health_update(node, now)
            if observed is None:
                continue  # the health update failed five times: nothing else this pass
            if not is_node_excluded_from_disruption_checks(node):
                counts = zone_counts.setdefault(zone, [0, 0])
                counts[0 if current == "True" else 1] += 1
            if current is None:
                continue
            self.process_taint_base_eviction(node, observed, zone)
            if current != "True" and observed == "True":
                self.api.record_event(self.actor, node, "NodeNotReady", f"Node {name} status is now: NodeNotReady",
                                      source_component="node-controller")
                self.mark_pods_not_ready(node, observed, current)
            elif name in self.nodes_to_retry and observed != "True":
                self.mark_pods_not_ready(node, observed, current)
            self.nodes_to_retry.discard(name)
            shortcuts.after_turn(node, zone, observed, current)  # shortcut: it may join the steady nodes
        self.handle_disruption(zone_counts, nodes, now)
        self._record_pass(nodes)

    def _visits(self, names: list[str]) -> list[NodeVisit]:
        """Each node and zone is looked up once: the informer cache does not change during a pass
        (writes reach it later)."""
        cache = self.api.cache["nodes"]
        visits = []
        for name in names:
            node = cache[("", name)]
            visits.append((name, node, self._zone_of(node)))
        return visits

    def classify_nodes(self, visits: list[NodeVisit], nodes: tuple[str, ...]
                       ) -> tuple[list[NodeVisit], list[str], list[str]]:
        """classifyNodes: the nodes new to the controller, the names it knows that are gone (in
        name order), and the zones of known nodes that have no zone state."""
        added: list[NodeVisit] = []
        new_zone_representatives: list[str] = []
        for visit in visits:
            name, _node, zone = visit
            if name not in self.known_nodes:
                added.append(visit)
            elif zone not in self.zone_states:
                new_zone_representatives.append(zone)
        deleted: list[str] = []
        if len(self.known_nodes) + len(added) != len(nodes):
            deleted = sorted(set(self.known_nodes) - set(nodes))
        return added, deleted, new_zone_representatives

    def _record_pass(self, nodes: tuple[str, ...]) -> None:
        """The pass as one decision event: what it saw of each node (up to 200), and the zones."""
        records = [(n, self.pass_record(n)) for n in self.last_pass] if len(nodes) <= 200 else None
        zones = self.describe_zones()
        count, grace = len(nodes), self.cm.node_monitor_grace_period / US
        self.ctx.recorder.emit("decision", LANE, None, lambda: {
            "rule": "nlc.monitor-pass", "inputs": {"nodes": count, "gracePeriod": grace},
            "outcome": f"{count} nodes checked", "pod": None, "source": SOURCE,
            "explain": "monitorNodeHealth: one pass over every node in the informer cache.",
            "nodes": {n: r.as_dict() for n, r in records if r is not None} if records is not None else None,
            "zones": zones,
        })

    def _poll_update_node_health(self, node: Node, zone: str) -> tuple[str | None, str | None, Node]:
        """wait.PollImmediate(retrySleepTime, ...) around tryUpdateNodeHealth: 5 tries, a fresh
        GET of the Node after an error. (Observed, current Ready, the Node as it is now);
        observed None: every try failed."""
        for _attempt in range(NODE_HEALTH_UPDATE_RETRY):
            update = self.try_update_node_health(node, zone)
            if update.ok:
                return update.observed, update.current, update.written or node
            resp = self.api.get(self.actor, "nodes", node.metadata.name)
            if not resp.ok:
                return None, None, node
            node = resp.obj
        return None, None, node

    def try_update_node_health(self, node: Node, zone: str) -> HealthUpdate:
        """tryUpdateNodeHealth: the probe timestamp moves on a new Ready heartbeat or a new Lease;
        past the grace period, the kubelet-owned conditions become Unknown (one status update)."""
        now = self.ctx.engine.now
        name = node.metadata.name
        health = self.health.get(name)
        ready = node.condition("Ready")
        branch = ""
        if ready is None:
            observed = NodeCondition("Ready", "Unknown", "", "", node.metadata.creation, node.metadata.creation)
            grace = self.cm.node_startup_grace_period
            if health is not None:
                health.set_status(node.conditions)
            else:
                health = NodeHealth(node.conditions, node.metadata.creation, node.metadata.creation)
                branch = "no-ready-condition"
        else:
            observed = ready
            grace = self.cm.node_monitor_grace_period
        saved = health.saved_ready() if health is not None else None
        saved_lease = (health.has_lease, health.lease_renew_time) if health is not None else (False, None)
        if health is None:
            health = NodeHealth(node.conditions, now, now)
            branch = "first-seen"
        elif saved is None and ready is not None:
            health = NodeHealth(node.conditions, now, now)
            branch = "ready-appeared"
        elif saved is not None and ready is None:  # dead code in practice (see docs/kubernetes-node-health.md §3.2)
            health = NodeHealth(node.conditions, now, now)
            branch = "ready-vanished"
        elif saved is not None and ready is not None and saved.last_heartbeat_time != ready.last_heartbeat_time:
            transition = (now if saved.last_transition_time != ready.last_transition_time
                          else health.ready_transition_timestamp)
            health = NodeHealth(node.conditions, now, transition)  # NOTE: the remembered Lease is dropped
            branch = "status-posted"
        # The comparison uses the Lease remembered *before* this pass, but a new record (any
        # branch above) starts without one: after a status post the same Lease counts as new
        # in the next pass (docs/kubernetes-node-health.md §3.2, its quirk).
        lease = self.api.cached("leases", name, "kube-node-lease")
        lease_renewed = False
        if lease_is_news(lease, *saved_lease):
            health.has_lease = True
            health.lease_renew_time = lease.renew_time
            health.probe_timestamp = now
            lease_renewed = True
        self.health[name] = health
        if not branch:
            branch = "lease-renewed" if lease_renewed else "no-news"
        elif lease_renewed and branch == "status-posted":
            branch = "status-posted+lease"
        deadline = health.probe_timestamp + grace
        record = PassRecord(now, branch, health.probe_timestamp, grace, deadline, observed.status,
                            ready.status if ready else None, zone)
        self.last_pass[name] = record
        if not now > deadline:
            return HealthUpdate(True, observed.status, ready.status if ready else None, None)

        # NodeReady or lease last seen longer ago than the grace period: mark Unknown.
        conditions = list(node.conditions)
        by_type = {c.type: i for i, c in enumerate(conditions)}
        for ctype in UNKNOWN_CONDITIONS:
            if ctype not in by_type:
                conditions.append(NodeCondition(ctype, "Unknown", "NodeStatusNeverUpdated",
                                                "Kubelet never posted node status.", node.metadata.creation, now))
            else:
                c = conditions[by_type[ctype]]
                if c.status != "Unknown":
                    conditions[by_type[ctype]] = c.evolve(status="Unknown", reason="NodeStatusUnknown",
                                                         message="Kubelet stopped posting node status.",
                                                         last_transition_time=now)
        current = next(c for c in conditions if c.type == "Ready")
        if current == observed:
            record.current = current.status
            return HealthUpdate(True, observed.status, current.status, None)
        updated = node.evolve(conditions=tuple(conditions))
        resp = self.api.update(self.actor, updated, subresource="status")
        self.ctx.recorder.decision(LANE, "nlc.mark-unknown", name, {
            "probeTimestamp": health.probe_timestamp / US, "gracePeriod": grace / US, "now": now / US,
            "silentFor": (now - health.probe_timestamp) / US, "observedReady": observed.status,
            "lastHeartbeatTime": (ready.last_heartbeat_time / US) if ready else None,
            "leaseRenewTime": (lease.renew_time / US) if lease and lease.renew_time is not None else None,
            "neverPosted": ready is None, "code": resp.code,
        }, "Ready=Unknown" if resp.ok else f"update failed ({resp.code})",
            (f"No new Lease renewTime and no new Ready heartbeat for {(now - health.probe_timestamp) / US:.1f} s "
             f"> grace period {grace / US:.0f} s: Ready, MemoryPressure, DiskPressure and PIDPressure become Unknown."),
            SOURCE)
        if not resp.ok:
            return HealthUpdate(False, observed.status, None, None)
        self.health[name] = NodeHealth(resp.obj.conditions, health.probe_timestamp, now,
                                       lease.renew_time if lease else None, lease is not None)
        record.current = "Unknown"
        record.branch = "mark-unknown"
        return HealthUpdate(True, observed.status, "Unknown", resp.obj)

    # -- pods ----------------------------------------------------------------------------------

    def mark_pods_not_ready(self, node: Node, observed: str, current: str) -> None:
        """MarkPodsNotReady: Ready=False on every pod of the node (status update + Warning event)."""
        name = node.metadata.name
        marked = []
        for pod in sorted(self.pods_on_node(name).values(), key=lambda p: p.metadata.name):
            ready = pod.condition("Ready")
            if ready is None:
                continue
            now = self.ctx.engine.now
            conditions = set_pod_condition(pod.conditions, "Ready", "False", now, ready.reason, ready.message)
            if conditions == pod.conditions:
                continue  # already False with the same reason: UpdatePodCondition reports no change
            resp = self.api.update(self.actor, pod.evolve(conditions=conditions), subresource="status")
            if resp.code == 404:
                continue
            if not resp.ok:
                self.nodes_to_retry.add(name)
            self.api.record_event(self.actor, pod, "NodeNotReady", "Node is not ready", type_="Warning",
                                  source_component="node-controller")
            marked.append(pod.metadata.name)
        self.ctx.recorder.decision(LANE, "nlc.mark-pods-not-ready", name,
                                   {"observedReady": observed, "currentReady": current, "pods": marked},
                                   f"{len(marked)} pods Ready=False",
                                   "The controller itself moved Ready from True to not-True in this pass, so it marks "
                                   "every pod on the node NotReady (pods on a node whose kubelet posted False are not "
                                   "marked).",
                                   UTIL_SOURCE)

    def _pod_updated(self, old: Pod | None, new: Pod | None) -> None:
        """podUpdated and processPod: a pod newly bound to a node whose saved Ready is not True is
        marked NotReady at once."""
        if not self.running or new is None or not new.node_name:
            return
        if old is not None and old.node_name == new.node_name:
            return
        health = self.health.get(new.node_name)
        if health is None:
            return
        saved = health.saved_ready()
        if saved is None or saved.status == "True":
            return
        ready = new.condition("Ready")
        if ready is None:
            return
        now = self.ctx.engine.now
        conditions = set_pod_condition(new.conditions, "Ready", "False", now, ready.reason, ready.message)
        if conditions != new.conditions:
            self.api.update(self.actor, new.evolve(conditions=conditions), subresource="status")
            self.api.record_event(self.actor, new, "NodeNotReady", "Node is not ready", type_="Warning",
                                  source_component="node-controller")

    # -- NoExecute taints ----------------------------------------------------------------------------

    def process_taint_base_eviction(self, node: Node, observed: str, zone: str) -> None:
        name = node.metadata.name
        if observed == "False":
            if node.has_taint(TAINT_UNREACHABLE, NO_EXECUTE):
                self.swap_node_controller_taint(
                    node, TAINT_NOT_READY, TAINT_UNREACHABLE, "nlc.swap-taint",
                    "Ready went from Unknown to False: the NoExecute taint is swapped at once, without the rate "
                    "limiter.")
            elif self.mark_node_for_tainting(node, "False", zone):
                self._enqueued(name, zone, observed)
        elif observed == "Unknown":
            if node.has_taint(TAINT_NOT_READY, NO_EXECUTE):
                self.swap_node_controller_taint(
                    node, TAINT_UNREACHABLE, TAINT_NOT_READY, "nlc.swap-taint",
                    "Ready went from False to Unknown: the NoExecute taint is swapped at once, without the rate "
                    "limiter.")
            elif self.mark_node_for_tainting(node, "Unknown", zone):
                self._enqueued(name, zone, observed)
        elif observed == "True" and (node.taints or name in self.queues[zone]):
            self.mark_node_as_reachable(node, reason="Ready is True")

    def _enqueued(self, name: str, zone: str, observed: str) -> None:
        """A waiting node is re-added every pass (markNodeForTainting removes it first when it
        lacks the taint); the decision is recorded when it joins, not on every re-add."""
        if (name, observed) not in self._waiting:
            self._waiting.add((name, observed))
            self._decide_enqueue(name, zone, observed)
        self._ensure_tainting_tick()

    def _decide_enqueue(self, name: str, zone: str, observed: str) -> None:
        q = self.queues[zone]
        self.ctx.recorder.decision(LANE, "nlc.enqueue-taint", name, {
            "observedReady": observed, "zone": zone or "(unlabelled)", "zoneState": self.zone_states.get(zone),
            "rate": _rate(q), "tokens": round(q.limiter.available(self.ctx.engine.now), 3), "queueLength": len(q),
        }, "queued for a NoExecute taint",
            f"Ready was {observed} at the start of this pass: the node joins its zone's rate-limited taint queue.",
            SOURCE)
        self._ensure_tainting_tick()

    def _forget_waiting(self, name: str) -> None:
        self._waiting.discard((name, "False"))
        self._waiting.discard((name, "Unknown"))

    def mark_node_for_tainting(self, node: Node, status: str, zone: str) -> bool:
        q = self.queues[zone]
        key = TAINT_NOT_READY if status == "False" else TAINT_UNREACHABLE
        if not node.has_taint(key, NO_EXECUTE):
            q.remove(node.metadata.name)
        return q.add(node.metadata.name, node.metadata.uid, self.ctx.engine.now)

    def mark_node_as_reachable(self, node: Node, reason: str) -> bool:
        name = node.metadata.name
        removed_taints = [k for k in (TAINT_UNREACHABLE, TAINT_NOT_READY) if node.has_taint(k, NO_EXECUTE)]
        for key in (TAINT_UNREACHABLE, TAINT_NOT_READY):
            if node.has_taint(key, NO_EXECUTE):
                self.remove_taints_off_node(name, [(key, NO_EXECUTE)])
        zone = zone_key(node)
        dequeued = self.queues[zone].remove(name) if zone in self.queues else False
        self._forget_waiting(name)
        if removed_taints or dequeued:
            self.ctx.recorder.decision(LANE, "nlc.mark-reachable", name, {
                "removedTaints": removed_taints, "dequeued": dequeued, "reason": reason,
            }, "NoExecute taints removed" if removed_taints else "left the taint queue",
                f"markNodeAsReachable ({reason}): remove the not-ready/unreachable NoExecute taints and drop the node "
                "from the queue.",
                SOURCE)
        return dequeued

    def _ensure_tainting_tick(self) -> None:
        if self._tick_timer is not None and self._tick_timer.active:
            return
        now = self.ctx.engine.now
        # doNoExecuteTaintingPass runs every 100 ms from controller start; ticks with empty
        # queues do nothing, so only the ones with work are scheduled.
        elapsed = now - self.started_at
        next_tick = self.started_at + (elapsed // NODE_EVICTION_PERIOD + 1) * NODE_EVICTION_PERIOD
        self._tick_timer = self.ctx.engine.call_at(next_tick, self.do_no_execute_tainting_pass)

    def do_no_execute_tainting_pass(self) -> None:
        self._tick_timer = None
        if not self.running:
            return
        now = self.ctx.engine.now
        for zone in sorted(self.queues):
            q = self.queues[zone]
            q.try_process(now, partial(self._taint_head, zone=zone))
        if any(len(q) for q in self.queues.values()):
            self._ensure_tainting_tick()

    def _taint_head(self, item: TimedValue, zone: str) -> tuple[bool, int]:
        self._forget_waiting(item.value)
        node = self.api.cached("nodes", item.value)
        q = self.queues[zone]
        if node is None:
            return True, 0
        ready = node.condition("Ready")
        if ready is None:
            return False, 50 * MS
        if ready.status == "False":
            add, opposite = TAINT_NOT_READY, TAINT_UNREACHABLE
        elif ready.status == "Unknown":
            add, opposite = TAINT_UNREACHABLE, TAINT_NOT_READY
        else:
            self.ctx.recorder.decision(LANE, "nlc.taint-skipped", item.value, {"ready": ready.status, "zone": zone},
                                       "no taint (Ready again)",
                                       "The node reached the head of the queue but is Ready again: the token is "
                                       "spent, no taint.",
                                       SOURCE)
            return True, 0
        ok = self.swap_node_controller_taint(
            node, add, opposite, "nlc.taint-no-execute",
            f"Token granted by zone {zone or '(unlabelled)'}'s limiter at {_rate(q)}/s: "
            f"Ready is {ready.status} now, so {add.split('/')[-1]}:NoExecute is added.",
            inputs={"zone": zone, "zoneState": self.zone_states.get(zone), "rate": _rate(q),
                    "waited": (self.ctx.engine.now - item.added_at) / US})
        return ok, 0

    def swap_node_controller_taint(self, node: Node, add_key: str, remove_key: str, rule: str, explain: str,
                                   inputs: dict[str, Any] | None = None) -> bool:
        """SwapNodeControllerTaint: one patch adding (timeAdded = now), one removing."""
        name = node.metadata.name
        now = self.ctx.engine.now

        def add(current: Node) -> Node:
            if current.has_taint(add_key, NO_EXECUTE):
                return current
            return current.evolve(taints=current.taints + (Taint(add_key, NO_EXECUTE, "", now),))

        current = self.api.current("nodes", name)
        ok = True
        if current is not None and not current.has_taint(add_key, NO_EXECUTE):
            ok = self.api.patch(self.actor, "nodes", name, add).ok
        if ok:
            self.remove_taints_off_node(name, [(remove_key, NO_EXECUTE)])
        self.ctx.recorder.decision(LANE, rule, name, {**(inputs or {}), "add": f"{add_key}:NoExecute",
                                                      "remove": f"{remove_key}:NoExecute"},
                                   f"{add_key.split('/')[-1]}:NoExecute" if ok else "taint patch failed", explain,
                                   UTIL_SOURCE)
        return ok

    def remove_taints_off_node(self, name: str, taints: list[tuple[str, str]]) -> None:
        current = self.api.current("nodes", name)
        if current is None or not any(current.has_taint(k, e) for k, e in taints):
            return
        self.api.patch(self.actor, "nodes", name,
                       lambda n: n.evolve(taints=tuple(t for t in n.taints if (t.key, t.effect) not in taints)))

    # -- NoSchedule taints (taint nodes by condition) --------------------------------------------------

    def _node_updated(self, old: Node | None, new: Node | None) -> None:
        """The node informer's handler: nodeUpdateQueue.Add, one NoSchedule pass per node at a time."""
        changed = new or old
        assert changed is not None
        self.shortcuts.node_updated(changed.metadata.name)  # shortcut: a new Node version takes the full path
        if new is None or not self.running:
            return
        self._queue_no_schedule(new.metadata.name)

    def _queue_no_schedule(self, name: str) -> None:
        if name in self._no_schedule_queued:
            return
        self._no_schedule_queued.add(name)
        self.ctx.engine.call_later(0, self.do_no_schedule_tainting_pass, name)

    def do_no_schedule_tainting_pass(self, name: str) -> None:
        self._no_schedule_queued.discard(name)
        if not self.running:
            return
        node = self.api.cached("nodes", name)
        if node is None:
            return
        desired = set()
        for c in node.conditions:
            key = CONDITION_TAINTS.get(c.type, {}).get(c.status)
            if key:
                desired.add(key)
        if node.unschedulable:
            desired.add(TAINT_UNSCHEDULABLE)
        existing = {t.key for t in node.taints if t.effect == NO_SCHEDULE and
                    (t.key == TAINT_UNSCHEDULABLE or t.key in CONDITION_TAINT_KEYS)}
        to_add = sorted(desired - existing)
        to_del = sorted(existing - desired)
        if not to_add and not to_del:
            return
        now = self.ctx.engine.now
        if to_add:
            self.api.patch(self.actor, "nodes", name, lambda n: n.evolve(taints=n.taints + tuple(
                Taint(k, NO_SCHEDULE, "", now) for k in to_add if not n.has_taint(k, NO_SCHEDULE))))
        if to_del:
            self.remove_taints_off_node(name, [(k, NO_SCHEDULE) for k in to_del])
        ready = node.condition("Ready")
        self.ctx.recorder.decision(LANE, "nlc.no-schedule-taints", name, {
            "ready": ready.status if ready else None,
            "conditions": {c.type: c.status for c in node.conditions}, "unschedulable": node.unschedulable,
            "add": to_add, "remove": to_del,
        }, " ".join([f"+{k.split('/')[-1]}" for k in to_add] + [f"-{k.split('/')[-1]}" for k in to_del]),
            "doNoScheduleTaintingPass: each node update maps conditions to NoSchedule taints at once, with no rate "
            "limit.",
            SOURCE)

    # -- zones -----------------------------------------------------------------------------------------

    def _zone_of(self, node: Node) -> str:
        """zone_key, remembered per node while its labels stay the same object."""
        labels = node.metadata.labels
        hit = self._zones.get(node.metadata.name)
        if hit is not None and hit[0] is labels:
            return hit[1]
        key = zone_key(node)
        self._zones[node.metadata.name] = (labels, key)
        return key

    def add_pod_evictor_for_new_zone(self, zone: str) -> None:
        """addPodEvictorForNewZone: a zone seen for the first time gets its state and taint queue."""
        if zone in self.zone_states:
            return
        self.zone_states[zone] = STATE_INITIAL
        self.queues[zone] = RateLimitedTimedQueue(self.cm.node_eviction_rate, self.ctx.engine.now)

    def compute_zone_state(self, ready: int, not_ready: int) -> tuple[int, str]:
        """ComputeZoneState from the zone's count of Ready=True nodes and of the others."""
        if ready == 0 and not_ready > 0:
            return not_ready, STATE_FULL
        if not_ready > 2 and not_ready / (not_ready + ready) >= self.cm.unhealthy_zone_threshold:
            return not_ready, STATE_PARTIAL
        return not_ready, STATE_NORMAL

    def healthy_qps_func(self, node_num: int) -> float:
        """HealthyQPSFunc (enterFullDisruptionFunc): the normal eviction rate."""
        return self.cm.node_eviction_rate

    def reduced_qps_func(self, node_num: int) -> float:
        """ReducedQPSFunc (enterPartialDisruptionFunc): slower in a large zone, none in a small one."""
        return self.cm.secondary_node_eviction_rate if node_num > self.cm.large_cluster_size_threshold else 0.0

    def set_limiter_in_zone(self, zone: str, size: int, state: str) -> None:
        q = self.queues[zone]
        if state == STATE_PARTIAL:
            rate = self.reduced_qps_func(size)
        elif state == STATE_FULL:
            rate = self.healthy_qps_func(size)
        else:
            rate = self.cm.node_eviction_rate  # Normal
        if q.swap_limiter(rate, self.ctx.engine.now):
            self.ctx.recorder.decision(LANE, "nlc.swap-limiter", None, {"zone": zone, "state": state, "size": size,
                                                                        "rate": rate}, f"limiter {rate}/s",
                                       f"Zone {zone or '(unlabelled)'} is {state} with {size} nodes: its taint rate "
                                       f"becomes {rate}/s.",
                                       SOURCE)

    def handle_disruption(self, zone_counts: dict[str, list[int]], names: tuple[str, ...], now: int) -> None:
        new_states: dict[str, str] = {}
        all_now = True
        for zone in sorted(zone_counts):
            ready, not_ready = zone_counts[zone]
            _not_ready, state = self.compute_zone_state(ready, not_ready)
            if state != STATE_FULL:
                all_now = False
            new_states[zone] = state
            self.zone_sizes[zone] = ready + not_ready
            self.add_pod_evictor_for_new_zone(zone)
        all_before = True
        for zone in sorted(self.zone_states):
            if zone not in zone_counts:
                del self.zone_states[zone]
                self.zone_sizes.pop(zone, None)
                self.shortcuts.zone_deleted(zone)
                continue
            if self.zone_states[zone] != STATE_FULL:
                all_before = False
        if not zone_counts:
            return
        if all_now and all_before:
            return
        if all_now:
            self.ctx.recorder.decision(LANE, "nlc.enter-master-disruption", None,
                                       {"zones": dict(new_states)}, "all NoExecute tainting stopped",
                                       "Every zone is fully disrupted: the controller assumes its own connectivity is "
                                       "the problem, removes every NoExecute taint and stops tainting.", SOURCE)
            for name in names:
                latest = self.api.cached("nodes", name)
                current = self.api.current("nodes", name)
                self.mark_node_as_reachable(current or latest, reason="entering full disruption mode")
            for zone in sorted(self.zone_states):
                self.queues[zone].swap_limiter(0.0, now)
                self.zone_states[zone] = STATE_FULL
            return
        if all_before:
            self.ctx.recorder.decision(LANE, "nlc.exit-master-disruption", None,
                                       {"zones": dict(new_states)}, "probe timestamps reset",
                                       "Some node is Ready again: every node gets a fresh grace period and each zone's "
                                       "limiter follows its own state again.", SOURCE)
            self.shortcuts.probe_timestamps_reset()
            for name in names:
                h = self.health.get(name)
                if h is not None:
                    h.probe_timestamp = now
                    h.ready_transition_timestamp = now
            for zone in sorted(self.zone_states):
                self.set_limiter_in_zone(zone, sum(zone_counts[zone]), new_states[zone])
                self.zone_states[zone] = new_states[zone]
            return
        for zone in sorted(self.zone_states):
            state = new_states[zone]
            if self.zone_states[zone] == state:
                continue
            before = self.zone_states[zone]
            self.set_limiter_in_zone(zone, sum(zone_counts[zone]), state)
            self.zone_states[zone] = state
            self.ctx.recorder.transition(LANE, "zone-state", None, before, state, key=zone)

    # -- for the snapshot -------------------------------------------------------------------------------

    def describe_zones(self) -> dict[str, Any]:
        now = self.ctx.engine.now
        return {
            (zone or ""): {"state": self.zone_states.get(zone, STATE_INITIAL), "rate": _rate(q),
                           "tokens": round(q.limiter.available(now), 3), "queue": q.items(),
                           "size": self.zone_sizes.get(zone, 0)}
            for zone, q in sorted(self.queues.items())
        }

    def describe(self) -> dict[str, Any]:
        return {
            "running": self.running,
            "nodes": {name: {"probeTimestamp": self.shortcuts.probe_timestamp(name) / US,
                             "readyTransitionTimestamp": h.ready_transition_timestamp / US,
                             **(record.as_dict() if (record := self.pass_record(name)) else {})}
                      for name, h in sorted(self.health.items())},
            "zones": self.describe_zones(),
            "nextPass": self.next_pass_at / US if self.next_pass_at is not None else None,
            "gracePeriod": self.cm.node_monitor_grace_period / US,
            "startupGracePeriod": self.cm.node_startup_grace_period / US,
        }

    def pass_record(self, name: str) -> PassRecord | None:
        """The last monitor pass's record for a node (the flowchart's highlighted branch)."""
        derived = self.shortcuts.pass_record(name)  # shortcut: a steady node the pass did not visit
        return derived if derived is not None else self.last_pass.get(name)


def is_node_excluded_from_disruption_checks(node: Node) -> bool:
    """isNodeExcludedFromDisruptionChecks: the node.kubernetes.io/exclude-disruption label."""
    return LABEL_EXCLUDE_DISRUPTION in node.metadata.labels


def _rate(q: RateLimitedTimedQueue) -> float:
    return q.limiter.qps
