"""End to end with real processes: Daphne, a Celery worker, Redis; two viewers and a trainer."""

from __future__ import annotations

import pytest

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore import naming

from .conftest import small_document
from .live import (
    Viewer,
    ahttp,
    is_fault,
    is_lease_write_by,
    is_ready_change,
    is_taint_added,
    running_stack,
)

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

UNREACHABLE = "node.kubernetes.io/unreachable"


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("live"), workers=("w1",)) as live:
        yield live


async def create_run(stack, speed: float = 20, duration: str = "10m") -> dict:
    document = {**small_document(), "duration": duration}
    status, body = await ahttp("POST", f"{stack.base}/api/runs", {"document": document, "speed": speed})
    assert status == 201, body
    return body


async def test_two_viewers_see_stop_kubelet_consequences_in_order(stack):
    run = await create_run(stack)
    a = await Viewer.open(run["ws_url"], "a")
    b = await Viewer.open(run["ws_url"], "b")
    assert a.first_message["type"] == b.first_message["type"] == "snapshot"
    assert set(a.first_message["snapshot"]["objects"]) >= {"nodes", "leases", "pods"}
    await a.until(lambda e: e["t"] > 15)
    created = {
        e["name"] for e in a.events if e["type"] == "write" and e["resource"] == "nodes" and e["verb"] == "create"
    }
    assert created == {"node-1", "node-2", "node-3"}

    status, refused = await ahttp(
        "POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "stop-kubelet", "node": "node-2"}
    )
    assert (status, refused["error"]) == (401, "control-token-required")
    status, accepted = await ahttp(
        "POST",
        f"{stack.base}/api/runs/{run['id']}/commands",
        {"action": "stop-kubelet", "node": "node-2"},
        token=run["control_token"],
    )
    assert status == 202, accepted
    assert (accepted["seq"], accepted["status"]) == (1, "applied")
    assert accepted["at"] > 15

    for viewer in (a, b):
        fault = await viewer.until(is_fault("stop-kubelet", "node-2"))
        unknown = await viewer.until(is_ready_change("node-2", "Unknown"))
        taint = await viewer.until(is_taint_added("node-2", UNREACHABLE))
        assert fault["seq"] < unknown["seq"] < taint["seq"]
        assert fault["t"] == pytest.approx(accepted["at"], abs=1e-6)
        lease_writes = [e for e in viewer.events if is_lease_write_by("node-2")(e)]
        assert lease_writes, "node-2 renewed its lease before the fault"
        assert all(e["seq"] < fault["seq"] for e in lease_writes), "Lease renewals continued after stop-kubelet"
        silence = unknown["t"] - lease_writes[-1]["t"]
        assert silence >= 40, f"Unknown after only {silence} s of Lease silence"

    assert a.viewers == b.viewers == 2  # announced by the driver within a second
    # Daphne serves both from one subscription to the run's feed
    channel = naming.feed_channel(run["id"])
    assert get_redis().pubsub_numsub(channel) == [(channel, 1)]

    common = min(a.last_seq, b.last_seq)
    assert a.events[:common] == b.events[:common]
    assert [e["seq"] for e in a.events[:common]] == list(range(1, common + 1))
    await a.close()
    await b.close()


async def test_reconnect_with_after_gets_exactly_what_was_missed(stack):
    run = await create_run(stack, speed=30)
    steady = await Viewer.open(run["ws_url"], "steady")
    flaky = await Viewer.open(run["ws_url"], "flaky")
    await flaky.until_seq(10)
    left_at = flaky.last_seq
    await flaky.close()
    await steady.until_seq(left_at + 30)

    back = await Viewer.open(run["ws_url"], "back", after=left_at)
    assert back.first_message["type"] == "resumed"
    assert back.first_message["after"] == left_at
    await back.until_seq(steady.last_seq)
    assert back.events[0]["seq"] == left_at + 1
    await steady.until_seq(back.last_seq)
    # flaky may have joined after steady's first events (its snapshot then already holds them)
    by_seq = {event["seq"]: event for event in steady.events}
    joined = flaky.first_message["last_seq"]
    assert back.events == [by_seq[seq] for seq in range(left_at + 1, back.last_seq + 1)]
    assert flaky.events + back.events == [by_seq[seq] for seq in range(joined + 1, back.last_seq + 1)]
    await back.close()
    await steady.close()


async def test_pause_resume_speed_and_step(stack):
    run = await create_run(stack, speed=5)
    url = f"{stack.base}/api/runs/{run['id']}/commands"
    token = run["control_token"]
    viewer = await Viewer.open(run["ws_url"], "v")
    await viewer.until(lambda e: e["t"] > 2)
    status, paused = await ahttp("POST", url, {"action": "pause"}, token=token)
    assert status == 202 and paused["clock"]["paused"] is True
    status, run_now = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}")
    t_paused = run_now["clock"]["t"]
    status, stepped = await ahttp("POST", url, {"action": "step"}, token=token)
    assert status == 202
    assert stepped["clock"]["t"] > t_paused and stepped["clock"]["paused"] is True
    status, sped = await ahttp("POST", url, {"action": "speed", "value": 50}, token=token)
    assert sped["clock"]["speed"] == 50
    status, resumed = await ahttp("POST", url, {"action": "resume"}, token=token)
    assert resumed["clock"]["paused"] is False
    await viewer.until(lambda e: e["t"] > stepped["clock"]["t"] + 30, timeout=10)
    status, listed = await ahttp("GET", url)
    assert [c["action"] for c in listed["commands"]] == ["pause", "step", "speed", "resume"]
    assert all(c["status"] == "applied" and c["at"] is not None for c in listed["commands"])
    await viewer.close()


async def test_events_and_audit_paging_match_the_stream(stack):
    run = await create_run(stack, speed=50, duration="2m")
    viewer = await Viewer.open(run["ws_url"], "v")
    ended = await viewer.until_status()
    assert ended["status"] == "finished"
    collected, after = [], 0
    while True:
        status, page = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}/events?after={after}&limit=97")
        assert status == 200
        collected.extend(page["events"])
        if not page["has_more"]:
            break
        after = page["next_after"]
    assert collected == viewer.events
    status, audit = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}/audit?limit=5")
    assert status == 200 and len(audit["records"]) == 5
    writes = [e for e in viewer.events if e["type"] == "write"][:5]
    assert [r["seq"] for r in audit["records"]] == [e["seq"] for e in writes]
    assert all(
        r["record"]["kind"] == "Event" and r["record"]["apiVersion"] == "audit.k8s.io/v1" for r in audit["records"]
    )
    status, body = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}")
    assert body["status"] == "finished" and body["last_seq"] == viewer.last_seq
    await viewer.close()
