"""Attach/detach controller (pkg/controller/volume/attachdetach/: attach_detach_controller.go,
cache/desired_state_of_world.go, cache/actual_state_of_world.go, reconciler/reconciler.go,
statusupdater/node_status_updater.go, util/util.go; docs/kubernetes-node-health.md "StatefulSets and
volumes").

Two caches and a reconciler:
- the desired state of the world (DSW): which volume should be attached to which node, for which pods.
  A scheduled pod's volumes enter it once their claims are bound; they leave it when the pod object is
  deleted or the pod is terminated (`IsPodTerminated`, pkg/volume/util/util.go: phase Failed or
  Succeeded, or deleted with no container running). A pod deleted on a dead node keeps its last
  container status "running" for ever, so its volume stays desired on that node: nothing is detached.
- the actual state of the world (ASW): which volume is attached where, whether the node still reports
  it in `status.volumesInUse` (MountedByNode; a new attachment is assumed mounted until the node says
  otherwise), and since when a detach has been wanted (detachRequestedTime).
- the reconciler, every 100 ms (DefaultTimerConfig.ReconcilerLoopPeriod): first detaches, then attaches.
  A volume no longer desired on a node is detached at once if the node does not report it in use.
  Otherwise it waits: on a node that is not Ready it force-detaches once more than
  maxWaitForUnmountDuration (6 min, DefaultTimerConfig.ReconcilerMaxWaitForUnmountDuration) has passed
  since the first pass that wanted the detach, unless kube-controller-manager runs with
  --disable-force-detach-on-timeout (1.30+). A node with the `node.kubernetes.io/out-of-service` taint
  (NodeOutOfServiceVolumeDetach) is detached at once, mounted or not. A ReadWriteOnce volume wanted
  on a node while it is attached to another one is not attached: the pods waiting for it get one
  Warning event FailedAttachVolume "Multi-Attach error ..." (reportMultiAttachError).
- the node status updater writes `status.volumesAttached` of each node: what the kubelet waits for
  before it mounts. A volume leaves it before its detach starts.

Attaching a CSI volume means creating a VolumeAttachment (pkg/volume/csi/csi_attacher.go Attach) and
waiting for the CSI attacher to set status.attached (simulation/csi_attacher.py); detaching means
deleting it and waiting until it is gone.

Cost: the real reconciler runs every 100 ms whatever happens. Here a pass is scheduled on the same
100 ms grid only when something it reads changed (a pod, a node, an attachment) or when a wait for
maxWaitForUnmountDuration runs out: the passes that are skipped would have done nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .apiserver import Actor
from .clock import MS, US
from .engine import Timer
from .objects import (
    CSI_DRIVER,
    TAINT_OUT_OF_SERVICE,
    Node,
    ObjectMeta,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    VolumeAttachment,
    attachment_name,
)

if TYPE_CHECKING:
    from .context import Context

LANE = "attachdetach-controller"
RECONCILER_LOOP_PERIOD = 100 * MS  # DefaultTimerConfig.ReconcilerLoopPeriod (attach_detach_controller.go)
MAX_WAIT_FOR_UNMOUNT = 6 * 60 * US  # DefaultTimerConfig.ReconcilerMaxWaitForUnmountDuration
SOURCE = "pkg/controller/volume/attachdetach/reconciler/reconciler.go"
Key = tuple[str, str]  # (unique volume name, node)


def is_pod_terminated(pod: Pod) -> bool:
    """pkg/volume/util/util.go IsPodTerminated: Failed or Succeeded, or deleted with no container running."""
    return pod.terminal or (pod.metadata.deletion_timestamp is not None and pod.container_state != "running")


@dataclass
class AttachedVolume:
    """ASW nodeAttachedTo: one volume attached to one node."""

    volume: str
    node: str
    pv_name: str
    mounted_by_node: bool = True  # assumed mounted until the node's volumesInUse says otherwise
    detach_requested_at: int | None = None
    report_as_attached: bool = True
    wait_reported: bool = False


class AttachDetachController:
    def __init__(self, ctx: Context, *, disable_force_detach_on_timeout: bool = False) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.actor = Actor("system:serviceaccount:kube-system:attachdetach-controller", LANE)
        self.disable_force_detach = disable_force_detach_on_timeout
        # desired state of the world
        self.dsw: dict[Key, dict[str, Pod]] = {}
        self.dsw_pv: dict[str, str] = {}  # volume -> PersistentVolume name
        self.pod_keys: dict[str, tuple[Key, ...]] = {}  # pod key -> its (volume, node) entries
        self.multi_attach_reported: set[Key] = set()
        self.waiting_for_claim: dict[str, set[str]] = {}  # claim key -> pod keys whose claim is not bound
        self._pods: dict[str, Pod] = {}  # pods with volumes, as last seen
        # actual state of the world
        self.asw: dict[Key, AttachedVolume] = {}
        self.by_node: dict[str, set[str]] = {}  # node -> volumes attached there
        self.nodes_of: dict[str, set[str]] = {}  # volume -> nodes it is attached to (GetNodesForAttachedVolume)
        self.pending: dict[str, str] = {}  # volume -> "attach" | "detach" in flight (nestedpendingoperations)
        self.reported: dict[str, tuple[str, ...]] = {}  # node -> volumesAttached last written
        self._status_dirty: set[str] = set()  # nodes whose volumes to report changed (statusUpdateNeeded)
        self._timer: Timer | None = None
        self._timer_at = 0
        self.running = True
        self.api.watch("pods", LANE, self._on_pod)
        self.api.watch("nodes", LANE, self._on_node)
        self.api.watch("persistentvolumeclaims", LANE, self._on_claim)
        self.api.watch("volumeattachments", LANE, self._on_attachment)

    # -- kube-controller-manager restart -------------------------------------------------------

    def stop(self) -> None:
        """The controller manager dies: both caches are memory, and go with it."""
        self.running = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for table in (self.dsw, self.dsw_pv, self.pod_keys, self.waiting_for_claim, self._pods, self.asw, self.by_node,
                      self.nodes_of, self.pending, self.reported):
            table.clear()
        self.multi_attach_reported.clear()
        self._status_dirty.clear()

    def start(self) -> None:
        """A new leader: populateActualStateOfWorld from the Nodes' status.volumesAttached (mounted as their
        volumesInUse say; no detach requested yet, so a wait for maxWaitForUnmountDuration starts over),
        then populateDesiredStateOfWorld from the pods (attach_detach_controller.go)."""
        self.running = True
        api = self.api
        for name in api.node_names():
            node: Node | None = api.cached("nodes", name)
            if node is None or not node.volumes_attached:
                continue
            in_use = set(node.volumes_in_use)
            for volume in node.volumes_attached:
                pv_name = volume.rsplit("^", 1)[1]  # the simulated provisioner's handle is the volume's name
                self.asw[(volume, name)] = AttachedVolume(volume, name, pv_name, mounted_by_node=volume in in_use)
                self.by_node.setdefault(name, set()).add(volume)
                self.nodes_of.setdefault(volume, set()).add(name)
                self.dsw_pv[volume] = pv_name
            self.reported[name] = node.volumes_attached
        for key in sorted(api.cache["pods"]):
            pod = api.cache["pods"][key]
            if pod.volumes:
                self._on_pod(None, pod)
        self._dirty()

    # -- informer handlers (podAdd/podUpdate/podDelete, nodeUpdate, pvcUpdate) ------------------

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        pod = new or old
        if pod is None or not pod.volumes or not self.running:
            return
        key = pod.key
        if new is None or not new.node_name or is_pod_terminated(new):
            self._pods.pop(key, None)
            self._remove_pod(key)
            return
        self._pods[key] = new
        self._add_pod(new)

    def _add_pod(self, pod: Pod) -> None:
        """ProcessPodVolumes(addVolumes=true): each volume whose claim is bound enters the DSW."""
        entries = []
        for _volume, claim in pod.volumes:
            resolved = self._resolve(pod.metadata.namespace, claim)
            if resolved is None:
                self.waiting_for_claim.setdefault(f"{pod.metadata.namespace}/{claim}", set()).add(pod.key)
                continue
            volume, pv_name = resolved
            entries.append((volume, pod.node_name))
            self.dsw_pv[volume] = pv_name
            pods = self.dsw.setdefault((volume, pod.node_name), {})
            if pod.key not in pods:
                self._dirty()
            pods[pod.key] = pod
        before = self.pod_keys.get(pod.key, ())
        self.pod_keys[pod.key] = tuple(entries)
        for gone in set(before) - set(entries):
            self._drop(gone, pod.key)

    def _remove_pod(self, key: str) -> None:
        for entry in self.pod_keys.pop(key, ()):
            self._drop(entry, key)

    def _drop(self, entry: Key, pod_key: str) -> None:
        pods = self.dsw.get(entry)
        if pods is None or pods.pop(pod_key, None) is None:
            return
        if not pods:
            del self.dsw[entry]
            self.multi_attach_reported.discard(entry)
        self._dirty()

    def _resolve(self, namespace: str, claim: str) -> tuple[str, str] | None:
        """CreateVolumeSpec: the claim must be Bound and its volume known (util.go getPVCFromCache)."""
        pvc: PersistentVolumeClaim | None = self.api.cached("persistentvolumeclaims", claim, namespace)
        if pvc is None or pvc.phase != "Bound" or not pvc.volume_name:
            return None
        pv: PersistentVolume | None = self.api.cached("persistentvolumes", pvc.volume_name)
        if pv is None or pv.claim_ref is None or pv.claim_ref[2] != pvc.metadata.uid:
            return None
        return pv.unique_name, pv.metadata.name

    def _on_claim(self, old: PersistentVolumeClaim | None, new: PersistentVolumeClaim | None) -> None:
        if new is None or new.phase != "Bound" or not self.running:
            return
        waiting = self.waiting_for_claim.pop(f"{new.metadata.namespace}/{new.metadata.name}", None)
        for key in sorted(waiting or ()):
            pod = self._pods.get(key)
            if pod is not None:
                self._add_pod(pod)

    def _on_node(self, old: Node | None, new: Node | None) -> None:
        """nodeUpdate -> processVolumesInUse: MountedByNode follows the node's status.volumesInUse."""
        node = new or old
        if node is None or not self.running:
            return
        name = node.metadata.name
        volumes = self.by_node.get(name)
        if not volumes:
            return
        in_use = set(new.volumes_in_use) if new is not None else None
        for volume in volumes:
            attached = self.asw[(volume, name)]
            if in_use is not None:
                attached.mounted_by_node = volume in in_use
        self._dirty()  # the node's readiness and taints count too

    def _on_attachment(self, old: VolumeAttachment | None, new: VolumeAttachment | None) -> None:
        """The CSI attacher's answer: attached (csi_attacher.go waitForVolumeAttachment) or gone (Detach)."""
        va = new or old
        if va is None or not self.running:
            return
        pv: PersistentVolume | None = self.api.cached("persistentvolumes", va.persistent_volume_name)
        if pv is None:
            return
        volume, node = pv.unique_name, va.node_name
        if new is None:
            if self.pending.get(volume) == "detach":
                del self.pending[volume]
                self.asw.pop((volume, node), None)
                self.by_node.get(node, set()).discard(volume)
                self.nodes_of.get(volume, set()).discard(node)
                self._status_dirty.add(node)
            self._dirty()  # an attach may have waited for this name
            return
        if new.attached and self.pending.get(volume) == "attach" and (volume, node) not in self.asw:
            del self.pending[volume]
            self.asw[(volume, node)] = AttachedVolume(volume, node, pv.metadata.name)
            self.by_node.setdefault(node, set()).add(volume)
            self.nodes_of.setdefault(volume, set()).add(node)
            self._status_dirty.add(node)
            self.ctx.recorder.decision(LANE, "attachdetach.attached", node,
                                       {"volume": volume, "persistentVolume": pv.metadata.name,
                                        "volumeAttachment": new.metadata.name},
                                       f"{pv.metadata.name} attached to {node}",
                                       "The CSI attacher reports the volume attached: the controller adds it to "
                                       f"{node}'s status.volumesAttached, which the kubelet waits for before it "
                                       "mounts the volume.",
                                       "pkg/volume/csi/csi_attacher.go")
            self._dirty()

    # -- the reconciler ------------------------------------------------------------------------

    def _dirty(self) -> None:
        """Run a pass at the next tick of the 100 ms loop."""
        now = self.ctx.engine.now
        self._schedule(-(-(now + 1) // RECONCILER_LOOP_PERIOD) * RECONCILER_LOOP_PERIOD)

    def _schedule(self, when: int) -> None:
        if self._timer is not None and self._timer.active and self._timer_at <= when:
            return
        if self._timer is not None:
            self._timer.cancel()
        self._timer_at = when
        self._timer = self.ctx.engine.call_at(when, self.reconcile)

    def reconcile(self) -> None:
        """reconciler.reconcile: detaches first, then attaches, then node statuses."""
        self._timer = None
        now = self.ctx.engine.now
        for key in sorted(self.asw):
            if key not in self.dsw:
                self._maybe_detach(self.asw[key], now)
        self.attach_desired_volumes()
        self.update_node_statuses()

    def _maybe_detach(self, attached: AttachedVolume, now: int) -> None:
        volume, node = attached.volume, attached.node
        if volume in self.pending:
            return  # an operation for the volume is running (IsOperationSafeToRetry)
        if attached.detach_requested_at is None:
            attached.detach_requested_at = now  # SetDetachRequestTime
        elapsed = now - attached.detach_requested_at
        expired = elapsed > MAX_WAIT_FOR_UNMOUNT
        node_obj: Node | None = self.api.cached("nodes", node)
        healthy = node_obj is not None and node_obj.ready_status() == "True"  # nodeutil.IsNodeReady
        out_of_service = node_obj is not None and any(t.key == TAINT_OUT_OF_SERVICE for t in node_obj.taints)
        force_timeout = expired and not self.disable_force_detach
        force = not healthy and force_timeout
        inputs = {"volume": volume, "persistentVolume": attached.pv_name, "mountedByNode": attached.mounted_by_node,
                  "nodeReady": healthy, "outOfServiceTaint": out_of_service,
                  "detachRequestedAt": attached.detach_requested_at / US,
                  "maxWaitForUnmountDuration": MAX_WAIT_FOR_UNMOUNT / US,
                  "forceDetachAt": (attached.detach_requested_at + MAX_WAIT_FOR_UNMOUNT) / US,
                  "disableForceDetachOnTimeout": self.disable_force_detach}
        if attached.mounted_by_node and not force and not out_of_service:
            if not attached.wait_reported:
                attached.wait_reported = True
                if self.disable_force_detach:
                    why = ("kube-controller-manager runs with --disable-force-detach-on-timeout, so it will not "
                           "force it: only the out-of-service taint (or the node coming back) frees the volume.")
                elif healthy:
                    why = "The node is Ready, so its kubelet is expected to unmount the volume: no forced detach."
                else:
                    why = ("The node is not Ready: once more than maxWaitForUnmountDuration (6 min) has passed "
                           "since this first try, the controller detaches it anyway.")
                self.ctx.recorder.decision(LANE, "attachdetach.wait-unmount", node, inputs,
                                           f"{attached.pv_name} stays attached to {node}",
                                           f"No pod on {node} needs the volume any more, but {node} still reports it "
                                           f"in status.volumesInUse (mounted). {why}", SOURCE)
            if not healthy and not self.disable_force_detach:
                # the first pass in which elapsed > maxWaitForUnmountDuration
                self._schedule(attached.detach_requested_at + MAX_WAIT_FOR_UNMOUNT + RECONCILER_LOOP_PERIOD)
            return
        # RemoveVolumeFromReportAsAttached + UpdateNodeStatusForNode before the detach starts
        attached.report_as_attached = False
        self._update_node_status(node)
        if not attached.mounted_by_node:
            rule, outcome = "attachdetach.detach", f"detach {attached.pv_name} from {node}"
            explain = f"No pod on {node} needs the volume and {node} no longer reports it in use: a safe detach."
        elif force_timeout:  # the reconciler logs the timeout first when both hold
            rule, outcome = "attachdetach.force-detach-timeout", f"force detach {attached.pv_name} from {node}"
            explain = (f"{node} is not Ready and still reports the volume in use, and more than "
                       "maxWaitForUnmountDuration (6 min) has passed since the detach was first wanted: the "
                       "controller detaches it anyway. This is not safe if the node is in fact still running.")
        else:
            rule, outcome = "attachdetach.force-detach-out-of-service", f"detach {attached.pv_name} from {node} now"
            explain = (f"{node} has the node.kubernetes.io/out-of-service taint: the controller detaches without "
                       "waiting for the kubelet to unmount (NodeOutOfServiceVolumeDetach). Whoever set the taint "
                       "vouches that the node is really down.")
        self.ctx.recorder.decision(LANE, rule, node, inputs, outcome, explain, SOURCE)
        self.pending[volume] = "detach"
        pv: PersistentVolume | None = self.api.cached("persistentvolumes", attached.pv_name)
        name = attachment_name(pv.volume_handle if pv else attached.pv_name, CSI_DRIVER, node)
        resp = self.api.delete(self.actor, "volumeattachments", name)
        if not resp.ok:
            del self.pending[volume]

    def attach_desired_volumes(self) -> None:
        for key in sorted(self.dsw):
            volume, node = key
            if volume in self.pending:
                continue
            attached = self.asw.get(key)
            if attached is not None:
                attached.detach_requested_at = None  # ResetDetachRequestTime
                attached.wait_reported = False
                continue
            others = sorted(n for n in self.nodes_of.get(volume, ()) if n != node)
            if others:  # ReadWriteOnce: IsMultiAttachAllowed is false
                if key not in self.multi_attach_reported:
                    self.multi_attach_reported.add(key)
                    self.report_multi_attach_error(key, others)
                continue
            self._attach(key)

    def report_multi_attach_error(self, key: Key, others: list[str]) -> None:
        volume, node = key
        pv_name = self.dsw_pv[volume]
        users = sorted(p.metadata.name for n in others for p in self.dsw.get((volume, n), {}).values())
        if users:
            suffix = f"Volume is already used by pod(s) {', '.join(users)}"
        else:
            suffix = "Volume is already exclusively attached to one node and can't be attached to another"
        message = f'Multi-Attach error for volume "{pv_name}" {suffix}'  # operationexecutor GenerateMsg
        waiting = sorted(self.dsw[key].values(), key=lambda p: p.metadata.name)
        for pod in waiting:
            self.api.record_event(self.actor, pod, "FailedAttachVolume", message, type_="Warning",
                                  source_component=LANE)
        self.ctx.recorder.decision(LANE, "attachdetach.multi-attach", node,
                                   {"volume": volume, "persistentVolume": pv_name, "attachedTo": others,
                                    "usedBy": users, "accessModes": ["ReadWriteOnce"]},
                                   f"Multi-Attach error: {pv_name} is attached to {', '.join(others)}",
                                   f"The volume is ReadWriteOnce and still attached to {', '.join(others)}: it "
                                   f"cannot be attached to {node} until it is detached there. The pod waits in "
                                   "ContainerCreating.", SOURCE,
                                   pod=waiting[0].metadata.name if waiting else None)

    def _attach(self, key: Key) -> None:
        volume, node = key
        pv_name = self.dsw_pv[volume]
        pv: PersistentVolume | None = self.api.cached("persistentvolumes", pv_name)
        handle = pv.volume_handle if pv is not None else pv_name
        va = VolumeAttachment(
            metadata=ObjectMeta(name=attachment_name(handle, CSI_DRIVER, node), namespace="", uid="",
                                resource_version=0, creation=0),
            attacher=CSI_DRIVER, node_name=node, persistent_volume_name=pv_name)
        existing: VolumeAttachment | None = self.api.current("volumeattachments", va.metadata.name)
        if existing is not None:  # made before a restart: csi_attacher.go Attach waits for it as it is
            if existing.metadata.deletion_timestamp is None:
                self.pending[volume] = "attach"
                if existing.attached:
                    self._on_attachment(None, existing)
            return
        resp = self.api.create(self.actor, va)
        if not resp.ok:
            return
        self.pending[volume] = "attach"
        pods = sorted(p.metadata.name for p in self.dsw[key].values())
        self.ctx.recorder.decision(LANE, "attachdetach.attach", node,
                                   {"volume": volume, "persistentVolume": pv_name,
                                    "volumeAttachment": va.metadata.name, "scheduledPods": pods},
                                   f"attach {pv_name} to {node}",
                                   f"Pod {', '.join(pods)} on {node} needs the volume and it is attached nowhere: "
                                   "the controller creates a VolumeAttachment for the CSI attacher.",
                                   "pkg/volume/csi/csi_attacher.go", pod=pods[0] if pods else None)

    # -- node status updater ----------------------------------------------------------------------

    def update_node_statuses(self) -> None:
        """UpdateNodeStatuses: the nodes whose reported volumes changed since the last write."""
        dirty, self._status_dirty = sorted(self._status_dirty), set()
        for node in dirty:
            self._update_node_status(node)

    def _update_node_status(self, node: str) -> None:
        """statusupdater: status.volumesAttached = the node's volumes reported as attached."""
        want = tuple(sorted(v for v in self.by_node.get(node, ()) if self.asw[(v, node)].report_as_attached))
        if self.reported.get(node, ()) == want:
            return
        if self.api.current("nodes", node) is None:
            self.reported.pop(node, None)
            return
        self.reported[node] = want
        self.api.patch(self.actor, "nodes", node, lambda n: n.evolve(volumes_attached=want), subresource="status")

    def _force_detach_at(self, a: AttachedVolume) -> float | None:
        """When the wait for the unmount ends in a force detach: set only while the node is not Ready
        and still reports the volume mounted, and the flag allows it (the countdown a page shows)."""
        if a.detach_requested_at is None or self.disable_force_detach or not a.mounted_by_node:
            return None
        node: Node | None = self.api.cached("nodes", a.node)
        if node is not None and node.ready_status() == "True":
            return None
        return (a.detach_requested_at + MAX_WAIT_FOR_UNMOUNT) / US

    def describe(self) -> dict[str, Any]:
        """For snapshots and pages: what is attached where, and the waits that are running."""
        return {
            "attached": [{"volume": a.volume, "node": a.node, "persistentVolume": a.pv_name,
                          "mountedByNode": a.mounted_by_node, "reportedAttached": a.report_as_attached,
                          "detachRequestedAt": None if a.detach_requested_at is None else a.detach_requested_at / US,
                          "forceDetachAt": self._force_detach_at(a)}
                         for _k, a in sorted(self.asw.items())],
            "desired": [{"volume": v, "node": n, "pods": sorted(p.metadata.name for p in pods.values())}
                        for (v, n), pods in sorted(self.dsw.items())],
            "pending": dict(sorted(self.pending.items())),
            "disableForceDetachOnTimeout": self.disable_force_detach,
        }
