"""What the web layer relies on from `simulation/` (docs/simulation-api.md), checked directly."""

import json

from simulation import Simulation, get_builtin


def emitted_and_later(name: str, step: float) -> tuple[list[str], list[str]]:
    scenario = get_builtin(name)
    sim, events, at_emission = Simulation(scenario), [], []
    t = 0.0
    while t < scenario.duration:
        t = min(scenario.duration, t + step)
        batch = sim.run_until(t)
        events.extend(batch)
        at_emission.extend(json.dumps(e.to_dict(), sort_keys=True) for e in batch)
    return at_emission, [json.dumps(e.to_dict(), sort_keys=True) for e in events]


def test_sliced_and_one_go_runs_agree_on_seq_and_time():
    scenario = get_builtin("kubelet-crash")
    one_go = [(e.seq, e.t, e.type) for e in Simulation(scenario).run_until(scenario.duration)]
    sim, sliced, t = Simulation(scenario), [], 0.0
    while t < scenario.duration:
        t = min(scenario.duration, t + 0.37)
        sliced.extend((e.seq, e.t, e.type) for e in sim.run_until(t))
    assert sliced == one_go
    assert [s for s, _, _ in one_go] == list(range(1, len(one_go) + 1))


def test_event_dicts_do_not_change_after_emission():
    at_emission, later = emitted_and_later("kubelet-crash", 5.0)
    assert at_emission == later
