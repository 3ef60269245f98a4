"""kube-apiserver model: the store, resourceVersions, optimistic concurrency, admission,
watches feeding a shared informer cache, request latency, partitions and injected failures.

Components never touch each other: kubelets write Leases and Node status, controllers watch
through the informer cache and write back (docs/architecture.md §2.2). Every write that
reaches this server is one `write` event, i.e. one audit record.

Requests from kubelets travel through `request`: the process that sends one sleeps for the
API latency (or until its client's timeout while the node is partitioned or the server too
slow), then continues with the response (`then`); they can be made to fail.
Controllers write through `do`, which applies at once (their latency is not what the
lessons are about; the NodeLifecycleController models its pass duration itself).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from .clock import MS, US, WallClock
from .engine import Engine, Process
from .events import Recorder, SimEvent
from .objects import (
    API_VERSION,
    NO_EXECUTE,
    TAINT_NOT_READY,
    TAINT_UNREACHABLE,
    Event,
    Node,
    ObjectMeta,
    Pod,
    Taint,
    Toleration,
    with_meta,
    with_version,
)

Key = tuple[str, str]  # (namespace, name)
Handler = Callable[[Any, Any], None]  # (old, new); new is None on delete


@dataclass(frozen=True, slots=True)
class Actor:
    """Who sends a request: the audit username, the diagram lane, and where it runs."""

    user: str
    component: str
    node: str | None = None
    timeout: int = 10 * US  # kubelet heartbeat client: min(nodeStatusUpdateFrequency, lease duration)


class Response(NamedTuple):
    """An API response. A named tuple: one is made per request (millions in a large run), and
    a tuple is built in C where a frozen dataclass sets each field through object.__setattr__."""

    code: int
    obj: Any = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return 200 <= self.code < 300


class Request:
    """A request from a kubelet that is not going straight through (`APIServer.request`)."""

    __slots__ = ("proc", "actor", "verb", "resource", "name", "op", "then", "namespace", "subresource",
                 "received", "deadline")

    def __init__(self, proc: Process, actor: Actor, verb: str, resource: str, name: str, op: Callable[..., Response],
                 then: Callable[[Response], None], namespace: str, subresource: str, received: int,
                 deadline: int) -> None:
        self.proc, self.actor, self.verb, self.resource, self.name = proc, actor, verb, resource, name
        self.op, self.then, self.namespace, self.subresource = op, then, namespace, subresource
        self.received, self.deadline = received, deadline


def _serve(op: Callable[..., Response], received: int, then: Callable[[Response], None]) -> None:
    """A request reaches the server: it is served, and its process continues with the answer."""
    then(op(received=received))


TIMEOUT = Response(0, None, "context deadline exceeded (Client.Timeout exceeded while awaiting headers)")

_GROUP_RESOURCE = {r: (f"{r}.{g}" if g else r) for r, (_v, _k, g) in API_VERSION.items()}


class APIServer:
    def __init__(self, engine: Engine, recorder: Recorder, clock: WallClock, *,
                 default_toleration_seconds: bool, not_ready_seconds: int, unreachable_seconds: int,
                 uid_factory: Callable[[], str]) -> None:
        self.engine = engine
        self.recorder = recorder
        self.clock = clock
        self.store: dict[str, dict[Key, Any]] = {r: {} for r in API_VERSION}
        self.cache: dict[str, dict[Key, Any]] = {r: {} for r in API_VERSION}
        self.handlers: dict[str, list[tuple[str, Handler]]] = {r: [] for r in API_VERSION}
        self._watchers: dict[str, tuple[str, ...]] = dict.fromkeys(API_VERSION, ())
        self.rv = 0
        self.uid = uid_factory
        self.base_latency = 2 * MS
        self.watch_delay = 5 * MS
        self.latency_all: int | None = None
        self.latency_node: dict[str, int] = {}
        self.partitioned: set[str] = set()
        self.fail_lease_writes: set[str] = set()
        self.fail_status_writes: set[str] = set()
        self.default_toleration_seconds = default_toleration_seconds
        self.not_ready_seconds = not_ready_seconds
        self.unreachable_seconds = unreachable_seconds
        self._event_names = 0
        # versions not yet visible to `cached` readers, newest first: [(visible at, object or None)]
        self._pending: dict[str, dict[Key, list[tuple[int, Any]]]] = {r: {} for r in API_VERSION}
        self._blocked: dict[str, list[Request]] = {}  # node -> requests sent into its partition
        self._node_names: tuple[str, ...] | None = None  # sorted names in the cache; None when stale
        self._change_logs: dict[str, deque[tuple[int, str, Any]]] = {}

    # -- watches ------------------------------------------------------------------------

    def watch(self, resource: str, lane: str, handler: Handler | None = None, *, drawn: bool = True) -> None:
        """Subscribe an informer event handler; it runs after the shared cache is updated.

        Without a handler the lane only reads the informer's cache (the NodeLifecycleController
        reads Leases that way): those writes are not scheduled as deliveries; `cached` answers
        from a short per-object history instead, with the same `watch_delay`.
        `drawn=False` keeps the lane out of the events' watcher lists: each kubelet watches
        only its own Node, so a Node write is not drawn as reaching every kubelet.
        """
        if handler is not None:
            self.handlers[resource].append((lane, handler))
        if drawn and lane not in self._watchers[resource]:
            # a new tuple: events already emitted keep the watcher list of their moment
            self._watchers[resource] = (*self._watchers[resource], lane)

    def change_log(self, resource: str) -> deque[tuple[int, str, Any]]:
        """(visible at, name, object or None when deleted) of every write to `resource`, in
        order: a reader of the cache pops what became visible to learn which objects changed
        and to what, instead of reading every one of them (the NodeLifecycleController and
        5,000 Leases). The last entry popped for a name is what `cached` gives at that moment."""
        return self._change_logs.setdefault(resource, deque())

    def _deliver(self, resource: str, key: Key, old: Any, new: Any) -> None:
        cache = self.cache[resource]
        if new is None:
            cache.pop(key, None)
            self._names_changed(resource)
        else:
            if key not in cache:
                self._names_changed(resource)
            cache[key] = new
        for _lane, handler in self.handlers[resource]:
            handler(old, new)

    def cached(self, resource: str, name: str, namespace: str = "") -> Any:
        """The shared informer cache: the store as it was `watch_delay` ago."""
        key = (namespace, name)
        history = self._pending[resource].get(key)
        if history and history[-1][0] <= self.engine.now:
            self._settle(resource, key, history)
        return self.cache[resource].get(key)

    def _settle(self, resource: str, key: Key, history: list[tuple[int, Any]]) -> None:
        """Move the versions that became visible into the cache; keep the ones still in flight.
        The (emptied) history list stays for the object's next write."""
        now = self.engine.now
        cache = self.cache[resource]
        while history and history[-1][0] <= now:
            obj = history.pop()[1]
            if obj is None:
                cache.pop(key, None)
                self._names_changed(resource)
            else:
                if key not in cache:
                    self._names_changed(resource)
                cache[key] = obj

    def node_names(self) -> tuple[str, ...]:
        """Names of the Nodes in the informer cache, sorted. A real lister returns them in no
        defined order; walking them in name order is the simulation's choice (it makes runs
        repeatable), and the list is cached because re-sorting 5,000 names every 5 s pass was
        a visible cost."""
        if self._node_names is None:
            self._node_names = tuple(sorted(name for _ns, name in self.cache["nodes"]))
        return self._node_names

    def _names_changed(self, resource: str) -> None:
        if resource == "nodes":
            self._node_names = None

    def current(self, resource: str, name: str, namespace: str = "") -> Any:
        return self.store[resource].get((namespace, name))

    # -- requests with latency (kubelets) -------------------------------------------------

    def partition(self, node: str) -> None:
        self.partitioned.add(node)

    def heal(self, node: str) -> None:
        """Reconnect a node: each request it has in flight goes through at its next
        retransmission (0.2, 0.6, 1.4, 3.0, 6.2 s after it was sent), if before its timeout."""
        self.partitioned.discard(node)
        now = self.engine.now
        for req in self._blocked.pop(node, []):
            retransmit, rto = req.received + 200 * MS, 200 * MS
            while retransmit < now:
                rto *= 2
                retransmit += rto
            if retransmit < req.deadline and req.proc.alive:
                self.engine.wake_at(req.proc, retransmit)

    def latency_for(self, actor: Actor) -> int:
        if actor.node is not None and actor.node in self.latency_node:
            return self.latency_node[actor.node]
        if self.latency_all is not None:
            return self.latency_all
        return self.base_latency

    def direct_latency(self, actor: Actor) -> int | None:
        """How long a request from `actor` sent now takes to reach the server, when it goes
        straight through: the node is not cut off and the server answers before the client's
        timeout. None otherwise (`call` handles those cases)."""
        node = actor.node
        if node is not None and node in self.partitioned:
            return None
        latency = self.latency_for(actor)
        return latency if latency < actor.timeout else None

    def request(self, proc: Process, actor: Actor, verb: str, resource: str, name: str, op: Callable[..., Response],
                then: Callable[[Response], None], namespace: str = "", subresource: str = "") -> None:
        """Send a request from `actor` on behalf of `proc`: `op(received=...)` runs on the server
        when it arrives, then `then(response)` continues the process (TIMEOUT when the client
        gave up). `op` and `then` are bound methods or functools.partial of them: they are part of
        the run's state (a checkpoint pickles them)."""
        received = self.engine.now
        latency = self.direct_latency(actor)
        if latency is not None:
            self.engine.sleep(proc, latency, _serve, op, received, then)
            return
        req = Request(proc, actor, verb, resource, name, op, then, namespace, subresource, received,
                      received + actor.timeout)
        if actor.node is not None and actor.node in self.partitioned:
            # Packets are dropped: TCP retransmits (0.2 s, doubling) until the partition heals
            # or the client's timeout fires. The request sleeps until its timeout; `heal` wakes
            # it at its first retransmission after the heal.
            self._blocked.setdefault(actor.node, []).append(req)
            self.engine.sleep(proc, actor.timeout, self._unblocked, req)
            return
        self._queued(req)

    def _unblocked(self, req: Request) -> None:
        """A request sent into a partition: its timeout fired, or the partition healed."""
        node = req.actor.node
        waiting = self._blocked.get(node, [])  # type: ignore[arg-type]
        if req in waiting:
            waiting.remove(req)
        if node in self.partitioned or self.engine.now >= req.deadline:
            self._timed_out(req)
            return
        self._queued(req)

    def _queued(self, req: Request) -> None:
        latency = self.latency_for(req.actor)
        if latency >= req.actor.timeout:
            # Queued behind an overloaded server longer than the client waits: the client
            # gives up and the request is dropped from the queue before it is served.
            self.engine.sleep(req.proc, req.actor.timeout, self._timed_out, req)
            return
        self.engine.sleep(req.proc, latency, _serve, req.op, req.received, req.then)

    def _timed_out(self, req: Request) -> None:
        self._request_failed(req.actor, req.verb, req.resource, req.name, req.namespace, req.subresource,
                             TIMEOUT.message)
        req.then(TIMEOUT)

    def _request_failed(self, actor: Actor, verb: str, resource: str, name: str, namespace: str,
                        subresource: str, message: str) -> None:
        self.recorder.emit("request-failed", actor.component, actor.node, {
            "verb": verb, "resource": resource, "subresource": subresource, "namespace": namespace,
            "name": name, "message": message,
            "summary": f"{verb} {resource}{'/' + subresource if subresource else ''} {name}: {message}",
        })

    # -- server-side operations ---------------------------------------------------------------

    def get(self, actor: Actor, resource: str, name: str, namespace: str = "", *, record: bool = True,
            received: int | None = None) -> Response:
        obj = self.store[resource].get((namespace, name))
        code = 200 if obj is not None else 404
        if record:
            self.recorder.emit("read", actor.component, actor.node, {
                "verb": "get", "resource": resource, "subresource": "", "namespace": namespace, "name": name,
                "code": code, "summary": f"GET {resource} {name} -> {code}",
            })
        if obj is None:
            return Response(404, None, f'{_GROUP_RESOURCE[resource]} "{name}" not found')
        return Response(200, obj)

    def create(self, actor: Actor, obj: Any, received: int | None = None) -> Response:
        resource = obj.resource
        m: ObjectMeta = obj.metadata
        key = (m.namespace, m.name)
        if key in self.store[resource]:
            return self._reject(actor, "create", obj, "", received, 409,
                                f'{_GROUP_RESOURCE[resource]} "{m.name}" already exists')
        fail = self._injected_failure(actor, resource, "")
        if fail:
            return self._reject(actor, "create", obj, "", received, 500, fail)
        obj = self._admit_create(obj)
        self.rv += 1
        obj = with_meta(obj, uid=m.uid or self.uid(), resource_version=self.rv, creation=self.engine.now)
        self.store[resource][key] = obj
        self._written(actor, "create", "", None, obj, received)
        return Response(201, obj)

    def update(self, actor: Actor, obj: Any, subresource: str = "", received: int | None = None) -> Response:
        """PUT with optimistic concurrency: the caller's resourceVersion must be current."""
        resource = obj.resource
        m: ObjectMeta = obj.metadata
        key = (m.namespace, m.name)
        current = self.store[resource].get(key)
        if current is None:
            return self._reject(actor, "update", obj, subresource, received, 404,
                                f'{_GROUP_RESOURCE[resource]} "{m.name}" not found')
        if current.metadata.resource_version != m.resource_version:
            return self._reject(actor, "update", obj, subresource, received, 409,
                                f'Operation cannot be fulfilled on {_GROUP_RESOURCE[resource]} "{m.name}": '
                                "the object has been modified; please apply your changes to the latest version and "
                                "try again")
        fail = self._injected_failure(actor, resource, subresource)
        if fail:
            return self._reject(actor, "update", obj, subresource, received, 500, fail)
        if resource == "pods":
            obj = self._admit_pod(obj)
        self.rv += 1
        obj = with_version(obj, self.rv)
        self.store[resource][key] = obj
        self._written(actor, "update", subresource, current, obj, received)
        return Response(200, obj)

    def patch(self, actor: Actor, resource: str, name: str, change: Callable[[Any], Any], *,
              namespace: str = "", subresource: str = "", received: int | None = None,
              resource_version: int | None = None, verb: str = "patch") -> Response:
        """Strategic-merge PATCH: `change(current) -> new` (a precondition rv is optional)."""
        key = (namespace, name)
        current = self.store[resource].get(key)
        if current is None:
            return self._reject_key(actor, "patch", resource, name, namespace, subresource, received, 404,
                                    f'{_GROUP_RESOURCE[resource]} "{name}" not found')
        if resource_version is not None and current.metadata.resource_version != resource_version:
            return self._reject_key(actor, "patch", resource, name, namespace, subresource, received, 409,
                                    f'Operation cannot be fulfilled on {_GROUP_RESOURCE[resource]} "{name}": '
                                    "the object has been modified; please apply your changes to the latest version "
                                    "and try again")
        fail = self._injected_failure(actor, resource, subresource)
        if fail:
            return self._reject_key(actor, "patch", resource, name, namespace, subresource, received, 500, fail)
        new = change(current)
        self.rv += 1
        new = with_version(new, self.rv)
        self.store[resource][key] = new
        self._written(actor, verb, subresource, current, new, received)
        return Response(200, new)

    def delete(self, actor: Actor, resource: str, name: str, *, namespace: str = "",
               grace_seconds: int | None = None, received: int | None = None) -> Response:
        """DELETE; pods on a node get a graceful deletionTimestamp unless grace is 0."""
        key = (namespace, name)
        current = self.store[resource].get(key)
        if current is None:
            return self._reject_key(actor, "delete", resource, name, namespace, "", received, 404,
                                    f'{_GROUP_RESOURCE[resource]} "{name}" not found')
        if resource == "pods":
            pod: Pod = current
            grace = pod.termination_grace_period_seconds if grace_seconds is None else grace_seconds
            if grace > 0 and pod.node_name and not pod.terminal:
                if pod.metadata.deletion_timestamp is not None:
                    return Response(200, pod)  # already terminating: nothing changes
                self.rv += 1
                new = with_meta(pod, resource_version=self.rv, deletion_timestamp=self.engine.now + grace * US,
                                deletion_grace_seconds=grace)
                self.store[resource][key] = new
                self._written(actor, "delete", "", current, new, received)
                return Response(200, new)
        elif resource == "volumeattachments" and current.finalizer:
            # the CSI attacher's finalizer holds the object until it has detached the volume
            if current.metadata.deletion_timestamp is not None:
                return Response(200, current)
            self.rv += 1
            new = with_meta(current, resource_version=self.rv, deletion_timestamp=self.engine.now,
                            deletion_grace_seconds=0)
            self.store[resource][key] = new
            self._written(actor, "delete", "", current, new, received)
            return Response(200, new)
        self.rv += 1
        gone = with_version(current, self.rv)
        if resource == "pods" and gone.metadata.deletion_timestamp is None:
            gone = with_meta(gone, deletion_timestamp=self.engine.now, deletion_grace_seconds=0)
        del self.store[resource][key]
        self._written(actor, "delete", "", current, gone, received, removed=True)
        return Response(200, gone)

    def remove_finalizer(self, actor: Actor, resource: str, name: str, change: Callable[[Any], Any], *,
                         namespace: str = "") -> Response:
        """An update that drops the object's last finalizer (`change`); an object already marked for
        deletion then leaves the store with that write, as the real server does."""
        key = (namespace, name)
        current = self.store[resource].get(key)
        if current is None:
            return self._reject_key(actor, "update", resource, name, namespace, "", None, 404,
                                    f'{_GROUP_RESOURCE[resource]} "{name}" not found')
        self.rv += 1
        new = with_version(change(current), self.rv)
        if new.metadata.deletion_timestamp is None:
            self.store[resource][key] = new
            self._written(actor, "update", "", current, new, None)
        else:
            del self.store[resource][key]
            self._written(actor, "update", "", current, new, None, removed=True)
        return Response(200, new)

    # -- admission ------------------------------------------------------------------------------

    def _admit_create(self, obj: Any) -> Any:
        if obj.resource == "nodes":
            # TaintNodesByCondition: every new Node starts with not-ready:NoSchedule (no timeAdded).
            node: Node = obj
            if not node.has_taint(TAINT_NOT_READY, "NoSchedule"):
                obj = node.evolve(taints=node.taints + (Taint(TAINT_NOT_READY, "NoSchedule"),))
        elif obj.resource == "pods":
            obj = self._admit_pod(obj)
        return obj

    def _admit_pod(self, pod: Pod) -> Pod:
        """DefaultTolerationSeconds: add 300 s not-ready/unreachable NoExecute tolerations."""
        if not self.default_toleration_seconds:
            return pod
        extra: list[Toleration] = []
        for key, seconds in ((TAINT_NOT_READY, self.not_ready_seconds), (TAINT_UNREACHABLE, self.unreachable_seconds)):
            if not any(t.key in (key, "") and t.effect in (NO_EXECUTE, "") for t in pod.tolerations):
                extra.append(Toleration(key=key, operator="Exists", effect=NO_EXECUTE, toleration_seconds=seconds))
        if not extra:
            return pod
        return pod.evolve(tolerations=pod.tolerations + tuple(extra))

    def _injected_failure(self, actor: Actor, resource: str, subresource: str) -> str:
        node = actor.node
        if node is None:
            return ""
        if resource == "leases" and node in self.fail_lease_writes:
            return f'Internal error occurred: injected fault "fail-lease-writes" rejects Lease writes from {node}'
        if resource == "nodes" and subresource == "status" and node in self.fail_status_writes:
            return f'Internal error occurred: injected fault "fail-status-writes" rejects status writes from {node}'
        return ""

    # -- recording --------------------------------------------------------------------------------

    def _reject(self, actor: Actor, verb: str, obj: Any, subresource: str, received: int | None,
                code: int, message: str) -> Response:
        m = obj.metadata
        return self._reject_key(actor, verb, obj.resource, m.name, m.namespace, subresource, received, code, message)

    def _reject_key(self, actor: Actor, verb: str, resource: str, name: str, namespace: str, subresource: str,
                    received: int | None, code: int, message: str) -> Response:
        self.recorder.emit("write", actor.component, actor.node or _node_of_key(resource, name), {
            "user": actor.user, "verb": verb, "resource": resource, "subresource": subresource,
            "namespace": namespace, "name": name, "code": code, "message": message, "removed": False,
            "watchers": [], "received": self.engine.now if received is None else received,
            "summary": f"{verb} {resource}{'/' + subresource if subresource else ''} {name} -> {code}",
        })
        return Response(code, None, message)

    def _written(self, actor: Actor, verb: str, subresource: str, old: Any, new: Any, received: int | None,
                 removed: bool = False) -> None:
        resource = new.resource
        m = new.metadata
        received = self.engine.now if received is None else received
        ev = self.recorder.emit_as(WriteEvent, "write", actor.component, _node_of(new), new)
        ev.user, ev.verb, ev.subresource, ev.old = actor.user, verb, subresource, old
        ev.removed, ev.watchers, ev.received = removed, self._watchers[resource], received
        if resource in ("nodes", "pods", "endpointslices"):
            _transitions(self.recorder, actor.component, old, None if removed else new, new)
        key = (m.namespace, m.name)
        if self.handlers[resource]:
            self.engine.call_later(self.watch_delay, self._deliver, resource, key, old, None if removed else new)
        elif resource != "events":  # read through `cached` only (no informer reads Events back)
            visible = self.engine.now + self.watch_delay
            pending = self._pending[resource]
            history = pending.get(key)
            if history is None:
                history = pending[key] = []
            history.insert(0, (visible, None if removed else new))
            log = self._change_logs.get(resource)
            if log is not None:
                log.append((visible, m.name, None if removed else new))

    # -- core/v1 Events -----------------------------------------------------------------------------

    def record_event(self, actor: Actor, involved: Any, reason: str, message: str, type_: str = "Normal",
                     source_component: str = "", source_host: str = "") -> None:
        """What client-go's event recorder sends: a create of an Event about `involved`."""
        self._event_names += 1
        im: ObjectMeta = involved.metadata
        ns = im.namespace or "default"
        name = f"{im.name}.{self._event_names:016x}"
        api_version, kind, _g = API_VERSION[involved.resource]
        ev = Event(
            metadata=ObjectMeta(name=name, namespace=ns, uid="", resource_version=0, creation=0),
            involved_kind=kind, involved_name=im.name, involved_namespace=im.namespace, involved_uid=im.uid,
            reason=reason, message=message, type=type_, source_component=source_component,
            source_host=source_host, first_timestamp=self.engine.now, last_timestamp=self.engine.now,
        )
        self.create(actor, ev)


