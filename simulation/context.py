"""What every simulated component shares: the engine, the API server, the event recorder,
the parsed configuration and the version profile."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .apiserver import APIServer
from .clock import US, WallClock, parse_duration, seconds
from .engine import Engine
from .events import Recorder
from .objects import Pod
from .profiles import Profile

# The pods bound to a node, by "namespace/name", from the shared informer cache (every
# controller's pod index, getPodsAssignedToNode)
PodsOnNode = Callable[[str], dict[str, Pod]]


@dataclass(frozen=True, slots=True)
class KubeletConfig:
    node_status_update_frequency: int
    node_status_report_frequency: int
    node_lease_duration_seconds: int
    shutdown_grace_period: int
    shutdown_grace_period_critical_pods: int

    @property
    def renew_interval(self) -> int:
        # nodeLeaseRenewIntervalFraction = 0.25 (pkg/kubelet/kubelet.go)
        return int(self.node_lease_duration_seconds * US * 0.25)

    @property
    def heartbeat_timeout(self) -> int:
        # cmd/kubelet/app/server.go: min(nodeStatusUpdateFrequency, leaseDuration)
        return min(self.node_status_update_frequency, self.node_lease_duration_seconds * US)


@dataclass(frozen=True, slots=True)
class ControllerManagerConfig:
    node_monitor_period: int
    node_monitor_grace_period: int
    node_startup_grace_period: int
    node_eviction_rate: float
    secondary_node_eviction_rate: float
    large_cluster_size_threshold: int
    unhealthy_zone_threshold: float


def kubelet_config(doc: dict[str, Any]) -> KubeletConfig:
    k = doc["kubelet"]
    return KubeletConfig(
        node_status_update_frequency=seconds(parse_duration(k["nodeStatusUpdateFrequency"])),
        node_status_report_frequency=seconds(parse_duration(k["nodeStatusReportFrequency"])),
        node_lease_duration_seconds=k["nodeLeaseDurationSeconds"],
        shutdown_grace_period=seconds(parse_duration(k["shutdownGracePeriod"])),
        shutdown_grace_period_critical_pods=seconds(parse_duration(k["shutdownGracePeriodCriticalPods"])),
    )


def controller_manager_config(doc: dict[str, Any]) -> ControllerManagerConfig:
    c = doc["controllerManager"]
    return ControllerManagerConfig(
        node_monitor_period=seconds(parse_duration(c["nodeMonitorPeriod"])),
        node_monitor_grace_period=seconds(parse_duration(c["nodeMonitorGracePeriod"])),
        node_startup_grace_period=seconds(parse_duration(c["nodeStartupGracePeriod"])),
        node_eviction_rate=c["nodeEvictionRate"],
        secondary_node_eviction_rate=c["secondaryNodeEvictionRate"],
        large_cluster_size_threshold=c["largeClusterSizeThreshold"],
        unhealthy_zone_threshold=c["unhealthyZoneThreshold"],
    )


class Context:
    def __init__(self, engine: Engine, api: APIServer, recorder: Recorder, clock: WallClock, profile: Profile,
                 kubelet: KubeletConfig, controller_manager: ControllerManagerConfig, seed: int) -> None:
        self.engine = engine
        self.api = api
        self.recorder = recorder
        self.clock = clock
        self.profile = profile
        self.kubelet = kubelet
        self.cm = controller_manager
        self.seed = seed

    def rng(self, purpose: str) -> random.Random:
        """An independent, reproducible random stream per purpose (e.g. one per node loop),
        so that adding a node or a command never shifts another component's jitter."""
        return random.Random(f"{self.seed}:{purpose}")


# uuid.UUID(int=x, version=4) sets the RFC 4122 variant and version bits of x
_VARIANT_MASK, _VARIANT = ~(0xC000 << 48), 0x8000 << 48
_VERSION_MASK, _VERSION_4 = ~(0xF000 << 64), 4 << 76


class UidFactory:
    """Random (version 4) UIDs from the run's seeded stream, as str(uuid.UUID(int=..., version=4))
    writes them, formatted directly: a 5,000-node start-up makes 100,000 of them, and the UUID
    object cost half of each. A class, not a closure: the run's state pickles."""

    __slots__ = ("rng",)

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self) -> str:
        x = (self.rng.getrandbits(128) & _VARIANT_MASK | _VARIANT) & _VERSION_MASK | _VERSION_4
        h = f"{x:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def uid_factory(rng: random.Random) -> Callable[[], str]:
    return UidFactory(rng)


def jitter(rng: random.Random, period: int, factor: float = 0.04) -> int:
    """wait.Jitter(period, 0.04): period * (1 + U[0, 0.04))."""
    return period + int(period * factor * rng.random())
