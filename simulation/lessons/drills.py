"""Drills: a run with a hidden fault, and the filters that keep the fault hidden until the reveal.

Before the reveal a viewer must not learn the cause from the stream: no `fault` event (the
trainer's command), no `request-failed` event (a kubelet's requests that never reached the API
server say "partition" or "overload" too plainly), no injected-fault wording in a rejected
write's message, no kubelet flags (running, reachable, runtimeUp, ...) in snapshots and no
fault list. What stays is what an operator of a real cluster sees: the API objects, the writes
and their status codes, the controllers' decisions.
"""

from __future__ import annotations

import re
from typing import Any

from ..simulation import Simulation
from .documents import Drill

HIDDEN_TYPES = ("fault", "request-failed")
# the kubelet's own state a real cluster does not publish; lastRenew/lastStatusReport stay (the
# Lease and the Node's lastHeartbeatTime show them anyway)
KUBELET_FLAGS = ("running", "powered", "reachable", "runtimeUp", "shuttingDown", "pressure")
INJECTED = re.compile(r'Internal error occurred: injected fault "[^"]*".*')
GENERIC_500 = "Internal error occurred: the server was unable to complete the request"


def drill_simulation(drill: Drill, seed: int | None = None) -> Simulation:
    """A run of the drill: its scenario's cluster and settings, with the hidden fault as its only fault."""
    return Simulation(drill.scenario, seed=seed)


def hide_cause(event: dict[str, Any]) -> dict[str, Any] | None:
    """The event as a viewer may see it before the reveal, or None when it must not be sent.

    `event` is an event dict (`Event.to_dict()`); the dict given is not changed."""
    if event.get("type") in HIDDEN_TYPES:
        return None
    message = event.get("message")
    if isinstance(message, str) and INJECTED.search(message):
        return {**event, "message": INJECTED.sub(GENERIC_500, message)}
    return event


def hide_in_snapshot(snapshot: dict[str, Any]) -> dict[str, Any]:
    """A copy of a `Simulation.snapshot()` without what names the fault (the input is not changed)."""
    out = dict(snapshot)
    if isinstance(out.get("kubelets"), dict):
        out["kubelets"] = {name: {k: v for k, v in flags.items() if k not in KUBELET_FLAGS}
                           for name, flags in out["kubelets"].items()}
    if isinstance(out.get("scenario"), dict):
        out["scenario"] = {k: v for k, v in out["scenario"].items() if k not in ("faults", "watch")}
    out.pop("commands", None)
    out.pop("faults", None)
    return out
