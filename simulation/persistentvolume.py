"""Dynamic provisioning and binding of PersistentVolumeClaims: the CSI external-provisioner and the
PersistentVolume controller's binder (pkg/controller/volume/persistentvolume/pv_controller.go
syncUnboundClaim / bindVolumeToClaim / bindClaimToVolume; kubernetes-csi/external-provisioner).

The simulated StorageClass binds with `volumeBindingMode: WaitForFirstConsumer`: a claim stays Pending
until a pod that uses it is scheduled; then a volume is provisioned for it and the two are bound
one-to-one (PV.spec.claimRef, PVC.spec.volumeName, both phases Bound). A bound claim keeps its volume
for good: when the pod moves to another node the volume has to be detached from the old node and
attached to the new one (simulation/attachdetach.py).

Simplification (docs/simulation-model.md): a real scheduler holds the pod in its PreBind step until
the claim is bound (pkg/scheduler/framework/plugins/volumebinding) and only then sets its nodeName;
here the pod is bound to the node first and the claim about a second later, while the kubelet waits
for the volume. Either way the pod's containers start only after the volume is attached and mounted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .apiserver import Actor
from .clock import US
from .objects import CSI_DRIVER, ObjectMeta, PersistentVolume, PersistentVolumeClaim, Pod

if TYPE_CHECKING:
    from .context import Context

LANE = "persistentvolume-controller"
PROVISION_TIME = 1 * US  # the driver's CreateVolume (the simulation's choice: a cloud disk takes seconds)
SOURCE = "pkg/controller/volume/persistentvolume/pv_controller.go"


class PersistentVolumeController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.actor = Actor("system:serviceaccount:kube-system:persistent-volume-binder", LANE)
        self.provisioner = Actor("system:serviceaccount:kube-system:csi-provisioner", "csi-provisioner")
        self.provisioning: set[str] = set()  # claim keys being provisioned
        self.api.watch("pods", LANE, self._on_pod)

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        if new is None or not new.volumes or not new.node_name or (old is not None and old.node_name):
            return
        for _volume, claim in new.volumes:
            pvc = self.api.cached("persistentvolumeclaims", claim, new.metadata.namespace)
            key = f"{new.metadata.namespace}/{claim}"
            if pvc is None or pvc.phase == "Bound" or key in self.provisioning:
                continue
            self.provisioning.add(key)
            self.ctx.engine.call_later(PROVISION_TIME, self.provision, new.metadata.namespace, claim, new.node_name,
                                       new.metadata.name)

    def provision(self, namespace: str, claim: str, node: str, pod: str) -> None:
        """The provisioner creates a volume for the claim (selected node: `node`); the binder binds them."""
        self.provisioning.discard(f"{namespace}/{claim}")
        pvc: PersistentVolumeClaim | None = self.api.current("persistentvolumeclaims", claim, namespace)
        if pvc is None or pvc.phase == "Bound":
            return
        pv_name = f"pvc-{pvc.metadata.uid}"  # external-provisioner names volumes pvc-<claim uid>
        pv = PersistentVolume(
            metadata=ObjectMeta(name=pv_name, namespace="", uid="", resource_version=0, creation=0),
            storage=pvc.storage, driver=CSI_DRIVER, volume_handle=pv_name, access_modes=pvc.access_modes,
            storage_class_name=pvc.storage_class_name,
            claim_ref=(namespace, claim, pvc.metadata.uid), phase="Pending")
        created = self.api.create(self.provisioner, pv)
        if not created.ok:
            return
        # bindVolumeToClaim (the volume's phase), then bindClaimToVolume (spec.volumeName, then status)
        self.api.patch(self.actor, "persistentvolumes", pv_name, lambda v: v.evolve(phase="Bound"),
                       subresource="status")
        self.api.patch(self.actor, "persistentvolumeclaims", claim, lambda c: c.evolve(volume_name=pv_name),
                       namespace=namespace)
        self.api.patch(self.actor, "persistentvolumeclaims", claim, lambda c: c.evolve(phase="Bound"),
                       namespace=namespace, subresource="status")
        self.ctx.recorder.decision(LANE, "persistentvolume.bind", node,
                                   {"claim": claim, "volume": pv_name, "storage": pvc.storage,
                                    "accessModes": list(pvc.access_modes),
                                    "volumeBindingMode": "WaitForFirstConsumer"},
                                   f"{claim} bound to {pv_name}",
                                   f"Pod {pod} is the first to use claim {claim}: the CSI provisioner creates a "
                                   "volume for it and the PersistentVolume controller binds the two. The claim "
                                   "keeps this volume from now on, wherever its pod runs.", SOURCE, pod=pod)
