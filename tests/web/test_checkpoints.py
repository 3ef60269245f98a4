"""A live run's checkpoints (real Redis and database, drivers in threads): written fenced by the lease, continued
by the next driver instead of a replay from virtual time 0, and a replay from 0 when there is none to continue."""

from __future__ import annotations

import pytest

from heartbeat_site.live.models import Command, CommandKind
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore import checkpoint_series, command_inbox, ownership, run_state
from simulation import Simulation, load_scenario

from . import test_driver
from .conftest import drive_in_thread, small_document
from .live import events_hash
from .test_driver import logged_events, reference, wait_for

pytestmark = [pytest.mark.django_db(transaction=True)]

run_factory = test_driver.run_factory


def a_checkpoint(t: float = 30.0) -> checkpoint_series.Checkpoint:
    sim = Simulation(load_scenario(small_document()), seed=11)
    events = sim.run_until(t)
    return checkpoint_series.Checkpoint(t=sim.now, seq=events[-1].seq, commands=[], sim=sim.checkpoint())


def test_a_checkpoint_from_a_deposed_driver_is_refused(run_factory):
    run = run_factory()
    old = ownership.Lease(run.id, "old", ttl=5)
    assert old.acquire()
    kept = a_checkpoint(30.0)
    assert old.store_checkpoint(kept)
    get_redis().set(ownership.lease_key(run.id), "new", px=5_000)  # another driver took the run over
    assert not old.store_checkpoint(a_checkpoint(60.0))
    read = checkpoint_series.read_checkpoint(run.id)
    assert (read.t, read.seq, read.sim) == (kept.t, kept.seq, kept.sim)


def damage_checkpoints(run_id: str) -> None:
    for field in checkpoint_series.checkpoint_positions(run_id):
        get_redis().hset(checkpoint_series.checkpoints_key(run_id), f"{field[0]!r} {field[1]}", b"damaged")


def stopped_at(run, past: float, command: Command | None = None) -> checkpoint_series.Checkpoint:
    """Drive ``run`` until its published time is past ``past`` (``command`` sent at 30 s), stop the driver as a
    worker's shutdown does, and return the checkpoint it left."""
    first, stop_first, outcome = drive_in_thread(run.id)
    if command is not None:
        wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > 30, what="t > 30")
        command_inbox.notify_command(run.id, command.pk)
        assert command_inbox.wait_ack(run.id, command.seq, 5)["status"] == "applied"
    wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > past, what=f"t > {past}")
    wait_for(lambda: (c := checkpoint_series.read_checkpoint(run.id)) is not None and c.t > 40,
             what="a checkpoint after 40 s")
    stop_first.set()
    first.join(10)
    assert outcome == ["worker-stopping"]
    return checkpoint_series.read_checkpoint(run.id)


