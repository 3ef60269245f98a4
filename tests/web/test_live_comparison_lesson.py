"""A comparison lesson in a live class (docs/lessons.md "Comparison lessons"): ``POST /api/runs`` with the versions
lesson starts a comparison, 1.31 on side a and 1.33 on side b on one clock; the class answers on side a's run, and
each reveal shows the event that settled its question, from the side it happened on. A worker killed mid-lesson
hands the lesson over with both sides."""

from __future__ import annotations

import asyncio

import pytest

from .live import Viewer, ahttp, running_stack
from .test_live_lessons import answer, asked, tallied

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def stack(django_db_setup, tmp_path):
    with running_stack(tmp_path, HEARTBEAT_LEASE_TTL="1.5") as live:
        yield live


async def start(stack) -> tuple[dict, Viewer, Viewer]:
    status, body = await ahttp("POST", f"{stack.base}/api/runs", {"lesson": "versions", "speed": 40})
    assert status == 201, body
    assert body["lesson"] == "versions" and body["comparison"] == body["id"]
    assert body["control_url"].endswith(f"/compare/{body['id']}/#control={body['control_token']}")
    a, b = body["runs"]
    assert (a["side"], a["lesson"], a["version"]) == ("a", "versions", "1.31")
    assert (b["side"], b["lesson"], b["version"]) == ("b", None, "1.33")
    assert a["seed"] == b["seed"] and body["ws_url"] == a["ws_url"]  # the lesson's messages come on side a's
    return body, await Viewer.open(a["ws_url"], "ana"), await Viewer.open(b["ws_url"], "side b")


async def reveal(stack, comparison: dict, viewer: Viewer, question: str) -> dict:
    status, body = await ahttp("POST", f"{stack.base}/api/comparisons/{comparison['id']}/commands",
                               {"action": "reveal"}, token=comparison["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    while True:
        message = await viewer.next_of_type("reveal", timeout=30)
        if message["question"] == question:
            return message


async def next_question(viewer: Viewer, qid: str) -> dict:
    while True:
        message = await viewer.next_of_type("question", timeout=60)
        if message["question"]["id"] == qid:
            return message["question"]


async def test_a_class_answers_the_versions_lesson_on_both_sides(stack):
    await asyncio.to_thread(stack.start_worker, "worker")
    comparison, ana, side_b = await start(stack)
    question = await asked(ana)
    assert question["id"] == "notready-131" and "answer" not in question
    assert (await answer(ana, "notready-131", value=40))["value"] == 40.0
    await tallied(ana, "notready-131", 1)
    first = await reveal(stack, comparison, ana, "notready-131")
    assert first["correct"] == 40
    # asked before the crash: the page waits for the evidence, on side a
    assert first["evidence"]["event"] is None and first["evidence"]["match"]["side"] == "a"

    # the next question comes when side a turns node-2 NotReady; its answer is measured across the sides
    assert (await next_question(ana, "notready-gap"))["unit"] == "s"
    await answer(ana, "notready-gap", value=10)
    await tallied(ana, "notready-gap", 1)
    gap = await reveal(stack, comparison, ana, "notready-gap")
    # asked at side a's NotReady: the evidence is side b's, still to come, which the pages watch for
    assert gap["correct"] == 10 and gap["evidence"]["event"] is None
    assert gap["evidence"]["match"] == {"side": "b", "type": "transition", "node": "node-2", "kind": "node-ready",
                                        "to": "Unknown"}
    assert gap["explain"]["en"].startswith("The two grace periods")
    unknown = await side_b.until(lambda e: e.get("kind") == "node-ready" and e.get("node") == "node-2"
                                 and e.get("to") == "Unknown")
    assert unknown["t"] == pytest.approx(110.2, abs=0.1)

    status, report = await ahttp("GET", f"{stack.base}/api/runs/{comparison['runs'][0]['id']}/report",
                                 token=comparison["control_token"])
    assert status == 200, report
    assert [q["id"] for q in report["questions"]][:2] == ["notready-131", "notready-gap"]
    for viewer in (ana, side_b):
        await viewer.close()


async def test_a_killed_worker_hands_the_comparison_lesson_over(stack):
    await asyncio.to_thread(stack.start_worker, "doomed")
    comparison, ana, side_b = await start(stack)
    assert (await asked(ana))["id"] == "notready-131"
    await reveal(stack, comparison, ana, "notready-131")
    # "Next step": both sides run fast to side a's NotReady, where the next step asks its question
    status, body = await ahttp("POST", f"{stack.base}/api/comparisons/{comparison['id']}/commands",
                               {"action": "next"}, token=comparison["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    assert (await ana.next_of_type("fast-forward"))["step"] == 1
    await next_question(ana, "notready-gap")
    status, state = await ahttp("GET", f"{stack.base}/api/comparisons/{comparison['id']}")
    clocks = [run["clock"] for run in state["runs"]]
    assert clocks[0]["paused"] and clocks[0]["t"] == clocks[1]["t"] and 100 < clocks[0]["t"] < 103
    await answer(ana, "notready-gap", value=9)

    await asyncio.to_thread(stack.start_worker, "heir")
    await asyncio.to_thread(stack.kill_worker, "doomed")
    heir = await Viewer.open(comparison["runs"][0]["ws_url"], "bo")
    state = await heir.next_of_type("lesson")
    assert state["question"]["id"] == "notready-gap"
    assert state["revealed"][0]["question"] == "notready-131"
    await answer(heir, "notready-gap", value=10)
    await tallied(heir, "notready-gap", 2)  # tallied by the heir
    gap = await reveal(stack, comparison, heir, "notready-gap")
    assert gap["correct"] == 10 and gap["evidence"]["match"]["side"] == "b"
    # the lesson goes on with the heir: the next step's question
    assert (await next_question(heir, "who-deletes"))["kind"] == "choice"
    for viewer in (ana, side_b, heir):
        await viewer.close()
