"""The objects of a run as its Kubernetes API serves them, kept current per process.

Where they come from (docs/kubectl.md, "Where the objects come from"): a base, then the ``write``
events of the run's event log after it (docs/simulation-api.md, "Snapshot"). The base is

- for a run sent to viewers object by object (``detail.is_node_level`` false), its stored
  snapshot (``snapshot_and_frames.read_snapshot_text``), the very one the pages start from, so a drill hides
  here exactly what it hides there;
- for a node-level run, whose stored snapshot is trimmed (no pods, no EndpointSlices), the
  objects its driver holds, asked for over Redis as a page asks for a node's details
  (``detail.cluster_objects``): a rebuild of a 5,000-node run would take half a minute;
- when neither answers (a run past its Redis retention, or between drivers), the run replayed
  (``seek.state_text``, deterministic, in the replay process for a large run) to the published time.

Each process keeps one ``RunObjects`` per run it was asked about and brings it up to the run's
last seq on each request: a few log reads, not a rebuild. A node-level run's objects also follow its
event log in a thread of their own for ``FOLLOW_SECONDS`` after each request: a 5,000-node run at 10x
logs 5,000 events a second and its bounded log holds about 10 s of them, so a learner typing
``kubectl get pods -A`` every half minute would otherwise find the log moved on each time and wait
for the driver's whole state again. The changes it applies are kept per
resource (``changes``) for watches, numbered by the objects' own resourceVersion (one counter per
run, as etcd's revision is one counter per cluster: ``simulation/apiserver.py``).
"""

from __future__ import annotations

import bisect
import gc
import logging
import threading
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import orjson

from heartbeat_site.k8sapi.status import K8sError
from heartbeat_site.k8sapi.tables import RowCache
from heartbeat_site.k8sapi.workloads import WORKLOAD_RESOURCES, Workloads
from heartbeat_site.live.service import (
    Run,
    detail,
    detail_asks,
    driven,
    event_log,
    get_redis,
    replay_process,
    run_state,
    seek,
    snapshot_and_frames,
)
from simulation import load_scenario

log = logging.getLogger(__name__)

CHANGES_KEPT = 20_000  # watch events a process keeps per run and resource; an older resourceVersion is 410 Gone
LOG_CHUNK = 5_000
IDLE_FORGET_SECONDS = 600.0  # a run nobody asked about for this long is dropped from the process
FOLLOW_SECONDS = 300.0  # a node-level run's objects follow its log this long after the last request
FOLLOW_EVERY = 1.0  # seconds between the follower's log reads (the log holds ~10 s of a 5,000-node run)
DRIVER_WAIT_SECONDS = 15.0  # how long to wait for a driver's objects (it answers between slices)
LISTINGS_KEPT = 4  # paged lists per run whose continue pages a process can serve
LISTING_SECONDS = 120.0  # how long after its last page a paged list can be continued
# the real server's words for a continue token past its compaction (k8s.io/apiserver/pkg/storage/etcd3/store.go)
CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. "
                    "You can start a new list without the continue parameter.")
# the simulation's objects; a run older than its StatefulSets and volumes has none of the last four
SIM_RESOURCES = ("nodes", "leases", "pods", "services", "endpointslices", "events", "statefulsets",
                 "persistentvolumeclaims", "persistentvolumes", "volumeattachments")
NAMESPACED = ("pods", "services", "events", "leases", "endpointslices", "statefulsets", "persistentvolumeclaims")
STORE_RESOURCES = SIM_RESOURCES + WORKLOAD_RESOURCES
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")

Key = tuple[str, str]  # (namespace, name)

# The threads the API's synchronous work runs on (views, watch refreshes). Not the event loop's default
# executor, which the websocket consumers read the event log with (asyncio.to_thread): requests waiting
# seconds for a large run's objects (``objects_of``: one loads them, the others wait on its lock) must not
# hold up the pages' frames.
API_THREADS = ThreadPoolExecutor(max_workers=8, thread_name_prefix="k8sapi")


@dataclass(frozen=True)
class Change:
    """One watch event: ``ADDED``, ``MODIFIED`` or ``DELETED`` of ``obj`` (its state after the write).

    ``lines`` keeps the watch line each way of printing it was sent as, so that the watches of
    a process encode a change once between them (key: Table or not, and the virtual time of its
    ages)."""

    rv: int
    resource: str
    type: str
    obj: dict
    lines: dict = field(default_factory=dict, compare=False)


@dataclass
class Changes:
    """The recent changes of one resource, oldest first."""

    kept: deque[Change] = field(default_factory=lambda: deque(maxlen=CHANGES_KEPT))
    oldest_rv: int = 0  # changes after this one are all in ``kept``


