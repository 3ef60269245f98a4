"""A trainer's "Next step" in a live lesson: the run gets to the step's moment, it is never shown early.

Real Daphne, Redis and a worker. The trainer plays the kubelet-crash walkthrough at 2x: its
second step waits for t=60 s (the crash), its third for node-2's Ready turning Unknown (~110 s).
"""

from __future__ import annotations

import pytest

from heartbeat_site.live.classroom.teaching import EVENT_SLICE
from heartbeat_site.live.driving.pacing import MAX_SPEED

from .live import Viewer, ahttp, is_ready_change, running_stack
from .test_live_lessons import LESSON, asked, command

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

TRAINER_SPEED = 2.0


@pytest.fixture
def stack(django_db_setup, tmp_path):
    with running_stack(tmp_path, ("first",)) as live:
        yield live


async def clock_after(viewer: Viewer) -> dict:
    """The clock of the next frame or clock message."""
    message = await viewer.next_of_type_in(("frame", "clock"))
    return message["clock"]


async def reveal(stack, run: dict, viewer: Viewer) -> None:
    status, body = await command(stack, run, {"action": "reveal"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    await viewer.next_of_type("reveal")


async def test_next_runs_the_clock_to_each_step_and_starts_it_when_its_trigger_fires(stack):
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"lesson": LESSON, "speed": TRAINER_SPEED})
    assert status == 201, run
    viewer = await Viewer.open(run["ws_url"], "class")
    assert (await asked(viewer))["id"] == "notready-when"
    await reveal(stack, run, viewer)

    # a timed step (the crash, at t=60 s): the clock runs at 100x to it, every page is told
    status, body = await command(stack, run, {"action": "next"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    assert body["clock"]["speed"] == MAX_SPEED and body["clock"]["fast_forward"] == {"step": 1}
    forward = await viewer.next_of_type("fast-forward")
    assert forward["step"] == 1
    step = await viewer.next_of_type("step", timeout=30)
    assert step["step"]["id"] == "crash"
    assert step["t"] == 60.0, "the step starts at its moment, not when the trainer pressed Next"
    assert all(e["t"] <= 60.0 for e in viewer.events), "no event past the step's moment came before it"
    clock = await clock_after(viewer)
    assert clock["speed"] == TRAINER_SPEED and "fast_forward" not in clock
    assert clock["paused"], "the step asks a question: the run waits for the class"

    # an event-triggered step (node-2 turns Unknown): it starts in the slice of its event
    await reveal(stack, run, viewer)
    status, body = await command(stack, run, {"action": "next"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    assert body["clock"]["fast_forward"] == {"step": 2}
    step = await viewer.next_of_type("step", timeout=30)
    assert step["step"]["id"] == "unknown"
    unknown = await viewer.until(is_ready_change("node-2", "Unknown"))
    assert unknown["t"] <= step["t"] <= unknown["t"] + EVENT_SLICE
    clock = await clock_after(viewer)
    assert clock["speed"] == TRAINER_SPEED and "fast_forward" not in clock
    status, detail = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}")
    assert detail["clock"]["speed"] == TRAINER_SPEED
