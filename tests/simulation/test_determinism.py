"""Same scenario, seed and commands: the same bytes, in one go, in slices, or rebuilt."""

import hashlib
import json

import pytest

from simulation import CommandError, Simulation, audit_record, get_builtin, load_scenario

from .trace import scenario

DOC = scenario("1.33", zones=[{"name": "zone-a", "nodes": 3}, {"name": "zone-b", "nodes": 2}],
               faults=[{"at": "40s", "action": "stop-kubelet", "node": "node-2"},
                       {"at": "90s", "action": "partition", "node": "node-4", "for": "70s"},
                       {"at": "100s", "action": "start-pressure", "node": "node-5", "resource": "disk"}])


def digest(events) -> str:
    h = hashlib.sha256()
    for e in events:
        h.update(json.dumps(e.to_dict(), sort_keys=True).encode())
    return h.hexdigest()


def audit_bytes(events) -> bytes:
    return b"".join(json.dumps(audit_record(e), sort_keys=True).encode() + b"\n" for e in events if e.type == "write")


def test_same_input_same_audit_log_bytes():
    a = Simulation(load_scenario(DOC)).run_until(500)
    b = Simulation(load_scenario(DOC)).run_until(500)
    assert audit_bytes(a) == audit_bytes(b)
    assert digest(a) == digest(b)


def test_another_seed_changes_the_run():
    a = Simulation(load_scenario(DOC)).run_until(120)
    b = Simulation(load_scenario(DOC), seed=12345).run_until(120)
    assert digest(a) != digest(b)


@pytest.mark.parametrize("slices", [[500], [0.5, 1, 59.99, 60, 60.000001, 200, 500],
                                    [7.3 * i for i in range(1, 69)] + [500]])
def test_run_in_slices_equals_run_in_one_go(slices):
    whole = Simulation(load_scenario(DOC)).run_until(500)
    sim = Simulation(load_scenario(DOC))
    parts = []
    for t in slices:
        parts.extend(sim.run_until(t))
    assert [e.seq for e in parts] == list(range(1, len(parts) + 1))
    assert digest(parts) == digest(whole)


def test_live_command_equals_rebuilt_run():
    """A command posted while running (at == now) replays identically when scheduled up front."""
    cmd = {"action": "stop-runtime", "node": "node-1"}
    live = Simulation(load_scenario(DOC))
    events = live.run_until(73.25)
    live.schedule_command(cmd, at=live.now)
    events += live.run_until(400)
    rebuilt = Simulation(load_scenario(DOC))
    rebuilt.schedule_command(cmd, at=73.25)
    assert digest(events) == digest(rebuilt.run_until(400))


def test_snapshot_plus_writes_equals_later_snapshot():
    """zulip-style check: applying the write events of (t0, t1] to snapshot(t0) gives snapshot(t1)."""
    sim = Simulation(load_scenario(DOC))
    sim.run_until(100)
    before = sim.snapshot()["objects"]
    writes = [e.to_dict() for e in sim.run_until(200) if e.type == "write"]
    store = {(kind, o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
             for kind, objs in before.items() if kind != "events" for o in objs}
    for w in writes:
        if w["code"] >= 400 or w["resource"] == "events":
            continue
        key = (w["resource"], w["namespace"], w["name"])
        if w["removed"]:
            store.pop(key, None)
        else:
            store[key] = w["object"]
    after = sim.snapshot()["objects"]
    expected = {(kind, o["metadata"].get("namespace", ""), o["metadata"]["name"]): o
                for kind, objs in after.items() if kind != "events" for o in objs}
    assert store == expected


def test_command_in_the_past_is_refused():
    sim = Simulation(load_scenario(DOC))
    sim.run_until(50)
    with pytest.raises(CommandError, match="in the past"):
        sim.schedule_command({"action": "stop-kubelet", "node": "node-1"}, at=10)


def test_every_builtin_runs():
    for name in ("kubelet-crash", "zone-outage-small-zones"):
        sc = get_builtin(name)
        assert sc is not None
        assert Simulation(sc).run_until(120)


def test_same_bytes_across_processes_with_different_hash_seeds(tmp_path):
    """`on any machine`: nothing may depend on set/dict hash order (PYTHONHASHSEED)."""
    import os
    import subprocess
    import sys

    outputs = []
    for hash_seed in ("1", "4242"):
        out = tmp_path / f"audit-{hash_seed}.jsonl"
        subprocess.run([sys.executable, "-m", "simulation", "run", "zone-outage-small-zones", "--until", "8m",
                        "--audit-log", str(out), "--no-timeline"], check=True, capture_output=True,
                       env={**os.environ, "PYTHONHASHSEED": hash_seed})
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_a_run_leaves_no_cyclic_garbage():
    """run_until switches the cyclic GC off for speed and moves what a slice made straight to
    the oldest generation; that is only safe while runs make no cycles (a finished process
    and its last wake-up entry once held each other)."""
    import gc

    sim = Simulation(load_scenario(DOC))
    gc.collect()
    events = sim.run_until(600)
    for e in events:
        e.to_dict()
    del events
    assert gc.collect() == 0


def test_the_hosts_own_garbage_cycles_are_still_collected_young():
    """What moves to the oldest generation after a slice is the slice's own objects: a cycle the
    host (a web process) dropped between two slices is collected when the next slice starts,
    not left for a rare full collection."""
    import weakref

    sim = Simulation(load_scenario(DOC))
    sim.run_until(10)

    class Garbage:
        pass

    cycle = Garbage()
    cycle.me = cycle
    alive = weakref.ref(cycle)
    del cycle
    sim.run_until(20)
    assert alive() is None


def test_a_host_that_froze_its_objects_keeps_them_frozen():
    """A pre-forking host freezes its objects for copy-on-write; a slice must not thaw them."""
    import gc

    sim = Simulation(load_scenario(DOC))
    host_object = ["kept for the host's children"]
    gc.freeze()
    try:
        sim.run_until(10)
        assert not any(o is host_object for o in gc.get_objects())  # still in the permanent generation
    finally:
        gc.unfreeze()


def test_uids_are_the_version_4_uuids_of_the_seeded_stream():
    """UIDs are formatted directly for speed; they must stay what uuid.UUID gives (stored runs
    and share links are rebuilt from the seed and must show the same UIDs)."""
    import random
    import uuid

    from simulation.context import uid_factory

    make, stream = uid_factory(random.Random(7)), random.Random(7)
    for _ in range(20000):
        assert make() == str(uuid.UUID(int=stream.getrandbits(128), version=4))


def test_the_cli_stops_quietly_when_its_reader_goes_away():
    """`python -m simulation run ... | head`: no traceback when the pipe closes early."""
    import subprocess
    import sys

    # 270 KB of timeline, more than a pipe holds: the writer must still be writing when we close
    proc = subprocess.Popen([sys.executable, "-m", "simulation", "run", "zone-outage-large-zones", "--until", "2m"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline().startswith(b"# zone-outage-large-zones:")
    proc.stdout.close()  # what `head -1` does after its line
    stderr = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert stderr == b""