@dataclass
class Listing:
    """The objects of one resource as the first page of a list saw them, at resourceVersion ``rv``.

    The real API server answers a list's continue pages at the resourceVersion of its first page
    (``k8s.io/apiserver/pkg/storage/etcd3/store.go``, ``GetList``): a paged list is one consistent
    state, and its pages need not catch up with the live run. ``store`` is a shallow copy (the
    objects themselves are replaced, never changed, by ``RunObjects.apply``), ``keys`` the sorted
    keys list of that state, which later refreshes replace rather than change."""

    rv: int
    now: datetime
    keys: list[Key]
    store: dict[Key, dict]
    used: float = field(default_factory=time.monotonic)


@dataclass
class RunObjects:
    run_id: str
    node_level: bool
    zero: datetime  # virtual time zero (the scenario's startTime)
    workloads: Workloads
    objects: dict[str, dict[Key, dict]] = field(default_factory=lambda: {r: {} for r in STORE_RESOURCES})
    last_seq: int = 0
    t: float = 0.0  # virtual seconds of the state last applied
    rv: int = 0  # the highest resourceVersion applied
    changes: dict[str, Changes] = field(default_factory=lambda: {r: Changes() for r in STORE_RESOURCES})
    used: float = field(default_factory=time.monotonic)
    # held while the log is applied and while a list reads the objects (``views``): a list is one
    # state, at the resourceVersion it names; re-entrant, as a list keeps its listing under it too
    lock: threading.RLock = field(default_factory=threading.RLock)
    follower: threading.Thread | None = None  # the thread keeping a node-level run's objects current
    _sorted: dict[str, list[Key]] = field(default_factory=dict)  # sorted keys per resource, while unchanged
    _listings: OrderedDict[tuple[str, int], Listing] = field(default_factory=OrderedDict)  # paged lists, LRU
    _rows: dict[tuple[str, ...], RowCache] = field(default_factory=dict)  # Table rows (``row_cache``)

    @property
    def now(self) -> datetime:
        """The run's virtual clock: what ages are measured against."""
        return self.zero + timedelta(seconds=self.t)

    def namespaces(self) -> list[str]:
        found = set(SYSTEM_NAMESPACES)
        for resource in NAMESPACED:
            found.update(namespace for namespace, _ in self.objects[resource])
        return sorted(found)

    def sorted_keys(self, resource: str) -> list[Key]:
        """The keys of ``resource`` in the API server's order, sorted once per set of keys (a list of
        45,000 pods is read in pages of 500: ``reads.list_body`` bisects this)."""
        keys = self._sorted.get(resource)
        if keys is None:
            keys = self._sorted[resource] = sorted(self.objects[resource])
        return keys

    def row_cache(self, store: str, *printing: str) -> RowCache:
        """The Table rows printed from the objects of ``store`` one way (``printing``: the resource's group
        and name, ``includeObject``), for ``tables.table``; those of deleted objects are dropped once they
        are many."""
        cache = self._rows.setdefault((store, *printing), {})
        live = self.objects[store]
        if len(cache) > len(live) + 1000:
            for key in [key for key in cache if key not in live]:
                del cache[key]
        return cache

    # -- paged lists -----------------------------------------------------------------------------

    def live_listing(self, resource: str) -> Listing:
        """The current objects of ``resource``, without a copy: for a list of one page."""
        return Listing(self.rv, self.now, self.sorted_keys(resource), self.objects[resource])

    def keep_listing(self, resource: str) -> Listing:
        """The current objects of ``resource``, kept for the continue pages of a list (``keep``)."""
        with self.lock:
            found = self._listings.get((resource, self.rv))
            if found is not None:
                return found
            listing = Listing(self.rv, self.now, self.sorted_keys(resource), dict(self.objects[resource]))
        return self.keep(resource, listing)

    def keep(self, resource: str, listing: Listing) -> Listing:
        """Keep ``listing`` for the continue pages of a list (``listing_at``). At most ``LISTINGS_KEPT``
        per run, each for ``LISTING_SECONDS`` after its last page: a 5,000-node run's pods are a copy of
        a 50,000-entry dict, a few MB."""
        with self.lock:
            self._forget_listings()
            self._listings[resource, listing.rv] = listing
            while len(self._listings) > LISTINGS_KEPT:
                self._listings.popitem(last=False)
        return listing

    def listing_at(self, resource: str, rv: int) -> Listing:
        """The listing a continue token names; 410 Expired when this process no longer keeps it, with the
        real server's message (``k8s.io/apiserver/pkg/storage/etcd3/store.go``): the client starts a new list."""
        with self.lock:
            self._forget_listings()
            found = self._listings.get((resource, rv))
            if found is None:
                raise K8sError(410, CONTINUE_EXPIRED)
            self._listings.move_to_end((resource, rv))
            found.used = time.monotonic()
            return found

    def _forget_listings(self) -> None:
        now = time.monotonic()
        for key in [key for key, listing in self._listings.items() if now - listing.used > LISTING_SECONDS]:
            del self._listings[key]

    # -- bringing it up to date ----------------------------------------------------------------

    def load(self, objects: dict, t: float, last_seq: int) -> None:
        """Start from every object of the run at ``last_seq`` (a snapshot's ``objects``)."""
        for resource in SIM_RESOURCES:
            items = objects.get(resource) or ()
            self.objects[resource] = {_key(obj): obj for obj in items}
        self.last_seq = last_seq
        self.t = float(t)
        self.rv = max((_rv(obj) for r in SIM_RESOURCES for obj in self.objects[r].values()), default=0)
        self._sorted.clear()
        self._rows.clear()
        self.workloads.reset(self.objects["pods"].values())
        for resource, found in self.workloads.objects(self.t, self.rv).items():
            self.objects[resource] = found
        for changes in self.changes.values():
            changes.kept.clear()
            changes.oldest_rv = self.rv

    def apply(self, events: Iterable[dict]) -> None:
        """Apply the successful writes among ``events`` (docs/simulation-api.md, "Snapshot")."""
        for event in events:
            self.last_seq = max(self.last_seq, int(event["seq"]))
            self.t = max(self.t, float(event["t"]))
            resource = event.get("resource")
            if event["type"] != "write" or resource not in SIM_RESOURCES:
                continue
            obj = event.get("object")
            if obj is None or (event.get("code") or 0) >= 300:
                continue
            store = self.objects[resource]
            key = _key(obj)
            old = store.get(key)
            if event.get("removed"):
                kind = "DELETED"
                store.pop(key, None)
                self._sorted.pop(resource, None)
            else:
                kind = "MODIFIED" if old is not None else "ADDED"
                if old is None:
                    self._sorted.pop(resource, None)
                store[key] = obj
            if resource == "pods":
                self.workloads.pod_changed(old, None if event.get("removed") else obj)
            self.rv = max(self.rv, _rv(obj))
            self._record(Change(_rv(obj), resource, kind, obj))
        self._update_workloads()

    def _update_workloads(self) -> None:
        """Deployments, ReplicaSets and DaemonSets whose counts the pods just applied changed."""
        for resource, found in self.workloads.objects(self.t, self.rv, only_changed=True).items():
            store = self.objects[resource]
            for key, obj in found.items():
                kind = "MODIFIED" if key in store else "ADDED"
                if kind == "ADDED":
                    self._sorted.pop(resource, None)
                store[key] = obj
                self._record(Change(self.rv, resource, kind, obj))

    def _record(self, change: Change) -> None:
        changes = self.changes[change.resource]
        if len(changes.kept) == changes.kept.maxlen:
            changes.oldest_rv = changes.kept[0].rv
        changes.kept.append(change)

    def changes_after(self, rv: int, resource: str) -> list[Change] | None:
        """The changes of ``resource`` after resourceVersion ``rv``, oldest first; None when older than kept."""
        changes = self.changes[resource]
        if rv < changes.oldest_rv:
            return None
        found = []
        for change in reversed(changes.kept):
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


