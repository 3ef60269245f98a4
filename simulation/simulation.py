"""One deterministic run: builds the cluster from a scenario, applies commands at their
virtual time and hands out events slice by slice (docs/simulation-api.md)."""

from __future__ import annotations

import gc
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from . import checkpoint
from .apiserver import Actor, APIServer
from .clock import US, WallClock, parse_duration, parse_start_time, seconds
from .context import Context, controller_manager_config, kubelet_config, uid_factory
from .endpointslice import EndpointSliceController
from .engine import Engine
from .events import Recorder, SimEvent
from .faults import FaultError, normalise_fault, reverse_of
from .garbage import CloudNodeLifecycleController, GarbageCollector, PodGarbageCollector
from .kubelet import Kubelet
from .nodelifecycle import NodeLifecycleController
from .objects import (
    LABEL_HOSTNAME,
    LABEL_ZONE,
    NO_EXECUTE,
    TAINT_OUT_OF_SERVICE,
    Node,
    ObjectMeta,
    Pod,
    Service,
    Taint,
    to_k8s,
)
from .profiles import PROFILES
from .scenario import Scenario
from .scheduler import Scheduler
from .storage import Storage
from .tainteviction import TaintEvictionController
from .workloads import DaemonSetController, ReplicaSetController

BOOT_SPREAD = 10 * US  # initial kubelets start at random offsets in [0, 10 s): lease phases spread over a period
CONTROLLER_MANAGER_RESTART = 15 * US  # leader election: --leader-elect-lease-duration
WORKLOADS_APPLIED_AT = 15 * US  # `kubectl apply` of the workloads once the nodes are Ready
# By then the workloads' pods are created, scheduled and started: the start-up burst is over
# (a 1,000-node cluster makes ~90,000 of its events between 15 and 17 s, then ~100 a second).
STARTUP_DONE_AT = WORKLOADS_APPLIED_AT + 5 * US
TRAINER = Actor("kubernetes-admin", "trainer")


class CommandError(ValueError):
    """A command is invalid or cannot be applied now; the message names the problem."""


@dataclass(frozen=True, slots=True)
class Shortcuts:
    """The cost shortcuts a run takes (docs/simulation-model.md): each skips work whose outcome is
    known, and none changes a single event. All on by default; tests switch them off one at a
    time and compare the runs."""

    kubelet_doze: bool = True  # a quiet kubelet status loop sleeps to its next report (kubelet/node_status.py)
    steady_nodes: bool = True  # monitorNodeHealth skips unchanged healthy nodes (nodelifecycle/shortcuts.py)
    settled_nodes: bool = True  # ... and repeats its verdict on unchanged Unknown nodes (same file)
    engine_buckets: bool = True  # far timers wait unsorted in one-second buckets (engine.py)

    @classmethod
    def none(cls) -> Shortcuts:
        return cls(kubelet_doze=False, steady_nodes=False, settled_nodes=False, engine_buckets=False)


def _promote_young_objects(*, keep_frozen: bool = False) -> None:
    """Move everything the slice allocated straight to the oldest GC generation.

    A run makes no reference cycles (tests/simulation/test_determinism.py checks it): its
    objects die by reference counting or live on in the store. The cyclic collector is
    therefore switched off during a slice (it would walk the growing heap for nothing: that
    halved throughput), and when it comes back it would still walk every object the slice
    left in the young generations, once in generation 0 and again in generation 1: 11 % of
    a 5,000-node run, about 2 µs per object. freeze() + unfreeze() moves the generations to
    the oldest one without looking at them (two list splices). `run_until` collects the
    young generations just before the slice, so what moves up is the slice's own objects,
    not the host's (a web process's garbage cycles are still collected young).

    ``keep_frozen`` leaves them in the permanent generation instead, which no collection
    walks: see ``Simulation.keep_frozen``.
    """
    gc.freeze()
    if not keep_frozen:
        gc.unfreeze()


