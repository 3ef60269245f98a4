"""The cost shortcuts (docs/simulation-model.md) change nothing a user can see.

Each test runs the same scenario twice, once with a shortcut switched off (`Simulation(...,
shortcuts=Shortcuts(...))`: the plain per-tick / per-node path), and compares every event and
the snapshots. Other tests check that each switch really takes its shortcut out.
"""

import hashlib
import json

import pytest

from simulation import Shortcuts, Simulation, get_builtin, load_scenario

from .trace import scenario

# Faults of every kind the shortcuts must notice: a kubelet stop, a partition with a heal,
# pressure, a runtime stop, a cordon (a new Node version from outside), a zone outage.
DOC = scenario("1.33", zones=[{"name": "zone-a", "nodes": 4}, {"name": "zone-b", "nodes": 4}],
               faults=[{"at": "330s", "action": "stop-kubelet", "node": "node-2"},
                       {"at": "400s", "action": "partition", "node": "node-4", "for": "70s"},
                       {"at": "420s", "action": "start-pressure", "node": "node-5", "resource": "memory"},
                       {"at": "500s", "action": "stop-runtime", "node": "node-6", "for": "40s"},
                       {"at": "610s", "action": "cordon", "node": "node-7"},
                       {"at": "700s", "action": "zone-outage", "zone": "zone-b", "for": "200s"}],
               duration="20m")


def run_digest(doc_or_scenario, until: float, shortcuts: Shortcuts) -> str:
    sc = load_scenario(doc_or_scenario) if isinstance(doc_or_scenario, dict) else doc_or_scenario
    sim = Simulation(sc, shortcuts=shortcuts)
    h = hashlib.sha256()
    t = 0.0
    while t < until:
        t = min(t + 37.0, until)
        for event in sim.run_until(t):
            h.update(json.dumps(event.to_dict(), sort_keys=True, default=str).encode())
        h.update(json.dumps(sim.snapshot(), sort_keys=True, default=str).encode())
    return h.hexdigest()


ALL_ON = Shortcuts()
WITHOUT = {
    "doze": Shortcuts(kubelet_doze=False),  # the status loop wakes at every 10 s tick
    "steady-nodes": Shortcuts(steady_nodes=False),  # monitorNodeHealth takes every node the full way
    "settled-nodes": Shortcuts(settled_nodes=False),  # ... Unknown nodes too
    "engine-buckets": Shortcuts(engine_buckets=False),  # every timer that is not in a lane goes through the heap
    "all": Shortcuts.none(),
}

CASES = [pytest.param(DOC, 1200, id="mixed-faults"),
         pytest.param("zone-outage-small-zones", None, id="zone-outage-small-zones"),
         pytest.param("graceful-shutdown", None, id="graceful-shutdown"),
         pytest.param("status-writes-fail", None, id="status-writes-fail")]


def _resolve(case, until):
    if isinstance(case, str):
        sc = get_builtin(case)
        return sc, until or sc.duration
    return case, until


@pytest.mark.parametrize(("case", "until"), CASES)
@pytest.mark.parametrize("switched_off", list(WITHOUT))
def test_a_shortcut_gives_the_same_run(case, until, switched_off):
    case, until = _resolve(case, until)
    fast = run_digest(case, until, ALL_ON)
    plain = run_digest(case, until, WITHOUT[switched_off])
    assert fast == plain


def wake_ups(doc, start: float, end: float, shortcuts: Shortcuts) -> int:
    sim = Simulation(load_scenario(doc), shortcuts=shortcuts)
    sim.run_until(start)
    before = sim.engine._seq  # timers scheduled so far
    sim.run_until(end)
    return sim.engine._seq - before


def test_the_doze_really_skips_ticks():
    """Not a no-op: over a steady 5 minutes each kubelet skips ~29 of its 30 status ticks."""
    dozing = wake_ups(DOC, 0, 300, ALL_ON)
    ticking = wake_ups(DOC, 0, 300, Shortcuts(kubelet_doze=False))
    nodes = 8
    assert ticking - dozing >= nodes * 20


def run_to(until: float, shortcuts: Shortcuts = ALL_ON) -> Simulation:
    sim = Simulation(load_scenario(DOC), shortcuts=shortcuts)
    sim.run_until(until)
    return sim


def test_steady_nodes_are_skipped_only_with_the_shortcut():
    """After start-up every healthy node is on the steady path; without the shortcut none is."""
    assert sorted(run_to(300).nlc.shortcuts.steady) == [f"node-{i}" for i in range(1, 9)]
    assert run_to(300, Shortcuts(steady_nodes=False)).nlc.shortcuts.steady == {}


def test_settled_nodes_get_their_verdict_again_only_with_the_shortcut():
    """In the zone outage, zone-b's Unknown nodes are settled; without the shortcut none is."""
    assert set(run_to(850).nlc.shortcuts.settled) >= {"node-5", "node-6", "node-7", "node-8"}
    assert run_to(850, Shortcuts(settled_nodes=False)).nlc.shortcuts.settled == {}


def test_far_timers_wait_in_buckets_only_with_the_shortcut():
    """With buckets the heap holds a few timers; without, every far timer (Lease sleeps, dozes)."""
    with_buckets = run_to(300).engine._heap
    without = run_to(300, Shortcuts(engine_buckets=False)).engine._heap
    assert len(without) >= 16 > len(with_buckets)
