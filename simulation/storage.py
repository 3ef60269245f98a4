"""The controllers a run with StatefulSets adds, started together when the first StatefulSet is
applied: runs without one pay nothing for them (no watch, no timer)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .attachdetach import AttachDetachController
from .csi_attacher import CSIAttacher
from .persistentvolume import PersistentVolumeController
from .statefulset import StatefulSetController

if TYPE_CHECKING:
    from .context import Context


class Storage:
    RESOURCES = ("statefulsets", "persistentvolumeclaims", "persistentvolumes", "volumeattachments")

    def __init__(self, ctx: Context, *, disable_force_detach_on_timeout: bool = False) -> None:
        self.statefulsets = StatefulSetController(ctx)
        self.persistentvolumes = PersistentVolumeController(ctx)
        self.attachdetach = AttachDetachController(ctx, disable_force_detach_on_timeout=disable_force_detach_on_timeout)
        self.csi_attacher = CSIAttacher(ctx)

    def describe(self) -> dict[str, Any]:
        return {"statefulSets": self.statefulsets.describe(), "attachDetach": self.attachdetach.describe()}