class WriteEvent(SimEvent):
    """A write's event; its fields are built only when someone reads them (most never are).

    The write's values live in the event's own slots: a closure over them was a function and
    ten cells, all tracked by the cyclic collector, which then spent 15 % of a large run
    walking them after each slice."""

    __slots__ = ("user", "verb", "subresource", "old", "removed", "watchers", "received")
    user: str
    verb: str
    subresource: str
    old: Any
    removed: bool
    watchers: tuple[str, ...]
    received: int

    @property
    def fields(self) -> dict[str, Any]:
        fields = self._fields
        if not isinstance(fields, dict):  # not built yet
            new, verb = self.obj, self.verb
            m, resource = new.metadata, new.resource
            fields = self._fields = {
                "user": self.user, "verb": verb, "resource": resource, "subresource": self.subresource,
                "namespace": m.namespace, "name": m.name, "code": 201 if verb == "create" else 200, "message": None,
                "removed": self.removed, "watchers": list(self.watchers), "received": self.received,
                "summary": _summary(verb, resource, self.subresource, self.old, new, self.removed),
            }
        return fields


def _node_of_key(resource: str, name: str) -> str | None:
    return name if resource in ("nodes", "leases") else None


def _node_of(obj: Any) -> str | None:
    r = obj.resource
    if r in ("nodes", "leases"):
        return obj.metadata.name
    if r == "pods":
        return obj.node_name or None
    if r == "events" and obj.involved_kind in ("Node", "Lease"):
        return obj.involved_name
    if r == "volumeattachments":
        return obj.node_name or None
    return None


