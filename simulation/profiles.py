"""Kubernetes version profiles as data (docs/kubernetes-node-health.md §7).

Only what changes what a learner sees between 1.27 and 1.33 lives here; everything else in
docs/kubernetes-node-health.md §1 is identical across these versions.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Profile:
    version: str
    node_monitor_grace_period: float  # --node-monitor-grace-period default (s)
    tec_separate: bool  # SeparateTaintEvictionController (beta, on by default since 1.29)
    tec_event_source: str  # source.component of TaintManagerEviction events
    tec_source_file: str
    ready_message: str  # Ready=True message (". AppArmor enabled" dropped with AppArmor GA, 1.30)
    lease_renews_without_owner: bool  # 1.27-1.28 renew even if the owner-reference GET fails
    # NodeOutOfServiceVolumeDetach (pkg/features/kube_features.go): alpha 1.24, beta (on) 1.26, GA and
    # locked on 1.28. On in every version here: PodGC's gcTerminating and the attach/detach
    # reconciler's out-of-service check run; before 1.28 a cluster could switch them off.
    out_of_service_stage: str
    # kube-controller-manager --disable-force-detach-on-timeout exists from 1.30 (kubernetes#120344, CHANGELOG-1.30.md;
    # pkg/controller/volume/attachdetach/reconciler/reconciler.go disableForceDetachOnTimeout)
    disable_force_detach_flag: bool
    # PodIndexLabel (pkg/features/kube_features.go): beta and on from 1.28, GA 1.32: StatefulSet pods carry
    # apps.kubernetes.io/pod-index (pkg/controller/statefulset/stateful_set_utils.go initIdentity)
    pod_index_label: bool

    @property
    def kubelet_version(self) -> str:
        return f"v{self.version}.0"

    def as_dict(self) -> dict[str, object]:
        return {
            "version": self.version,
            "nodeMonitorGracePeriod": self.node_monitor_grace_period,
            "taintEvictionController": ("taint-eviction-controller" if self.tec_separate
                                        else "node-lifecycle-controller (taint manager)"),
            "taintEvictionEventSource": self.tec_event_source,
            "nodeOutOfServiceVolumeDetach": self.out_of_service_stage,
            "disableForceDetachOnTimeoutFlag": self.disable_force_detach_flag,
        }


_TEC_OLD = "pkg/controller/nodelifecycle/scheduler/taint_manager.go"
_TEC_NEW = "pkg/controller/tainteviction/taint_eviction.go"
_READY = "kubelet is posting ready status"


def _profile(version: str) -> Profile:
    minor = int(version.split(".")[1])
    return Profile(
        version=version,
        node_monitor_grace_period=50.0 if minor >= 32 else 40.0,
        tec_separate=minor >= 29,
        tec_event_source="taint-eviction-controller" if minor >= 29 else "taint-controller",
        tec_source_file=_TEC_NEW if minor >= 29 else _TEC_OLD,
        ready_message=_READY if minor >= 30 else _READY + ". AppArmor enabled",
        lease_renews_without_owner=minor <= 28,
        out_of_service_stage="GA" if minor >= 28 else "beta",
        disable_force_detach_flag=minor >= 30,
        pod_index_label=minor >= 28,
    )


PROFILES: dict[str, Profile] = {v: _profile(v) for v in ("1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33")}
DEFAULT_VERSION = "1.33"