@pytest.mark.parametrize("process_from", [1000, 0], ids=["in the driver", "in a process beside it"])
def test_the_next_driver_continues_the_checkpoint_and_the_run_is_unchanged(run_factory, settings, process_from):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "CHECKPOINT_SECONDS": 20.0, "CHECKPOINT_PROCESS_FROM": process_from}
    # long enough that the first driver is stopped before the run's end even when a loaded machine is slow to
    # write the checkpoint after 40 s (a process is spawned for it)
    run = run_factory(speed=30, duration="8m")
    command = Command.objects.create(run=run, seq=1, kind=CommandKind.FAULT, action="stop-kubelet",
                                     payload={"action": "stop-kubelet", "node": "node-1"})
    left = stopped_at(run, 75.0, command)
    published = run_state.read_state(run.id)
    assert left.t <= float(published["t"]) and left.seq <= int(published["last_seq"])
    assert left.commands == [command.pk]  # the fault was applied at ~30 s, before the checkpoint

    second, _, outcome = drive_in_thread(run.id)
    wait_for(lambda: run_state.read_state(run.id).get("checkpoint_t", "") != "", what="the second driver's start")
    state = run_state.read_state(run.id)
    assert (float(state["checkpoint_t"]), int(state["checkpoint_seq"])) == (left.t, left.seq)
    second.join(120)
    assert outcome == ["finished"]
    command.refresh_from_db()
    events = logged_events(run.id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events_hash(events) == events_hash(reference(run, [command]))
    final = checkpoint_series.read_checkpoint(run.id)
    assert (final.t, final.seq) == (run.duration, events[-1]["seq"])  # the run's end, kept with its retention
    assert get_redis().ttl(checkpoint_series.checkpoints_key(run.id)) > 0


def test_a_command_applied_after_the_checkpoint_is_scheduled_on_it(run_factory, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "CHECKPOINT_SECONDS": 50.0, "CHECKPOINT_PROCESS_FROM": 1000}
    run = run_factory(speed=20, duration="3m")
    first, stop_first, _ = drive_in_thread(run.id)
    wait_for(lambda: checkpoint_series.read_checkpoint(run.id) is not None, what="the checkpoint at 50 s")
    command = Command.objects.create(run=run, seq=1, kind=CommandKind.FAULT, action="stop-kubelet",
                                     payload={"action": "stop-kubelet", "node": "node-2"})
    command_inbox.notify_command(run.id, command.pk)
    assert command_inbox.wait_ack(run.id, command.seq, 5)["status"] == "applied"
    wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > 70, what="t > 70")
    stop_first.set()  # before the next checkpoint, at 100 s
    first.join(10)
    left = checkpoint_series.read_checkpoint(run.id)
    command.refresh_from_db()
    assert left.t < command.at and left.commands == []

    second, _, outcome = drive_in_thread(run.id)
    second.join(30)
    assert outcome == ["finished"]
    assert float(run_state.read_state(run.id)["checkpoint_t"]) == left.t
    events = logged_events(run.id)
    assert events_hash(events) == events_hash(reference(run, [command]))


def test_an_unreadable_checkpoint_is_replaced_by_a_replay_from_zero(run_factory, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "CHECKPOINT_SECONDS": 20.0, "CHECKPOINT_PROCESS_FROM": 1000}
    run = run_factory(speed=30, duration="3m")
    stopped_at(run, 60.0)
    damage_checkpoints(run.id)

    second, _, outcome = drive_in_thread(run.id)
    second.join(30)
    assert outcome == ["finished"]
    assert run_state.read_state(run.id)["checkpoint_t"] == ""  # replayed from 0
    events = logged_events(run.id)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events_hash(events) == events_hash(reference(run, []))


def test_an_ended_runs_state_continues_its_last_checkpoint_and_equals_a_replay(run_factory, settings, monkeypatch):
    """Seeks and the Kubernetes objects of an ended run (seek.state_at) start from the run's last checkpoint: the
    same state as a replay from 0, at its end and after a damaged checkpoint too."""
    from heartbeat_site.live.lookback import seek
    from heartbeat_site.live.lookback.rebuilding import applied_fault_commands, rebuild

    monkeypatch.setattr(seek, "WARM", False)
    settings.HEARTBEAT = {**settings.HEARTBEAT, "CHECKPOINT_SECONDS": 50.0, "CHECKPOINT_PROCESS_FROM": 1000}
    run = run_factory(speed=50, duration="2m")
    thread, _, outcome = drive_in_thread(run.id)
    thread.join(30)
    assert outcome == ["finished"]
    run.refresh_from_db()
    assert checkpoint_series.read_checkpoint(run.id).t == run.duration
    commands = applied_fault_commands(run)
    replayed = rebuild(run)
    replayed.run_until(run.duration)
    expected = replayed.snapshot()
    assert seek.from_run_checkpoint(run, commands, run.duration).sim.now == run.duration
    positions = checkpoint_series.checkpoint_positions(run.id)
    first, before_last = positions[0][0], positions[-2][0]
    assert seek.from_run_checkpoint(run, commands, run.duration - 1).sim.now == before_last  # the one before
    assert seek.from_run_checkpoint(run, commands, first - 1) is None  # a seek before the first: a rebuild
    seek.forget(run.id)
    assert seek.state_at(run, commands, run.duration) == expected
    seek.forget(run.id)
    damage_checkpoints(run.id)
    assert seek.from_run_checkpoint(run, commands, run.duration) is None
    assert seek.state_at(run, commands, run.duration) == expected
    seek.forget(run.id)