def _summary(verb: str, resource: str, subresource: str, old: Any, new: Any, removed: bool) -> str:
    name = new.metadata.name
    if resource == "leases":
        return f"{'renew' if verb == 'update' else verb} Lease {name}"
    if resource == "events":
        return f"Event {new.reason} on {new.involved_kind} {new.involved_name}"
    if resource == "nodes" and subresource == "status":
        ready = new.condition("Ready")
        state = f"Ready={ready.status}" if ready else "no Ready"
        return f"{verb} Node {name} status ({state})"
    if resource == "nodes" and old is not None and verb == "patch":
        added = set(new.taints) - set(old.taints)
        gone = set(old.taints) - set(new.taints)
        parts = ([f"+{t.key.split('/')[-1]}:{t.effect}" for t in added]
                 + [f"-{t.key.split('/')[-1]}:{t.effect}" for t in gone])
        if parts:
            return f"taint Node {name} {' '.join(sorted(parts))}"
    if resource == "pods" and verb == "delete":
        return f"{'remove' if removed else 'delete (graceful)'} Pod {name}"
    kind = API_VERSION[resource][1]
    return f"{verb} {kind} {name}{'/' + subresource if subresource else ''}"


def _transitions(rec: Recorder, component: str, old: Any, new: Any, last: Any) -> None:
    """Derive the state changes a timeline shows from one write (old -> new; new None = removed)."""
    r = last.resource
    if r == "nodes":
        name = last.metadata.name
        if old is None and new is not None:
            rec.transition(component, "node-created", name, None, new.ready_status())
        if new is None:
            rec.transition(component, "node-deleted", name, old.ready_status() if old else None, None)
            return
        old_conds = {c.type: c.status for c in old.conditions} if old else {}
        for c in new.conditions:
            before = old_conds.get(c.type)
            if before != c.status:
                kind = "node-ready" if c.type == "Ready" else "node-condition"
                rec.transition(component, kind, name, before, c.status, key=c.type)
        old_taints = {(t.key, t.effect) for t in old.taints} if old else set()
        new_taints = {(t.key, t.effect) for t in new.taints}
        for t in new.taints:
            if (t.key, t.effect) not in old_taints:
                rec.transition(component, "taint-added", name, None, None, key=t.key, effect=t.effect)
        if old:
            for t in old.taints:
                if (t.key, t.effect) not in new_taints:
                    rec.transition(component, "taint-removed", name, None, None, key=t.key, effect=t.effect)
        if old and old.unschedulable != new.unschedulable:
            rec.transition(component, "node-unschedulable", name, old.unschedulable, new.unschedulable)
    elif r == "pods":
        pod_name = last.metadata.name
        node = last.node_name or None
        if old is None:
            rec.transition(component, "pod-created", node, None, last.phase, pod=pod_name)
            return
        if new is None:
            rec.transition(component, "pod-deleted", node, old.phase, None, pod=pod_name)
            return
        if not old.node_name and new.node_name:
            rec.transition(component, "pod-scheduled", node, None, new.node_name, pod=pod_name)
        if old.is_ready() != new.is_ready() and (old.condition("Ready") or new.condition("Ready")):
            rec.transition(component, "pod-ready", node, old.is_ready(), new.is_ready(), pod=pod_name)
        if old.phase != new.phase:
            rec.transition(component, "pod-phase", node, old.phase, new.phase, pod=pod_name)
        dt_old, dt_new = old.condition("DisruptionTarget"), new.condition("DisruptionTarget")
        if dt_new is not None and dt_new.status == "True" and (dt_old is None or dt_old.status != "True"):
            rec.transition(component, "pod-disruption-target", node, None, dt_new.reason, pod=pod_name,
                           key=dt_new.reason)
        if old.metadata.deletion_timestamp is None and new.metadata.deletion_timestamp is not None:
            rec.transition(component, "pod-terminating", node, None, new.metadata.deletion_timestamp / US, pod=pod_name)
    elif r == "endpointslices":
        before = {e.pod_name: e for e in old.endpoints} if old else {}
        for e in (new.endpoints if new else ()):
            b = before.get(e.pod_name)
            state = {"ready": e.ready, "serving": e.serving, "terminating": e.terminating}
            if b is None or (b.ready, b.serving, b.terminating) != (e.ready, e.serving, e.terminating):
                prev = None if b is None else {"ready": b.ready, "serving": b.serving, "terminating": b.terminating}
                rec.transition(component, "endpoint", e.node_name, prev, state, pod=e.pod_name, key=last.service_name)
        after = {e.pod_name for e in new.endpoints} if new else set()
        for name, b in before.items():
            if name not in after:
                rec.transition(component, "endpoint", b.node_name,
                               {"ready": b.ready, "serving": b.serving, "terminating": b.terminating}, None,
                               pod=name, key=last.service_name)
