"""What the NodeLifecycleController remembers about each node between passes (nodeHealthData in
pkg/controller/nodelifecycle/node_lifecycle_controller.go), and the record of what a pass saw."""

from __future__ import annotations

from typing import Any, TypeGuard

from ..clock import US
from ..objects import Lease, NodeCondition


class NodeHealth:
    """nodeHealthData: the status last seen, the probe timestamp (the last heartbeat, by the
    controller's own clock), the Ready transition timestamp and the Lease last seen."""

    __slots__ = ("status", "ready", "probe_timestamp", "ready_transition_timestamp", "lease_renew_time", "has_lease")

    def __init__(self, status: tuple[NodeCondition, ...], probe_timestamp: int, ready_transition_timestamp: int,
                 lease_renew_time: int | None = None, has_lease: bool = False) -> None:
        self.set_status(status)
        self.probe_timestamp = probe_timestamp
        self.ready_transition_timestamp = ready_transition_timestamp
        self.lease_renew_time = lease_renew_time  # the remembered Lease (only its renewTime matters)
        self.has_lease = has_lease

    def set_status(self, status: tuple[NodeCondition, ...]) -> None:
        self.status = status
        self.ready = next((c for c in status if c.type == "Ready"), None)

    def saved_ready(self) -> NodeCondition | None:
        """GetNodeCondition(nodeHealth.status, NodeReady): the Ready condition last seen."""
        return self.ready


class PassRecord:
    """What the last monitor pass saw and decided for one node (the flowchart's highlighted branch)."""

    __slots__ = ("t", "branch", "probe", "grace", "deadline", "observed", "current", "zone")

    def __init__(self, t: int, branch: str, probe: int, grace: int, deadline: int, observed: str,
                 current: str | None, zone: str) -> None:
        self.t, self.branch, self.probe, self.grace, self.deadline = t, branch, probe, grace, deadline
        self.observed, self.current, self.zone = observed, current, zone

    def as_dict(self) -> dict[str, Any]:
        return {"t": self.t / US, "branch": self.branch, "probeTimestamp": self.probe / US,
                "gracePeriod": self.grace / US, "deadline": self.deadline / US, "observed": self.observed,
                "current": self.current, "zone": self.zone}


def lease_is_news(lease: Lease | None, has_saved: bool, saved_renew: int | None) -> TypeGuard[Lease]:
    """The Lease counts as a heartbeat when the controller remembers none, or an older renewTime
    (`savedLease == nil || savedLease.Spec.RenewTime.Before(observedLease.Spec.RenewTime)`)."""
    return lease is not None and lease.renew_time is not None and (
        not has_saved or saved_renew is None or saved_renew < lease.renew_time)
