""""Viewers follow me": the follow and focus commands need the control token, name what is wrong with them, are kept
in the run's command log in order, and a page that joins or reconnects gets where the trainer looks right after its
snapshot (or resume), not only from the trainer's next click (docs/websocket-protocol.md, "Follow the trainer")."""

from __future__ import annotations

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from django.utils import timezone

from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Run
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runs import commands
from heartbeat_site.live.runs.tokens import hash_token

from .conftest import bearer, post_json, small_document
from .test_consumer import FakeDriver, connect, receive


def command(api, run_id: str, body: dict, token: str | None = None):
    return post_json(api, f"/api/runs/{run_id}/commands", body, **(bearer(token) if token else {}))


@pytest.mark.django_db
@pytest.mark.parametrize("body", [{"action": "follow", "on": True}, {"action": "focus", "node": "node-2"}])
@pytest.mark.parametrize(("token", "status", "code"),
                         [(None, 401, "control-token-required"), ("not-the-token", 403, "wrong-control-token")])
def test_a_viewer_cannot_lead_the_class(api, new_run, body, token, status, code):
    _, run_id, _ = new_run()
    response = command(api, run_id, body, token)
    assert (response.status_code, response.json()["error"]) == (status, code)
    assert not Command.objects.filter(run_id=run_id).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "code", "named"),
    [
        ({"action": "focus", "node": "node-9"}, "unknown-node", "node: no node named 'node-9'"),
        ({"action": "focus", "node": 2}, "wrong-type", "node: must be a string, got a number"),
        ({"action": "focus", "node": "node-1", "tab": "settings"}, "unknown-tab", "tab: 'settings' is not one of"),
        ({"action": "focus"}, "missing-field", 'needs "node", "tab" or both'),
        ({"action": "follow"}, "missing-field", "on: is required"),
        ({"action": "follow", "on": "yes"}, "wrong-type", "on: must be true or false, got a string"),
        ({"action": "follow", "on": True, "node": "node-1"}, "unknown-field", "node"),
    ],
)
def test_a_bad_follow_or_focus_is_a_400_naming_it(api, new_run, body, code, named):
    _, run_id, token = new_run()
    response = command(api, run_id, body, token)
    assert response.status_code == 400, response.content
    assert response.json()["error"] == code and named in response.json()["message"], response.json()
    assert not Command.objects.filter(run_id=run_id).exists()


@pytest.mark.django_db
def test_a_focus_on_a_node_the_trainer_created_is_taken(api, new_run):
    _, run_id, token = new_run()
    Command.objects.create(run_id=run_id, seq=1, kind=CommandKind.FAULT, action="create-node",
                           payload={"action": "create-node", "name": "node-extra", "zone": "zone-a"},
                           status=CommandStatus.APPLIED, at=10.0, applied_at=timezone.now())
    assert command(api, run_id, {"action": "focus", "node": "node-extra"}, token).status_code == 202


@pytest.mark.django_db
def test_follow_and_focus_are_recorded_in_order_and_fold_into_where_the_trainer_looks(api, new_run):
    _, run_id, token = new_run()
    assert commands.follow_state(run_id) is None  # never used: a joining page gets nothing
    sent = [{"action": "follow", "on": True}, {"action": "focus", "node": "node-2", "tab": "kubectl"},
            {"action": "focus", "node": "node-3"}]
    for body in sent:
        response = command(api, run_id, body, token)
        assert response.status_code == 202 and response.json()["status"] == "applied", response.content
    rows = Command.objects.filter(run_id=run_id).order_by("seq")
    assert [(c.seq, c.kind, c.status, c.payload) for c in rows] == [
        (seq, CommandKind.CONTROL, CommandStatus.APPLIED, body) for seq, body in enumerate(sent, start=1)]
    assert all(c.at is not None for c in rows)
    # the latest node, the latest panel: what a page joining now shows
    assert commands.follow_state(run_id) == {"type": "follow", "on": True, "node": "node-3", "tab": "kubectl",
                                             "seq": 3}

    command(api, run_id, {"action": "follow", "on": False}, token)
    assert commands.follow_state(run_id) == {"type": "follow", "on": False, "seq": 4}
    command(api, run_id, {"action": "follow", "on": True}, token)  # on again: nothing from before the off
    assert commands.follow_state(run_id) == {"type": "follow", "on": True, "seq": 5}
    command(api, run_id, {"action": "focus", "tab": "why"}, token)
    assert commands.follow_state(run_id) == {"type": "follow", "on": True, "tab": "why", "seq": 6}


# -- the websocket: a page joining or reconnecting ------------------------------------------------------------


@pytest_asyncio.fixture
async def live_run():
    run = await database_sync_to_async(Run.objects.create)(
        scenario_name="classroom-small", document=small_document(), seed=11, version="1.33", duration=300,
        control_token_hash=hash_token("t"))
    yield run.id
    client = get_redis()
    for key in client.keys(f"hb:run:{{{run.id}}}:*"):
        client.delete(key)


@database_sync_to_async
def trainer_sent(run_id: str, *bodies: dict) -> None:
    """Follow and focus commands as ``commands.broadcast_view`` keeps them."""
    last = Command.objects.filter(run_id=run_id).count()
    for seq, body in enumerate(bodies, start=last + 1):
        Command.objects.create(run_id=run_id, seq=seq, kind=CommandKind.CONTROL, action=body["action"], payload=body,
                               status=CommandStatus.APPLIED, at=float(seq))


@pytest.fixture
def driver(live_run):
    """A stand-in driver that published a snapshot and the run's first three events."""
    driver = FakeDriver(live_run)
    driver.snapshot(0)
    driver.log(1, 3)
    return driver


async def join(run_id: str):
    """A page joining: its snapshot, then the catch-up frame, with which what a join sends of the run ends."""
    ws, connected = await connect(f"/ws/runs/{run_id}/")
    assert connected
    assert (await receive(ws))["type"] == "snapshot"
    assert (await receive(ws, "frame"))["seq"] == [1, 3]
    return ws


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_page_that_joins_gets_the_trainers_focus_after_its_snapshot(live_run, driver):
    await trainer_sent(live_run, {"action": "follow", "on": True}, {"action": "focus", "node": "node-2"},
                       {"action": "focus", "node": "node-3", "tab": "kubectl"})
    ws = await join(live_run)
    assert await receive(ws) == {"type": "follow", "on": True, "node": "node-3", "tab": "kubectl", "seq": 3}
    await ws.disconnect()

    # the trainer turned it off while this page was away: its resume says so
    await trainer_sent(live_run, {"action": "follow", "on": False})
    ws, _ = await connect(f"/ws/runs/{live_run}/?after=3")
    assert (await receive(ws))["type"] == "resumed"
    assert await receive(ws) == {"type": "follow", "on": False, "seq": 4}
    await ws.disconnect()


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_run_whose_trainer_never_led_sends_no_follow(live_run, driver):
    ws = await join(live_run)
    driver.log(4, 4)
    await driver.frame(4, 4)
    assert (await receive(ws))["seq"] == [4, 4]  # the next live frame, no follow before it
    await ws.disconnect()
