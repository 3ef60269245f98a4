"""syncNodeStatus and the condition setters (pkg/kubelet/kubelet_node_status.go,
pkg/kubelet/nodestatus/setters.go; docs/kubernetes-node-health.md §2.2-§2.3)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, NamedTuple, Protocol

from ..clock import MS, US
from ..context import jitter
from ..engine import Process
from ..objects import LABEL_HOSTNAME, LABEL_ZONE, Node, NodeCondition, ObjectMeta

if TYPE_CHECKING:
    from ..apiserver import Actor, Response
    from ..context import Context

NODE_STATUS_UPDATE_RETRY = 5
NODE_READY_GRACE_PERIOD = 120 * US  # fastStatusUpdateOnce limit
FAST_STATUS_TICK = 100 * MS
REGISTER_MAX_BACKOFF = 7 * US
LANE = "kubelet-status"

# (True reason, True message, False reason, False message), setters.go
PRESSURE_TEXT = {
    "MemoryPressure": ("KubeletHasInsufficientMemory", "kubelet has insufficient memory available",
                       "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    "DiskPressure": ("KubeletHasDiskPressure", "kubelet has disk pressure",
                     "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    "PIDPressure": ("KubeletHasInsufficientPID", "kubelet has insufficient PID available",
                    "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
}
PRESSURE_EVENTS = {
    "MemoryPressure": ("NodeHasInsufficientMemory", "NodeHasSufficientMemory"),
    "DiskPressure": ("NodeHasDiskPressure", "NodeHasNoDiskPressure"),
    "PIDPressure": ("NodeHasInsufficientPID", "NodeHasSufficientPID"),
}
RESOURCE_CONDITION = {"memory": "MemoryPressure", "disk": "DiskPressure", "pid": "PIDPressure"}


class ConditionInputs(Protocol):
    """What the condition setters and the status loop read of the machine and of the kubelet's
    other managers: the functions the setters of pkg/kubelet/nodestatus/setters.go are given
    (the kubelet provides them)."""

    @property
    def reachable(self) -> bool:
        """False while the node is cut off: its own Node informer is frozen."""

    def pressure_observed(self, condition_type: str, now: int) -> bool:
        """The eviction manager's pressure flag for MemoryPressure, DiskPressure or PIDPressure."""

    def ready_errors(self, now: int) -> list[str]:
        """The runtime, network and shutdown errors that make Ready False."""

    def steady(self, now: int) -> bool:
        """True when none of the inputs above can be moving (the status loop may skip the setters)."""

    def volumes_in_use(self) -> tuple[str, ...]:
        """The volume manager's GetVolumesInUse (the VolumesInUse setter), sorted."""

    def volumes_reported(self, in_use: tuple[str, ...]) -> None:
        """A status update carrying `in_use` went through (MarkVolumesAsReportedInUse)."""


class NodeIdentity(NamedTuple):
    """What the kubelet registers its Node with (initialNode)."""

    name: str
    zone: str
    pod_cidr: str
    address: str


def desired_conditions(inputs: ConditionInputs, ready_message: str, now: int) -> list[tuple[str, str, str, str]]:
    """(type, status, reason, message) in setter order: pressure conditions, then Ready."""
    out = []
    for ctype, (t_reason, t_msg, f_reason, f_msg) in PRESSURE_TEXT.items():
        if inputs.pressure_observed(ctype, now):
            out.append((ctype, "True", t_reason, t_msg))
        else:
            out.append((ctype, "False", f_reason, f_msg))
    errors = inputs.ready_errors(now)
    if errors:
        message = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
        out.append(("Ready", "False", "KubeletNotReady", message))
    else:
        out.append(("Ready", "True", "KubeletReady", ready_message))
    return out


def unchanged(current: tuple[NodeCondition, ...], desired: list[tuple[str, str, str, str]]) -> bool:
    """What nodeStatusHasChanged would say, without building the new conditions first."""
    have = {c.type: (c.type, c.status, c.reason, c.message) for c in current}
    return all(have.get(d[0]) == d for d in desired)


def apply_setters(original: Node | None, now: int,
                  desired: list[tuple[str, str, str, str]]) -> tuple[NodeCondition, ...]:
    """Every setter stamps lastHeartbeatTime = now; lastTransitionTime moves on a status change."""
    existing = {c.type: c for c in original.conditions} if original is not None else {}
    conditions = []
    for ctype, status, reason, message in desired:
        old = existing.get(ctype)
        transition = old.last_transition_time if old is not None and old.status == status else now
        conditions.append(NodeCondition(ctype, status, reason, message, now, transition))
    # keep conditions the kubelet does not own (e.g. NetworkUnavailable) in place
    owned = {c.type for c in conditions}
    extra = tuple(c for c in (original.conditions if original else ()) if c.type not in owned)
    return extra + tuple(conditions)


