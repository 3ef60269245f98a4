"""Lesson 21 in a live class (real Daphne, Redis and a worker): the trainer's "Next step" takes the run
from step to step, each step starts at its moment, each reveal gives the lesson's answer, and the lesson's
own out-of-service taint on node-2 is a command of the run at t=890 s that gets db-1 running again.
"""

from __future__ import annotations

import pytest

from heartbeat_site.live.classroom.teaching import EVENT_SLICE

from .live import Viewer, ahttp, running_stack
from .test_live_lessons import answer, command

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

LESSON = "statefulset-on-a-dead-node"


@pytest.fixture
def stack(django_db_setup, tmp_path):
    with running_stack(tmp_path, ("first",)) as live:
        yield live


async def next_step(stack, run: dict, viewer: Viewer, step_id: str) -> dict:
    """The trainer's Next step: the run goes to the step's moment and every page is told it started."""
    status, body = await command(stack, run, {"action": "next"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    step = await viewer.next_of_type("step", timeout=60)
    assert step["step"]["id"] == step_id, step
    return step


async def revealed(stack, run: dict, viewer: Viewer, question: str) -> dict:
    """Next with a question open reveals it."""
    status, body = await command(stack, run, {"action": "next"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    reveal = await viewer.next_of_type("reveal", timeout=30)
    assert reveal["question"] == question, reveal
    return reveal


async def test_the_statefulset_lesson_runs_live_to_the_taint_and_db1s_return(stack):
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"lesson": LESSON, "speed": 10})
    assert status == 201, run
    viewer = await Viewer.open(run["ws_url"], "class")
    await viewer.next_of_type("lesson")
    assert (await viewer.next_of_type("step"))["step"]["id"] == "setup"

    step = await next_step(stack, run, viewer, "power-off")
    assert step["t"] == 60.0
    question = (await viewer.next_of_type("question"))["question"]
    assert question["id"] == "chain" and question["kind"] == "order"
    reveal = await revealed(stack, run, viewer, "chain")
    assert reveal["correct"] == ["unknown", "noexecute", "db-terminating", "web-running"]

    step = await next_step(stack, run, viewer, "eviction-due")
    assert step["t"] == 400.0
    question = (await viewer.next_of_type("question"))["question"]
    assert question["id"] == "statefulset-decides"
    assert (await answer(viewer, "statefulset-decides", choice="wait"))["type"] == "answer-ack"
    assert (await revealed(stack, run, viewer, "statefulset-decides"))["correct"] == "wait"

    step = await next_step(stack, run, viewer, "stuck")  # started by the StatefulSet controller's wait
    waited = await viewer.until(lambda e: e["type"] == "decision" and e.get("rule") == "statefulset.wait-same-name")
    assert waited["pod"] == "db-1" and waited["t"] <= step["t"] <= waited["t"] + EVENT_SLICE

    step = await next_step(stack, run, viewer, "taint")
    assert step["t"] == 890.0
    question = (await viewer.next_of_type("question"))["question"]
    assert question["id"] == "back-after-taint" and question["kind"] == "number"
    assert (await answer(viewer, "back-after-taint", value=16))["type"] == "answer-ack"
    assert (await revealed(stack, run, viewer, "back-after-taint"))["correct"] == 18
    status, listed = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}/commands")
    taints = [c for c in listed["commands"] if c["action"] == "taint-out-of-service"]
    assert len(taints) == 1 and taints[0]["at"] == 890.0 and taints[0]["status"] == "applied", listed
    assert taints[0]["command"] == {"action": "taint-out-of-service", "node": "node-2"}, taints[0]

    step = await next_step(stack, run, viewer, "back")  # db-1 Ready again, on another node
    ready = await viewer.until(lambda e: e["type"] == "transition" and e.get("kind") == "pod-ready"
                               and e.get("pod") == "db-1" and e.get("to") is True and e["t"] > 890)
    assert ready["node"] != "node-2" and 13 <= ready["t"] - 890 <= 23  # the answer, 18 +- 5
    assert ready["t"] <= step["t"] <= ready["t"] + EVENT_SLICE
