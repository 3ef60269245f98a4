"""GET /api/runs/<id>/snapshot?t=: a run's snapshot at any reached time equals a fresh simulation's at that
time, whether the seek goes forwards (a parked simulation continues) or backwards (a replay from the start)."""

from __future__ import annotations

import orjson
import pytest

from heartbeat_site.live.delivery import detail, frames
from heartbeat_site.live.lookback import seek
from heartbeat_site.live.models import Command, CommandStatus, Run, RunStatus
from simulation import Simulation, load_scenario
from tests.web.conftest import reached_run

# the seek cache is inspected here, in this process (tests/web/test_replay_process.py: the replay process)
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("replays_here")]

FAULT = {"action": "stop-kubelet", "node": "node-2"}
FAULT_AT = 40.0


@pytest.fixture
def ended_run():
    """A finished 3-node run that reached 200 s, its kubelet on node-2 stopped at 40 s."""
    run = reached_run(200.0, RunStatus.FINISHED, FAULT, FAULT_AT)
    yield run
    seek.forget(run.id)


def fresh_body(run: Run, t: float, *, node_level: bool = False) -> dict:
    sim = Simulation(load_scenario(run.document), seed=run.seed)
    sim.schedule_command(FAULT, FAULT_AT)
    sim.run_until(t)
    snapshot = detail.node_snapshot(sim) if node_level else sim.snapshot()
    return orjson.loads(frames.dumps(frames.snapshot_body(snapshot, {"t": t, "speed": run.speed, "paused": True},
                                                          snapshot["last_seq"])))


def seek_to(client, run: Run, t: float) -> dict:
    response = client.get(f"/api/runs/{run.id}/snapshot?t={t}")
    assert response.status_code == 200, response.content
    return response.json()


def test_seeking_forwards_and_backwards_gives_the_snapshot_of_a_fresh_run(client, ended_run, monkeypatch):
    """Forwards (30 -> 95.5 -> 200), behind (60.25), forwards again (120): each the fresh run's snapshot. (That a
    seek forwards continues a parked simulation instead of replaying from 0 is its speed: bench/seek_bench.py.)"""
    monkeypatch.setattr(seek, "WARM", False)
    for t in (30.0, 95.5, 200.0, 60.25, 120.0):
        assert seek_to(client, ended_run, t) == fresh_body(ended_run, t), f"snapshot at t={t}"


def test_after_a_seek_checkpoints_make_any_later_seek_a_short_replay(client, ended_run,
                                                                                       monkeypatch):
    seek_to(client, ended_run, 0.0)  # opening a replay: the checkpoints are built meanwhile
    seek.wait_warm(ended_run.id, timeout=60)
    assert seek.parked_times(ended_run.id) == [0.0, 50.0, 100.0, 150.0, 200.0]
    replayed: list[float] = []  # virtual seconds each seek had to simulate
    real_take = seek._take

    def take(run_id: str, t: float):
        entry = real_take(run_id, t)
        replayed.append(t - (entry.sim.now if entry else 0.0))
        return entry

    monkeypatch.setattr(seek, "_take", take)
    for t in (200.0, 75.5, 160.0, 10.0, 120.0):
        assert seek_to(client, ended_run, t) == fresh_body(ended_run, t), f"snapshot at t={t}"
    assert max(replayed) <= 50.0, replayed  # a quarter of the run at most, forwards or backwards


def test_the_snapshot_shows_the_taint_after_the_grace_period_not_before(client, ended_run):
    def taints(t: float) -> list[str]:
        nodes = seek_to(client, ended_run, t)["snapshot"]["objects"]["nodes"]
        node = next(n for n in nodes if n["metadata"]["name"] == "node-2")
        return [taint["key"] for taint in node["spec"].get("taints") or ()]

    assert taints(90.0) == []
    assert "node.kubernetes.io/unreachable" in taints(150.0)
    assert "node.kubernetes.io/unreachable" not in taints(60.0)


def test_a_large_run_seeks_at_node_level(client, ended_run, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "NODE_LEVEL_NODES": 2}
    body = seek_to(client, ended_run, 120.0)
    assert body["snapshot"]["detail"] == "nodes" and not body["snapshot"]["objects"].get("pods")
    assert body == fresh_body(ended_run, 120.0, node_level=True)


def test_without_t_the_snapshot_is_at_the_reached_time(client, ended_run):
    body = client.get(f"/api/runs/{ended_run.id}/snapshot").json()
    assert body["clock"]["t"] == 200.0 and body["snapshot"]["t"] == 200.0


@pytest.mark.parametrize(("raw", "named"), [("200.5", "reached only t=200"), ("-1", ">= 0"), ("nan", ">= 0"),
                                            ("soon", "number of virtual seconds")])
def test_a_time_outside_the_run_is_refused_naming_the_problem(client, ended_run, raw, named):
    response = client.get(f"/api/runs/{ended_run.id}/snapshot?t={raw}")
    assert response.status_code == 400
    assert named in response.json()["message"]


def test_an_unknown_run_is_404(client):
    assert client.get("/api/runs/nope/snapshot?t=1").status_code == 404


def test_a_command_applied_after_a_seek_is_in_the_next_one(client, ended_run):
    """A live run: the trainer's fault lands after a viewer looked back; the parked simulation takes it."""
    Command.objects.filter(run=ended_run).update(status=CommandStatus.PENDING)
    seek_to(client, ended_run, 30.0)
    Command.objects.filter(run=ended_run).update(status=CommandStatus.APPLIED)
    assert seek_to(client, ended_run, 150.0) == fresh_body(ended_run, 150.0)
