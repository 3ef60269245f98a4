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
    assert (await command(stack, run, {"action": "reveal"}))[0] == 401
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
    assert state["revealed"][0]["tolerance"] == 5  # what tells the page whether its own 48 was right
    # ...and what it looks for to show the event that settled it, as a page that saw the reveal does
    evidence = state["revealed"][0]["evidence"]
    assert evidence["match"]["to"] == "Unknown" and evidence["after"] == pytest.approx(0, abs=1)


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


async def at_the_chain_question(stack) -> tuple[dict, list, dict]:
    """Lesson 14 with three viewers, its first question revealed: the run, the viewers and the `chain` question."""
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"lesson": "cause-and-effect", "speed": 100})
    assert status == 201, run
    viewers = await join(run, ("ana", "bo", "chen"))
    assert (await asked(viewers[0]))["id"] == "who-writes"
    await command(stack, run, {"action": "reveal"}, run["control_token"])
    while True:
        message = await viewers[0].next_of_type("question", timeout=30)
        if message["question"]["id"] == "chain":
            return run, viewers, message["question"]


async def test_a_class_puts_events_in_order_and_the_reveal_gives_the_runs_order(stack):
    """Lesson 14's recap: the chain after node-2's kubelet stops, answered three ways."""
    run, viewers, question = await at_the_chain_question(stack)
    right = ["unknown", "endpoints", "noexecute", "deleted"]
    shown = [item["id"] for item in question["items"]]
    assert question["kind"] == "order" and sorted(shown) == sorted(right) and shown != right
    assert "match" not in json.dumps(question) and "answer" not in question

    for bad in (right[:3], [*right[:3], "unknown"], [*right[:3], "elsewhere"], "unknown", None):
        refused = await answer(viewers[0], "chain", order=bad)
        assert (refused["type"], refused["error"]) == ("error", "bad-answer"), refused
        assert "every item id once" in refused["message"] and "unknown, endpoints" in refused["message"]
    swapped = [right[1], right[0], *right[2:]]
    for viewer, order in zip(viewers, (right, swapped, right[::-1]), strict=True):
        ack = await answer(viewer, "chain", order=order)
        assert ack == {"type": "answer-ack", "question": "chain", "order": order}
    tally = await tallied(viewers[0], "chain", 3)
    assert tally["counts"] == {">".join(right): 1, ">".join(swapped): 1, ">".join(right[::-1]): 1}
    assert tally["positions"]["unknown"] == [1, 1, 0, 1]  # first, second, last
    assert tally["positions"]["deleted"] == [1, 0, 0, 2]

    status, body = await command(stack, run, {"action": "reveal"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    for viewer in viewers:
        reveal = await viewer.next_of_type("reveal")
        if reveal["question"] != "chain":
            reveal = await viewer.next_of_type("reveal")
        assert reveal["kind"] == "order" and reveal["correct"] == right
        times = [item["event"]["t"] for item in reveal["items"]]
        assert [item["id"] for item in reveal["items"]] == right and times == sorted(times)
        assert times[0] == pytest.approx(110.22) and times[-1] == pytest.approx(415.305)
        assert (reveal["answers"], reveal["right"], reveal["share"]) == (3, 1, pytest.approx(1 / 3, abs=1e-3))
        assert reveal["in_place"] == {"unknown": 1, "endpoints": 1, "noexecute": 2, "deleted": 2}
        assert reveal["evidence"]["event"]["seq"] == reveal["items"][-1]["event"]["seq"]
    reloaded = await Viewer.open(run["ws_url"], "reloaded")
    state = await reloaded.next_of_type("lesson")
    summary = next(r for r in state["revealed"] if r["question"] == "chain")
    assert summary["correct"] == right and summary["right"] == 1 and summary["items"][0]["event"]["t"] > 110

    # a prediction: asked when the kubelet starts again, revealed before its events happen
    question = await viewers[0].next_of_type("question", timeout=30)
    assert question["question"]["id"] == "comeback"
    await command(stack, run, {"action": "reveal"}, run["control_token"])
    reveal = await viewers[0].next_of_type("reveal")
    assert reveal["correct"] == ["ready", "noschedule-gone", "pods-gone"]  # the lesson's, checked against runs
    assert [item["event"] for item in reveal["items"]] == [None, None, None]
    assert reveal["items"][2]["match"]["kind"] == "pod-deleted"  # what the pages wait for
    assert (reveal["answers"], reveal["right"], reveal["share"]) == (0, 0, None)
    # once its events have happened they are stored: a page that joins later gets their times
    gone = await viewers[0].until(lambda e: e["type"] == "transition" and e.get("kind") == "pod-deleted"
                                  and e.get("node") == "node-2", timeout=30)
    late = await Viewer.open(run["ws_url"], "late")
    summary = next(r for r in (await late.next_of_type("lesson"))["revealed"] if r["question"] == "comeback")
    assert [item["id"] for item in summary["items"]] == ["ready", "noschedule-gone", "pods-gone"]
    assert summary["items"][-1]["event"] == {"seq": gone["seq"], "t": gone["t"]}
    assert summary["items"][0]["event"]["t"] < summary["items"][1]["event"]["t"] < gone["t"]


async def test_an_order_question_survives_a_worker_killed_before_its_reveal(stack):
    """The heir rebuilds the lesson's runner from the replayed events: its reveal still has the run's order."""
    run, viewers, _ = await at_the_chain_question(stack)
    right = ["unknown", "endpoints", "noexecute", "deleted"]
    await answer(viewers[0], "chain", order=right)
    await tallied(viewers[1], "chain", 1)

    await asyncio.to_thread(stack.start_worker, "heir")
    await asyncio.to_thread(stack.kill_worker, "first")
    for viewer in viewers[1:]:
        assert (await answer(viewer, "chain", order=right[::-1]))["type"] == "answer-ack"
    await tallied(viewers[2], "chain", 3)  # tallied by the heir
    status, body = await command(stack, run, {"action": "reveal"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    while (reveal := await viewers[0].next_of_type("reveal"))["question"] != "chain":
        pass
    assert reveal["correct"] == right and all(item["event"] for item in reveal["items"])
    assert reveal["items"][0]["event"]["t"] == pytest.approx(110.22)
    assert (reveal["right"], reveal["answers"]) == (1, 3)
