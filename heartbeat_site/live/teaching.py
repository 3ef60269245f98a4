"""A lesson's steps and a drill's diagnosis inside a driven run (docs/lessons.md).

The driver feeds every slice's events to ``LiveLesson.feed``; steps that start act on the run
the way a trainer would: fault actions become commands (persisted with their virtual time,
then scheduled, so a takeover replays them), pause / resume / speed move the clock, and a
question pauses the run until the trainer's ``reveal``. Pages get ``step``, ``question``,
``tally`` and ``reveal`` messages (docs/websocket-protocol.md "Lessons and drills").
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from heartbeat_site.live import classroom, commands
from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Question, QuestionStatus, Run
from simulation.lessons import LessonRun, StepStart, matches

if TYPE_CHECKING:
    from heartbeat_site.live.driver import RunDriver

log = logging.getLogger(__name__)

TALLY_SECONDS = 1.0  # tallies go out at most this often while a question is open


class Teaching(ABC):
    """What lessons and drills share: the open question, its tally and the reveal.

    The abstract methods are the driver's calls (driver.py), which a lesson and a drill answer
    each in its own way."""

    def __init__(self, driver: RunDriver, run: Run) -> None:
        self.driver = driver
        self.run = run
        self.last_tally: dict | None = None
        self.last_tally_at = 0.0

    def open_question(self) -> Question | None:
        return Question.objects.filter(run_id=self.run.pk, status=QuestionStatus.OPEN).select_related("run").first()

    def tick(self, now: float) -> None:
        """Once a second: the open question's tally, when it changed."""
        if now - self.last_tally_at < TALLY_SECONDS:
            return
        self.last_tally_at = now
        question = self.open_question()
        if question is None:
            return
        message = classroom.tally(question)
        if message != self.last_tally:
            self.last_tally = message
            self.driver.notify(message)

    def _close(self, question: Question) -> None:
        """No more answers; every page gets the final tally first (answers of the last second included)."""
        self.driver.notify(classroom.tally(question))
        Question.objects.filter(pk=question.pk).update(status=QuestionStatus.REVEALED, revealed_at=self.driver.sim.now)
        self.last_tally = None

    def _evidence(self, matcher: dict, after_seq: int) -> dict | None:
        """The first event after ``after_seq`` that matches, among those the driver still holds."""
        return next((e for e in self.driver.recent_event_dicts() if e["seq"] > after_seq and matches(matcher, e)), None)

    @abstractmethod
    def begin(self, now: float) -> None:
        """A new run: the first steps start, or the diagnosis opens."""

    @abstractmethod
    def restore(self, events: list[dict], now: float) -> None:
        """A run taken over: catch up from the replayed events without acting again."""

    @abstractmethod
    def stop_at(self) -> float | None:
        """The virtual time the driver must stop its slice at (a step that starts then), or None."""

    @abstractmethod
    def feed(self, events: list[dict], now: float) -> None:
        """The events of a slice, as the driver published them."""

    @abstractmethod
    def reveal(self) -> None:
        """The trainer reveals the open question."""

    @abstractmethod
    def next(self) -> None:
        """The trainer moves on."""


