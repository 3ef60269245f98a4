"""Look-back from a run's checkpoints (heartbeat_site/live/lookback/from_checkpoints.py): the series a driver
leaves in Redis is thinned evenly and bounded, and a seek, a replayed event page or a sequence diagram far into
a run starts from the checkpoint at or before it, with the very answer a replay from virtual time 0 gives."""

from __future__ import annotations

import pytest

from heartbeat_site.live.lookback import exports, from_checkpoints, rebuilding, seek
from heartbeat_site.live.lookback.rebuilding import applied_fault_commands
from heartbeat_site.live.models import Command, Run, RunStatus
from heartbeat_site.live.runstore import checkpoint_series, ownership
from simulation import Simulation, load_scenario
from tests.web.conftest import reached_run
from tests.web.test_seek import FAULT, FAULT_AT, fresh_body, seek_to

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("replays_here")]

REACHED = 600.0
EVERY = 60.0


def write_checkpoints(run: Run, every: float = EVERY) -> dict[float, int]:
    """The checkpoints a driver of ``run`` leaves every ``every`` virtual seconds (its lease held meanwhile);
    their times and last seqs. The run's last seq is set, as its driver's end does."""
    command = Command.objects.get(run=run)
    lease = ownership.Lease(run.id, "driver", ttl=60)
    assert lease.acquire()
    sim = Simulation(load_scenario(run.document), seed=run.seed)
    sim.schedule_command(command.payload, command.at)
    written, seq, t = {}, 0, 0.0
    while t < run.duration:
        t = min(run.duration, t + every)
        events = sim.run_until(t)
        seq = events[-1].seq if events else seq
        assert lease.store_checkpoint(checkpoint_series.Checkpoint(t=sim.now, seq=seq, commands=[command.pk],
                                                          sim=sim.checkpoint()))
        written[sim.now] = seq
    lease.release()
    Run.objects.filter(pk=run.pk).update(last_seq=seq)
    run.refresh_from_db()
    return written


@pytest.fixture
def ended_run(settings):
    """A finished 3-node run that reached 600 s with a checkpoint every minute, node-2's kubelet stopped at 40 s."""
    run = reached_run(REACHED, RunStatus.FINISHED, FAULT, FAULT_AT)
    write_checkpoints(run)
    yield run
    seek.forget(run.id)


@pytest.fixture
def restores(monkeypatch) -> list[float]:
    """The virtual time of every checkpoint a look-back restored."""
    seen: list[float] = []
    real = from_checkpoints.restored

    def recording(*args, **kwargs):
        entry = real(*args, **kwargs)
        if entry is not None:
            seen.append(entry.t)
        return entry

    monkeypatch.setattr(from_checkpoints, "restored", recording)
    monkeypatch.setattr(seek, "WARM", False)
    return seen


def test_the_series_keeps_the_newest_and_thins_the_rest_evenly(settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "CHECKPOINTS_KEPT": 4}
    run = reached_run(REACHED, RunStatus.FINISHED, FAULT, FAULT_AT)
    write_checkpoints(run)
    times = [t for t, _seq in checkpoint_series.checkpoint_positions(run.id)]
    assert len(times) == 4 and times[-1] == REACHED
    gaps = [b - a for a, b in zip([0.0, *times], times, strict=False)]
    assert max(gaps) <= 4 * EVERY  # no stretch of the run left without one (600 s over 4: 150 s at best)


def test_the_series_stays_within_its_bytes(settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "CHECKPOINTS_KEPT": 1000, "CHECKPOINTS_KEPT_MB": 1}
    run = reached_run(1800.0, RunStatus.FINISHED, FAULT, FAULT_AT)
    write_checkpoints(run)
    from heartbeat_site.live.redis_client import get_redis

    sizes = [get_redis().hstrlen(checkpoint_series.checkpoints_key(run.id), f"{t!r} {seq}")
             for t, seq in checkpoint_series.checkpoint_positions(run.id)]
    assert 1 < len(sizes) < 1800 / EVERY and sum(sizes) <= 1024 * 1024
    assert checkpoint_series.checkpoint_positions(run.id)[-1][0] == 1800.0


