"""The CSI attacher sidecar (kubernetes-csi/external-attacher, pkg/controller/csi_handler.go) of the
simulated driver: it answers VolumeAttachments. For a new one it adds its finalizer, calls the driver's
ControllerPublishVolume and sets status.attached; for a deleted one it calls ControllerUnpublishVolume,
sets attached to false and removes its finalizer, which lets the object go.

The driver's calls take ATTACH_TIME / DETACH_TIME (the simulation's choice: a cloud disk attaches in
seconds). The attacher never looks at the node's health: a detach the attach/detach controller asks for
is done, even from a node that is still running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .apiserver import Actor
from .clock import US
from .objects import VolumeAttachment

if TYPE_CHECKING:
    from .context import Context

LANE = "csi-attacher"
ATTACH_TIME = 1 * US
DETACH_TIME = 1 * US


class CSIAttacher:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.actor = Actor("system:serviceaccount:kube-system:csi-attacher", LANE)
        self.api.watch("volumeattachments", LANE, self._on_attachment)

    def _on_attachment(self, old: VolumeAttachment | None, new: VolumeAttachment | None) -> None:
        if new is None:
            return
        name = new.metadata.name
        if old is None and not new.finalizer:
            self.api.patch(self.actor, "volumeattachments", name, lambda v: v.evolve(finalizer=True))
            self.ctx.engine.call_later(ATTACH_TIME, self._attached, name, new.metadata.uid)
        elif new.metadata.deletion_timestamp is not None and (old is None or old.metadata.deletion_timestamp is None):
            self.ctx.engine.call_later(DETACH_TIME, self._detached, name, new.metadata.uid)

    def _attached(self, name: str, uid: str) -> None:
        va: VolumeAttachment | None = self.api.current("volumeattachments", name)
        if va is None or va.metadata.uid != uid or va.metadata.deletion_timestamp is not None:
            return
        self.api.patch(self.actor, "volumeattachments", name, lambda v: v.evolve(attached=True),
                       subresource="status")

    def _detached(self, name: str, uid: str) -> None:
        va: VolumeAttachment | None = self.api.current("volumeattachments", name)
        if va is None or va.metadata.uid != uid:
            return
        self.api.remove_finalizer(self.actor, "volumeattachments", name,
                                  lambda v: v.evolve(attached=False, finalizer=False))