class LiveLesson(Teaching):
    def __init__(self, driver: RunDriver, run: Run) -> None:
        super().__init__(driver, run)
        self.lesson = classroom.lesson_of(run)
        self.runner = LessonRun(self.lesson, hold_questions=True)
        self.steps = self.lesson.document["steps"]

    # -- the driver's calls -------------------------------------------------------------------

    def begin(self, now: float) -> None:
        self._apply(self.runner.start(now))

    def restore(self, events: list[dict], now: float) -> None:
        """After a takeover: the runner brought to where the run was, from the replayed events
        and the questions the database knows (nothing is applied or announced again)."""
        self.runner.start(0.0)
        revealed = {q.qid: q.revealed_at
                    for q in Question.objects.filter(run_id=self.run.pk, status=QuestionStatus.REVEALED)}
        i = 0
        while True:
            stop = self.runner.next_stop()
            upto = now if stop is None or stop > now else stop
            chunk = []
            while i < len(events) and events[i]["t"] < upto:
                chunk.append(events[i])
                i += 1
            self.runner.feed(chunk, upto)
            if self.runner.held:
                asked = self.runner.started[-1].question
                reveal_at = revealed.get(asked)
                if reveal_at is None:
                    break
                self.runner.release(max(reveal_at, self.runner.now or 0.0))
                continue
            if upto >= now:
                break
        if len(self.runner.started) != self.run.steps_started:
            log.warning("run %s: restored %d lesson steps, the database says %d",
                        self.run.pk, len(self.runner.started), self.run.steps_started)

    def stop_at(self) -> float | None:
        return self.runner.next_stop()

    def feed(self, events: list[dict], now: float) -> None:
        self._apply(self.runner.feed(events, now))

    def reveal(self) -> None:
        question = self.open_question()
        if question is None:
            raise ValueError("no question is open: nothing to reveal")
        document = classroom.question_document(question)
        self._close(question)
        evidence = self._evidence(document["evidence"], question.asked_seq) if document.get("evidence") else None
        self.driver.notify({
            "type": "reveal",
            "question": question.qid,
            "correct": document["answer"],
            "tolerance": document.get("tolerance"),
            "explain": document.get("explain"),
            "evidence": {"match": document.get("evidence"), "event": evidence},
        })
        self.driver.clock.resume()
        self._apply(self.runner.release(self.driver.sim.now))

    def next(self) -> None:
        """The trainer moves on: the open question is revealed, or the next step starts now."""
        if self.open_question() is not None:
            self.reveal()
            return
        starts = self.runner.skip(self.driver.sim.now)
        if not starts:
            raise ValueError("the lesson has no step left to start")
        self._apply(starts)

    # -- steps ----------------------------------------------------------------------------------

    def _apply(self, starts: list[StepStart]) -> None:
        for start in starts:
            self._start(start)

    def _start(self, start: StepStart) -> None:
        driver = self.driver
        for command in start.commands:
            persisted = commands.persist(self.run, CommandKind.FAULT, command["action"], dict(command))
            Command.objects.filter(pk=persisted.pk).update(at=start.t, status=CommandStatus.APPLIED)
            driver.sim.schedule_command(dict(command), start.t)
        for action in start.page_actions:
            if action["action"] == "pause":
                driver.pause_here()
            elif action["action"] == "resume":
                driver.clock.resume()
            elif action["action"] == "speed":
                driver.clock.set_speed(float(action["value"]))
        step = classroom.public_step(self.steps[start.index], start.index)
        Run.objects.filter(pk=self.run.pk).update(steps_started=start.index + 1, speed=driver.clock.speed,
                                                  paused=driver.clock.paused)
        driver.notify({"type": "step", "lesson": self.lesson.name, "step": step, "t": start.t, "of": len(self.steps)})
        if start.question is not None:
            Question.objects.create(run_id=self.run.pk, qid=start.question, step=start.index, asked_at=start.t,
                                    asked_seq=driver.last_event_seq())
            driver.pause_here()
            Run.objects.filter(pk=self.run.pk).update(paused=True)
            driver.notify({"type": "question", "question": step["question"], "step": start.index})


class LiveDrill(Teaching):
    """A drill: its diagnosis is open from the start; the reveal names the cause."""

    def __init__(self, driver: RunDriver, run: Run) -> None:
        super().__init__(driver, run)
        self.drill = classroom.drill_of(run)

    def begin(self, now: float) -> None:
        if not Question.objects.filter(run_id=self.run.pk, qid=classroom.DIAGNOSIS).exists():
            Question.objects.create(run_id=self.run.pk, qid=classroom.DIAGNOSIS, asked_at=now)
        self.driver.notify({"type": "question", "question": classroom.diagnosis_question(self.drill),
                            "drill": self.drill.name})

    def restore(self, events: list[dict], now: float) -> None:
        """Nothing to rebuild: the diagnosis and the reveal are in the database."""

    def stop_at(self) -> float | None:
        return None

    def feed(self, events: list[dict], now: float) -> None:
        """Nothing to do: the drill's fault is in its scenario."""

    def reveal(self) -> None:
        question = self.open_question()
        if question is None:
            raise ValueError("this drill has been revealed already")
        self._close(question)
        Run.objects.filter(pk=self.run.pk).update(revealed=True)
        self.run.revealed = True
        fault = {k: v for k, v in self.drill.fault.items() if k != "at"}
        self.driver.notify({
            "type": "reveal",
            "question": classroom.DIAGNOSIS,
            "correct": classroom.public_cause(self.drill, self.drill.answer),
            "cause": self.drill.answer,
            "node": fault.get("node"),
            "fault": fault,
            "explain": self.drill.document.get("explanation"),
            "evidence": {"event": self._evidence({"type": "fault"}, 0)},
        })
        self.driver.reveal_hidden()

    def next(self) -> None:
        raise ValueError("a drill has no steps: reveal it")


def teaching_for(driver: RunDriver, run: Run) -> Teaching | None:
    if run.lesson:
        return LiveLesson(driver, run)
    if run.drill:
        return LiveDrill(driver, run)
    return None
