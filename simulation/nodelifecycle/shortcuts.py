"""Cost shortcuts of monitorNodeHealth: the same results as the full path, for less work.

A 5,000-node hour is 3.6 M node checks. Most nodes of a large cluster are healthy and
unchanged from one pass to the next, and in a zone outage a third of them is Unknown and
unchanged: for both, a pass finds what the last one found. `controller.py` is the algorithm;
it asks `MonitorShortcuts` which nodes a pass must look at and whether a node's last verdict
still holds. Both shortcuts can be switched off (`NodeLifecycleController(steady_nodes=False,
settled_nodes=False)`): `tests/simulation/test_shortcuts.py` compares every event of runs
with and without each. docs/simulation-model.md describes them for a reader of the model.

Steady nodes: `steady[name]` holds the Node object a full evaluation last found Ready=True
with nothing to do (no taints, not queued, not retried), with its zone and whether it
counts for the zone state. A new version of that Node (the informer's handler) takes it
out again. A pass looks only at the steady nodes that can have news: a new Lease became
visible since the last pass (the API server's change log: noted, see `_sweep`), the node
just became steady, or its probe timestamp is older than the grace period (deadline
batches). For every other steady node the full path would change nothing and find
Ready=True; its pass record is derived when asked (`pass_record`). Anything else goes
through the full path, in name order as before (the simulation's order, see `monitor_node_health`).

Settled nodes: a node already marked Unknown whose Node object, health record and Lease are
all unchanged since the last pass gets that pass's verdict again, without rebuilding its
conditions. Its taint queue handling still runs every pass, as in the real controller.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from ..apiserver import APIServer
from ..objects import LABEL_EXCLUDE_DISRUPTION, Lease, Node
from .health import NodeHealth, PassRecord, lease_is_news
from .rate_limited_queue import RateLimitedTimedQueue


class MonitorMemory(Protocol):
    """What the shortcuts read and keep up to date of the controller's memory."""

    health: dict[str, NodeHealth]
    last_pass: dict[str, PassRecord]
    queues: dict[str, RateLimitedTimedQueue]
    nodes_to_retry: set[str]


class SteadyNode(NamedTuple):
    """A node on the steady path, as a full evaluation last found it."""

    node: Node  # the Node object that evaluation read; a new version takes the node off the path
    zone: str
    counted: bool  # counts for its zone's state (not excluded from disruption checks)


@dataclass(slots=True)
class NotedRenewal:
    """A steady node's new Lease, noted by the pass that saw it: what the full path would store."""

    probe_timestamp: int  # the time of that pass
    renew_time: int | None


class SettledNode(NamedTuple):
    """An Unknown node's last full evaluation, which found nothing new and nothing to write."""

    node: Node
    health: NodeHealth
    probe_timestamp: int
    record: PassRecord


class VisitList(NamedTuple):
    """The names a pass walks (those not steady), and what they were computed from."""

    names: tuple[str, ...]
    steady_changes: int
    unsteady: list[str]