def status_changed(old: tuple[NodeCondition, ...], new: tuple[NodeCondition, ...]) -> bool:
    """nodeStatusHasChanged: conditions compared without lastHeartbeatTime."""
    if len(old) != len(new):
        return True
    a = sorted((c.type, c.status, c.reason, c.message, c.last_transition_time) for c in old)
    b = sorted((c.type, c.status, c.reason, c.message, c.last_transition_time) for c in new)
    return a != b


class NodeStatusSyncer:
    """Registration, the periodic syncNodeStatus loop and the startup fast path."""

    def __init__(self, ctx: Context, actor: Actor, node: NodeIdentity, inputs: ConditionInputs, *,
                 doze: bool = True) -> None:
        """`actor`: the client it writes as; `inputs`: what the setters read (the kubelet)."""
        self.ctx = ctx
        self.api = ctx.api
        self.actor = actor
        self.node = node
        self.name = node.name
        self.inputs = inputs
        self.doze = doze  # the dozing shortcut (below); off: a wake-up at every tick
        self.rng = ctx.rng(f"status:{node.name}")
        self.last_status_report_time: int | None = None  # zero at (re)start: the first sync posts
        self.registered = False
        self._verified: Node | None = None  # the Node object last found up to date while steady
        self._informer_node: Node | None = None
        self._handle: Process | None = None  # the syncNodeStatus loop
        self._dozing: tuple[int, list[int]] | None = None  # (since, the jitters of the ticks it sleeps through)
        self._jitters: list[int] = []  # drawn for a doze, not used yet

    # -- loops -----------------------------------------------------------------------------
    #
    # Each loop is an engine.Process: the methods are the points where the kubelet's goroutine
    # continues after a request or a sleep, and a method that waits hands the next one (`then`,
    # which gets what the Go function returns) to the request or the sleep.

    def run(self) -> Process:
        """The syncNodeStatus loop (wait.JitterUntil, sliding), from now; the kubelet kills it."""
        self._handle = Process()
        self.ctx.engine.sleep(self._handle, 0, self._sync_tick)
        return self._handle

    def _sync_tick(self) -> None:
        assert self._handle is not None
        self.sync_node_status(self._handle, self._synced)

    def _synced(self, quiet: bool) -> None:
        period = self.ctx.kubelet.node_status_update_frequency
        last_report = self.last_status_report_time
        if self.doze and quiet and last_report is not None:
            delay = self._doze(period, last_report)
        else:
            delay = self._next_jitter(period)
        assert self._handle is not None
        self.ctx.engine.sleep(self._handle, delay, self._sync_tick)

    # -- dozing ----------------------------------------------------------------------------
    #
    # A healthy kubelet's sync finds nothing to post for 5 minutes in a row: 30 wake-ups that
    # each return at once, a third of a large cluster's events. While nothing the sync reads
    # can change, the loop sleeps straight to the tick where the report is due, drawing the
    # same jitters in the same order. Anything that could change the answer (a new version
    # of its Node in the informer, any command) wakes it at the tick it would have had, and
    # the jitters it has not used yet are used next: the run is the same, tick for tick.

    def _next_jitter(self, period: int) -> int:
        return self._jitters.pop(0) if self._jitters else jitter(self.rng, period)

    def _doze(self, period: int, last_report: int) -> int:
        now = self.ctx.engine.now
        due = last_report + self.ctx.kubelet.node_status_report_frequency
        steps = [self._next_jitter(period)]
        tick = now + steps[0]
        while tick < due:
            steps.append(self._next_jitter(period))
            tick += steps[-1]
        self._dozing = (now, steps)
        return tick - now

    def wake(self, *, inclusive: bool) -> None:
        """Something the sync reads may have changed: resume at the first tick from now on
        (`inclusive`: a tick at this very instant counts, as it does after a command, which
        sorts first at its instant; a watch delivery sorts after a tick scheduled earlier)."""
        if self._dozing is None:
            return
        (start, steps), self._dozing = self._dozing, None
        now = self.ctx.engine.now
        tick, used = start, 0
        while used < len(steps):
            tick += steps[used]
            used += 1
            if tick > now or (inclusive and tick == now):
                break
        if used < len(steps) and self._handle is not None and self._handle.alive:
            self._jitters[:0] = steps[used:]
            self.ctx.engine.wake_at(self._handle, tick)

    def run_fast_status_update(self) -> Process:
        """fastStatusUpdateOnce: every 100 ms until Ready is posted True or 120 s passed."""
        proc = Process()
        self.ctx.engine.sleep(proc, 0, self._fast_status_wait, proc, self.ctx.engine.now)
        return proc

    def _fast_status_wait(self, proc: Process, started: int) -> None:
        if self.ctx.engine.now - started < NODE_READY_GRACE_PERIOD:
            self.ctx.engine.sleep(proc, FAST_STATUS_TICK, self._fast_status_tick, proc, started)

    def _fast_status_tick(self, proc: Process, started: int) -> None:
        node = self.api.cached("nodes", self.name) if self.registered else None
        if node is None:
            self._fast_status_wait(proc, started)
            return
        if node.ready_status() == "True":
            return
        now = self.ctx.engine.now
        desired = self._desired_conditions(now)
        ready = next(d for d in desired if d[0] == "Ready")
        if ready[1] != "False" and not unchanged(node.conditions, desired):
            self.patch_status(proc, node, apply_setters(node, now, desired), "fast status update", None, _done)
            return
        self._fast_status_wait(proc, started)

    # -- one sync ----------------------------------------------------------------------------

    def sync_node_status(self, proc: Process, then: Callable[[bool], None]) -> None:
        """One syncNodeStatus (registerWithAPIServer first, then updateNodeStatus: up to five
        tryUpdateNodeStatus); `then(quiet)`: True when it found nothing to post and nothing moving."""
        if not self.registered:
            self.register_with_api_server(proc, partial(self._try_update_node_status, proc, then, 0))
        else:
            self._try_update_node_status(proc, then, 0)

    def _try_update_node_status(self, proc: Process, then: Callable[[bool], None], attempt: int,
                                _registered: None = None) -> None:
        """tryUpdateNodeStatus, try number `attempt`: the Node from the informer first, then by GET."""
        if attempt >= NODE_STATUS_UPDATE_RETRY:
            then(False)
            return
        if attempt == 0:
            # the kubelet's own Node informer: frozen while the node is cut off
            if self.inputs.reachable:
                self._informer_node = self.api.cached("nodes", self.name)
            original = self._informer_node
            if original is not None:
                self._update_node_status(proc, then, attempt, original)
                return
        self._get_node(proc, partial(self._got_node, proc, then, attempt))

    def _got_node(self, proc: Process, then: Callable[[bool], None], attempt: int, resp: Response) -> None:
        if resp.ok:
            self._update_node_status(proc, then, attempt, resp.obj)
        else:
            self._try_update_node_status(proc, then, attempt + 1)

    def _update_node_status(self, proc: Process, then: Callable[[bool], None], attempt: int, original: Node) -> None:
        now = self.ctx.engine.now
        report_due = (self.last_status_report_time is None
                      or now - self.last_status_report_time >= self.ctx.kubelet.node_status_report_frequency)
        in_use = self.inputs.volumes_in_use()
        volumes_changed = in_use != original.volumes_in_use  # a status field nodeStatusHasChanged compares
        steady = self.inputs.steady(now) and not volumes_changed
        if not report_due and steady and original is self._verified:
            then(True)  # same Node object, same inputs: the setters would give the same answer
            return
        desired = self._desired_conditions(now)
        if not report_due and not volumes_changed and unchanged(original.conditions, desired):
            self._verified = original if steady else None
            then(steady)  # the common case: nothing to post
            return
        conditions = apply_setters(original, now, desired)
        if not (status_changed(original.conditions, conditions) or report_due or volumes_changed):
            then(False)
            return
        self.patch_status(proc, original, conditions, "changed" if not report_due else "report frequency", in_use,
                          partial(self._status_patched, proc, then, attempt))

    def _status_patched(self, proc: Process, then: Callable[[bool], None], attempt: int, ok: bool) -> None:
        if ok:
            then(False)
        else:
            self._try_update_node_status(proc, then, attempt + 1)

    def _desired_conditions(self, now: int) -> list[tuple[str, str, str, str]]:
        return desired_conditions(self.inputs, self.ctx.profile.ready_message, now)

    def _get_node(self, proc: Process, then: Callable[[Response], None]) -> None:
        api, actor, name = self.api, self.actor, self.name
        api.request(proc, actor, "get", "nodes", name, partial(api.get, actor, "nodes", name), then)

    def patch_status(self, proc: Process, original: Node, conditions: tuple[NodeCondition, ...], reason: str,
                     volumes_in_use: tuple[str, ...] | None, then: Callable[[bool], None]) -> None:
        """PATCH nodes/<name>/status with the new conditions (and volumesInUse when it changed);
        `then(ok)`."""
        before = {c.type: c.status for c in original.conditions}
        api, actor, name = self.api, self.actor, self.name
        change = partial(_merge_status, conditions, before, volumes_in_use)
        api.request(proc, actor, "patch", "nodes", name,
                    partial(api.patch, actor, "nodes", name, change, subresource="status"),
                    partial(self._patched, before, conditions, volumes_in_use, then), subresource="status")

    def _patched(self, before: dict[str, str], conditions: tuple[NodeCondition, ...],
                 volumes_in_use: tuple[str, ...] | None, then: Callable[[bool], None], resp: Response) -> None:
        if not resp.ok:
            then(False)
            return
        self.last_status_report_time = self.ctx.engine.now
        self._record_condition_events(before, conditions)
        if volumes_in_use is not None:  # after every update that went through (tryUpdateNodeStatus)
            self.inputs.volumes_reported(volumes_in_use)
        then(True)

    def _record_condition_events(self, before: dict[str, str], conditions: tuple[NodeCondition, ...]) -> None:
        name = self.name
        node = self.api.current("nodes", name)
        if node is None:
            return
        for c in conditions:
            if before.get(c.type) == c.status:
                continue
            if c.type == "Ready":
                reason = "NodeReady" if c.status == "True" else "NodeNotReady"
            elif c.type in PRESSURE_EVENTS:
                reason = PRESSURE_EVENTS[c.type][0 if c.status == "True" else 1]
            else:
                continue
            self.api.record_event(self.actor, node, reason, f"Node {name} status is now: {reason}",
                                  source_component="kubelet", source_host=name)

    # -- registration ------------------------------------------------------------------------

    def register_with_api_server(self, proc: Process, then: Callable[[None], None], backoff: int = 100 * MS) -> None:
        """registerWithAPIServer: CREATE the Node until it works (or it exists), backing off to 7 s."""
        api, actor, me = self.api, self.actor, self.node
        now = self.ctx.engine.now
        labels = {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                  "kubernetes.io/arch": "amd64", LABEL_HOSTNAME: me.name, "kubernetes.io/os": "linux"}
        if me.zone:
            labels[LABEL_ZONE] = me.zone
        node = Node(
            metadata=ObjectMeta(name=me.name, namespace="", uid="", resource_version=0, creation=0, labels=labels),
            pod_cidr=me.pod_cidr, address=me.address, kubelet_version=self.ctx.profile.kubelet_version,
            capacity=(("cpu", "4"), ("ephemeral-storage", "101430960Ki"), ("memory", "16374584Ki"),
                      ("pods", "110")),
        )
        node = node.evolve(conditions=apply_setters(None, now, self._desired_conditions(now)))
        api.request(proc, actor, "create", "nodes", me.name, partial(api.create, actor, node),
                    partial(self._register_created, proc, then, backoff))

    def _register_created(self, proc: Process, then: Callable[[None], None], backoff: int, resp: Response) -> None:
        if resp.ok:
            self.registered = True  # lastStatusReportTime stays zero: the next step posts status
            then(None)
        elif resp.code == 409:  # already registered (kubelet restart): reconcile and go on
            self._get_node(proc, partial(self._register_found, proc, then, backoff))
        else:
            self._register_later(proc, then, backoff)

    def _register_found(self, proc: Process, then: Callable[[None], None], backoff: int, existing: Response) -> None:
        if existing.ok:
            self.registered = True
            then(None)
        else:
            self._register_later(proc, then, backoff)

    def _register_later(self, proc: Process, then: Callable[[None], None], backoff: int) -> None:
        backoff = min(backoff * 2, REGISTER_MAX_BACKOFF)
        self.ctx.engine.sleep(proc, backoff, self.register_with_api_server, proc, then, backoff)


def _merge_status(conditions: tuple[NodeCondition, ...], before: dict[str, str],
                  volumes_in_use: tuple[str, ...] | None, current: Node) -> Node:
    """The strategic merge of the diff original -> new: conditions merge by type."""
    merged = {c.type: c for c in current.conditions}
    for c in conditions:
        merged[c.type] = c
    order = [c.type for c in current.conditions] + [c.type for c in conditions if c.type not in before]
    seen: list[str] = []
    for t in order:
        if t not in seen:
            seen.append(t)
    if volumes_in_use is not None and volumes_in_use != current.volumes_in_use:
        return current.evolve(conditions=tuple(merged[t] for t in seen), volumes_in_use=volumes_in_use)
    return current.evolve(conditions=tuple(merged[t] for t in seen))


def _done(_result: object) -> None:
    """The end of a process that wants nothing of its last step's answer."""
