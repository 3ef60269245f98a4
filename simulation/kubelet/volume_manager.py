"""The kubelet's volume manager (pkg/kubelet/volumemanager/: volume_manager.go,
populator/desired_state_of_world_populator.go, reconciler/reconciler_common.go;
pkg/volume/util/operationexecutor/operation_generator.go VerifyControllerAttachedVolume).

A pod's containers start only once every volume it uses is mounted (WaitForAttachAndMount). For a
volume the attach/detach controller attaches, the kubelet:
1. adds it to its desired state when the pod arrives and its claim is bound (the populator, every
   100 ms): from then on the volume is "in use" and the next Node status sync reports it in
   `status.volumesInUse` (GetVolumesInUse: desired or still mounted);
2. waits until that report has been posted (ReportedInUse: "it may take as much as 10 seconds") and
   until the controller lists the volume in the Node's `status.volumesAttached`;
3. mounts it (MountDevice, then SetUp; MOUNT_TIME, the simulation's choice) on its 100 ms reconciler
   loop. Then the pod's containers start.
When a pod is gone from the node the kubelet unmounts its volumes and the next status sync drops them
from volumesInUse; that is what lets the attach/detach controller detach safely. A kubelet that is
dead, stopped or cut off does none of this: the Node keeps the volumesInUse it last posted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ..clock import MS, US
from ..engine import Timer
from ..objects import Node, PersistentVolume, PersistentVolumeClaim, Pod

if TYPE_CHECKING:
    from ..context import Context

LOOP_PERIOD = 100 * MS  # desiredStateOfWorldPopulatorLoopSleepPeriod, reconcilerLoopSleepPeriod
MOUNT_TIME = 1 * US  # MountDevice (CSI NodeStage) and SetUp (NodePublish) together
SOURCE = "pkg/kubelet/volumemanager/reconciler/reconciler_common.go"


class VolumeHost(Protocol):
    """What the volume manager needs of its kubelet."""

    name: str
    started_at: int

    @property
    def active(self) -> bool:
        """The kubelet runs and reaches the API server."""

    def volumes_mounted(self, key: str) -> None:
        """Every volume of pod `key` is mounted: its containers may start."""

    def volumes_in_use_changed(self) -> None:
        """volumesInUse changed: the status loop has something to post."""


class VolumeManager:
    def __init__(self, ctx: Context, host: VolumeHost) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.host = host
        self.pods: dict[str, Pod] = {}  # pods of this node that use claims, not yet removed
        self.pod_volumes: dict[str, dict[str, str]] = {}  # pod key -> claim -> unique volume name
        self.waiting: set[str] = set()  # pods whose containers wait for their volumes
        self.mounted: set[str] = set()
        self.mounting: dict[str, Timer] = {}
        self.reported: frozenset[str] = frozenset()  # volumesInUse as last posted
        self._in_use: tuple[str, ...] = ()
        self._populator: Timer | None = None

    # -- desired state ----------------------------------------------------------------------------

    def add_pod(self, pod: Pod) -> None:
        key = pod.key
        self.pods[key] = pod
        self.pod_volumes.setdefault(key, {})
        self.waiting.add(key)
        self.populate()

    def remove_pod(self, key: str) -> None:
        """The pod is gone from the node: unmount what no other pod uses."""
        self.pods.pop(key, None)
        self.pod_volumes.pop(key, None)
        self.waiting.discard(key)
        needed = self._desired()
        for volume in list(self.mounted):
            if volume not in needed:
                self.mounted.discard(volume)
        for volume in list(self.mounting):
            if volume not in needed:
                self.mounting.pop(volume).cancel()
        self._note_in_use()

    def _desired(self) -> set[str]:
        return {v for volumes in self.pod_volumes.values() for v in volumes.values()}

    def populate(self) -> None:
        """The desired-state populator: resolve each claim to its volume once it is bound."""
        self._populator = None
        unresolved = False
        for key, pod in sorted(self.pods.items()):
            resolved = self.pod_volumes[key]
            for _name, claim in pod.volumes:
                if claim in resolved:
                    continue
                pvc: PersistentVolumeClaim | None = self.api.cached("persistentvolumeclaims", claim,
                                                                   pod.metadata.namespace)
                pv: PersistentVolume | None = (self.api.cached("persistentvolumes", pvc.volume_name)
                                               if pvc is not None and pvc.phase == "Bound" else None)
                if pv is None:
                    unresolved = True
                    continue
                resolved[claim] = pv.unique_name
        self._note_in_use()
        if unresolved and self.host.active:
            self._populator = self.ctx.engine.call_later(LOOP_PERIOD, self.populate)
        self.reconcile()

    def in_use(self) -> tuple[str, ...]:
        """GetVolumesInUse: desired or still mounted, sorted."""
        return self._in_use

    def _note_in_use(self) -> None:
        in_use = tuple(sorted(self._desired() | self.mounted))
        if in_use != self._in_use:
            self._in_use = in_use
            self.host.volumes_in_use_changed()

    # -- actual state -----------------------------------------------------------------------------

    def status_posted(self, in_use: tuple[str, ...]) -> None:
        """MarkVolumesAsReportedInUse after a successful Node status update."""
        self.reported = frozenset(in_use)
        self.reconcile()

    def node_changed(self, node: Node) -> None:
        if self.waiting:
            self.reconcile()

    def reconcile(self) -> None:
        """mountOrAttachVolumes: mount each desired volume that is reported in use and attached."""
        if not self.waiting or not self.host.active:
            return
        node: Node | None = self.api.current("nodes", self.host.name)  # the kubelet GETs its Node
        attached = set(node.volumes_attached) if node is not None else set()
        now = self.ctx.engine.now
        for key in sorted(self.waiting):
            for volume in self.pod_volumes.get(key, {}).values():
                if volume in self.mounted or volume in self.mounting:
                    continue
                if volume not in self.reported or volume not in attached:
                    continue  # VerifyControllerAttachedVolume fails; retried on the next loop
                start = self.host.started_at
                tick = start + -(-(now + 1 - start) // LOOP_PERIOD) * LOOP_PERIOD
                self.mounting[volume] = self.ctx.engine.call_at(tick + MOUNT_TIME, self._mounted, volume)
        self._check_pods()

    def _mounted(self, volume: str) -> None:
        self.mounting.pop(volume, None)
        if not self.host.active:
            return
        self.mounted.add(volume)
        self._note_in_use()
        self._check_pods()

    def _check_pods(self) -> None:
        for key in sorted(self.waiting):
            pod = self.pods.get(key)
            volumes = self.pod_volumes.get(key, {})
            if pod is None or len(volumes) < len(pod.volumes) or not all(v in self.mounted for v in volumes.values()):
                continue
            self.waiting.discard(key)
            self.ctx.recorder.decision("kubelet", "kubelet.volume-mount", self.host.name,
                                       {"volumes": sorted(volumes.values()), "claims": sorted(volumes)},
                                       f"volumes of {pod.metadata.name} mounted: containers start",
                                       "Every volume of the pod is attached to this node (status.volumesAttached) "
                                       "and mounted, so the kubelet lets its containers start.", SOURCE,
                                       pod=pod.metadata.name)
            self.host.volumes_mounted(key)

    def stop(self) -> None:
        """The kubelet stops: its loops stop with it (mounts in flight never finish)."""
        if self._populator is not None:
            self._populator.cancel()
            self._populator = None
        for timer in self.mounting.values():
            timer.cancel()
        self.mounting.clear()

    def describe(self) -> dict[str, object]:
        return {"inUse": list(self._in_use), "mounted": sorted(self.mounted), "reportedInUse": sorted(self.reported),
                "waitingPods": sorted(self.waiting)}