class Simulation:
    # A host that keeps large simulations alive next to other threads (the live driver) sets
    # this: the objects each slice leaves behind then go to the permanent GC generation. A full
    # collection of a 5,000-node run's 1.6 million objects stops every thread of the process
    # for over a second; frozen, they are never walked (they have no cycles: reference counting
    # frees them). The host thaws the generation itself when it holds no simulation.
    keep_frozen: bool = False

    def __init__(self, scenario: Scenario, seed: int | None = None, *, shortcuts: Shortcuts = Shortcuts()) -> None:
        self.scenario = scenario
        doc = scenario.document
        self.seed = scenario.seed if seed is None else seed
        self.shortcuts = shortcuts
        self.profile = PROFILES[scenario.version]
        self.clock = WallClock(parse_start_time(doc["startTime"]))
        self.engine = Engine(buckets=shortcuts.engine_buckets)
        self.recorder = Recorder(self.clock)
        self.recorder.timebase = self.engine
        base = Context(self.engine, None, self.recorder, self.clock, self.profile,  # type: ignore[arg-type]
                       kubelet_config(doc), controller_manager_config(doc), self.seed)
        api = doc["apiServer"]
        self.api = APIServer(self.engine, self.recorder, self.clock,
                             default_toleration_seconds=api["defaultTolerationSeconds"],
                             not_ready_seconds=api["defaultNotReadyTolerationSeconds"],
                             unreachable_seconds=api["defaultUnreachableTolerationSeconds"],
                             uid_factory=uid_factory(base.rng("uids")))
        base.api = self.api
        for delay in (0, self.api.base_latency, self.api.watch_delay):
            self.engine.add_lane(delay)  # "right now", a request's trip, a watch delivery
        self.ctx = base
        # pods by node, kept from the shared informer cache (every controller's pod index)
        self._pods_by_node: dict[str, dict[str, Pod]] = {}
        self.api.watch("pods", "kubelet", self._index_pod)
        self.api.watch("nodes", "kubelet", self._on_node_for_kubelet, drawn=False)
        self.kubelets: dict[str, Kubelet] = {}
        self._node_index = 0
        self.nlc = NodeLifecycleController(self.ctx, self.pods_on_node, steady_nodes=shortcuts.steady_nodes,
                                           settled_nodes=shortcuts.settled_nodes)
        self.tec = TaintEvictionController(self.ctx, self.pods_on_node)
        self.scheduler = Scheduler(self.ctx, self.pods_on_node)
        self.eps = EndpointSliceController(self.ctx)
        self.gc = GarbageCollector(self.ctx)
        self.podgc = PodGarbageCollector(self.ctx, self.pods_on_node)
        self.cloud = CloudNodeLifecycleController(self.ctx)
        self.replicasets: list[ReplicaSetController] = []
        self.daemonsets: list[DaemonSetController] = []
        self.storage: Storage | None = None  # StatefulSets, claims, volumes: only in runs that have them
        self.commands: list[dict[str, Any]] = []
        self._known_nodes = {name for name, _zone in scenario.nodes}
        self._zones = {zone for _name, zone in scenario.nodes}
        self.nlc.start()
        self.tec.start()
        boot_rng = self.ctx.rng("boot")
        for name, zone in scenario.nodes:
            kubelet = self._add_machine(name, zone)
            kubelet.power_on(boot_delay=int(boot_rng.random() * BOOT_SPREAD))
        self.engine.call_at(WORKLOADS_APPLIED_AT, self._apply_workloads, doc["cluster"])
        for fault in scenario.faults:
            body = {k: v for k, v in fault.items() if k != "at"}
            self._schedule(body, seconds(parse_duration(fault["at"])))

    # -- public API ------------------------------------------------------------------------------

    @property
    def now(self) -> float:
        return self.engine.now / US

    @property
    def startup_done_at(self) -> float:
        """Virtual time (s) by which the initial cluster has booted and its workloads run."""
        return STARTUP_DONE_AT / US

    def run_until(self, t: float) -> list[SimEvent]:
        """Process everything strictly before virtual time `t` (seconds) and return the new events."""
        until = seconds(t)
        if until > self.engine.now:
            collecting = gc.isenabled()
            # a host that froze objects itself (pre-fork copy-on-write) keeps them frozen:
            # unfreeze() would thaw them, so such a host gets the plain collector, unless it
            # asked for the slices' objects to be frozen too (keep_frozen)
            # (get_freeze_count() walks the frozen objects: asked only when it decides)
            promoting = collecting and (Simulation.keep_frozen or gc.get_freeze_count() == 0)
            if promoting:
                gc.collect(1)  # the host's young objects get their usual collection first
            gc.disable()
            try:
                self.engine.run_until(until)
            finally:
                if promoting:
                    _promote_young_objects(keep_frozen=Simulation.keep_frozen)
                if collecting:
                    gc.enable()
        return self.recorder.take()

    # -- checkpoints ------------------------------------------------------------------------------

    def checkpoint(self) -> bytes:
        """The whole state of the run at `now`, as bytes: `Simulation.restore(data)` gives a run
        that continues exactly as this one does (same events, same bytes), in this process or
        another one with the same code (docs/simulation-model.md, "Checkpoints"). The same
        state gives the same bytes (checkpoint.py).

        Everything a Simulation holds is state: the engine's queues (each timer a bound method
        or a functools.partial of one, with plain data), every component, the random streams,
        the commands scheduled so far, and the events `run_until` has not handed out yet. What
        consumes the run's output is not attached to it (callers take events from `run_until`),
        so there is nothing to detach and, after a restore, nothing to re-attach but the
        caller's own loop. `Simulation.keep_frozen` is a setting of the process, not of a run."""
        return checkpoint.dumps(self)

    @classmethod
    def restore(cls, data: bytes) -> Simulation:
        """The run a `checkpoint()` holds, ready for `run_until` and `schedule_command`. Only
        restore checkpoints this service made: unpickling can run code."""
        collecting = gc.isenabled()
        promoting = collecting and (Simulation.keep_frozen or gc.get_freeze_count() == 0)
        if promoting:
            gc.collect(1)  # the host's young objects get their usual collection first
        sim = checkpoint.loads(data)
        if promoting:  # as after a slice: the run's objects go straight to the oldest generation
            _promote_young_objects(keep_frozen=Simulation.keep_frozen)
        if not isinstance(sim, cls):
            raise ValueError(f"the checkpoint holds a {type(sim).__name__}, not a {cls.__name__}")
        return sim

    def schedule_command(self, cmd: dict[str, Any], at: float) -> dict[str, Any]:
        """Validate a fault command and schedule it at virtual time `at` (>= now)."""
        when = seconds(at)
        if when < self.engine.now:
            raise CommandError(f"at: {at} is in the past (the run is at {self.now:.6f} s)")
        if not isinstance(cmd, dict):
            raise CommandError(f"a command must be an object with an 'action', got {type(cmd).__name__}")
        try:
            body = normalise_fault(cmd, self._known_nodes, self._zones)
        except FaultError as exc:
            raise CommandError(str(exc)) from None
        # A command for now names a pod that must exist now. One for later (a rebuilt run schedules its
        # commands from time zero) may name a pod that does not exist yet: it is checked when it was sent.
        if (body["action"] == "force-delete-pod" and when <= self.engine.now
                and self.api.current("pods", body["pod"], "default") is None):
            names = sorted(name for _ns, name in self.api.store["pods"])
            shown = ", ".join(names[:8]) + (f", … ({len(names)} in all)" if len(names) > 8 else "")
            raise CommandError(f"pod: unknown pod {body['pod']!r} (pods: {shown or 'none'})")
        if body["action"] == "create-node":
            self._known_nodes.add(body["name"])
            if body.get("zone"):
                self._zones.add(body["zone"])
        return self._schedule(body, when)

    def next_monitor_pass(self) -> float:
        nxt = self.nlc.next_pass_at
        if nxt is None or nxt < self.engine.now:
            return self.now
        return nxt / US

    def pods_on_node(self, node: str) -> dict[str, Pod]:
        return self._pods_by_node.get(node, {})

    # -- cluster construction -----------------------------------------------------------------

    def _add_machine(self, name: str, zone: str) -> Kubelet:
        self._node_index += 1
        kubelet = Kubelet(self.ctx, name, zone, self._node_index, self.pods_on_node, doze=self.shortcuts.kubelet_doze)
        self.kubelets[name] = kubelet
        return kubelet

    def _apply_workloads(self, cluster: dict[str, Any]) -> None:
        """What `kubectl apply` of the manifests does at time zero."""
        for svc in cluster.get("services", []):
            obj = Service(metadata=ObjectMeta(name=svc["name"], namespace="default", uid="", resource_version=0,
                                              creation=0), selector=dict(svc["selector"]),
                          cluster_ip=f"10.96.0.{10 + len(self.api.store['services'])}")
            self.api.create(TRAINER, obj)
        for spec in cluster.get("workloads", []):
            if spec["kind"] == "StatefulSet":
                if self.storage is None:
                    cm = self.scenario.document["controllerManager"]
                    self.storage = Storage(self.ctx, disable_force_detach_on_timeout=cm.get(
                        "disableForceDetachOnTimeout", False))
                self.storage.statefulsets.add(spec)
            elif spec["kind"] == "DaemonSet":
                self.daemonsets.append(DaemonSetController(self.ctx, spec, self.pods_on_node))
            else:
                rs = ReplicaSetController(self.ctx, spec)
                self.replicasets.append(rs)
                rs.queue_sync()

    def _index_pod(self, old: Pod | None, new: Pod | None) -> None:
        if old is not None and old.node_name and (new is None or new.node_name != old.node_name):
            self._pods_by_node.get(old.node_name, {}).pop(old.key, None)
        if new is not None and new.node_name:
            self._pods_by_node.setdefault(new.node_name, {})[new.key] = new
        pod = new or old
        if pod is not None and pod.node_name:
            kubelet = self.kubelets.get(pod.node_name)
            if kubelet is not None:
                kubelet.on_pod(old, new)

    def _on_node_for_kubelet(self, old: Node | None, new: Node | None) -> None:
        """The kubelet's own Node informer: a new version may change what its status sync does."""
        node = new or old
        kubelet = self.kubelets.get(node.metadata.name) if node is not None else None
        if kubelet is not None and kubelet.status is not None:
            kubelet.status.wake(inclusive=False)
            if kubelet.volumes is not None:
                kubelet.node_changed()

    # -- commands ------------------------------------------------------------------------------

    def _schedule(self, body: dict[str, Any], when: int) -> dict[str, Any]:
        index = len(self.commands)
        record = {"index": index, "at": when / US, **body}
        self.commands.append(record)
        self.engine.call_command_at(when, (index, 0), self._apply, index, body)
        if "for" in body:
            self.engine.call_command_at(when + seconds(parse_duration(body["for"])), (index, 1), self._apply, index,
                                        reverse_of(body))
        return record

    def _apply(self, index: int, cmd: dict[str, Any]) -> None:
        action = cmd["action"]
        self.recorder.emit("fault", "trainer", cmd.get("node") or cmd.get("name"),
                           {"action": action, "command": index, **{k: v for k, v in cmd.items() if k != "action"},
                            "summary": _describe(cmd)})
        handler = getattr(self, "_do_" + action.replace("-", "_"))
        handler(cmd)
        for kubelet in self.kubelets.values():  # a command may change what any status sync reads
            if kubelet.status is not None:
                kubelet.status.wake(inclusive=True)

    def _kubelet(self, cmd: dict[str, Any]) -> Kubelet | None:
        return self.kubelets.get(cmd["node"])

    def _do_stop_kubelet(self, cmd: dict[str, Any]) -> None:
        if k := self._kubelet(cmd):
            k.stop()

    def _do_start_kubelet(self, cmd: dict[str, Any]) -> None:
        if k := self._kubelet(cmd):
            k.start()

    def _do_stop_runtime(self, cmd: dict[str, Any]) -> None:
        if k := self._kubelet(cmd):
            k.stop_runtime()

    def _do_start_runtime(self, cmd: dict[str, Any]) -> None:
        if k := self._kubelet(cmd):
            k.start_runtime()

    def _do_partition(self, cmd: dict[str, Any]) -> None:
        self.api.partition(cmd["node"])

    def _do_heal(self, cmd: dict[str, Any]) -> None:
        self.api.heal(cmd["node"])
        if k := self._kubelet(cmd):
            self.engine.call_later(0, k.resync_pods)  # the watch reconnects with a relist

    def _do_start_pressure(self, cmd: dict[str, Any]) -> None:
        if k := self._kubelet(cmd):
            k.start_pressure(cmd["resource"])

    def _do_stop_pressure(self, cmd: dict[str, Any]) -> None:
        if k := self._kubelet(cmd):
            k.stop_pressure(cmd["resource"])

    def _do_fail_lease_writes(self, cmd: dict[str, Any]) -> None:
        self.api.fail_lease_writes.add(cmd["node"])

    def _do_restore_lease_writes(self, cmd: dict[str, Any]) -> None:
        self.api.fail_lease_writes.discard(cmd["node"])

    def _do_fail_status_writes(self, cmd: dict[str, Any]) -> None:
        self.api.fail_status_writes.add(cmd["node"])

    def _do_restore_status_writes(self, cmd: dict[str, Any]) -> None:
        self.api.fail_status_writes.discard(cmd["node"])

    def _do_slow_apiserver(self, cmd: dict[str, Any]) -> None:
        latency = seconds(parse_duration(cmd["latency"]))
        if "node" in cmd:
            self.api.latency_node[cmd["node"]] = latency
        else:
            self.api.latency_all = latency

    def _do_restore_apiserver(self, cmd: dict[str, Any]) -> None:
        if "node" in cmd:
            self.api.latency_node.pop(cmd["node"], None)
        else:
            self.api.latency_all = None
            self.api.latency_node.clear()

    def _do_shutdown(self, cmd: dict[str, Any]) -> None:
        if k := self._kubelet(cmd):
            k.shutdown(k.power_off)

    def _do_power_off(self, cmd: dict[str, Any]) -> None:
        if k := self._kubelet(cmd):
            k.power_off()

    def _do_power_on(self, cmd: dict[str, Any]) -> None:
        k = self._kubelet(cmd)
        if k is not None and cmd["node"] not in self.cloud.terminated and self.api.current("nodes", cmd["node"]):
            k.power_on()

    def _do_cordon(self, cmd: dict[str, Any]) -> None:
        self._set_unschedulable(cmd["node"], True)

    def _do_uncordon(self, cmd: dict[str, Any]) -> None:
        self._set_unschedulable(cmd["node"], False)

    def _set_unschedulable(self, name: str, value: bool) -> None:
        if self.api.current("nodes", name) is not None:
            self.api.patch(TRAINER, "nodes", name, lambda n: n.evolve(unschedulable=value))

    def _do_create_node(self, cmd: dict[str, Any]) -> None:
        name, zone = cmd["name"], cmd.get("zone", "")
        if cmd.get("kubelet", True):
            self._add_machine(name, zone).power_on()
            return
        labels = {LABEL_HOSTNAME: name}
        if zone:
            labels[LABEL_ZONE] = zone
        self.api.create(TRAINER, Node(metadata=ObjectMeta(name=name, namespace="", uid="", resource_version=0,
                                                          creation=0, labels=labels)))

    def _do_delete_node(self, cmd: dict[str, Any]) -> None:
        """The cloud instance is terminated: the machine is gone; the cloud node lifecycle
        controller deletes the Node once it is no longer Ready."""
        name = cmd["node"]
        if k := self.kubelets.get(name):
            k.power_off()
        if self.api.current("nodes", name) is not None:
            self.cloud.instance_terminated(name)

    def _do_taint_out_of_service(self, cmd: dict[str, Any]) -> None:
        """`kubectl taint nodes <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute`: the
        administrator declares the node down for good (non-graceful node shutdown)."""
        node: Node | None = self.api.current("nodes", cmd["node"])
        if node is None or any(t.key == TAINT_OUT_OF_SERVICE for t in node.taints):
            return
        now = self.engine.now
        self.api.patch(TRAINER, "nodes", cmd["node"], lambda n: n.evolve(
            taints=n.taints + (Taint(TAINT_OUT_OF_SERVICE, NO_EXECUTE, "nodeshutdown", now),)))

    def _do_untaint_out_of_service(self, cmd: dict[str, Any]) -> None:
        node: Node | None = self.api.current("nodes", cmd["node"])
        if node is None or not any(t.key == TAINT_OUT_OF_SERVICE for t in node.taints):
            return
        self.api.patch(TRAINER, "nodes", cmd["node"], lambda n: n.evolve(
            taints=tuple(t for t in n.taints if t.key != TAINT_OUT_OF_SERVICE)))

    def _do_force_delete_pod(self, cmd: dict[str, Any]) -> None:
        """`kubectl delete pod <pod> --grace-period=0 --force`: the object goes at once, whatever its
        kubelet has (or has not) done."""
        self.api.delete(TRAINER, "pods", cmd["pod"], namespace="default", grace_seconds=0)

    def _do_zone_outage(self, cmd: dict[str, Any]) -> None:
        for name, k in self.kubelets.items():
            if k.zone == cmd["zone"]:
                self.api.partition(name)

    def _do_zone_heal(self, cmd: dict[str, Any]) -> None:
        for name, k in sorted(self.kubelets.items()):
            if k.zone == cmd["zone"] and name in self.api.partitioned:
                self.api.heal(name)
                self.engine.call_later(0, k.resync_pods)

    def _do_restart_controller_manager(self, cmd: dict[str, Any]) -> None:
        """The leader dies; a new one acquires the leader lease after its 15 s duration and
        starts with empty memory (docs/kubernetes-node-health.md §3.9)."""
        self.nlc.stop()
        self.tec.stop()
        if self.storage is not None:
            self.storage.attachdetach.stop()
        self.engine.call_later(CONTROLLER_MANAGER_RESTART, self._start_controllers)

    def _start_controllers(self) -> None:
        self.nlc.start()
        self.tec.start()
        if self.storage is not None:
            self.storage.attachdetach.start()

    def pod_counts(self, nodes: Iterable[str]) -> dict[str, dict[str, int]]:
        """The pods of each of ``nodes`` counted by state, as a cluster overview shows them.

        ``""`` stands for the pods no scheduler has placed yet. ``terminating``: a deletion
        was requested; ``ready``: the pod's Ready condition is True; ``notReady``: the rest.
        """
        counts = {}
        for node in nodes:
            if node:
                pods: Iterable[Pod] = self.pods_on_node(node).values()
            else:
                pods = (p for p in self.api.store["pods"].values() if not p.node_name)
            total = ready = terminating = 0
            for pod in pods:
                total += 1
                if pod.metadata.deletion_timestamp is not None:
                    terminating += 1
                elif pod.is_ready():
                    ready += 1
            counts[node] = {"total": total, "ready": ready, "notReady": total - ready - terminating,
                            "terminating": terminating}
        return counts

    def node_objects(self, node: str) -> dict[str, list[dict[str, Any]]] | None:
        """Everything about one node, as Kubernetes JSON: the Node, its Lease, its pods and
        the EndpointSlices with an endpoint on it. None for a node the cluster does not have."""
        store = self.api.store
        found = store["nodes"].get(("", node))
        if found is None:
            return None
        ser = self.clock
        lease = store["leases"].get(("kube-node-lease", node))
        pods = sorted(self.pods_on_node(node).values(), key=lambda o: (o.metadata.namespace, o.metadata.name))
        slices = sorted((o for o in store["endpointslices"].values() if any(e.node_name == node for e in o.endpoints)),
                        key=lambda o: (o.metadata.namespace, o.metadata.name))
        out = {
            "nodes": [to_k8s(found, ser)],
            "leases": [to_k8s(lease, ser)] if lease is not None else [],
            "pods": [to_k8s(o, ser) for o in pods],
            "endpointslices": [to_k8s(o, ser) for o in slices],
        }
        if self.storage is not None:  # the node's volume attachments, in runs with a StatefulSet
            out["volumeattachments"] = [to_k8s(o, ser) for o in sorted(
                (va for va in store["volumeattachments"].values() if va.node_name == node),
                key=lambda o: o.metadata.name)]
        return out

    # -- snapshot --------------------------------------------------------------------------------

    def snapshot(self, *, pods: bool = True) -> dict[str, Any]:
        """The whole state at ``now``; ``pods=False`` leaves pods and EndpointSlices out (a
        large cluster's overview shows pod counts, and fetches a node's pods on demand)."""
        store = self.api.store
        ser = self.clock

        def dump(resource: str, limit: int | None = None) -> list[dict[str, Any]]:
            objs = sorted(store[resource].values(), key=lambda o: (o.metadata.namespace, o.metadata.name))
            if limit is not None:
                objs = sorted(objs, key=lambda o: o.metadata.resource_version)[-limit:]
            return [to_k8s(o, ser) for o in objs]

        return {
            "t": self.now,
            "time": self.clock.micro(self.engine.now),
            "last_seq": self.recorder.seq,
            "version": self.profile.version,
            "profile": self.profile.as_dict(),
            "objects": {
                "nodes": dump("nodes"), "leases": dump("leases"), "pods": dump("pods") if pods else [],
                "services": dump("services"), "endpointslices": dump("endpointslices") if pods else [],
                "events": dump("events", limit=300),
                **({r: dump(r) for r in Storage.RESOURCES} if self.storage is not None else {}),
            },
            "nodeLifecycle": self.nlc.describe(),
            "taintEviction": {"pods": self.tec.describe(), "running": self.tec.running},
            "kubelets": {name: k.describe() for name, k in sorted(self.kubelets.items())},
            **({"storage": self.storage.describe()} if self.storage is not None else {}),
            "scenario": {"name": self.scenario.name, "title": self.scenario.title},
            "watchDelay": self.api.watch_delay / US,
            "config": {"kubelet": self.scenario.document["kubelet"],
                       "controllerManager": self.scenario.document["controllerManager"],
                       "apiServer": self.scenario.document["apiServer"]},
        }


def _describe(cmd: dict[str, Any]) -> str:
    action = cmd["action"]
    target = cmd.get("node") or cmd.get("pod") or cmd.get("name") or cmd.get("zone") or "cluster"
    extra = ""
    if "resource" in cmd:
        extra += f" ({cmd['resource']})"
    if "latency" in cmd:
        extra += f" (latency {cmd['latency']})"
    if "for" in cmd:
        extra += f" for {cmd['for']}"
    return f"{action} {target}{extra}"


def validate_command(cmd: Any, scenario: Scenario) -> dict[str, Any]:
    """Check a fault command against a scenario's nodes and zones without running anything."""
    if not isinstance(cmd, dict):
        raise CommandError(f"a command must be an object with an 'action', got {type(cmd).__name__}")
    try:
        return normalise_fault(cmd, {n for n, _z in scenario.nodes} | _created_nodes(scenario),
                               {z for _n, z in scenario.nodes})
    except FaultError as exc:
        raise CommandError(str(exc)) from None


def _created_nodes(scenario: Scenario) -> set[str]:
    return {f["name"] for f in scenario.faults if f["action"] == "create-node"}

