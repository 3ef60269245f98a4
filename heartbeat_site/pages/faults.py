"""The fault vocabulary the trainer's buttons offer: the simulation's own list."""

from __future__ import annotations

from functools import cache

# The fault vocabulary, used only while the simulation package cannot be imported (its
# FAULT_ACTIONS is the authority; a test checks both agree).
FALLBACK_ACTIONS = (
    "stop-kubelet",
    "start-kubelet",
    "stop-runtime",
    "start-runtime",
    "partition",
    "heal",
    "start-pressure",
    "stop-pressure",
    "fail-lease-writes",
    "restore-lease-writes",
    "fail-status-writes",
    "restore-status-writes",
    "slow-apiserver",
    "restore-apiserver",
    "shutdown",
    "power-off",
    "power-on",
    "cordon",
    "uncordon",
    "create-node",
    "delete-node",
    "zone-outage",
    "zone-heal",
    "restart-controller-manager",
)


@cache
def fault_actions() -> tuple[str, ...]:
    try:
        from simulation import FAULT_ACTIONS
    except ImportError:
        return FALLBACK_ACTIONS
    return tuple(FAULT_ACTIONS)
