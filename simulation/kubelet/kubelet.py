"""One node: the machine (power, container runtime, resource pressure) and its kubelet.

The periodic checks that only feed the Ready/pressure conditions (updateRuntimeUp every 5 s,
PLEG relist every 1 s, eviction manager every 10 s) are evaluated on their exact grids when
a status sync asks for them, instead of being scheduled: same answers, far fewer events.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from ..apiserver import Actor, Response
from ..clock import MS, US, go_duration
from ..engine import Process, Timer
from ..objects import NO_SCHEDULE, TAINT_MEMORY_PRESSURE, Lease, Pod, Taint, set_pod_condition
from .lease import NodeLeaseController
from .node_status import RESOURCE_CONDITION, NodeIdentity, NodeStatusSyncer
from .volume_manager import VolumeManager

CONDITION_RESOURCE = {c: r for r, c in RESOURCE_CONDITION.items()}

if TYPE_CHECKING:
    from ..context import Context, PodsOnNode

RUNTIME_CHECK_PERIOD = 5 * US
MAX_WAIT_FOR_CONTAINER_RUNTIME = 30 * US
PLEG_RELIST_PERIOD = 1 * US
PLEG_THRESHOLD = 180 * US
EVICTION_MONITORING_INTERVAL = 10 * US
EVICTION_PRESSURE_TRANSITION_PERIOD = 300 * US
STATUS_MANAGER_SYNC_PERIOD = 10 * US
CNI_INIT_TIME = 2 * US  # network plugin becomes ready this long after the kubelet starts
BOOT_TIME = 10 * US  # power-on to kubelet start
CONTAINER_START_TIME = 1 * US
CONTAINER_STOP_TIME = 500 * MS
POD_ADMISSION_TIME = 100 * MS  # the pod reaches the sync loop and its admit handlers
CRITICAL_PRIORITY_CLASSES = ("system-node-critical", "system-cluster-critical")
NETWORK_NOT_READY = ("container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
                     "message:Network plugin returns error: cni plugin not initialized")
SHUTDOWN_MESSAGE = "Pod was terminated in response to imminent node shutdown."


@dataclass
class PressureEpisode:
    """A stretch of time during which a resource signal is below its eviction threshold."""

    start: int
    end: int | None = None
    evicted: bool = False  # the eviction manager reclaims once per episode (one pod)


def _floor(t: int, origin: int, period: int) -> int:
    return origin + (t - origin) // period * period


def _ceil(t: int, origin: int, period: int) -> int:
    return origin + -(-(t - origin) // period) * period


class Kubelet:
    def __init__(self, ctx: Context, name: str, zone: str, index: int,
                 pods_on_node: PodsOnNode, *, doze: bool = True) -> None:
        """`doze`: the status loop's cost shortcut (node_status.py), on by default."""
        self.ctx = ctx
        self.doze = doze
        self.api = ctx.api
        self.name = name
        self.zone = zone
        self.pod_cidr = f"10.244.{index}.0/24" if index < 256 else f"10.{244 + index // 256}.{index % 256}.0/24"
        self.address = f"10.0.{index // 250}.{index % 250 + 4}"
        self._pod_prefix = self.pod_cidr.rsplit(".", 1)[0]  # 10.244.7.0/24 -> 10.244.7
        self.pods_on_node = pods_on_node
        user = f"system:node:{name}"
        timeout = ctx.kubelet.heartbeat_timeout
        self.lease_actor = Actor(user, "kubelet-lease", name, timeout)
        self.status_actor = Actor(user, "kubelet-status", name, timeout)
        self.pod_actor = Actor(user, "kubelet", name, timeout)
        # the machine
        self.powered = False
        self.runtime_up = True
        self.runtime_up_since = 0
        self.runtime_down_since: int | None = None
        self.runtime_last_ok_before: int | None = None
        self.pressure: dict[str, list[PressureEpisode]] = {"memory": [], "disk": [], "pid": []}
        self.containers: dict[str, str] = {}  # pod key -> "running" | "stopping"
        # the kubelet process
        self.running = False
        self.started_at = 0
        self.shutting_down = False
        self.lease: NodeLeaseController | None = None
        self.status: NodeStatusSyncer | None = None
        self._processes: list[Process] = []
        self._timers: list[Timer] = []
        self._reconcile: set[str] = set()
        self._reconcile_timer: Timer | None = None
        self._ip = 1
        self.network_ready_at = 0
        self._steady_from = 0
        self._pressure_quiet_from = 0
        self.volumes: VolumeManager | None = None  # made when the first pod with a claim arrives

    # -- lifecycle -----------------------------------------------------------------------------

    def power_on(self, boot_delay: int = BOOT_TIME) -> None:
        if self.powered:
            return
        self.powered = True
        self.runtime_up = True
        self.runtime_up_since = self.ctx.engine.now + boot_delay
        self.runtime_down_since = None
        self.runtime_last_ok_before = None
        self.shutting_down = False
        self._later(boot_delay, self.start)

    def power_off(self) -> None:
        if not self.powered:
            return
        self.stop()
        self.powered = False
        self.containers.clear()  # every container dies with the machine
        self.shutting_down = False

    def start(self) -> None:
        """Kubelet process start: fresh lease controller and status syncer (their caches are gone)."""
        if self.running or not self.powered:
            return
        engine = self.ctx.engine
        self.running = True
        self.started_at = engine.now
        self.runtime_last_ok_before = None
        self.network_ready_at = engine.now + (CNI_INIT_TIME if not self.containers else 0)
        cfg = self.ctx.kubelet
        self.lease = NodeLeaseController(api=self.api, actor=self.lease_actor, clock=engine, holder_identity=self.name,
                                         lease_duration_seconds=cfg.node_lease_duration_seconds,
                                         renew_interval=cfg.renew_interval, rng=self.ctx.rng(f"lease:{self.name}"),
                                         new_lease_post_process=self.set_node_owner,
                                         renews_without_owner=self.ctx.profile.lease_renews_without_owner)
        self.status = NodeStatusSyncer(self.ctx, self.status_actor,
                                       NodeIdentity(self.name, self.zone, self.pod_cidr, self.address), self,
                                       doze=self.doze)
        self._note_runtime_change()
        self._processes = [self.status.run(), self.lease.run(), self.status.run_fast_status_update()]
        self._later(CONTAINER_START_TIME, self.resync_pods)
        self._schedule_pressure_evictions()
        if self.volumes is not None:
            self.volumes.reported = frozenset()  # a new process has reported nothing yet

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        for p in self._processes:
            p.kill()
        for t in self._timers:
            t.cancel()
        self._processes, self._timers = [], []
        self._reconcile.clear()
        if self.volumes is not None:
            self.volumes.stop()
        if self._reconcile_timer is not None:
            self._reconcile_timer.cancel()
            self._reconcile_timer = None
        for key, state in list(self.containers.items()):
            if state == "stopping":
                self.containers[key] = "running"  # a kill in progress dies with the kubelet
            elif state == "volumes":
                del self.containers[key]  # never started: the next kubelet waits for its volumes anew

    def _later(self, delay: int, fn: Callable[..., Any], *args: Any) -> None:
        self._timers = [t for t in self._timers if t.active]
        self._timers.append(self.ctx.engine.call_later(delay, fn, *args))

    @property
    def reachable(self) -> bool:
        return self.name not in self.api.partitioned

    def set_node_owner(self, proc: Process, lease: Lease, then: Callable[[Lease | None], None]) -> None:
        """setNodeOwnerFunc (pkg/kubelet/util/nodelease.go), the Lease controller's post-process:
        the Lease is owned by the Node, whose UID takes a GET. `then(None)`: the GET failed."""
        if lease.metadata.owner_references:
            then(lease)
            return
        api, actor, name = self.api, self.lease_actor, self.name
        api.request(proc, actor, "get", "nodes", name, partial(api.get, actor, "nodes", name),
                    partial(_owned_by_node, lease, then))

    # -- container runtime and PLEG ------------------------------------------------------------

    def stop_runtime(self) -> None:
        if not self.runtime_up:
            return
        now = self.ctx.engine.now
        self.runtime_last_ok_before = self.runtime_last_ok(now)
        self.runtime_up = False
        self.runtime_down_since = now
        self._note_runtime_change()

    def start_runtime(self) -> None:
        if self.runtime_up:
            return
        self.runtime_up = True
        self.runtime_up_since = self.ctx.engine.now
        self.runtime_down_since = None
        self._note_runtime_change()
        if self.running:
            self._later(RUNTIME_CHECK_PERIOD, self.resync_pods)

    def runtime_last_ok(self, now: int) -> int | None:
        """Time of the last successful updateRuntimeUp (5 s grid from kubelet start)."""
        if self.runtime_up:
            first_ok = _ceil(max(self.runtime_up_since, self.started_at), self.started_at, RUNTIME_CHECK_PERIOD)
            if now >= first_ok:
                return _floor(now, self.started_at, RUNTIME_CHECK_PERIOD)
        if self.runtime_last_ok_before is not None and self.runtime_last_ok_before >= self.started_at:
            return self.runtime_last_ok_before
        return None

    def pleg_last_active(self, now: int) -> int | None:
        if self.runtime_up:
            first = _ceil(max(self.runtime_up_since, self.started_at), self.started_at, PLEG_RELIST_PERIOD)
            if now >= first:
                return now
            down = None
        else:
            down = self.runtime_down_since
        if down is not None and down >= self.started_at:
            return _floor(down, self.started_at, PLEG_RELIST_PERIOD)
        return None

    def steady(self, now: int) -> bool:
        """True when no input of the Ready and pressure setters can be moving: the runtime has
        been up since an earlier check, the network is ready, no shutdown, and no pressure signal
        within its transition period. The status sync then skips recomputing the conditions."""
        return (self.runtime_up and not self.shutting_down and now >= self.network_ready_at
                and now >= self._steady_from and now >= self._pressure_quiet_from)

    def _note_runtime_change(self) -> None:
        # first successful runtime check and PLEG relist after the runtime (re)started
        self._steady_from = _ceil(max(self.runtime_up_since, self.started_at), self.started_at, RUNTIME_CHECK_PERIOD)

    def _note_pressure_change(self) -> None:
        episodes = [e for eps in self.pressure.values() for e in eps]
        if any(e.end is None for e in episodes):
            self._pressure_quiet_from = 2**62
        else:
            last_end = max((e.end for e in episodes if e.end is not None), default=0)
            settled = EVICTION_PRESSURE_TRANSITION_PERIOD + 2 * EVICTION_MONITORING_INTERVAL
            self._pressure_quiet_from = last_end + settled

    def ready_errors(self, now: int) -> list[str]:
        """The Ready setter's error list, in the kubelet's order (runtime, network, shutdown)."""
        errors = []
        last_ok = self.runtime_last_ok(now)
        if last_ok is None:
            errors.append("container runtime status check may not have completed yet")
        elif now >= last_ok + MAX_WAIT_FOR_CONTAINER_RUNTIME:
            errors.append("container runtime is down")
        pleg = self.pleg_last_active(now)
        if pleg is None:
            errors.append("PLEG is not healthy: pleg has yet to be successful")
        elif now - pleg > PLEG_THRESHOLD:
            errors.append(f"PLEG is not healthy: pleg was last seen active {go_duration(now - pleg)} ago; "
                          f"threshold is {go_duration(PLEG_THRESHOLD)}")
        if now < self.network_ready_at:
            errors.append(NETWORK_NOT_READY)
        if self.shutting_down:
            errors.append("node is shutting down")
        return errors

    # -- eviction manager (pressure conditions) -------------------------------------------------

    def start_pressure(self, resource: str) -> None:
        episodes = self.pressure[resource]
        if episodes and episodes[-1].end is None:
            return
        episodes.append(PressureEpisode(self.ctx.engine.now))
        self._note_pressure_change()
        self._schedule_pressure_evictions()

    def stop_pressure(self, resource: str) -> None:
        episodes = self.pressure[resource]
        if episodes and episodes[-1].end is None:
            episodes[-1].end = self.ctx.engine.now
            self._note_pressure_change()

    def pressure_observed(self, condition_type: str, now: int) -> bool:
        """The eviction manager's flag as of its last synchronize (10 s grid): True from the first
        synchronize that sees the signal until 5 min after the last one that saw it."""
        episodes = self.pressure[CONDITION_RESOURCE[condition_type]]
        if not episodes or now < self.started_at:
            return False
        tick = _floor(now, self.started_at, EVICTION_MONITORING_INTERVAL)
        for episode in reversed(episodes):
            start, end = episode.start, episode.end
            lo = _ceil(max(start, self.started_at), self.started_at, EVICTION_MONITORING_INTERVAL)
            hi = (tick if end is None or end > tick
                  else _ceil(end, self.started_at, EVICTION_MONITORING_INTERVAL) - EVICTION_MONITORING_INTERVAL)
            if lo <= hi:
                return tick - hi < EVICTION_PRESSURE_TRANSITION_PERIOD
        return False

    def _schedule_pressure_evictions(self) -> None:
        """The eviction manager evicts one pod at the first synchronize that sees a signal."""
        if not self.running:
            return
        now = self.ctx.engine.now
        for resource, episodes in self.pressure.items():
            if episodes and episodes[-1].end is None:
                when = _ceil(max(episodes[-1].start, now), self.started_at, EVICTION_MONITORING_INTERVAL)
                self._later(when - now, self._evict_for_pressure, resource, episodes[-1])

    def _evict_for_pressure(self, resource: str, episode: PressureEpisode) -> None:
        if episode.end is not None or not self.running or episode.evicted:
            return
        episode.evicted = True
        victims = sorted((p for p in self.pods_on_node(self.name).values()
                          if not p.terminal and p.metadata.deletion_timestamp is None
                          and p.priority_class_name not in CRITICAL_PRIORITY_CLASSES and p.owner_kind != "DaemonSet"),
                         key=lambda p: (p.metadata.creation, p.metadata.name), reverse=True)
        if not victims:
            return
        pod = victims[0]
        signal = {"memory": "memory.available", "disk": "nodefs.available", "pid": "pid.available"}[resource]
        message = (f"The node was low on resource: {resource}. Threshold quantity: {_THRESHOLD[resource]}, "
                   f"available: {_AVAILABLE[resource]}. ")
        self.ctx.recorder.decision("kubelet", "kubelet.evict-pressure", self.name,
                                   {"signal": signal, "threshold": _THRESHOLD[resource]}, f"evict {pod.metadata.name}",
                                   f"The eviction manager saw {signal} below its hard threshold and evicted one pod "
                                   "to reclaim it.",
                                   "pkg/kubelet/eviction/eviction_manager.go", pod=pod.metadata.name)
        self._spawn(0, self._fail_pod, pod, "Evicted", message, "TerminationByKubelet", message)

    # -- graceful shutdown -------------------------------------------------------------------------

    def shutdown(self, power_off: Callable[[], None]) -> None:
        cfg = self.ctx.kubelet
        if not self.running or cfg.shutdown_grace_period <= 0:
            power_off()  # no inhibitor lock: the machine just goes down
            return
        self.shutting_down = True
        self.ctx.recorder.decision("kubelet", "kubelet.shutdown", self.name,
                                   {"shutdownGracePeriod": cfg.shutdown_grace_period / US,
                                    "shutdownGracePeriodCriticalPods": cfg.shutdown_grace_period_critical_pods / US},
                                   "Ready=False, kill pods, then power off",
                                   "The systemd shutdown signal reached the kubelet: it posts Ready=False at once and "
                                   "terminates pods, non-critical first, within shutdownGracePeriod.",
                                   "pkg/kubelet/nodeshutdown/nodeshutdown_manager_linux.go")
        assert self.status is not None
        self._processes.append(self._spawn(0, self.status.sync_node_status, _done))
        pods = [p for p in self.pods_on_node(self.name).values() if not p.terminal]
        regular_window = cfg.shutdown_grace_period - cfg.shutdown_grace_period_critical_pods
        groups = [
            ([p for p in pods if p.priority_class_name not in CRITICAL_PRIORITY_CLASSES], 0, regular_window),
            ([p for p in pods if p.priority_class_name in CRITICAL_PRIORITY_CLASSES], regular_window,
             cfg.shutdown_grace_period_critical_pods),
        ]
        end = 0
        offset = 0
        for group, _start, window in groups:
            if not group:
                continue
            kill = min(CONTAINER_STOP_TIME * 2, window) if window > 0 else 0
            for pod in group:
                stop = min(kill, pod.termination_grace_period_seconds * US)
                self._later(offset + stop, self._shutdown_kill, pod.key)
            offset += kill
            end = offset
        self._later(min(end + CONTAINER_STOP_TIME, cfg.shutdown_grace_period), power_off)

    def _shutdown_kill(self, key: str) -> None:
        pod = self.pods_on_node(self.name).get(key)
        if pod is None or pod.terminal:
            return
        self.containers.pop(key, None)
        self._processes.append(self._spawn(0, self._fail_pod, pod, "Terminated", SHUTDOWN_MESSAGE,
                                           "TerminationByKubelet", SHUTDOWN_MESSAGE))

    def _spawn(self, delay: int, fn: Callable[..., Any], *args: Any) -> Process:
        """A new process that starts with `fn(process, *args)` in `delay` µs."""
        proc = Process()
        self.ctx.engine.sleep(proc, delay, fn, proc, *args)
        return proc

    def _fail_pod(self, proc: Process, pod: Pod, reason: str, message: str, dt_reason: str = "",
                  dt_message: str = "") -> None:
        """Move a pod to phase Failed; a kubelet-initiated termination also gets DisruptionTarget."""
        self.containers.pop(pod.key, None)
        self._patch_pod(proc, pod, partial(self._failed, reason, message, dt_reason, dt_message), _done)

    def _failed(self, reason: str, message: str, dt_reason: str, dt_message: str, current: Pod) -> Pod:
        now = self.ctx.engine.now
        conditions = current.conditions
        if dt_reason:
            conditions = set_pod_condition(conditions, "DisruptionTarget", "True", now, dt_reason, dt_message)
        for ctype in ("Ready", "ContainersReady"):
            conditions = set_pod_condition(conditions, ctype, "False", now,
                                           "PodFailed" if ctype == "Ready" else "PodFailed")
        return current.evolve(phase="Failed", reason=reason, message=message, conditions=conditions,
                              container_ready=False, container_state="terminated", container_reason="Error")

    # -- pods ---------------------------------------------------------------------------------------

    def on_pod(self, old: Pod | None, new: Pod | None) -> None:
        """Watch event for a pod bound to this node (the kubelet's pod config source)."""
        if not self.running or not self.reachable or new is None:
            return
        self.handle_pod(new)

    def resync_pods(self) -> None:
        if not self.running or not self.reachable:
            return
        for pod in list(self.pods_on_node(self.name).values()):
            self.handle_pod(pod)

    def handle_pod(self, pod: Pod) -> None:
        key = pod.key
        state = self.containers.get(key)
        if state == "volumes" and (pod.metadata.deletion_timestamp is not None or pod.terminal):
            del self.containers[key]  # never started: nothing to kill
            state = None
        if pod.metadata.deletion_timestamp is not None:
            if not pod.terminal and state == "running" and self.runtime_up:
                self.containers[key] = "stopping"
                grace = min(CONTAINER_STOP_TIME, (pod.metadata.deletion_grace_seconds or 0) * US)
                self._later(grace, self._finish_deletion, pod)
            elif state is None and self.runtime_up:
                self._later(0, self._finish_deletion, pod)
            return
        if pod.terminal:
            return
        if state is None:
            rejection = self.admit(pod)
            if rejection is not None:
                self.containers[key] = "rejected"
                self._processes.append(self._spawn(POD_ADMISSION_TIME, self._fail_pod, pod, *rejection))
                return
            if self.runtime_up:
                if pod.volumes:  # WaitForAttachAndMount before the containers (volume_manager.py)
                    self.containers[key] = "volumes"
                    if self.volumes is None:
                        self.volumes = VolumeManager(self.ctx, self)
                    self.volumes.add_pod(pod)
                    return
                self.containers[key] = "starting"
                self._later(CONTAINER_START_TIME, self._start_pod, key)
            return
        if state == "running" and not pod.is_ready():
            self._needs_reconcile(key)

    def _needs_reconcile(self, key: str) -> None:
        """The status manager's next syncBatch (10 s grid) will re-assert this pod's status."""
        self._reconcile.add(key)
        if self._reconcile_timer is None or not self._reconcile_timer.active:
            tick = _ceil(self.ctx.engine.now + 1, self.started_at, STATUS_MANAGER_SYNC_PERIOD)
            self._reconcile_timer = self.ctx.engine.call_at(tick, self._sync_batch)

    def admit(self, pod: Pod) -> tuple[str, str] | None:
        """Pod admission: (reason, message) when the kubelet rejects a pod bound to it.

        The shutdown manager rejects everything while shutting down; the eviction manager
        (pkg/kubelet/eviction/eviction_manager.go Admit) rejects non-critical pods under disk or
        PID pressure and, under memory pressure alone, BestEffort pods (ours set no requests)
        that do not tolerate the memory-pressure taint.
        """
        if self.shutting_down:
            return "NodeShutdown", "Pod was rejected as the node is shutting down."
        now = self.ctx.engine.now
        conditions = [c for c in ("MemoryPressure", "DiskPressure", "PIDPressure") if self.pressure_observed(c, now)]
        if not conditions or pod.priority_class_name in CRITICAL_PRIORITY_CLASSES:
            return None
        if conditions == ["MemoryPressure"] and any(
                t.tolerates(Taint(TAINT_MEMORY_PRESSURE, NO_SCHEDULE)) for t in pod.tolerations):
            return None
        return "Evicted", f"The node had condition: [{', '.join(conditions)}]. "

    def _start_pod(self, key: str) -> None:
        pod = self.pods_on_node(self.name).get(key)
        if (pod is None or not self.running or not self.runtime_up or pod.metadata.deletion_timestamp is not None
                or self.containers.get(key) != "starting"):
            if self.containers.get(key) == "starting":
                del self.containers[key]
            return
        self.containers[key] = "running"
        ip = pod.pod_ip or f"{self._pod_prefix}.{self._next_ip()}"
        restarted = pod.container_state != "waiting" or pod.start_time is not None
        self._processes.append(self._spawn(0, self._patch_pod, pod, partial(self._started, ip, restarted), _done))

    def _started(self, ip: str, restarted: bool, current: Pod) -> Pod:
        now = self.ctx.engine.now
        conditions = current.conditions
        for ctype in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady"):
            conditions = set_pod_condition(conditions, ctype, "True", now)
        return current.evolve(phase="Running", conditions=conditions, pod_ip=ip, host_ip=self.address,
                              start_time=current.start_time if current.start_time is not None else now,
                              container_ready=True, container_state="running", container_reason="",
                              restart_count=current.restart_count + (1 if restarted else 0))

    def _next_ip(self) -> int:
        self._ip = self._ip % 250 + 1
        return self._ip + 1

    def _sync_batch(self) -> None:
        """Status manager syncBatch: re-assert the pod statuses the API lost (e.g. Ready=False
        written by the NodeLifecycleController while the containers kept running); a failed
        update is tried again at the next batch, every 10 s."""
        keys, self._reconcile = sorted(self._reconcile), set()
        if not self.running:
            return
        pods = self.pods_on_node(self.name)
        for key in keys:
            pod = pods.get(key)
            if pod is None or self.containers.get(key) != "running" or pod.is_ready() or pod.terminal:
                continue
            if not self.reachable:
                self._needs_reconcile(key)
                continue
            self._processes.append(self._spawn(0, self._restore_ready, pod))

    def _restore_ready(self, proc: Process, pod: Pod) -> None:
        self._patch_pod(proc, pod, self._ready_again, partial(self._ready_restored, pod.key))

    def _ready_again(self, current: Pod) -> Pod:
        now = self.ctx.engine.now
        conditions = current.conditions
        for ctype in ("Ready", "ContainersReady"):
            conditions = set_pod_condition(conditions, ctype, "True", now)
        return current.evolve(conditions=conditions, container_ready=True)

    def _ready_restored(self, key: str, resp: Response) -> None:
        if not resp.ok and resp.code != 404:
            self._needs_reconcile(key)

    def _finish_deletion(self, pod: Pod) -> None:
        if not self.running or not self.reachable:
            return
        self.containers.pop(pod.key, None)
        if self.volumes is not None:
            self.volumes.remove_pod(pod.key)  # unmounted before the pod object goes
        self._processes.append(self._spawn(0, self._delete_pod, pod))

    def _delete_pod(self, proc: Process, pod: Pod) -> None:
        api, actor, name, ns = self.api, self.pod_actor, pod.metadata.name, pod.metadata.namespace
        api.request(proc, actor, "delete", "pods", name,
                    partial(api.delete, actor, "pods", name, namespace=ns, grace_seconds=0), _done, namespace=ns)

    def _patch_pod(self, proc: Process, pod: Pod, change: Callable[[Pod], Pod],
                   then: Callable[[Response], None]) -> None:
        """PATCH pods/<name>/status with `change` (a bound method or a partial of one: it waits in
        the request, which is part of the run's state)."""
        api, actor, name, ns = self.api, self.pod_actor, pod.metadata.name, pod.metadata.namespace
        api.request(proc, actor, "patch", "pods", name,
                    partial(api.patch, actor, "pods", name, change, namespace=ns, subresource="status"), then,
                    namespace=ns, subresource="status")

    # -- volumes (volume_manager.py's host) -----------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.running and self.reachable

    def volumes_mounted(self, key: str) -> None:
        if self.containers.get(key) == "volumes" and self.runtime_up:
            self.containers[key] = "starting"
            self._later(CONTAINER_START_TIME, self._start_pod, key)

    def volumes_in_use_changed(self) -> None:
        if self.status is not None:
            self.status.wake(inclusive=True)

    def volumes_in_use(self) -> tuple[str, ...]:
        return self.volumes.in_use() if self.volumes is not None else ()

    def volumes_reported(self, in_use: tuple[str, ...]) -> None:
        if self.volumes is not None:
            self.volumes.status_posted(in_use)

    def node_changed(self) -> None:
        """A new version of this kubelet's Node (volumesAttached may have changed)."""
        if self.volumes is not None and self.active:
            node = self.api.current("nodes", self.name)
            if node is not None:
                self.volumes.node_changed(node)

    # -- for the snapshot ---------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        lease = self.lease.latest if self.lease else None
        return {
            "running": self.running,
            "powered": self.powered,
            "reachable": self.reachable,
            "runtimeUp": self.runtime_up,
            "shuttingDown": self.shutting_down,
            "pressure": sorted(r for r, eps in self.pressure.items() if eps and eps[-1].end is None),
            "lastRenew": lease.renew_time / US if lease and lease.renew_time is not None else None,
            "lastStatusReport": (self.status.last_status_report_time / US
                                 if self.status and self.status.last_status_report_time is not None else None),
            **({"volumes": self.volumes.describe()} if self.volumes is not None else {}),
        }


_THRESHOLD = {"memory": "100Mi", "disk": "10%", "pid": "5%"}
_AVAILABLE = {"memory": "88Mi", "disk": "7%", "pid": "3%"}


def _owned_by_node(lease: Lease, then: Callable[[Lease | None], None], resp: Response) -> None:
    if not resp.ok:
        then(None)
        return
    owner = {"apiVersion": "v1", "kind": "Node", "name": lease.metadata.name, "uid": resp.obj.metadata.uid}
    then(lease.evolve(metadata=lease.metadata.evolve(owner_references=(owner,))))


def _done(_result: object) -> None:
    """The end of a process that wants nothing of its last answer."""
