"""NodeLifecycleController: monitorNodeHealth, taint passes, zones and disruption.

Follows pkg/controller/nodelifecycle/node_lifecycle_controller.go (docs/kubernetes-node-health.md §3) step
by step, including its quirks (the status branch forgets the remembered Lease; a Ready that
vanishes does not refresh the probe; decisions use Ready as observed at the start of the pass).
All timing uses the controller's own clock; the Lease's leaseDurationSeconds is never read.
"""

from __future__ import annotations

import heapq
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from ..apiserver import Actor
from ..clock import MS, US
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
    Lease,
    Node,
    NodeCondition,
    Pod,
    Taint,
    set_pod_condition,
)
from .rate_limited_queue import RateLimitedTimedQueue, TimedValue

if TYPE_CHECKING:
    from ..context import Context

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


class NodeHealth:
    """nodeHealthData: what the controller remembers about a node between passes."""

    __slots__ = ("status", "ready", "probe_timestamp", "ready_transition_timestamp", "lease_renew_time", "has_lease")

    def __init__(self, status: tuple[NodeCondition, ...], probe_timestamp: int, ready_transition_timestamp: int,
                 lease_renew_time: int | None = None, has_lease: bool = False) -> None:
        self.set_status(status)
        self.probe_timestamp = probe_timestamp
        self.ready_transition_timestamp = ready_transition_timestamp
        self.lease_renew_time = lease_renew_time  # the remembered Lease (only its renewTime matters)
        self.has_lease = has_lease

    def set_status(self, status: tuple[NodeCondition, ...]) -> None:
        self.status = status
        self.ready = next((c for c in status if c.type == "Ready"), None)

    def saved_ready(self) -> NodeCondition | None:
        return self.ready