class MonitorShortcuts:
    """The steady and settled nodes of one controller memory (made anew when a leader starts).
    With both options off no node is steady or settled: every node takes the full path."""

    def __init__(self, memory: MonitorMemory, api: APIServer, grace_period: int, *,
                 steady_nodes: bool = True, settled_nodes: bool = True) -> None:
        self.memory = memory
        self.api = api
        self.grace_period = grace_period
        self.steady_nodes = steady_nodes
        self.settled_nodes = settled_nodes
        self.steady: dict[str, SteadyNode] = {}
        self._steady_counts: dict[str, int] = {}  # zone -> steady nodes that count for its state
        self._visits = VisitList((), -1, [])
        self._steady_changes = 0
        self._steady_time: int | None = None  # the pass the steady nodes' records belong to
        self._examine_next: set[str] = set()
        self._probe_batches: dict[int, list[str]] = {}  # probe timestamp -> steady nodes that had it
        self._batch_times: list[int] = []  # heap of the batches' probe timestamps
        self._renewals: dict[str, NotedRenewal] = {}
        self._leases_changed: set[str] = set()  # not steady, Lease written since the last pass
        self.settled: dict[str, SettledNode] = {}
        # which Leases may be news; the controller's memory starts empty, so does the log
        self._lease_log = api.change_log("leases")
        self._lease_log.clear()

    # -- the controller's pass -------------------------------------------------------------

    def start_pass(self, now: int) -> None:
        """Before the pass looks at any node: the steady nodes that can have news get their
        look now; those that fail it go back to the full path."""
        self._sweep(now)

    def nodes_to_visit(self, names: tuple[str, ...]) -> list[str]:
        """The nodes of `names` (in order) that are not steady: what a pass walks. Kept until the
        node set or the steady set changes; in a zone outage a third of the nodes stays off the
        steady path, and skipping the other 3,333 one by one, twice a pass, was a visible cost."""
        visits = self._visits
        if visits.names is not names or visits.steady_changes != self._steady_changes:
            steady = self.steady
            visits = self._visits = VisitList(names, self._steady_changes, [n for n in names if n not in steady])
        return visits.unsteady

    def zone_counts(self) -> dict[str, list[int]]:
        """[ready, not ready] per zone for the nodes the pass does not visit: all Ready=True."""
        return {zone: [n, 0] for zone, n in self._steady_counts.items() if n}

    def settled_verdict(self, name: str, node: Node, zone: str, now: int) -> tuple[str, str | None] | None:
        """(observed, current) Ready of a settled node: the last pass's verdict again, and its
        record. None: the node takes the full path (and is no longer settled)."""
        settled = self.settled.get(name)
        if settled is None:
            return None
        if not self._still_settled(name, node, settled):
            del self.settled[name]
            return None
        last = settled.record
        record = PassRecord(now, "no-news", settled.probe_timestamp, last.grace, last.deadline, last.observed,
                            last.current, zone)
        self.memory.last_pass[name] = record
        return last.observed, last.current

    def _still_settled(self, name: str, node: Node, settled: SettledNode) -> bool:
        """The same Node object, the same health record and probe timestamp, no new Lease."""
        health = settled.health
        if settled.node is not node or self.memory.health.get(name) is not health:
            return False
        if health.probe_timestamp != settled.probe_timestamp:
            return False
        # A Lease nobody wrote since the last pass is the one that pass found no news in.
        return name not in self._leases_changed or not lease_is_news(
            self.api.cached("leases", name, "kube-node-lease"), health.has_lease, health.lease_renew_time)

    def after_health_update(self, node: Node, now: int) -> None:
        """After a full tryUpdateNodeHealth that went through: an Unknown node with nothing new
        and nothing to write (past its grace period, no status write) is settled."""
        if not self.settled_nodes:
            return
        name = node.metadata.name
        health, record = self.memory.health[name], self.memory.last_pass[name]
        if record.branch == "no-news" and now > record.deadline:
            self.settled[name] = SettledNode(node, health, health.probe_timestamp, record)

    def after_turn(self, node: Node, zone: str, observed: str, current: str) -> None:
        """The end of a node's turn in the pass: a healthy node with nothing to do becomes steady."""
        if not self.steady_nodes:
            return
        name = node.metadata.name
        memory = self.memory
        health = memory.health.get(name)
        ready = node.condition("Ready")
        if (observed == current == "True" and not node.taints and name not in memory.queues[zone]
                and name not in memory.nodes_to_retry and health is not None and health.ready is not None
                and ready is not None and health.ready.last_heartbeat_time == ready.last_heartbeat_time):
            self._enter_steady(name, node, zone)

    # -- nodes that leave ----------------------------------------------------------------

    def node_updated(self, name: str) -> None:
        """A new version of the Node (the informer's handler): the next pass takes the full path."""
        if name in self.steady:
            self._leave_steady(name)

    def node_deleted(self, name: str) -> None:
        self._leave_steady(name)
        self.settled.pop(name, None)

    def zone_deleted(self, zone: str) -> None:
        """The zone is added again by the next pass's full path."""
        for name in [n for n, entry in self.steady.items() if entry.zone == zone]:
            self._leave_steady(name)

    def probe_timestamps_reset(self) -> None:
        """Exiting full disruption moves every probe timestamp: the full path again."""
        for name in list(self.steady):
            self._leave_steady(name)

    # -- records -------------------------------------------------------------------------

    def pass_record(self, name: str) -> PassRecord | None:
        """A steady node's record of the last pass when the pass did not visit it: what the
        visit would have written. None: the record in the controller's memory is the one."""
        entry = self.steady.get(name)
        if entry is not None:
            record = self.memory.last_pass.get(name)
            if record is None or record.t != self._steady_time:
                return self._steady_record(name, entry.zone)
        return None

    def probe_timestamp(self, name: str) -> int:
        """A node's probe timestamp as of the last pass (a noted renewal included)."""
        pending = self._renewals.get(name)
        return pending.probe_timestamp if pending is not None else self.memory.health[name].probe_timestamp

    # -- the steady path -----------------------------------------------------------------

    def _enter_steady(self, name: str, node: Node, zone: str) -> None:
        counted = LABEL_EXCLUDE_DISRUPTION not in node.metadata.labels
        self._steady_changes += 1
        self.steady[name] = SteadyNode(node, zone, counted)
        if counted:
            self._steady_counts[zone] = self._steady_counts.get(zone, 0) + 1
        self._examine_next.add(name)  # its health record may be new: look at it next pass

    def _leave_steady(self, name: str) -> None:
        """Back to the full path; the pass record it had as a steady node is kept."""
        entry = self.steady.get(name)
        if entry is None:
            return
        self._steady_changes += 1
        self._apply_renewal(name)
        record = self.memory.last_pass.get(name)
        if record is None or record.t != self._steady_time:
            self.memory.last_pass[name] = self._steady_record(name, entry.zone)
        del self.steady[name]
        if entry.counted:
            self._steady_counts[entry.zone] -= 1

    def _sweep(self, now: int) -> None:
        """The steady nodes that can have news this pass; those that fail go to the full path.

        A steady node's new Lease is only noted here (`_renewals`: this pass's time and the
        renewTime, what the full path would store); its health record takes it when someone
        reads the record (`_apply_renewal`) or when its old probe timestamp's batch comes due,
        which moves it to the batch of the new one. A healthy node renews every 10 s and has a
        grace period of 50 s: one look at its record per grace period instead of five."""
        steady = self.steady
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
        grace = self.grace_period
        batches, times = self._probe_batches, self._batch_times
        while times and times[0] + grace < now:
            t = heapq.heappop(times)
            for name in batches.pop(t):
                if name not in steady or self.memory.health[name].probe_timestamp != t:
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
                   and not self._steady_pass(name, entry.zone, now)]
        for name in sorted(leaving):
            self._leave_steady(name)
        self._steady_time = now

    def _note_lease(self, name: str, now: int, lease: Lease | None) -> None:
        """A steady node's Lease was written (`lease`: the version this pass sees, from the
        change log, as `cached` would give it): note it if it is news."""
        pending = self._renewals.get(name)
        if pending is not None:
            has_saved, saved_renew = True, pending.renew_time
        else:
            health = self.memory.health[name]
            has_saved, saved_renew = health.has_lease, health.lease_renew_time
        if lease_is_news(lease, has_saved, saved_renew):
            self._renewals[name] = NotedRenewal(now, lease.renew_time)

    def _apply_renewal(self, name: str) -> int:
        """Puts a noted Lease renewal into the node's health record; returns its probe timestamp."""
        health = self.memory.health[name]
        pending = self._renewals.pop(name, None)
        if pending is not None:
            health.has_lease = True
            health.probe_timestamp, health.lease_renew_time = pending.probe_timestamp, pending.renew_time
        return health.probe_timestamp

    def _batch(self, name: str, probe: int) -> None:
        """Looked at again when `probe` is older than the grace period."""
        batch = self._probe_batches.get(probe)
        if batch is None:
            batch = self._probe_batches[probe] = []
            heapq.heappush(self._batch_times, probe)
        batch.append(name)

    def _steady_pass(self, name: str, zone: str, now: int) -> bool:
        """The pass for an unchanged healthy node; False (nothing changed) if it needs the full path."""
        memory = self.memory
        if name in memory.queues[zone] or name in memory.nodes_to_retry:
            return False
        self._apply_renewal(name)
        health = memory.health[name]
        lease = self.api.cached("leases", name, "kube-node-lease")
        renewed = lease_is_news(lease, health.has_lease, health.lease_renew_time)
        probe = now if renewed else health.probe_timestamp
        if now > probe + self.grace_period:
            return False
        if renewed:
            health.has_lease = True
            health.lease_renew_time = lease.renew_time
            health.probe_timestamp = now
        self._batch(name, probe)
        return True

    def _steady_record(self, name: str, zone: str) -> PassRecord:
        """What the full path would have recorded for a steady node in the last pass."""
        t, probe, grace = self._steady_time, self.probe_timestamp(name), self.grace_period
        assert t is not None  # a node becomes steady in a pass
        return PassRecord(t, "lease-renewed" if probe == t else "no-news", probe, grace, probe + grace,
                          "True", "True", zone)
