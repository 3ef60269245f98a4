"""Recipe links: a session (document, seed, the trainer's fault commands with their virtual times) taken with the
control token and played again, event for event, as often as it is opened."""

from __future__ import annotations

import pytest
from django.utils import timezone

from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Run

from .conftest import bearer, post_json, small_document
from .live import Viewer, ahttp, events_hash, is_fault, running_stack

LAST_COMMAND_AT = 95.5
AFTER_LAST = 40.0


def applied(run_id: str, seq: int, payload: dict, at: float, kind: str = CommandKind.FAULT) -> None:
    """A command as the run's driver leaves it once applied: ``at`` and status persisted."""
    Command.objects.create(run_id=run_id, seq=seq, kind=kind, action=payload["action"], payload=payload, at=at,
                           status=CommandStatus.APPLIED, applied_at=timezone.now())


def reached(run_id: str, t: float) -> None:
    """The run's viewers got to virtual time ``t`` (what the driver persists as it goes)."""
    Run.objects.filter(pk=run_id).update(t_reached=t, last_seq=10**9)


def events_until(api, run_id: str, t: float) -> list[dict]:
    events: list[dict] = []
    after = 0
    while True:
        page = api.get(f"/api/runs/{run_id}/events?after={after}&limit=5000").json()
        if not page["events"]:
            return [e for e in events if e["t"] <= t]
        events += page["events"]
        after = page["next_after"]


@pytest.fixture
def session(api, new_run):
    """A run in which the trainer stopped node-2's kubelet, paused, sped up and started it again."""
    _, run_id, token = new_run()
    applied(run_id, 1, {"action": "stop-kubelet", "node": "node-2"}, 30.25)
    applied(run_id, 2, {"action": "pause"}, 31.0, kind=CommandKind.CONTROL)
    applied(run_id, 3, {"action": "speed", "value": 5}, 31.0, kind=CommandKind.CONTROL)
    applied(run_id, 4, {"action": "start-kubelet", "node": "node-2"}, LAST_COMMAND_AT)
    reached(run_id, LAST_COMMAND_AT + AFTER_LAST)
    return run_id, token


@pytest.mark.django_db
def test_a_recipe_needs_the_control_token(api, session):
    run_id, _token = session
    assert post_json(api, f"/api/runs/{run_id}/recipe", {}).status_code == 401
    assert post_json(api, f"/api/runs/{run_id}/recipe", {}, **bearer("not-the-token")).status_code == 403


@pytest.mark.django_db
def test_the_same_session_gives_the_same_link(api, session):
    run_id, token = session
    first = post_json(api, f"/api/runs/{run_id}/recipe", {}, **bearer(token))
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["url"].endswith(f"/r/{body['id']}")
    assert [(c["at"], c["command"]["action"]) for c in body["commands"]] == [
        (30.25, "stop-kubelet"), (LAST_COMMAND_AT, "start-kubelet")]
    assert post_json(api, f"/api/runs/{run_id}/recipe", {}, **bearer(token)).json()["id"] == body["id"]
    page = api.get(f"/r/{body['id']}")
    assert page.status_code == 200 and b"classroom-small" in page.content


@pytest.mark.django_db
def test_a_recipe_opened_twice_plays_the_original_session_event_for_event(api, session, dispatched):
    run_id, token = session
    recipe = post_json(api, f"/api/runs/{run_id}/recipe", {}, **bearer(token)).json()
    replays = []
    for _ in range(2):
        created = post_json(api, "/api/runs", {"recipe": recipe["id"]})
        assert created.status_code == 201, created.content
        replays.append(created.json()["id"])
        reached(replays[-1], LAST_COMMAND_AT + AFTER_LAST)
    assert dispatched[-2:] == replays
    until = LAST_COMMAND_AT + AFTER_LAST
    original = events_until(api, run_id, until)
    assert any(e["type"] == "fault" and e["action"] == "start-kubelet" for e in original)
    hashes = {events_hash(events_until(api, replay, until)) for replay in replays}
    assert hashes == {events_hash(original)}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"recipe": "nosuchrecipe"}, 404, "unknown-recipe"),
        ({"recipe": 7}, 400, "wrong-type"),
        ({"recipe": "abc", "seed": 3}, 400, "recipe-seed"),
    ],
)
def test_bad_recipe_starts_are_named(api, dispatched, body, status, code):
    response = post_json(api, "/api/runs", body)
    assert (response.status_code, response.json()["error"]) == (status, code)