class PassRecord:
    """What the last monitor pass saw and decided for one node (the flowchart's highlighted branch)."""

    __slots__ = ("t", "branch", "probe", "grace", "deadline", "observed", "current", "zone")

    def __init__(self, t: int, branch: str, probe: int, grace: int, deadline: int, observed: str,
                 current: str | None, zone: str) -> None:
        self.t, self.branch, self.probe, self.grace, self.deadline = t, branch, probe, grace, deadline
        self.observed, self.current, self.zone = observed, current, zone

    def as_dict(self) -> dict[str, Any]:
        return {"t": self.t / US, "branch": self.branch, "probeTimestamp": self.probe / US, "gracePeriod": self.grace / US,
                "deadline": self.deadline / US, "observed": self.observed, "current": self.current, "zone": self.zone}


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
    def __init__(self, ctx: Context, pods_on_node) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.cm = ctx.cm
        self.actor = Actor("system:serviceaccount:kube-system:node-controller", LANE)
        self.pods_on_node = pods_on_node
        self.running = False
        self.next_pass_at: int | None = None
        self._process = None
        self._tick_timer = None
        self._no_schedule_queued: set[str] = set()
        self.api.watch("nodes", LANE, self._on_node)
        self.api.watch("pods", LANE, self._on_pod)
        self.api.watch("leases", LANE)  # read in each pass, no handler
        self._lease_log = self.api.change_log("leases")  # which Leases may be news (the steady path)
        self.reset()

    def reset(self) -> None:
        self.known_nodes: dict[str, str] = {}  # name -> uid
        self.health: dict[str, NodeHealth] = {}
        self.zone_states: dict[str, str] = {}
        self.zone_sizes: dict[str, int] = {}
        self.queues: dict[str, RateLimitedTimedQueue] = {}
        self.nodes_to_retry: set[str] = set()
        self._waiting: set[tuple[str, str]] = set()  # (node, Ready) whose enqueue decision was recorded
        self.last_pass: dict[str, PassRecord] = {}
        self._zones: dict[str, tuple[dict[str, str], str]] = {}
        self._steady: dict[str, tuple[Node, str, bool]] = {}  # see "the steady path"
        self._steady_counts: dict[str, int] = {}  # zone -> steady nodes that count for its state
        self._unsteady: tuple[tuple[str, ...], int, list[str]] = ((), -1, [])  # see _unsteady_names
        self._steady_changes = 0
        self._steady_time: int | None = None  # the pass the steady nodes' records belong to
        self._examine_next: set[str] = set()
        self._probe_batches: dict[int, list[str]] = {}  # probe timestamp -> steady nodes that had it
        self._batch_times: list[int] = []  # heap of the batches' probe timestamps
        self._renewals: dict[str, tuple[int, int | None]] = {}  # see _steady_sweep
        self._leases_changed: set[str] = set()  # not steady, Lease written since the last pass
        self._lease_log.clear()
        self._settled: dict[str, tuple[Node, NodeHealth, int, PassRecord]] = {}  # see _settled_pass
        self.started_at = self.ctx.engine.now

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> None:
        self.reset()
        self.running = True
        self._process = self.ctx.engine.spawn(self._monitor_loop(), "monitorNodeHealth")
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

    def _monitor_loop(self) -> Generator[int, Any, None]:
        while True:
            self.monitor_node_health()
            yield PASS_DURATION
            self.next_pass_at = self.ctx.engine.now + self.cm.node_monitor_period
            yield self.cm.node_monitor_period

    # -- monitorNodeHealth -----------------------------------------------------------------------

    def monitor_node_health(self) -> None:
        now = self.ctx.engine.now
        cache = self.api.cache["nodes"]
        names = self.api.node_names()
        self._steady_sweep(now)
        # The steady nodes are known, and so is their zone. The informer cache does not change
        # during a pass (writes reach it later), so each node and zone is looked up once.
        visits = []
        for name in self._unsteady_names(names):
            node = cache[("", name)]
            zone = self._zone_of(node)
            visits.append((name, node, zone))
            if zone not in self.zone_states:
                self._add_zone(zone)
            if name not in self.known_nodes:
                self.known_nodes[name] = node.metadata.uid
                self.api.record_event(self.actor, node, "RegisteredNode",
                                      f"Node {name} event: Registered Node {name} in Controller",
                                      source_component="node-controller")
                self._mark_node_as_reachable(node, reason="first time this controller sees the node")
        if len(self.known_nodes) != len(names):
            for name in sorted(set(self.known_nodes) - set(names)):
                del self.known_nodes[name]
                self.health.pop(name, None)
                self._leave_steady(name)
                self.last_pass.pop(name, None)
                self._settled.pop(name, None)

        # [ready, not ready] per zone: the steady nodes are all Ready=True
        zone_counts: dict[str, list[int]] = {zone: [n, 0] for zone, n in self._steady_counts.items() if n}
        for name, node, zone in visits:  # a node joins the steady ones only at the end of its own turn
            verdict = self._settled_pass(name, node, zone, now)
            if verdict is not None:
                observed, current = verdict
            else:
                observed, current, node = self._update_node_health(node, zone)
            if observed is None:
                continue  # the health update failed five times: nothing else this pass
            if LABEL_EXCLUDE_DISRUPTION not in node.metadata.labels:
                counts = zone_counts.setdefault(zone, [0, 0])
                counts[0 if current == "True" else 1] += 1
            if current is None:
                continue
            self._process_taint_base_eviction(node, observed, zone)
            if current != "True" and observed == "True":
                self.api.record_event(self.actor, node, "NodeNotReady", f"Node {name} status is now: NodeNotReady",
                                      source_component="node-controller")
                self._mark_pods_not_ready(node, observed, current)
            elif name in self.nodes_to_retry and observed != "True":
                self._mark_pods_not_ready(node, observed, current)
            self.nodes_to_retry.discard(name)
            self._note_steady(node, zone, observed, current)
        self._handle_disruption(zone_counts, names, now)
        records = [(n, self.pass_record(n)) for n in self.last_pass] if len(names) <= 200 else None
        zones = self.describe_zones()
        count, grace = len(names), self.cm.node_monitor_grace_period / US
        self.ctx.recorder.emit("decision", LANE, None, lambda: {
            "rule": "nlc.monitor-pass", "inputs": {"nodes": count, "gracePeriod": grace},
            "outcome": f"{count} nodes checked", "pod": None, "source": SOURCE,
            "explain": "monitorNodeHealth: one pass over every node in the informer cache.",
            "nodes": {n: r.as_dict() for n, r in records} if records is not None else None,
            "zones": zones,
        })

    def _update_node_health(self, node: Node, zone: str) -> tuple[str | None, str | None, Node]:
        """The retry loop around tryUpdateNodeHealth (5 tries, 20 ms apart, fresh GET on error)."""
        for _attempt in range(NODE_HEALTH_UPDATE_RETRY):
            ok, observed, current, written = self._try_update_node_health(node, zone)
            if ok:
                return observed, current, written or node
            resp = self.api.get(self.actor, "nodes", node.metadata.name)
            if not resp.ok:
                return None, None, node
            node = resp.obj
        return None, None, node

    def _try_update_node_health(self, node: Node, zone: str) -> tuple[bool, str | None, str | None, Node | None]:
        now = self.ctx.engine.now
        name = node.metadata.name
        self._settled.pop(name, None)
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
            transition = now if saved.last_transition_time != ready.last_transition_time else health.ready_transition_timestamp
            health = NodeHealth(node.conditions, now, transition)  # NOTE: the remembered Lease is dropped
            branch = "status-posted"
        # The comparison uses the Lease remembered *before* this pass, but a new record (any
        # branch above) starts without one: after a status post the same Lease counts as new
        # in the next pass (docs/kubernetes-node-health.md §3.2, its quirk).
        lease = self.api.cached("leases", name, "kube-node-lease")
        lease_renewed = False
        if _lease_is_news(lease, *saved_lease):
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
            return True, observed.status, ready.status if ready else None, None

        # NodeReady or lease last seen longer ago than the grace period: mark Unknown.
        conditions = list(node.conditions)
        by_type = {c.type: i for i, c in enumerate(conditions)}
        for ctype in UNKNOWN_CONDITIONS:
            if ctype not in by_type:
                conditions.append(NodeCondition(ctype, "Unknown", "NodeStatusNeverUpdated", "Kubelet never posted node status.",
                                                node.metadata.creation, now))
            else:
                c = conditions[by_type[ctype]]
                if c.status != "Unknown":
                    conditions[by_type[ctype]] = c.evolve(status="Unknown", reason="NodeStatusUnknown",
                                                         message="Kubelet stopped posting node status.",
                                                         last_transition_time=now)
        current = next(c for c in conditions if c.type == "Ready")
        if current == observed:
            record.current = current.status
            if branch == "no-news" and ready is not None:
                self._settled[name] = (node, health, health.probe_timestamp, record)
            return True, observed.status, current.status, None
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
            return False, observed.status, None, None
        self.health[name] = NodeHealth(resp.obj.conditions, health.probe_timestamp, now,
                                       lease.renew_time if lease else None, lease is not None)
        record.current = "Unknown"
        record.branch = "mark-unknown"
        return True, observed.status, "Unknown", resp.obj

    # -- the steady path -------------------------------------------------------------------------
    #
    # Most nodes of a large cluster are healthy and unchanged from one pass to the next; for
    # them a pass only moves the probe timestamp when the Lease is new. `_steady[name]` holds
    # the Node object a full evaluation last found Ready=True with nothing to do (no taints,
    # not queued, not retried), with its zone and whether it counts for the zone state. A new
    # version of that Node (the informer's handler) takes it out again.
    #
    # A pass looks only at the steady nodes that can have news: a new Lease became visible
    # since the last pass (the API server's change log: noted, see _steady_sweep), the node
    # just became steady, or its probe timestamp is older than the grace period (deadline
    # batches). For every other steady node the full path would change nothing and find
    # Ready=True; its pass record is derived when asked (`pass_record`). Anything else goes
    # through the full path, in name order as before. `tests/simulation/test_shortcuts.py`
    # runs with and without this path.

    def _note_steady(self, node: Node, zone: str, observed: str, current: str) -> None:
        name = node.metadata.name
        health = self.health.get(name)
        ready = node.condition("Ready")
        if (observed == current == "True" and not node.taints and name not in self.queues[zone]
                and name not in self.nodes_to_retry and health is not None and health.ready is not None
                and ready is not None and health.ready.last_heartbeat_time == ready.last_heartbeat_time):
            self._enter_steady(name, node, zone)

    def _unsteady_names(self, names: tuple[str, ...]) -> list[str]:
        """The nodes of `names` (in order) that are not steady: what a pass walks. Kept until the
        node set or the steady set changes; in a zone outage a third of the nodes stays off the
        steady path, and skipping the other 3,333 one by one, twice a pass, was a visible cost."""
        cached_names, changes, unsteady = self._unsteady
        if cached_names is not names or changes != self._steady_changes:
            steady = self._steady
            unsteady = [name for name in names if name not in steady]
            self._unsteady = (names, self._steady_changes, unsteady)
        return unsteady

    def _enter_steady(self, name: str, node: Node, zone: str) -> None:
        counted = LABEL_EXCLUDE_DISRUPTION not in node.metadata.labels
        self._steady_changes += 1
        self._steady[name] = (node, zone, counted)
        if counted:
            self._steady_counts[zone] = self._steady_counts.get(zone, 0) + 1
        self._examine_next.add(name)  # its health record may be new: look at it next pass

    def _leave_steady(self, name: str) -> None:
        """Back to the full path; the pass record it had as a steady node is kept."""
        entry = self._steady.get(name)
        if entry is None:
            return
        self._steady_changes += 1
        self._apply_renewal(name)
        record = self.last_pass.get(name)
        if record is None or record.t != self._steady_time:
            self.last_pass[name] = self._steady_record(name, entry[1])
        del self._steady[name]
        if entry[2]:
            self._steady_counts[entry[1]] -= 1

    def _steady_sweep(self, now: int) -> None:
        """The steady nodes that can have news this pass; those that fail go to the full path.

        A steady node's new Lease is only noted here (`_renewals`: this pass's time and the
        renewTime, what the full path would store); its health record takes it when someone
        reads the record (`_apply_renewal`) or when its old probe timestamp's batch comes due,
        which moves it to the batch of the new one. A healthy node renews every 10 s and has a
        grace period of 50 s: one look at its record per grace period instead of five."""
        steady = self._steady
        examine = self._examine_next
        self._examine_next = set()
        log = self._lease_log
        written: dict[str, Lease | None] = {}  # the Lease each steady node has at this pass
        changed = self._leases_changed = set()  # the other nodes whose Lease was written
        while log and log[0][0] <= now:
            _visible, name, lease = log.popleft()
            if name not in steady:
                changed.add(name)
            elif name not in examine:
                written[name] = lease
        for name, lease in written.items():
            self._note_lease(name, now, lease)
        grace = self.cm.node_monitor_grace_period
        batches, times = self._probe_batches, self._batch_times
        while times and times[0] + grace < now:
            t = heapq.heappop(times)
            for name in batches.pop(t):
                if name not in steady or self.health[name].probe_timestamp != t:
                    continue  # left, or already in a later batch
                self.api.cached("leases", name, "kube-node-lease")  # the versions noted meanwhile settle
                probe = self._apply_renewal(name)
                if probe == t:
                    examine.add(name)  # no new Lease since t: its grace period ran out
                else:
                    self._batch(name, probe)
                    if probe + grace < now:
                        examine.add(name)
        # Each look is on its own node; only the ones that leave take effect in an order that
        # shows (their records), so only they are sorted.
        leaving = [name for name in examine if (entry := steady.get(name)) is not None
                   and not self._steady_pass(name, entry[1], now)]
        for name in sorted(leaving):
            self._leave_steady(name)
        self._steady_time = now

    def _note_lease(self, name: str, now: int, lease: Lease | None) -> None:
        """A steady node's Lease was written (`lease`: the version this pass sees, from the
        change log, as `cached` would give it): note it if it is news."""
        pending = self._renewals.get(name)
        if pending is not None:
            news = _lease_is_news(lease, True, pending[1])
        else:
            health = self.health[name]
            news = _lease_is_news(lease, health.has_lease, health.lease_renew_time)
        if news:
            self._renewals[name] = (now, lease.renew_time)

    def _apply_renewal(self, name: str) -> int:
        """Puts a noted Lease renewal into the node's health record; returns its probe timestamp."""
        health = self.health[name]
        pending = self._renewals.pop(name, None)
        if pending is not None:
            health.has_lease = True
            health.probe_timestamp, health.lease_renew_time = pending
        return health.probe_timestamp

    def _probe_of(self, name: str) -> int:
        """A node's probe timestamp as of the last pass (a noted renewal included)."""
        pending = self._renewals.get(name)
        return pending[0] if pending is not None else self.health[name].probe_timestamp

    def _batch(self, name: str, probe: int) -> None:
        """Looked at again when `probe` is older than the grace period."""
        batch = self._probe_batches.get(probe)
        if batch is None:
            batch = self._probe_batches[probe] = []
            heapq.heappush(self._batch_times, probe)
        batch.append(name)

    def _steady_pass(self, name: str, zone: str, now: int) -> bool:
        """The pass for an unchanged healthy node; False (nothing changed) if it needs the full path."""
        if name in self.queues[zone] or name in self.nodes_to_retry:
            return False
        self._apply_renewal(name)
        health = self.health[name]
        lease = self.api.cached("leases", name, "kube-node-lease")
        renewed = _lease_is_news(lease, health.has_lease, health.lease_renew_time)
        probe = now if renewed else health.probe_timestamp
        if now > probe + self.cm.node_monitor_grace_period:
            return False
        if renewed:
            health.has_lease = True
            health.lease_renew_time = lease.renew_time
            health.probe_timestamp = now
        self._batch(name, probe)
        return True

    def _steady_record(self, name: str, zone: str) -> PassRecord:
        """What the full path would have recorded for a steady node in the last pass."""
        t, probe, grace = self._steady_time, self._probe_of(name), self.cm.node_monitor_grace_period
        return PassRecord(t, "lease-renewed" if probe == t else "no-news", probe, grace, probe + grace,
                          "True", "True", zone)

    def pass_record(self, name: str) -> PassRecord | None:
        """The last monitor pass's record for a node (the flowchart's highlighted branch)."""
        entry = self._steady.get(name)
        record = self.last_pass.get(name)
        if entry is not None and (record is None or record.t != self._steady_time):
            return self._steady_record(name, entry[1])
        return record

    def _settled_pass(self, name: str, node: Node, zone: str, now: int) -> tuple[str, str] | None:
        """An unhealthy node already marked Unknown whose Node, health record and Lease are all
        unchanged since the last pass: that pass's verdict again, without rebuilding its
        conditions (each pass of a zone outage re-checks every such node). None: full path."""
        settled = self._settled.get(name)
        if settled is None or settled[0] is not node:
            return None
        _node, health, probe, last = settled
        if self.health.get(name) is not health or health.probe_timestamp != probe:
            return None
        # A Lease nobody wrote since the last pass is the one that pass found no news in.
        if name in self._leases_changed and _lease_is_news(
                self.api.cached("leases", name, "kube-node-lease"), health.has_lease, health.lease_renew_time):
            return None
        record = PassRecord(now, "no-news", probe, last.grace, last.deadline, last.observed, last.current, zone)
        self.last_pass[name] = record
        return last.observed, last.current

    # -- pods ----------------------------------------------------------------------------------

    def _mark_pods_not_ready(self, node: Node, observed: str, current: str) -> None:
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
                                   "every pod on the node NotReady (pods on a node whose kubelet posted False are not marked).",
                                   UTIL_SOURCE)

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        """Pod worker: a pod newly bound to a node whose saved Ready is not True is marked at once."""
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
        conditions = set_pod_condition(new.conditions, "Ready", "False", self.ctx.engine.now, ready.reason, ready.message)
        if conditions != new.conditions:
            self.api.update(self.actor, new.evolve(conditions=conditions), subresource="status")
            self.api.record_event(self.actor, new, "NodeNotReady", "Node is not ready", type_="Warning",
                                  source_component="node-controller")

    # -- NoExecute taints ----------------------------------------------------------------------------

    def _process_taint_base_eviction(self, node: Node, observed: str, zone: str) -> None:
        name = node.metadata.name
        if observed == "False":
            if node.has_taint(TAINT_UNREACHABLE, NO_EXECUTE):
                self._swap_taints(node, TAINT_NOT_READY, TAINT_UNREACHABLE, "nlc.swap-taint",
                                  "Ready went from Unknown to False: the NoExecute taint is swapped at once, without the rate limiter.")
            elif self._mark_node_for_tainting(node, "False", zone):
                self._enqueued(name, zone, observed)
        elif observed == "Unknown":
            if node.has_taint(TAINT_NOT_READY, NO_EXECUTE):
                self._swap_taints(node, TAINT_UNREACHABLE, TAINT_NOT_READY, "nlc.swap-taint",
                                  "Ready went from False to Unknown: the NoExecute taint is swapped at once, without the rate limiter.")
            elif self._mark_node_for_tainting(node, "Unknown", zone):
                self._enqueued(name, zone, observed)
        elif observed == "True" and (node.taints or name in self.queues[zone]):
            self._mark_node_as_reachable(node, reason="Ready is True")

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
            f"Ready was {observed} at the start of this pass: the node joins its zone's rate-limited taint queue.", SOURCE)
        self._ensure_tainting_tick()

    def _forget_waiting(self, name: str) -> None:
        self._waiting.discard((name, "False"))
        self._waiting.discard((name, "Unknown"))

    def _mark_node_for_tainting(self, node: Node, status: str, zone: str) -> bool:
        q = self.queues[zone]
        key = TAINT_NOT_READY if status == "False" else TAINT_UNREACHABLE
        if not node.has_taint(key, NO_EXECUTE):
            q.remove(node.metadata.name)
        return q.add(node.metadata.name, node.metadata.uid, self.ctx.engine.now)

    def _mark_node_as_reachable(self, node: Node, reason: str) -> bool:
        name = node.metadata.name
        removed_taints = [k for k in (TAINT_UNREACHABLE, TAINT_NOT_READY) if node.has_taint(k, NO_EXECUTE)]
        for key in (TAINT_UNREACHABLE, TAINT_NOT_READY):
            if node.has_taint(key, NO_EXECUTE):
                self._remove_taints(name, [(key, NO_EXECUTE)])
        zone = zone_key(node)
        dequeued = self.queues[zone].remove(name) if zone in self.queues else False
        self._forget_waiting(name)
        if removed_taints or dequeued:
            self.ctx.recorder.decision(LANE, "nlc.mark-reachable", name, {
                "removedTaints": removed_taints, "dequeued": dequeued, "reason": reason,
            }, "NoExecute taints removed" if removed_taints else "left the taint queue",
                f"markNodeAsReachable ({reason}): remove the not-ready/unreachable NoExecute taints and drop the node from the queue.",
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
        self._tick_timer = self.ctx.engine.call_at(next_tick, self._no_execute_tainting_pass)

    def _no_execute_tainting_pass(self) -> None:
        self._tick_timer = None
        if not self.running:
            return
        now = self.ctx.engine.now
        for zone in sorted(self.queues):
            q = self.queues[zone]
            q.try_process(now, lambda item, z=zone: self._taint_head(item, z))
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
                                       "The node reached the head of the queue but is Ready again: the token is spent, no taint.",
                                       SOURCE)
            return True, 0
        ok = self._swap_taints(node, add, opposite, "nlc.taint-no-execute",
                               f"Token granted by zone {zone or '(unlabelled)'}'s limiter at {_rate(q)}/s: "
                               f"Ready is {ready.status} now, so {add.split('/')[-1]}:NoExecute is added.",
                               inputs={"zone": zone, "zoneState": self.zone_states.get(zone), "rate": _rate(q),
                                       "waited": (self.ctx.engine.now - item.added_at) / US})
        return ok, 0

    def _swap_taints(self, node: Node, add_key: str, remove_key: str, rule: str, explain: str,
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
            self._remove_taints(name, [(remove_key, NO_EXECUTE)])
        self.ctx.recorder.decision(LANE, rule, name, {**(inputs or {}), "add": f"{add_key}:NoExecute",
                                                      "remove": f"{remove_key}:NoExecute"},
                                   f"{add_key.split('/')[-1]}:NoExecute" if ok else "taint patch failed", explain, UTIL_SOURCE)
        return ok

    def _remove_taints(self, name: str, taints: list[tuple[str, str]]) -> None:
        current = self.api.current("nodes", name)
        if current is None or not any(current.has_taint(k, e) for k, e in taints):
            return
        self.api.patch(self.actor, "nodes", name,
                       lambda n: n.evolve(taints=tuple(t for t in n.taints if (t.key, t.effect) not in taints)))

    # -- NoSchedule taints (taint nodes by condition) --------------------------------------------------

    def _on_node(self, old: Node | None, new: Node | None) -> None:
        name = (new or old).metadata.name
        if name in self._steady:
            self._leave_steady(name)  # a new Node version: the next pass takes the full path
        if new is None or not self.running:
            return
        self._queue_no_schedule(new.metadata.name)

    def _queue_no_schedule(self, name: str) -> None:
        if name in self._no_schedule_queued:
            return
        self._no_schedule_queued.add(name)
        self.ctx.engine.call_later(0, self._do_no_schedule_tainting_pass, name)

    def _do_no_schedule_tainting_pass(self, name: str) -> None:
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
            self.api.patch(self.actor, "nodes", name, lambda n: n.evolve(
                taints=n.taints + tuple(Taint(k, NO_SCHEDULE, "", now) for k in to_add if not n.has_taint(k, NO_SCHEDULE))))
        if to_del:
            self._remove_taints(name, [(k, NO_SCHEDULE) for k in to_del])
        ready = node.condition("Ready")
        self.ctx.recorder.decision(LANE, "nlc.no-schedule-taints", name, {
            "ready": ready.status if ready else None,
            "conditions": {c.type: c.status for c in node.conditions}, "unschedulable": node.unschedulable,
            "add": to_add, "remove": to_del,
        }, " ".join([f"+{k.split('/')[-1]}" for k in to_add] + [f"-{k.split('/')[-1]}" for k in to_del]),
            "doNoScheduleTaintingPass: each node update maps conditions to NoSchedule taints at once, with no rate limit.",
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

    def _add_zone(self, zone: str) -> None:
        self.zone_states[zone] = STATE_INITIAL
        self.queues[zone] = RateLimitedTimedQueue(self.cm.node_eviction_rate, self.ctx.engine.now)

    def compute_zone_state(self, ready: int, not_ready: int) -> tuple[int, str]:
        """ComputeZoneState from the zone's count of Ready=True nodes and of the others."""
        if ready == 0 and not_ready > 0:
            return not_ready, STATE_FULL
        if not_ready > 2 and not_ready / (not_ready + ready) >= self.cm.unhealthy_zone_threshold:
            return not_ready, STATE_PARTIAL
        return not_ready, STATE_NORMAL

    def _rate_for(self, state: str, size: int) -> float:
        if state == STATE_PARTIAL:
            return self.cm.secondary_node_eviction_rate if size > self.cm.large_cluster_size_threshold else 0.0
        return self.cm.node_eviction_rate  # Normal and FullDisruption (HealthyQPSFunc)

    def _set_limiter(self, zone: str, size: int, state: str) -> None:
        q = self.queues[zone]
        rate = self._rate_for(state, size)
        if q.swap_limiter(rate, self.ctx.engine.now):
            self.ctx.recorder.decision(LANE, "nlc.swap-limiter", None, {"zone": zone, "state": state, "size": size,
                                                                        "rate": rate}, f"limiter {rate}/s",
                                       f"Zone {zone or '(unlabelled)'} is {state} with {size} nodes: its taint rate becomes {rate}/s.",
                                       SOURCE)

    def _handle_disruption(self, zone_counts: dict[str, list[int]], names: tuple[str, ...], now: int) -> None:
        new_states: dict[str, str] = {}
        all_now = True
        for zone in sorted(zone_counts):
            ready, not_ready = zone_counts[zone]
            _not_ready, state = self.compute_zone_state(ready, not_ready)
            if state != STATE_FULL:
                all_now = False
            new_states[zone] = state
            self.zone_sizes[zone] = ready + not_ready
            if zone not in self.zone_states:
                self._add_zone(zone)
        all_before = True
        for zone in sorted(self.zone_states):
            if zone not in zone_counts:
                del self.zone_states[zone]
                self.zone_sizes.pop(zone, None)
                for name in [n for n, entry in self._steady.items() if entry[1] == zone]:
                    self._leave_steady(name)  # the zone is added again by the next pass's full path
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
                                       "Every zone is fully disrupted: the controller assumes its own connectivity is the "
                                       "problem, removes every NoExecute taint and stops tainting.", SOURCE)
            for name in names:
                latest = self.api.cached("nodes", name)
                current = self.api.current("nodes", name)
                self._mark_node_as_reachable(current or latest, reason="entering full disruption mode")
            for zone in sorted(self.zone_states):
                self.queues[zone].swap_limiter(0.0, now)
                self.zone_states[zone] = STATE_FULL
            return
        if all_before:
            self.ctx.recorder.decision(LANE, "nlc.exit-master-disruption", None,
                                       {"zones": dict(new_states)}, "probe timestamps reset",
                                       "Some node is Ready again: every node gets a fresh grace period and each zone's "
                                       "limiter follows its own state again.", SOURCE)
            for name in list(self._steady):
                self._leave_steady(name)  # their probe timestamps move: the full path again
            for name in names:
                h = self.health.get(name)
                if h is not None:
                    h.probe_timestamp = now
                    h.ready_transition_timestamp = now
            for zone in sorted(self.zone_states):
                self._set_limiter(zone, sum(zone_counts[zone]), new_states[zone])
                self.zone_states[zone] = new_states[zone]
            return
        for zone in sorted(self.zone_states):
            state = new_states[zone]
            if self.zone_states[zone] == state:
                continue
            before = self.zone_states[zone]
            self._set_limiter(zone, sum(zone_counts[zone]), state)
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
            "nodes": {name: {"probeTimestamp": self._probe_of(name) / US,
                             "readyTransitionTimestamp": h.ready_transition_timestamp / US,
                             **(record.as_dict() if (record := self.pass_record(name)) else {})}
                      for name, h in sorted(self.health.items())},
            "zones": self.describe_zones(),
            "nextPass": self.next_pass_at / US if self.next_pass_at is not None else None,
            "gracePeriod": self.cm.node_monitor_grace_period / US,
            "startupGracePeriod": self.cm.node_startup_grace_period / US,
        }


def _lease_is_news(lease: Lease | None, has_saved: bool, saved_renew: int | None) -> bool:
    """The Lease counts as a heartbeat when the controller remembers none, or an older renewTime."""
    return lease is not None and lease.renew_time is not None and (
        not has_saved or saved_renew is None or saved_renew < lease.renew_time)


def _rate(q: RateLimitedTimedQueue) -> float:
    return q.limiter.qps
