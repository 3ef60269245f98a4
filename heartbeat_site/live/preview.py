"""A scenario's first minutes, run headless for the builder's "Preview" (docs/architecture.md §6.2).

The simulation is deterministic (docs/architecture.md §2.1), so the transitions listed here are exactly the
ones a run of the same document and seed shows at the same virtual times. Bounded so that a request costs well
under a second of CPU: at most `MAX_NODES` nodes and `MAX_SECONDS` of virtual time.
"""

from __future__ import annotations

from typing import Any

from heartbeat_site.live.summary import summarise
from simulation import Event, Scenario, Simulation

MAX_NODES = 50
MAX_SECONDS = 15 * 60.0
DEFAULT_SECONDS = 10 * 60.0
MAX_TRANSITIONS = 300

# What a learner watches for (docs/kubernetes-node-health.md): a node's Ready and other conditions, taints,
# zone states and nodes coming and going; pods are grouped per node and instant (pods NotReady, evictions).
NODE_KINDS = {"node-ready", "node-condition", "taint-added", "taint-removed", "zone-state", "node-created",
              "node-deleted"}
FIRST_SEEN_KINDS = {"node-ready", "node-condition", "zone-state"}
POD_KINDS = {"pod-ready": "pods-not-ready", "pod-terminating": "pods-terminating"}
POD_NAMES_SHOWN = 5


def preview(scenario: Scenario, until: float) -> dict[str, Any]:
    """Run `scenario` from 0 to `until` seconds; its key transitions and the state it ends in."""
    simulation = Simulation(scenario)
    events = simulation.run_until(until)
    # The cluster's own start-up (nodes turning Ready, the first pods) is not what the author scripted: it is
    # left out until the start-up is done or the first fault comes, whichever is first.
    first_fault = min((event.t for event in events if event.type == "fault"), default=None)
    quiet_until = simulation.startup_done_at * 1e6
    if first_fault is not None:
        quiet_until = min(quiet_until, first_fault)
    transitions = key_transitions(events, quiet_until)
    return {
        "until": until,
        "node_count": scenario.node_count,
        "transitions": transitions[:MAX_TRANSITIONS],
        "truncated": len(transitions) > MAX_TRANSITIONS,
        "summary": summarise(simulation.snapshot()),
    }


def key_transitions(events: list[Event], quiet_until: float) -> list[dict[str, Any]]:
    """The faults and the transitions of `NODE_KINDS` and `POD_KINDS` from `quiet_until` (microseconds) on."""
    out: list[dict[str, Any]] = []
    groups: dict[tuple[str, str | None, str, int], dict[str, Any]] = {}
    for event in events:
        fields = event.fields
        at = {"t": event.t / 1e6, "node": event.node, "component": event.component}
        if event.type == "fault":
            out.append({**at, "kind": "fault", "action": fields["action"], "summary": fields["summary"],
                        **{k: fields[k] for k in ("zone", "name") if fields.get(k)}})
            continue
        if event.type != "transition" or event.t < quiet_until:
            continue
        kind = fields["kind"]
        if kind in NODE_KINDS:
            if kind in FIRST_SEEN_KINDS and fields.get("from") is None:
                continue  # a node or zone appearing, not a change
            if kind == "node-condition" and "True" not in (fields["from"], fields["to"]):
                continue  # a pressure condition following Ready to Unknown and back: Ready says it
            out.append({**at, "kind": kind, **{k: fields[k] for k in ("from", "to", "key", "effect")
                                               if fields.get(k) is not None}})
        elif kind in POD_KINDS and not (kind == "pod-ready" and fields["to"]):
            group_key = (POD_KINDS[kind], event.node, event.component, event.t)
            group = groups.get(group_key)
            if group is None:
                group = groups[group_key] = {**at, "kind": POD_KINDS[kind], "count": 0, "pods": []}
                out.append(group)
            group["count"] += 1
            if len(group["pods"]) < POD_NAMES_SHOWN:
                group["pods"].append(fields["pod"])
    return out