@pytest.mark.live
@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_live_session_replays_from_its_recipe(django_db_setup, tmp_path):
    """With real workers: the trainer's faults, pause and speed in a live run; its recipe started twice; every
    stream equals the original up to some seconds after the last command."""
    with running_stack(tmp_path, workers=("worker-recipe",)) as stack:
        status, run = await ahttp("POST", f"{stack.base}/api/runs", {"document": small_document("recipe-live"),
                                                                     "speed": 20})
        assert status == 201, run
        commands, token = f"{stack.base}/api/runs/{run['id']}/commands", run["control_token"]
        viewer = await Viewer.open(run["ws_url"], "original", after=0)
        await viewer.until(lambda e: e["t"] >= 20)
        status, stop = await ahttp("POST", commands, {"action": "stop-kubelet", "node": "node-2"}, token=token)
        assert status == 202 and stop["status"] == "applied", stop
        for control in ({"action": "pause"}, {"action": "speed", "value": 50}, {"action": "resume"}):
            status, ack = await ahttp("POST", commands, control, token=token)
            assert status == 202 and ack["status"] == "applied", (control, ack)
        assert ack["clock"]["speed"] == 50 and not ack["clock"]["paused"], ack
        await viewer.until(lambda e: e["t"] >= stop["at"] + 60)
        status, start = await ahttp("POST", commands, {"action": "start-kubelet", "node": "node-2"}, token=token)
        assert status == 202 and start["status"] == "applied", start
        until = start["at"] + 20
        await viewer.until(lambda e: e["t"] > until, timeout=60)
        status, recipe = await ahttp("POST", f"{stack.base}/api/runs/{run['id']}/recipe", {}, token=token)
        assert status == 201, recipe
        await viewer.close()
        hashes = {events_hash([e for e in viewer.events if e["t"] <= until])}
        for name in ("first", "second"):
            status, replay = await ahttp("POST", f"{stack.base}/api/runs", {"recipe": recipe["id"], "speed": 50})
            assert status == 201, replay
            watcher = await Viewer.open(replay["ws_url"], name, after=0)
            await watcher.until(is_fault("start-kubelet", "node-2"), timeout=60)
            await watcher.until(lambda e: e["t"] > until, timeout=60)
            await watcher.close()
            hashes.add(events_hash([e for e in watcher.events if e["t"] <= until]))
        assert len(hashes) == 1


@pytest.fixture
def comparison_session(api, dispatched, monkeypatch):
    """A comparison (1.31 against 1.33) in which the trainer stopped node-2's kubelet on both sides at once."""
    monkeypatch.setattr("heartbeat_site.live.api.comparisons.start_driver", lambda run: dispatched.append(run.id))
    body = {"document": small_document(), "a": {"kubernetesVersion": "1.31"}, "b": {"kubernetesVersion": "1.33"}}
    created = post_json(api, "/api/comparisons", body)
    assert created.status_code == 201, created.content
    comparison = created.json()
    for run in comparison["runs"]:
        applied(run["id"], 1, {"action": "stop-kubelet", "node": "node-2"}, 30.25)
        reached(run["id"], LAST_COMMAND_AT + AFTER_LAST)
    return comparison


@pytest.mark.django_db
def test_a_comparisons_recipe_plays_both_sides_again(api, comparison_session, dispatched):
    comparison, token = comparison_session, comparison_session["control_token"]
    assert post_json(api, f"/api/comparisons/{comparison['id']}/recipe", {}).status_code == 401
    taken = post_json(api, f"/api/comparisons/{comparison['id']}/recipe", {}, **bearer(token))
    assert taken.status_code == 201, taken.content
    recipe = taken.json()
    assert recipe["overrides"] == {"a": {"kubernetesVersion": "1.31"}, "b": {"kubernetesVersion": "1.33"}}
    assert [(c["at"], c["command"]["action"]) for c in recipe["commands"]] == [(30.25, "stop-kubelet")]
    # a side's own control link takes the same recipe: the comparison's
    side_b = comparison["runs"][1]["id"]
    assert post_json(api, f"/api/runs/{side_b}/recipe", {}, **bearer(token)).json()["id"] == recipe["id"]
    page = api.get(f"/r/{recipe['id']}")
    assert page.status_code == 200 and b"kubernetesVersion=1.31" in page.content

    played = post_json(api, "/api/runs", {"recipe": recipe["id"]})
    assert played.status_code == 201, played.content
    again = played.json()
    assert again["comparison"] == again["id"] and again["control_url"].endswith(
        f"/compare/{again['id']}/#control={again['control_token']}")
    until = LAST_COMMAND_AT + AFTER_LAST
    for old, new in zip(comparison["runs"], again["runs"], strict=True):
        assert (new["side"], new["version"], new["seed"]) == (old["side"], old["version"], old["seed"])
        reached(new["id"], until)
        assert events_hash(events_until(api, new["id"], until)) == events_hash(events_until(api, old["id"], until))
