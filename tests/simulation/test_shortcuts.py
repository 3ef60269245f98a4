"""The cost shortcuts (docs/simulation-model.md) change nothing a user can see.

Each test runs the same scenario twice, once with a shortcut switched off (the plain
per-tick / per-node path), and compares every event and the snapshots.
"""

import hashlib
import json

import pytest

from simulation import Simulation, engine, get_builtin, load_scenario
from simulation.kubelet.node_status import NodeStatusSyncer
from simulation.nodelifecycle.controller import NodeLifecycleController

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


def run_digest(doc_or_scenario, until: float) -> str:
    sc = load_scenario(doc_or_scenario) if isinstance(doc_or_scenario, dict) else doc_or_scenario
    sim = Simulation(sc)
    h = hashlib.sha256()
    t = 0.0
    while t < until:
        t = min(t + 37.0, until)
        for event in sim.run_until(t):
            h.update(json.dumps(event.to_dict(), sort_keys=True, default=str).encode())
        h.update(json.dumps(sim.snapshot(), sort_keys=True, default=str).encode())
    return h.hexdigest()


def without_doze(monkeypatch) -> None:
    # the loop then sleeps one jitter at a time, as a kubelet ticking every 10 s
    monkeypatch.setattr(NodeStatusSyncer, "_doze", lambda self, period: self._next_jitter(period))


def without_steady_nodes(monkeypatch) -> None:
    monkeypatch.setattr(NodeLifecycleController, "_enter_steady", lambda self, name, node, zone: None)


def without_settled_nodes(monkeypatch) -> None:
    monkeypatch.setattr(NodeLifecycleController, "_settled_pass", lambda self, name, node, zone, now: None)


def without_buckets(monkeypatch) -> None:
    # one bucket reaching past any run: every entry not in a lane goes through the heap
    monkeypatch.setattr(engine, "BUCKET_SHIFT", 62)


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
@pytest.mark.parametrize("switch_off", [without_doze, without_steady_nodes, without_settled_nodes, without_buckets],
                         ids=["doze", "steady-nodes", "settled-nodes", "engine-buckets"])
def test_a_shortcut_gives_the_same_run(case, until, switch_off, monkeypatch):
    case, until = _resolve(case, until)
    fast = run_digest(case, until)
    switch_off(monkeypatch)
    plain = run_digest(case, until)
    assert fast == plain


def wake_ups(doc, start: float, end: float) -> int:
    sim = Simulation(load_scenario(doc))
    sim.run_until(start)
    before = sim.engine._seq
    sim.run_until(end)
    return sim.engine._seq - before


def test_the_doze_really_skips_ticks(monkeypatch):
    """Not a no-op: over a steady 5 minutes each kubelet skips ~29 of its 30 status ticks."""
    dozing = wake_ups(DOC, 0, 300)
    without_doze(monkeypatch)
    ticking = wake_ups(DOC, 0, 300)
    nodes = 8
    assert ticking - dozing >= nodes * 20
