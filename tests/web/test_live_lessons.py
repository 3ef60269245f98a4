"""A lesson and a drill in a live class: a trainer, three viewers, real Daphne, Redis and workers.

Questions reach every page, answers are tallied, the reveal reaches everyone and closes the
question, a viewer cannot reveal, and all of it survives a worker killed mid-question. A drill
names its fault to nobody before the reveal: not in a message, not in a REST read.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from simulation.lessons import get_drill

from .live import Viewer, ahttp, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

LESSON = "kubelet-crash-walkthrough"  # first question at once: seconds to NotReady (50 +- 5)


@pytest.fixture
def stack(django_db_setup, tmp_path):
    with running_stack(tmp_path, ("first",), HEARTBEAT_LEASE_TTL="1.5") as live:
        yield live


async def join(run: dict, names: tuple[str, ...]) -> list[Viewer]:
    return [await Viewer.open(run["ws_url"], name) for name in names]


async def asked(viewer: Viewer, seen: list[str] | None = None) -> dict:
    """The open question a page knows of on joining: in the lesson state, or asked just after.
    ``seen`` collects the messages read on the way."""
    state = await viewer.next_of_type("lesson")
    if seen is not None:
        seen.append(json.dumps(state))
    if "question" not in state:
        state = await viewer.next_of_type("question")
        if seen is not None:
            seen.append(json.dumps(state))
    return state["question"]


async def answer(viewer: Viewer, question: str, **fields) -> dict:
    await viewer.ws.send(json.dumps({"type": "answer", "question": question, "viewer": f"id-{viewer.name}", **fields}))
    while True:
        reply = await viewer.next_of_type_in(("answer-ack", "error"))
        if reply.get("question", question) == question:
            return reply


async def tallied(viewer: Viewer, question: str, answers: int) -> dict:
    while True:
        tally = await viewer.next_of_type("tally", timeout=20)
        if tally["question"] == question and tally["answers"] == answers:
            return tally


async def command(stack, run: dict, body: dict, token: str | None = None) -> tuple[int, dict]:
    return await ahttp("POST", f"{stack.base}/api/runs/{run['id']}/commands", body, token=token)


async def test_a_class_answers_a_lesson_question_and_the_trainer_reveals_it(stack):
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"lesson": LESSON, "speed": 20})
    assert status == 201, run
    viewers = await join(run, ("ana", "bo", "chen"))
    for viewer in viewers:
        question = await asked(viewer)
        assert question["id"] == "notready-when" and question["kind"] == "number"
        assert "answer" not in json.dumps(question) and "measure" not in json.dumps(question)
    for viewer, value in zip(viewers, (50, 45, 90), strict=True):
        ack = await answer(viewer, "notready-when", value=value)
        assert ack == {"type": "answer-ack", "question": "notready-when", "value": float(value)}
    tally = await tallied(viewers[0], "notready-when", 3)
    assert sum(tally["counts"].values()) == 3

    # a viewer's link cannot reveal; the trainer's token can
    assert (await command(stack, run, {"action": "reveal"}))[0] == 403
    status, body = await command(stack, run, {"action": "reveal"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    for viewer in viewers:
        reveal = await viewer.next_of_type("reveal")
        assert (reveal["question"], reveal["correct"]) == ("notready-when", 50)
    late = await answer(viewers[1], "notready-when", value=50)
    assert late["type"] == "error" and late["error"] == "question-closed"

    # the next question comes when its step does (the crash at t=60 s), to every page
    for viewer in viewers:
        question = await viewer.next_of_type("question", timeout=30)
        assert question["question"]["id"] == "endpoints"
        assert {c["id"] for c in question["question"]["choices"]} == {"removed", "not-ready", "until-deleted"}


async def test_a_question_survives_a_worker_killed_mid_question(stack):
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"lesson": LESSON, "speed": 20})
    assert status == 201, run
    viewers = await join(run, ("ana", "bo", "chen"))
    for viewer in viewers:
        assert (await asked(viewer))["id"] == "notready-when"
    await answer(viewers[0], "notready-when", value=50)
    await tallied(viewers[1], "notready-when", 1)

    await asyncio.to_thread(stack.start_worker, "heir")
    await asyncio.to_thread(stack.kill_worker, "first")
    for viewer, value in zip(viewers[1:], (48, 52), strict=True):
        assert (await answer(viewer, "notready-when", value=value))["type"] == "answer-ack"
    await tallied(viewers[2], "notready-when", 3)  # tallied by the heir
    status, body = await command(stack, run, {"action": "reveal"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    reveal = await viewers[0].next_of_type("reveal")
    assert reveal["correct"] == 50
    # a page reloaded now learns the lesson's state from the database
    reloaded = await Viewer.open(run["ws_url"], "reloaded")
    state = await reloaded.next_of_type("lesson")
    assert state["revealed"][0]["question"] == "notready-when" and state["revealed"][0]["correct"] == 50


async def test_a_drill_names_its_fault_to_nobody_before_the_reveal(stack):
    drill = get_drill("silent-node")
    action = drill.fault["action"]  # stop-kubelet
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"drill": drill.name, "speed": 20})
    assert status == 201, run
    assert action not in json.dumps(run)
    viewer = await Viewer.open(run["ws_url"], "diagnoser")
    seen = [json.dumps(viewer.first_message)]
    question = await asked(viewer, seen)
    assert question["kind"] == "diagnosis"
    # until well after the fault (45 s) and its symptoms (Unknown at ~95 s)
    await viewer.until(lambda e: e["type"] == "transition" and e.get("kind") == "node-ready"
                       and e.get("to") == "Unknown", timeout=30)
    seen.extend(json.dumps(e) for e in viewer.events)
    assert any(e["type"] == "hidden" for e in viewer.events), "the fault's event has its place in the stream"
    for path in (f"/runs/{run['id']}", f"/runs/{run['id']}/events?limit=5000", f"/runs/{run['id']}/audit?limit=5000",
                 f"/runs/{run['id']}/commands", "/drills"):
        status, body = await ahttp("GET", f"{stack.base}/api{path}")
        assert status == 200, (path, body)
        seen.append(json.dumps(body))
    late = await Viewer.open(run["ws_url"], "late")
    seen.append(json.dumps(late.first_message))
    leaks = [text for text in seen if action in text]
    assert not leaks, f"the fault is named before the reveal: {leaks[0][:300]}"

    right = next(c["id"] for c, own in zip(question["choices"], drill.document["choices"], strict=True)
                 if own["id"] == action)
    ack = await answer(viewer, "diagnosis", choice=right, node=drill.fault["node"])
    assert ack["type"] == "answer-ack"
    status, body = await command(stack, run, {"action": "reveal"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    reveal = await viewer.next_of_type("reveal")
    assert (reveal["correct"], reveal["cause"], reveal["node"]) == (right, action, drill.fault["node"])
    assert reveal["evidence"]["event"]["action"] == action
    status, body = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}/events?limit=5000")
    assert any(e["type"] == "fault" and e["action"] == action for e in body["events"]), (
        "after the reveal the record is whole")


async def test_a_drill_still_being_answered_waits_at_its_end_for_the_reveal(stack):
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"drill": "silent-node", "speed": 100})
    assert status == 201, run
    viewer = await Viewer.open(run["ws_url"], "slow class")
    question = await asked(viewer)
    # 12 virtual minutes at 100x: the scenario's end comes in seconds; the run holds there
    while True:
        clock = (await viewer.next_of_type("clock", timeout=30))["clock"]
        if clock["paused"] and clock["t"] >= 700:
            break
    assert viewer.status is None, "the run ended with its diagnosis still open"
    ack = await answer(viewer, "diagnosis", choice=question["choices"][0]["id"], node=question["nodes"][0])
    assert ack["type"] == "answer-ack"
    status, body = await command(stack, run, {"action": "reveal"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    final = await viewer.next_of_type("tally")
    assert final["answers"] == 1  # the reveal comes with the last tally
    await viewer.next_of_type("reveal")
    ended = await viewer.until_status(timeout=30)
    assert ended["status"] == "finished"
