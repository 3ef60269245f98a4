"""Checkpoints: a run restored from `Simulation.checkpoint()` continues exactly as the run never
interrupted (the same events and audit records, byte for byte), in this process or another,
with commands scheduled before and after the checkpoint; and a checkpoint of a restored run is
the same bytes as the checkpoint it was restored from."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from simulation import Simulation, audit_record, builtin_scenarios, get_builtin, load_scenario
from simulation.clock import parse_duration
from simulation.lessons import LessonRun, drill_simulation, get_drill, get_lesson
from simulation.simulation import Shortcuts

ROOT = Path(__file__).resolve().parents[2]
BUILTINS = [getattr(s, "name", s) for s in builtin_scenarios()]


def lines(events) -> list[bytes]:
    """What `python -m simulation run --events-log/--audit-log` would write for these events."""
    out = []
    for e in events:
        out.append(json.dumps(e.to_dict(), separators=(",", ":"), ensure_ascii=False).encode())
        if e.type == "write":
            out.append(b"audit " + json.dumps(audit_record(e), separators=(",", ":"), ensure_ascii=False).encode())
    return out


def assert_same(expected: list[bytes], actual: list[bytes]) -> None:
    if expected != actual:
        first = next((i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
                     min(len(expected), len(actual)))
        pytest.fail(f"restored run differs at line {first} of {len(expected)} (got {len(actual)}):\n"
                    f"expected {expected[first][:400] if first < len(expected) else None!r}\n"
                    f"actual   {actual[first][:400] if first < len(actual) else None!r}")


def plain_and_checkpoint(scenario, cut: float, end: float) -> tuple[list[bytes], bytes]:
    """The lines of a never-checkpointed run from `cut` to `end`, and another run's checkpoint at `cut`."""
    plain = Simulation(scenario)
    plain.run_until(cut)
    expected = lines(plain.run_until(end))
    sim = Simulation(scenario)
    sim.run_until(cut)
    return expected, sim.checkpoint()


def cuts_for(name: str) -> tuple[list[float], float]:
    """Checkpoint moments: the first fault's very instant (it has not run yet), a moment in the
    300 s toleration countdown, and one after the evictions; and the end of the scenario."""
    scenario = get_builtin(name)
    first = min(parse_duration(f["at"]) for f in scenario.faults)
    end = scenario.duration
    return [t for t in (first, first + 200, first + 420) if t < end], end


@pytest.mark.parametrize("name", BUILTINS)
def test_a_restored_builtin_continues_byte_for_byte(name):
    cuts, end = cuts_for(name)
    plain = Simulation(get_builtin(name))  # never checkpointed
    expected = {}
    t = 0.0
    for cut in [*cuts, end]:
        expected[t] = lines(plain.run_until(cut))
        t = cut
    sim = Simulation(get_builtin(name))
    for cut in cuts:
        sim.run_until(cut)
        data = sim.checkpoint()
        restored = Simulation.restore(data)
        assert restored.checkpoint() == data  # checkpointed again: the same bytes
        assert restored.now == cut
        later = [line for t, ls in expected.items() if t >= cut for line in ls]
        assert_same(later, lines(restored.run_until(end)))


def _child(data: Path, end: float, commands: list[tuple[dict, float]], out: Path) -> None:
    """Run in another interpreter (another string hash seed): restore, continue, write its lines
    and its own checkpoint of the restored run."""
    script = f"""
import pickle, sys
sys.path.insert(0, {str(ROOT)!r})
from simulation import Simulation
from tests.simulation.test_checkpoint import lines
data = open({str(data)!r}, "rb").read()
sim = Simulation.restore(data)
again = sim.checkpoint()
for cmd, at in {commands!r}:
    sim.schedule_command(cmd, at)
result = lines(sim.run_until({end!r}))
open({str(out)!r}, "wb").write(pickle.dumps((again, result)))
"""
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT,
                   env={**os.environ, "PYTHONHASHSEED": "4242"})


@pytest.mark.parametrize("name", ["kubelet-crash", "statefulset-node-lost", "zone-outage-small-zones"])
def test_restored_in_another_process(name, tmp_path):
    cuts, end = cuts_for(name)
    expected, data = plain_and_checkpoint(get_builtin(name), cuts[1], end)
    (tmp_path / "ckpt").write_bytes(data)
    _child(tmp_path / "ckpt", end, [], tmp_path / "out")
    again, actual = pickle.loads((tmp_path / "out").read_bytes())
    assert_same(expected, actual)
    assert again == data  # the bytes do not depend on the process's string hashes


def test_commands_scheduled_before_and_after_the_checkpoint(tmp_path):
    """A command scheduled before the checkpoint for a time after it, and commands scheduled on
    the restored run (one at its very instant), give what the uninterrupted run gives."""
    before = ({"action": "partition", "node": "node-3", "for": "40s"}, 150.0)
    after = [({"action": "stop-runtime", "node": "node-1"}, 130.0),
             ({"action": "start-runtime", "node": "node-1"}, 200.0),
             ({"action": "stop-kubelet", "node": "node-2"}, 260.0)]
    end = 700.0

    plain = Simulation(get_builtin("kubelet-crash-recovery"))
    plain.run_until(100)
    plain.schedule_command(*before)
    plain.run_until(130)
    for cmd, at in after:
        plain.schedule_command(cmd, at)
    expected = lines(plain.run_until(end))

    sim = Simulation(get_builtin("kubelet-crash-recovery"))
    sim.run_until(100)
    sim.schedule_command(*before)
    sim.run_until(130)
    data = sim.checkpoint()
    restored = Simulation.restore(data)
    for cmd, at in after:
        restored.schedule_command(cmd, at)
    assert_same(expected, lines(restored.run_until(end)))
    assert restored.commands == plain.commands

    (tmp_path / "ckpt").write_bytes(data)
    _child(tmp_path / "ckpt", end, after, tmp_path / "out")
    _again, actual = pickle.loads((tmp_path / "out").read_bytes())
    assert_same(expected, actual)