def test_a_takeover_reads_the_latest_checkpoint_at_or_before_the_published_position(ended_run):
    checkpoint = checkpoint_series.read_checkpoint(ended_run.id, 450.0, 10**9)
    assert checkpoint.t == 420.0
    positions = dict(checkpoint_series.checkpoint_positions(ended_run.id))
    assert checkpoint_series.read_checkpoint(ended_run.id, 450.0, positions[360.0]).t == 360.0  # a lower published seq
    assert checkpoint_series.read_checkpoint(ended_run.id, 59.0) is None


def test_a_seek_far_into_the_run_continues_the_checkpoint_before_it(client, ended_run, restores):
    assert seek_to(client, ended_run, 430.0) == fresh_body(ended_run, 430.0)
    assert restores == [420.0]
    # a seek a little further continues the simulation that seek parked, cheaper than a restore
    assert seek_to(client, ended_run, 470.5) == fresh_body(ended_run, 470.5)
    assert restores == [420.0]
    # far back: the checkpoint before it, not a replay from 0
    assert seek_to(client, ended_run, 130.0) == fresh_body(ended_run, 130.0)
    assert restores == [420.0, 120.0]


def test_after_a_seek_of_a_run_with_checkpoints_no_simulation_is_built_from_0(client, ended_run):
    """The background parking of simulations from 0 (seek.py) is for runs without checkpoints: with them, it
    would only compete with the seeks for the CPU."""
    seek_to(client, ended_run, 430.0)
    seek.wait_warm(ended_run.id, timeout=60)
    assert seek.parked_times(ended_run.id) == [430.0]


def test_a_replayed_event_page_starts_from_the_checkpoint_before_it(client, ended_run, restores):
    sim = Simulation(load_scenario(ended_run.document), seed=ended_run.seed)
    sim.schedule_command(FAULT, FAULT_AT)
    every = [event.to_dict() for event in sim.run_until(REACHED)]
    after = dict(checkpoint_series.checkpoint_positions(ended_run.id))[300.0] + 7
    page = client.get(f"/api/runs/{ended_run.id}/events?after={after}&limit=40").json()
    assert page["events"] == [event for event in every if event["seq"] > after][:40]
    assert restores == [300.0]


def test_a_sequence_diagram_of_a_late_window_starts_from_the_checkpoint_before_it(ended_run, restores,
                                                                                    monkeypatch):
    commands = applied_fault_commands(ended_run)
    diagram = exports.replayed_export(ended_run, commands, REACHED, "sequence.mmd", 450.0, 500.0, "node-1")
    assert restores == [420.0]
    monkeypatch.setattr(from_checkpoints, "restored", lambda *args, **kwargs: None)  # as without checkpoints: from 0
    assert diagram == exports.replayed_export(ended_run, commands, REACHED, "sequence.mmd", 450.0, 500.0, "node-1")
    assert "node-1" in diagram and diagram.count("\n") > 5


def test_a_damaged_series_is_replaced_by_a_replay_from_0(client, ended_run, restores):
    from heartbeat_site.live.redis_client import get_redis

    key = checkpoint_series.checkpoints_key(ended_run.id)
    get_redis().hset(key, "not a position", b"x")
    assert seek_to(client, ended_run, 430.0) == fresh_body(ended_run, 430.0)
    get_redis().hdel(key, "not a position")
    get_redis().hset(key, f"{420.0!r} {dict(checkpoint_series.checkpoint_positions(ended_run.id))[420.0]}", b"damaged")
    seek.forget(ended_run.id)
    assert seek_to(client, ended_run, 430.0) == fresh_body(ended_run, 430.0)
    assert restores == []


def test_the_simulations_a_process_stops_keeping_are_freed(client, monkeypatch):
    """A simulation's objects hold reference cycles: dropped from the seek cache, they must be collected, or a
    replay process grows by every run it looked back at."""
    import gc

    monkeypatch.setattr(seek, "WARM", False)
    monkeypatch.setattr(seek, "MAX_PARKED_NODES", 6)  # two 3-node runs
    monkeypatch.setattr(rebuilding, "COLLECT_AFTER_NODES", 3)
    runs = [reached_run(120.0, RunStatus.FINISHED, FAULT, FAULT_AT) for _ in range(5)]
    gc.collect()
    before = sum(type(o) is Simulation for o in gc.get_objects())
    try:
        for run in runs:
            seek_to(client, run, 100.0)
        assert sum(type(o) is Simulation for o in gc.get_objects()) - before <= 2  # the two parked
    finally:
        for run in runs:
            seek.forget(run.id)
