"""A worker killed with SIGKILL mid-run: another takes the run over, the stream goes on
without a gap or a duplicate, and is identical to an undisturbed run (compared by hash)."""

from __future__ import annotations

import asyncio
import time

import pytest

from heartbeat_site.live.runstore import ownership, run_state
from simulation import Simulation, load_scenario

from .conftest import small_document
from .live import Viewer, ahttp, events_hash, is_fault, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

LEASE_TTL = 1.5


@pytest.fixture
def stack(django_db_setup, tmp_path):
    with running_stack(tmp_path, HEARTBEAT_LEASE_TTL=str(LEASE_TTL)) as live:
        yield live


def undisturbed_events(document: dict, seed: int, commands: list[dict], duration: float) -> list[dict]:
    sim = Simulation(load_scenario(document), seed=seed)
    for command in commands:
        sim.schedule_command(command["command"], command["at"])
    return [event.to_dict() for event in sim.run_until(duration)]


async def broken_run(stack, document: dict) -> tuple[dict, str, Viewer]:
    """A run of ``document`` at 20x, watched from its start, node-2's kubelet stopped past t = 20 s."""
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"document": document, "speed": 20})
    assert status == 201, run
    commands_url = f"{stack.base}/api/runs/{run['id']}/commands"
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)
    status, first = await ahttp(
        "POST", commands_url, {"action": "stop-kubelet", "node": "node-2"}, token=run["control_token"]
    )
    assert (status, first["status"]) == (202, "applied")
    return run, commands_url, viewer


async def assert_ends_as_undisturbed(stack, run: dict, commands_url: str, viewer: Viewer, document: dict) -> None:
    """node-2's kubelet started again, the run to its end: what the viewer got is gap-free and the very stream
    of a run that nobody disturbed, with the same faults at the same times."""
    status, second = await ahttp(
        "POST", commands_url, {"action": "start-kubelet", "node": "node-2"}, token=run["control_token"]
    )
    assert (status, second["status"]) == (202, "applied"), second
    ended = await viewer.until_status(timeout=60)
    assert ended["status"] == "finished"
    status, listed = await ahttp("GET", commands_url)
    faults = [c for c in listed["commands"] if c["kind"] == "fault"]
    assert [c["action"] for c in faults] == ["stop-kubelet", "start-kubelet"]
    status, body = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}")
    reference = await asyncio.to_thread(undisturbed_events, document, run["run"]["seed"], faults, body["duration"])
    assert [e["seq"] for e in viewer.events] == list(range(1, len(viewer.events) + 1))
    assert len(viewer.events) == len(reference)
    assert events_hash(viewer.events) == events_hash(reference)
    await viewer.close()


async def test_sigkilled_worker_is_replaced_and_stream_is_identical(stack):
    await asyncio.to_thread(stack.start_worker, "doomed")
    document = {**small_document(), "duration": "6m"}
    run, commands_url, viewer = await broken_run(stack, document)
    await viewer.until(is_fault("stop-kubelet", "node-2"))

    await asyncio.to_thread(stack.start_worker, "heir")
    await viewer.until_seq(viewer.last_seq + 5)
    seq_at_kill = viewer.last_seq
    await asyncio.to_thread(stack.kill_worker, "doomed")
    # the heir goes on (how fast is a benchmark's business: the README's takeover figures)
    await viewer.until_seq(seq_at_kill + 1, timeout=4 * LEASE_TTL + 5)
    await assert_ends_as_undisturbed(stack, run, commands_url, viewer, document)


async def test_a_worker_killed_late_in_a_run_is_replaced_from_the_runs_checkpoint(django_db_setup, tmp_path):
    """Late in a run the heir continues the newest checkpoint (written by the checkpoint process beside the
    killed driver), not a replay from 0: its published state names that checkpoint, within one interval of
    where the viewers were; the stream is still gap-free and identical to an undisturbed run."""
    every = 30.0
    with running_stack(tmp_path, HEARTBEAT_LEASE_TTL=str(LEASE_TTL), HEARTBEAT_CHECKPOINT_SECONDS=str(every),
                       HEARTBEAT_CHECKPOINT_PROCESS_FROM="0") as stack:
        await asyncio.to_thread(stack.start_worker, "doomed")
        document = {**small_document(), "duration": "10m"}
        run, commands_url, viewer = await broken_run(stack, document)
        await viewer.until(lambda e: e["t"] > 400, timeout=60)

        await asyncio.to_thread(stack.start_worker, "heir")
        await viewer.until_seq(viewer.last_seq + 5)
        await asyncio.to_thread(stack.kill_worker, "doomed")
        # where the killed driver had published to (a loaded viewer may be seconds of frames behind it): the heir
        # cannot take the lease for a lease's time, so this is the killed driver's last word
        published = run_state.read_state(run["id"])
        seq_at_kill, t_at_kill = int(published["last_seq"]), float(published["t"])
        await viewer.until_seq(seq_at_kill + 1, timeout=4 * LEASE_TTL + 5)
        deadline = time.monotonic() + 4 * LEASE_TTL + 5
        while not (state := run_state.read_state(run["id"])).get("checkpoint_t") and time.monotonic() < deadline:
            await asyncio.sleep(0.1)  # the frames just after the kill may be the killed driver's last ones
        continued_t, continued_seq = float(state["checkpoint_t"]), int(state["checkpoint_seq"])
        assert t_at_kill - 3 * every < continued_t <= t_at_kill + every
        assert continued_seq <= seq_at_kill + 200
        await assert_ends_as_undisturbed(stack, run, commands_url, viewer, document)


async def test_a_worker_stopped_with_sigterm_hands_its_run_over_at_once(django_db_setup, tmp_path):
    """A worker that is told to stop (a deploy, a scale-down) releases its runs' leases as it goes:
    with leases of 30 s, the run's lease is free the moment the worker has exited, and the other
    worker goes on with the same stream."""
    with running_stack(tmp_path, HEARTBEAT_LEASE_TTL="30") as stack:
        await asyncio.to_thread(stack.start_worker, "leaving")
        document = {**small_document(), "duration": "4m"}
        status, run = await ahttp("POST", f"{stack.base}/api/runs", {"document": document, "speed": 20})
        assert status == 201, run
        viewer = await Viewer.open(run["ws_url"], "viewer")
        await viewer.until(lambda e: e["t"] > 20)
        await asyncio.to_thread(stack.start_worker, "heir")
        assert ownership.lease_holder(run["id"]) is not None
        assert await asyncio.to_thread(stack.terminate_worker, "leaving") == 0
        assert ownership.lease_holder(run["id"]) is None  # released, not left to lapse in 30 s
        ended = await viewer.until_status(timeout=90)
        assert ended["status"] == "finished"
        status, body = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}")
        reference = await asyncio.to_thread(undisturbed_events, document, run["run"]["seed"], [], body["duration"])
        assert [e["seq"] for e in viewer.events] == list(range(1, len(viewer.events) + 1))
        assert events_hash(viewer.events) == events_hash(reference)
        await viewer.close()