THOUSAND_NODES = {
    "name": "ckpt-1000", "seed": 5, "duration": "3m",
    "cluster": {"zones": [{"name": "zone-a", "nodes": 334}, {"name": "zone-b", "nodes": 333},
                          {"name": "zone-c", "nodes": 333}],
                "workloads": [{"name": "app", "replicas": 3000}, {"name": "agent", "kind": "DaemonSet"}],
                "services": [{"name": "app", "selector": {"app": "app"}}]},
    "faults": [{"at": "40s", "action": "zone-outage", "zone": "zone-b"},
               {"at": "130s", "action": "zone-heal", "zone": "zone-b"}],
}


def test_a_thousand_nodes(tmp_path):
    """Restored in this process and in another one (another string hash seed): the same lines,
    and the other process's checkpoint of the restored run is the same bytes."""
    cut, end = 100.0, 140.0  # the zone's nodes Unknown and queued for tainting; the heal after the cut
    expected, data = plain_and_checkpoint(load_scenario(THOUSAND_NODES), cut, end)
    restored = Simulation.restore(data)
    assert restored.checkpoint() == data
    assert_same(expected, lines(restored.run_until(end)))
    assert len(expected) > 10_000

    (tmp_path / "ckpt").write_bytes(data)
    _child(tmp_path / "ckpt", end, [], tmp_path / "out")
    again, actual = pickle.loads((tmp_path / "out").read_bytes())
    assert_same(expected, actual)
    assert again == data


def drive(sim: Simulation, run: LessonRun, t: float, until: float, out: list[bytes]) -> float:
    """run_lesson's loop (simulation/lessons/runner.py), slice by slice up to `until`."""
    while t < until:
        target = until
        stop = run.next_stop()
        if stop is not None and stop > t:
            target = min(target, stop)
        if run.waiting_for_event():
            target = min(target, t + 1.0)
        t = target
        events = sim.run_until(t)
        out.extend(lines(events))
        for start in run.feed(events, t):
            for command in start.commands:
                sim.schedule_command(command, start.t)
        if run.held:
            run.release(t)
    return t


@pytest.mark.parametrize("name", ["kubelet-crash-walkthrough", "controller-manager-restart"])
def test_a_lesson_run(name):
    """The simulation under a lesson restores exactly; the LessonRun, plain data, is pickled next
    to it. The second lesson's step at 230 s schedules a command: after the checkpoint."""
    lesson = get_lesson(name)
    end = lesson.scenario.duration

    def fresh():
        sim, run = Simulation(lesson.scenario), LessonRun(lesson)
        for start in run.start(0.0):
            for command in start.commands:
                sim.schedule_command(command, start.t)
        return sim, run

    sim, run = fresh()
    expected: list[bytes] = []
    drive(sim, run, 0.0, end, expected)
    transcript = json.dumps(run.transcript().to_dict(), sort_keys=True)

    sim, run = fresh()
    actual: list[bytes] = []
    t = drive(sim, run, 0.0, 150.0, actual)
    data, saved = sim.checkpoint(), pickle.dumps(run)
    del sim, run
    sim, run = Simulation.restore(data), pickle.loads(saved)
    drive(sim, run, t, end, actual)
    assert_same(expected, actual)
    assert json.dumps(run.transcript().to_dict(), sort_keys=True) == transcript


@pytest.mark.parametrize("name", ["back-on-its-own", "evicted-in-a-row"])
def test_a_drill_run(name):
    drill = get_drill(name)
    assert drill is not None
    end = drill.scenario.duration
    plain = drill_simulation(drill)
    expected = lines(plain.run_until(end))
    sim = drill_simulation(drill)
    actual = lines(sim.run_until(drill.fault["at"] + 30))
    restored = Simulation.restore(sim.checkpoint())
    actual += lines(restored.run_until(end))
    assert_same(expected, actual)



@pytest.mark.parametrize("shortcuts", [Shortcuts(), Shortcuts.none()], ids=["shortcuts", "no-shortcuts"])
def test_a_fresh_run_and_a_run_without_shortcuts(shortcuts):
    """A checkpoint before the first slice (the commands only scheduled), and one of a run that
    takes none of the cost shortcuts (its engine has no buckets, its status loops never doze)."""
    scenario = get_builtin("network-partition")
    plain = Simulation(scenario, shortcuts=shortcuts)
    expected = lines(plain.run_until(300))
    sim = Simulation(scenario, shortcuts=shortcuts)
    restored = Simulation.restore(sim.checkpoint())
    actual = lines(restored.run_until(150))
    again = Simulation.restore(restored.checkpoint())
    assert_same(expected, actual + lines(again.run_until(300)))


def test_events_not_handed_out_yet_are_part_of_the_checkpoint():
    """Events the recorder holds when the checkpoint is taken (some with fields still to build)
    come out of the restored run's next slice."""
    scenario = get_builtin("network-partition")
    plain = Simulation(scenario)
    expected = lines(plain.run_until(400))
    sim = Simulation(scenario)
    actual = lines(sim.run_until(100))
    sim.engine.run_until(150_000_000)  # the engine alone: its events wait in the recorder
    assert any(callable(e._fields) for e in sim.recorder.pending)
    restored = Simulation.restore(sim.checkpoint())
    assert_same(expected, actual + lines(restored.run_until(400)))