def key_after(keys: list[Key], after: Key) -> int:
    """The index of the first key after ``after`` in sorted ``keys``."""
    return bisect.bisect_right(keys, after)


# -- the per-process cache ---------------------------------------------------------------------

_RUNS: dict[str, RunObjects] = {}
_RUNS_LOCK = threading.Lock()


def find_run(run_id: str) -> Run:
    run = Run.objects.filter(pk=run_id).first()
    if run is None:
        raise K8sError(404, f"the server could not find the requested resource (no run with id {run_id!r})")
    if not run.simulated:  # a real cluster's run: its own API server is the one to ask (docs/observe.md)
        raise K8sError(404, f"the server could not find the requested resource (run {run_id!r} is a {run.kind} of "
                            "a real cluster: ask that cluster's API server)")
    return run


def kept_objects(run: Run) -> RunObjects:
    """The run's objects as this process keeps them, not brought up to date (for a list's continue
    pages, read at their first page's resourceVersion); 410 Expired when the process does not keep them."""
    with _RUNS_LOCK:
        current = _RUNS.get(run.id)
        if current is None:
            raise K8sError(410, CONTINUE_EXPIRED)
        current.used = time.monotonic()
    return current


def objects_of(run: Run) -> RunObjects:
    """The run's objects as of its last published seq (brought up to date under the run's lock)."""
    with _RUNS_LOCK:
        _forget_idle()
        current = _RUNS.get(run.id)
        if current is None:
            start = datetime.fromisoformat(run.document["startTime"].replace("Z", "+00:00")).astimezone(UTC)
            workloads = Workloads(load_scenario(run.document).document, start, uuid.uuid5(uuid.NAMESPACE_URL, run.id),
                                  run.seed)
            current = _RUNS[run.id] = RunObjects(run.id, detail.is_node_level(run.node_count), start, workloads)
        current.used = time.monotonic()
    with current.lock:
        refresh(current, run)
        if current.node_level and (current.follower is None or not current.follower.is_alive()):
            current.follower = threading.Thread(target=_follow, args=(current,), daemon=True,
                                                name=f"k8sapi-follow-{run.id}")
            current.follower.start()
    return current


