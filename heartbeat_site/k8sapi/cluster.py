"""The objects of a run as its Kubernetes API serves them, kept current per process.

Where they come from (docs/kubectl.md, "Where the objects come from"):

- A run sent to viewers object by object (``detail.is_node_level`` false) has its whole state in
  the stored snapshot (``runstore.read_snapshot``); applying the ``write`` events logged after it
  gives the objects at the last published seq (docs/simulation-api.md, "Snapshot"). The pages are
  built the same way, so a drill hides here exactly what it hides there.
- A node-level run's snapshot is trimmed (no pods, no EndpointSlices): its objects come from the
  run rebuilt in this process (``replay.rebuild``, deterministic) and advanced to the published
  virtual time, with the commands the driver dated on the way.

Each process keeps one ``RunObjects`` per run it was asked about and brings it up to the run's
last seq on each request: a few log reads, not a rebuild. The changes it applies are kept
(``changes``) for watches, numbered by the objects' own resourceVersion (one counter per run, as
etcd's revision is one counter per cluster: ``simulation/apiserver.py``).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from heartbeat_site.k8sapi.status import K8sError
from heartbeat_site.live import detail, runstore
from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Run
from heartbeat_site.live.replay import rebuild
from simulation import Simulation

CHANGES_KEPT = 20_000  # watch events a process keeps per run; an older resourceVersion is 410 Gone
LOG_CHUNK = 5_000
IDLE_FORGET_SECONDS = 600.0  # a run nobody asked about for this long is dropped from the process
STORE_RESOURCES = ("nodes", "leases", "pods", "services", "endpointslices", "events")
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")

Key = tuple[str, str]  # (namespace, name)


@dataclass(frozen=True)
class Change:
    """One watch event: ``ADDED``, ``MODIFIED`` or ``DELETED`` of ``obj`` (its state after the write)."""

    rv: int
    resource: str
    type: str
    obj: dict


@dataclass
class RunObjects:
    run_id: str
    node_level: bool
    zero: datetime  # virtual time zero (the scenario's startTime)
    objects: dict[str, dict[Key, dict]] = field(default_factory=lambda: {r: {} for r in STORE_RESOURCES})
    last_seq: int = 0
    t: float = 0.0  # virtual seconds of the state last applied
    rv: int = 0  # the highest resourceVersion applied
    oldest_rv: int = 0  # changes after this one are all in ``changes``
    changes: deque[Change] = field(default_factory=lambda: deque(maxlen=CHANGES_KEPT))
    sim: Simulation | None = None  # node level: the run rebuilt here
    commands_seen: int = 0  # node level: the last command seq scheduled on ``sim``
    used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def now(self) -> datetime:
        """The run's virtual clock: what ages are measured against."""
        return self.zero + timedelta(seconds=self.t)

    def namespaces(self) -> list[str]:
        found = set(SYSTEM_NAMESPACES)
        for resource in ("pods", "services", "events", "leases", "endpointslices"):
            found.update(namespace for namespace, _ in self.objects[resource])
        return sorted(found)

    # -- bringing it up to date ----------------------------------------------------------------

    def load(self, snapshot: dict, last_seq: int) -> None:
        """Start from a full snapshot of the run at ``last_seq``."""
        for resource in STORE_RESOURCES:
            items = snapshot["objects"].get(resource) or ()
            self.objects[resource] = {_key(obj): obj for obj in items}
        self.last_seq = last_seq
        self.t = float(snapshot["t"])
        self.rv = max((_rv(obj) for items in self.objects.values() for obj in items.values()), default=0)
        self.oldest_rv = self.rv
        self.changes.clear()

    def apply(self, events: Iterable[dict]) -> None:
        """Apply the successful writes among ``events`` (docs/simulation-api.md, "Snapshot")."""
        for event in events:
            self.last_seq = max(self.last_seq, int(event["seq"]))
            self.t = max(self.t, float(event["t"]))
            if event["type"] != "write" or event.get("resource") not in self.objects:
                continue
            obj = event.get("object")
            if obj is None or (event.get("code") or 0) >= 300:
                continue
            store = self.objects[event["resource"]]
            key = _key(obj)
            if event.get("removed"):
                kind = "DELETED"
                store.pop(key, None)
            else:
                kind = "MODIFIED" if key in store else "ADDED"
                store[key] = obj
            rv = _rv(obj)
            self.rv = max(self.rv, rv)
            if len(self.changes) == self.changes.maxlen:
                self.oldest_rv = self.changes[0].rv
            self.changes.append(Change(rv, event["resource"], kind, obj))

    def changes_after(self, rv: int) -> list[Change] | None:
        """The changes after resourceVersion ``rv``, oldest first; None when older than kept."""
        if rv < self.oldest_rv:
            return None
        found = []
        for change in reversed(self.changes):
            if change.rv <= rv:
                break
            found.append(change)
        found.reverse()
        return found


