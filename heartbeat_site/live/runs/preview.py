"""A scenario's first minutes, run headless for the builder's "Preview" (docs/architecture.md §6.2).

The simulation is deterministic (docs/architecture.md §2.1), so the transitions listed here are exactly the
ones a run of the same document and seed shows at the same virtual times. Bounded so that a request costs well
under a second of CPU: at most `MAX_NODES` nodes and `MAX_SECONDS` of virtual time.
"""

from __future__ import annotations

from typing import Any

from heartbeat_site.live.delivery.summary import summarise
from simulation import Scenario, Simulation
from simulation.comparison import key_transitions

MAX_NODES = 50
MAX_SECONDS = 15 * 60.0
DEFAULT_SECONDS = 10 * 60.0
MAX_TRANSITIONS = 300


def preview(scenario: Scenario, until: float) -> dict[str, Any]:
    """Run `scenario` from 0 to `until` seconds; its key transitions and the state it ends in."""
    simulation = Simulation(scenario)
    # the same key transitions as the command line's and a comparison's (simulation/comparison.py)
    transitions = key_transitions(simulation.run_until(until), simulation.startup_done_at)
    return {
        "until": until,
        "node_count": scenario.node_count,
        "transitions": transitions[:MAX_TRANSITIONS],
        "truncated": len(transitions) > MAX_TRANSITIONS,
        "summary": summarise(simulation.snapshot()),
    }