def _follow(objs: RunObjects) -> None:
    """Apply the run's new events every ``FOLLOW_EVERY`` seconds while requests come; stop when none
    came for ``FOLLOW_SECONDS``, or when the log moved past (the next request loads a base again)."""
    try:
        while time.monotonic() - objs.used < FOLLOW_SECONDS:
            time.sleep(FOLLOW_EVERY)
            state = run_state.read_state(objs.run_id)
            if "last_seq" not in state:
                return
            with objs.lock:
                if not _apply_log(objs, int(state["last_seq"])):
                    return
                objs.t = max(objs.t, float(state["t"]))
    except Exception:  # Redis away: the next request loads what it needs
        log.warning("run %s: the API's objects stopped following the event log", objs.run_id, exc_info=True)


def _forget_idle() -> None:
    now = time.monotonic()
    for run_id in [r for r, objs in _RUNS.items() if now - objs.used > IDLE_FORGET_SECONDS]:
        del _RUNS[run_id]


def refresh(objs: RunObjects, run: Run) -> None:
    state = run_state.read_state(run.id)
    if "last_seq" in state:
        target_seq, target_t = int(state["last_seq"]), float(state["t"])
    else:  # Redis forgot the run (retention passed): what the database says it reached
        target_seq, target_t = run.last_seq, run.t_reached
    if objs.last_seq == 0 or objs.last_seq > target_seq or not _apply_log(objs, target_seq):
        with collector_paused():
            _load_base(objs, run, target_t)
            _apply_log(objs, target_seq)
    objs.t = max(objs.t, target_t)


def _apply_log(objs: RunObjects, target_seq: int) -> bool:
    """Apply the logged events up to ``target_seq``; False when the log no longer has them."""
    while objs.last_seq < target_seq:
        texts = event_log.event_texts_after(objs.run_id, objs.last_seq, LOG_CHUNK, upto=target_seq)
        if not texts or texts[0][0] != objs.last_seq + 1:
            return False
        objs.apply(orjson.loads(text) for _, text in texts)  # orjson: a 5,000-node run at 10x logs 5,000 a second
    return True


def _load_base(objs: RunObjects, run: Run, target_t: float) -> None:
    if not objs.node_level:
        stored = snapshot_and_frames.read_snapshot_text(run.id)
        if stored is not None:
            body = orjson.loads(stored)
            if body["snapshot"].get("detail") != detail.DETAIL:
                objs.load(body["snapshot"]["objects"], body["snapshot"]["t"], int(body["last_seq"]))
                return
    elif driven(run.id):
        asked = time.monotonic()
        answer = _ask_driver(run.id)
        if answer is not None:
            answered = time.monotonic()
            objs.load(answer["objects"], answer["t"], int(answer["last_seq"]))
            log.info("run %s: the API's objects from its driver, at seq %d (answered and parsed in %.1f s, "
                     "loaded in %.1f s)", run.id, objs.last_seq, answered - asked, time.monotonic() - answered)
            return
    # nobody has the objects (an ended run past its retention, a driver not answering): replayed, beside
    # this process's event loop for a large run (heartbeat_site/live/lookback/replay_process.py)
    log.info("run %s: the API's objects replayed to t=%.1f s", run.id, target_t)
    text = replay_process.replay(seek.state_text, run, target_t, t=target_t)
    snapshot = orjson.loads(text)
    objs.load(snapshot["objects"], snapshot["t"], int(snapshot["last_seq"]))


def _ask_driver(run_id: str) -> dict | None:
    """The driver's objects (``detail.cluster_objects``), or None when it does not answer with them."""
    reply = f"{detail_asks.asks_key(run_id)}:{detail.OBJECTS_ASK}:{uuid.uuid4().hex}"
    get_redis().rpush(detail_asks.asks_key(run_id), orjson.dumps({"kind": detail.OBJECTS_ASK, "reply": reply}))
    text = detail_asks.wait_answer(reply, DRIVER_WAIT_SECONDS)
    if text is None:
        return None
    answer = orjson.loads(text)
    return answer if answer.get("type") == detail.OBJECTS_ASK else None


@contextmanager
def collector_paused() -> Iterator[None]:
    """Loading ~60,000 objects allocates ~a million dicts, and a Table of 50,000 pods 400,000 objects
    that live until it is sent: without the collector, a third of the time."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