def _key(obj: dict) -> Key:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name") or ""


def _rv(obj: dict) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


# -- the per-process cache ---------------------------------------------------------------------

_RUNS: dict[str, RunObjects] = {}
_RUNS_LOCK = threading.Lock()


def find_run(run_id: str) -> Run:
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        raise K8sError(404, f"the server could not find the requested resource (no run with id {run_id!r})")
    return run


def objects_of(run: Run) -> RunObjects:
    """The run's objects as of its last published seq (brought up to date under the run's lock)."""
    with _RUNS_LOCK:
        _forget_idle()
        current = _RUNS.get(run.id)
        if current is None:
            start = datetime.fromisoformat(run.document["startTime"].replace("Z", "+00:00")).astimezone(UTC)
            current = _RUNS[run.id] = RunObjects(run.id, detail.is_node_level(run.node_count), start)
        current.used = time.monotonic()
    with current.lock:
        refresh(current, run)
    return current


def _forget_idle() -> None:
    now = time.monotonic()
    for run_id in [r for r, objs in _RUNS.items() if now - objs.used > IDLE_FORGET_SECONDS]:
        del _RUNS[run_id]


def refresh(objs: RunObjects, run: Run) -> None:
    state = runstore.read_state(run.id)
    if "last_seq" in state:
        target_seq, target_t = int(state["last_seq"]), float(state["t"])
    else:  # Redis forgot the run (retention passed): what the database says it reached
        target_seq, target_t = run.last_seq, run.t_reached
    if objs.node_level:
        _advance_rebuilt(objs, run, target_t)
        return
    if objs.last_seq == 0 or objs.last_seq > target_seq or not _apply_log(objs, target_seq):
        _load_snapshot(objs, run, target_t)
        _apply_log(objs, target_seq)
    objs.t = max(objs.t, target_t)


def _apply_log(objs: RunObjects, target_seq: int) -> bool:
    """Apply the logged events up to ``target_seq``; False when the log no longer has them."""
    while objs.last_seq < target_seq:
        events = runstore.events_after(objs.run_id, objs.last_seq, LOG_CHUNK, upto=target_seq)
        if not events or int(events[0]["seq"]) != objs.last_seq + 1:
            return False
        objs.apply(events)
    return True


def _load_snapshot(objs: RunObjects, run: Run, target_t: float) -> None:
    stored = runstore.read_snapshot_text(run.id)
    if stored is not None:
        body = json.loads(stored)
        if body["snapshot"].get("detail") != detail.DETAIL:
            objs.load(body["snapshot"], int(body["last_seq"]))
            return
    # no usable snapshot in Redis (an ended run past its retention): the run rebuilt here
    sim = rebuild(run)
    sim.run_until(target_t)
    snapshot = sim.snapshot()
    objs.load(snapshot, int(snapshot["last_seq"]))


def _advance_rebuilt(objs: RunObjects, run: Run, target_t: float) -> None:
    """Node level: advance the run rebuilt in this process to ``target_t``."""
    if objs.sim is None or objs.sim.now > target_t:
        objs.sim = rebuild(run)
        objs.commands_seen = max((c.seq for c in _fault_commands(run, 0)), default=0)
        objs.sim.run_until(target_t)
        snapshot = objs.sim.snapshot()
        objs.load(snapshot, int(snapshot["last_seq"]))
        objs.t = target_t
        return
    if target_t <= objs.sim.now:
        return
    for command in _fault_commands(run, objs.commands_seen):  # dated by the driver since the last advance
        if command.at >= objs.sim.now:
            objs.sim.schedule_command(command.payload, command.at)
        objs.commands_seen = command.seq
    objs.apply(event.to_dict() for event in objs.sim.run_until(target_t) if event.type == "write")
    objs.t = target_t


def _fault_commands(run: Run, after_seq: int) -> list[Command]:
    return list(Command.objects.filter(run=run, kind=CommandKind.FAULT, status=CommandStatus.APPLIED, seq__gt=after_seq)
                .exclude(at=None).order_by("seq"))
