"""A live lesson's "Next step" against a stand-in driver: the clock runs fast to the step's moment.

The real driver does the same with real processes (test_live_lesson_next.py); here the steps are
fed by hand, so what a second "Next", a pause meanwhile or a takeover does is exact.
"""

from __future__ import annotations

import contextlib
import json

import pytest

from heartbeat_site.live.classroom.teaching import LiveLesson
from heartbeat_site.live.driving import checkpointing
from heartbeat_site.live.driving.intents import Intent, Notify, Pause, ScheduleFault, move_clock
from heartbeat_site.live.driving.pacing import MAX_SPEED, PacedSimulation, VirtualClock
from heartbeat_site.live.models import Run
from heartbeat_site.live.runs.tokens import hash_token
from simulation import Simulation
from simulation.lessons import get_lesson

pytestmark = [pytest.mark.django_db]

LESSON = "kubelet-crash-walkthrough"  # a question at once, then the crash step at t=60 s
TRAINER_SPEED = 2.0


class StandInDriver(PacedSimulation):
    """What LiveLesson asks of the run's driver: its intents applied to a simulation, a clock and the messages."""

    def __init__(self, sim: Simulation) -> None:
        self.sim = sim
        self.clock = VirtualClock(speed=TRAINER_SPEED, monotonic=lambda: 0.0)
        self.messages: list[dict] = []
        self.events: list[dict] = []
        self.run_fields: dict[str, object] = {}  # what it would write to the run's row

    def apply(self, intent: Intent) -> None:
        if isinstance(intent, Notify):
            self.messages.append(intent.message)
        elif isinstance(intent, ScheduleFault):
            self.sim.schedule_command(dict(intent.command), intent.at)
        else:
            move_clock(self.clock, intent, self.sim.now)

    def held(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def update_run(self, **fields: object) -> None:
        self.run_fields.update(fields)

    def last_event_seq(self) -> int:
        return self.events[-1]["seq"] if self.events else 0

    def recent_event_dicts(self) -> list[dict]:
        return self.events

    def run_to(self, lesson: LiveLesson, t: float) -> None:
        """Simulate to ``t`` in slices cut where the lesson asks, feeding each."""
        while self.sim.now < t:
            stop = lesson.stop_at()
            upto = min(t, stop) if stop is not None and stop > self.sim.now else t
            events = [e.to_dict() for e in self.sim.run_until(upto)]
            self.events.extend(events)
            lesson.feed(events, self.sim.now)


def live_lesson(name: str) -> tuple[LiveLesson, StandInDriver]:
    """A lesson run from its first moment, against the stand-in driver."""
    lesson = get_lesson(name)
    assert lesson is not None
    scenario = lesson.scenario
    run = Run.objects.create(scenario_name=scenario.name, document=scenario.document, seed=scenario.seed,
                             version=str(scenario.version), node_count=scenario.node_count,
                             duration=scenario.duration, speed=TRAINER_SPEED, control_token_hash=hash_token("t"),
                             lesson=name)
    driver = StandInDriver(Simulation(scenario, seed=scenario.seed))
    live = LiveLesson(driver, run)  # type: ignore[arg-type]
    live.begin(0.0)
    return live, driver


@pytest.fixture
def lesson_run() -> tuple[LiveLesson, StandInDriver]:
    live, driver = live_lesson(LESSON)
    driver.run_to(live, 1.0)
    live.reveal()  # the first question
    return live, driver


def steps(driver: StandInDriver) -> list[dict]:
    return [m for m in driver.messages if m["type"] == "step"]


def test_a_second_next_while_fast_forwarding_changes_nothing(lesson_run):
    live, driver = lesson_run
    live.next()
    live.next()
    assert [m for m in driver.messages if m["type"] == "fast-forward"] == [
        {"type": "fast-forward", "step": 1, "of": len(live.steps)}]
    assert driver.clock.speed == MAX_SPEED and driver.clock.fast_forward == {
        "step": 1, "speed": TRAINER_SPEED, "limited_from": None}
    assert len(steps(driver)) == 1, "no step started before its moment"
    # every clock says so until the step starts (a run ending first ends with it: pages say the moment never came)
    assert driver.clock.as_dict(driver.sim.now)["fast_forward"] == {"step": 1}
    driver.run_to(live, 61.0)
    crash = steps(driver)[1]
    assert (crash["step"]["id"], crash["t"]) == ("crash", 60.0)
    assert driver.clock.speed == TRAINER_SPEED and driver.clock.fast_forward is None
    assert "fast_forward" not in driver.clock.as_dict(driver.sim.now)
    assert driver.clock.paused, "its question pauses the run"


def test_next_resumes_a_fast_forward_the_trainer_paused(lesson_run):
    live, driver = lesson_run
    live.next()
    driver.apply(Pause())  # the trainer's pause
    live.next()
    assert not driver.clock.paused and driver.clock.speed == MAX_SPEED
    driver.run_to(live, 61.0)
    assert steps(driver)[1]["t"] == 60.0 and driver.clock.speed == TRAINER_SPEED


def test_a_takeover_after_the_step_started_gives_the_trainer_speed_back(lesson_run):
    live, driver = lesson_run
    live.next()
    driver.run_to(live, 61.0)
    heir = StandInDriver(Simulation(live.lesson.scenario, seed=live.run.seed))
    heir.clock = VirtualClock(speed=MAX_SPEED, monotonic=lambda: 0.0,
                              fast_forward={"step": 1, "speed": TRAINER_SPEED, "limited_from": None})
    Run.objects.filter(pk=live.run.pk).update(steps_started=2)
    LiveLesson(heir, Run.objects.get(pk=live.run.pk)).restore(driver.events, 61.0)  # type: ignore[arg-type]
    assert heir.clock.fast_forward is None and heir.clock.speed == TRAINER_SPEED


def lesson_position(live: LiveLesson) -> tuple:
    runner = live.runner
    return (runner.now, runner.held, [start.index for start in runner.started],
            json.dumps(runner.transcript().to_dict(), sort_keys=True))


def test_a_takeover_from_a_checkpoint_restores_the_lesson_as_the_run_had_it(lesson_run):
    """The heir continues the run's checkpoint (the simulation and the lesson runner at 30 s) with the events since:
    its lesson is where the run's is, mid-question included, as a replay from 0 gives it too."""
    live, driver = lesson_run
    driver.run_to(live, 30.0)
    data, state, seen = driver.sim.checkpoint(), live.checkpoint_state(), len(driver.events)
    driver.run_to(live, 130.0)
    run = Run.objects.get(pk=live.run.pk)

    heir = StandInDriver(Simulation.restore(data))
    since = [event.to_dict() for event in heir.sim.run_until(130.0)]
    assert since == driver.events[seen:]
    continued = LiveLesson(heir, run)  # type: ignore[arg-type]
    continued.restore(since, 130.0, runner=checkpointing.lesson_runner(state))
    replayer = StandInDriver(Simulation(live.lesson.scenario, seed=run.seed))
    replayed = LiveLesson(replayer, run)  # type: ignore[arg-type]
    replayed.restore(driver.events, 130.0)
    assert lesson_position(continued) == lesson_position(replayed)
    assert continued.runner.held and continued.runner.started == live.runner.started  # mid-question, as the run
    assert [(start.index, start.t) for start in continued.runner.started] == [(0, 0.0), (1, 60.0)]
    assert heir.messages == [], "nothing is announced again"
