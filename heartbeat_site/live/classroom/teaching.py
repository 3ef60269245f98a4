"""A lesson's steps and a drill's diagnosis inside a driven run (docs/lessons.md). All of it runs in the Celery
worker, in the run's driver (``driving/driver.py``, or side a's in a comparison); the web process uses none of it.

The driver feeds every slice's events to ``LiveLesson.feed``; steps that start act on the run
the way a trainer would, by intents (``intents.py``) the driver applies through the path a
trainer's commands take (``RunDriver.apply``): fault actions go into the run's command log with
their virtual time, then are scheduled (a takeover replays them), pause / resume / speed move
the clock, and a question pauses the run until the trainer's ``reveal``. Pages get ``step``,
``question``, ``tally`` and ``reveal`` messages (docs/websocket-protocol.md "Lessons and drills").
Nothing here touches the driver's simulation, clock or ``Run`` row; the questions it writes are
written in the driver's fenced transactions (``RunDriver.held``, fencing.py).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

from heartbeat_site.live.classroom import questions
from heartbeat_site.live.driving import checkpointing, intents
from heartbeat_site.live.models import Question, QuestionStatus, Run
from simulation.lessons import LessonRun, StepStart, matches

if TYPE_CHECKING:
    from heartbeat_site.live.driving.driver import RunDriver

log = logging.getLogger(__name__)

TALLY_SECONDS = 1.0  # tallies go out at most this often while a question is open
EVENT_SLICE = 1.0  # virtual seconds: a step triggered by an event starts at most this long after it


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
        message = questions.tally(question)
        if message != self.last_tally:
            self.last_tally = message
            self.driver.apply(intents.Notify(message))

    def _close(self, question: Question) -> None:
        """No more answers; every page gets the final tally first (answers of the last second included)."""
        self.driver.apply(intents.Notify(questions.tally(question)))
        with self.driver.held():
            Question.objects.filter(pk=question.pk).update(status=QuestionStatus.REVEALED,
                                                           revealed_at=self.driver.virtual_time)
        self.last_tally = None

    def _evidence(self, matcher: dict, after_seq: int) -> dict | None:
        """The first event after ``after_seq`` that matches, among those the driver still holds."""
        return next((e for e in self.driver.recent_event_dicts() if e["seq"] > after_seq and matches(matcher, e)), None)

    @abstractmethod
    def begin(self, now: float) -> None:
        """A new run: the first steps start, or the diagnosis opens."""

    @abstractmethod
    def restore(self, events: list[dict], now: float, *, runner: LessonRun | None = None) -> None:
        """A run taken over: catch up from the replayed events without acting again (``runner``: a lesson's
        state at the checkpoint the takeover continued, ``events`` those simulated since)."""

    def checkpoint_state(self) -> bytes | None:
        """What a checkpoint of the run keeps of the lesson (``restore``'s ``runner``)."""
        return None

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
        self.lesson = questions.lesson_of(run)
        self.runner = LessonRun(self.lesson, hold_questions=True)
        self.steps = self.lesson.document["steps"]
        # order questions revealed with items still to come -> what the database holds of them
        self.unsettled: dict[str, dict] = {}

    # -- the driver's calls -------------------------------------------------------------------

    def begin(self, now: float) -> None:
        self._apply(self.runner.start(now))

    def checkpoint_state(self) -> bytes | None:
        return checkpointing.lesson_state(self.runner)

    def restore(self, events: list[dict], now: float, *, runner: LessonRun | None = None) -> None:
        """After a takeover: the runner brought to where the run was, from the replayed events
        and the questions the database knows (nothing is applied or announced again)."""
        cursor = 0

        def feed(chunk_end: float, upto: float) -> None:
            nonlocal cursor
            start = cursor
            while cursor < len(events) and events[cursor]["t"] < chunk_end:
                cursor += 1
            self.runner.feed(events[start:cursor], upto)

        self._restore_with(feed, now, runner)

    def _restore_with(self, feed, now: float, runner: LessonRun | None = None) -> None:
        """``restore``: `feed(chunk_end, upto)` feeds the runner the replayed events before `chunk_end`, from
        the start of the lesson or from ``runner`` (a checkpoint's)."""
        if runner is not None:
            self.runner = runner
        else:
            self.runner.start(0.0)
        revealed = {q.qid: q.revealed_at
                    for q in Question.objects.filter(run_id=self.run.pk, status=QuestionStatus.REVEALED)}
        while True:
            stop = self.runner.next_stop()
            if self.runner.held:  # the run stood at its question until the reveal: nothing past it before then
                stop = revealed.get(self.runner.started[-1].question)
            upto = now if stop is None or stop > now else stop
            feed(upto, upto)
            if self.runner.held:
                asked = self.runner.started[-1].question
                reveal_at = revealed.get(asked)
                if reveal_at is None:
                    break
                self.runner.release(max(reveal_at, self.runner.now or 0.0))
                continue
            if upto >= now:
                break
        fast_forward = self.driver.fast_forward_step
        if fast_forward is not None and fast_forward < len(self.runner.started):
            self.driver.apply(intents.EndFastForward())  # the step it ran to had started before the takeover
        self.unsettled = {qid: {} for qid in revealed if self.runner.question(qid).question.kind == "order"
                          and not self.runner.question(qid).done}
        if len(self.runner.started) != self.run.steps_started:
            log.warning("run %s: restored %d lesson steps, the database says %d",
                        self.run.pk, len(self.runner.started), self.run.steps_started)

    def stop_at(self) -> float | None:
        """The next step's time; while it waits for an event, the end of the next EVENT_SLICE, so
        that the step starts at most that long after its event, even at 100x."""
        if self.runner.waiting_for_event():
            return self.driver.virtual_time + EVENT_SLICE
        return self.runner.next_stop()

    def feed(self, events: list[dict], now: float) -> None:
        self._apply(self.runner.feed(events, now))
        if self.unsettled:
            self._store_settled()

    def reveal(self) -> None:
        question = self.open_question()
        if question is None:
            raise ValueError("no question is open: nothing to reveal")
        document = questions.question_document(question)
        if document["kind"] == "order":
            self._reveal_order(question, document)
            return
        self._close(question)
        evidence = self._reveal_evidence(question, document)
        self.driver.apply(intents.Notify({
            "type": "reveal",
            "question": question.qid,
            "correct": document["answer"],
            "tolerance": document.get("tolerance"),
            "explain": document.get("explain"),
            "evidence": {"match": document.get("evidence"), "event": evidence},
        }))
        self.driver.apply(intents.Resume())
        self._apply(self.runner.release(self.driver.virtual_time))

    def _reveal_evidence(self, question: Question, document: dict) -> dict | None:
        """The event that settles the question, for the reveal: the first match of its evidence since it was asked."""
        return self._evidence(document["evidence"], question.asked_seq) if document.get("evidence") else None

    def _reveal_order(self, question: Question, document: dict) -> None:
        """An order question: the run's order with each item's event (the runner has watched the
        question's window), and how many in the class got it right."""
        state = self.runner.question(question.qid)
        question.happened = dict(state.happened)
        with self.driver.held():
            Question.objects.filter(pk=question.pk).update(happened=question.happened)
        if not state.done:
            self.unsettled[question.qid] = dict(question.happened)  # items still to come: stored as they happen
        self._close(question)
        self.driver.apply(intents.Notify({
            "type": "reveal",
            "question": question.qid,
            "kind": "order",
            **questions.order_reveal(question, question.happened),
            "explain": document.get("explain"),
            "evidence": {"match": None, "event": state.evidence},
        }))
        self.driver.apply(intents.Resume())
        self._apply(self.runner.release(self.driver.virtual_time))

    def _store_settled(self) -> None:
        """Order questions revealed before all their items happened: each item's event as soon as it
        happened, so that a page joining meanwhile waits only for the items still to come."""
        for qid, stored in list(self.unsettled.items()):
            state = self.runner.question(qid)
            if state.happened != stored:
                with self.driver.held():
                    Question.objects.filter(run_id=self.run.pk, qid=qid).update(happened=dict(state.happened))
                self.unsettled[qid] = dict(state.happened)
            if state.done:
                del self.unsettled[qid]

    def _fault(self, command: dict, t: float) -> None:
        """A step's fault action: in the run's command log (a takeover replays it), then scheduled."""
        self.driver.apply(intents.ScheduleFault(dict(command), t))

    def next(self) -> None:
        """The trainer moves on: the open question is revealed, or the clock runs fast to the next
        step's moment (its time, or its event), where it starts as if played: a step's text never
        shows before the run got there."""
        if self.open_question() is not None:
            self.reveal()
            return
        step = self.runner.next_step
        if step is None:
            raise ValueError("the lesson has no step left to start")
        announce = self.driver.fast_forward_step is None  # a second "next" only resumes a paused fast-forward
        self.driver.apply(intents.FastForward(step.index))
        if announce:
            self.driver.apply(intents.Notify({"type": "fast-forward", "step": step.index, "of": len(self.steps)}))

    # -- steps ----------------------------------------------------------------------------------

    def _apply(self, starts: list[StepStart]) -> None:
        for start in starts:
            self._start(start)

    def _start(self, start: StepStart) -> None:
        driver = self.driver
        if driver.fast_forward_step is not None:
            driver.apply(intents.EndFastForward())  # the step's moment has come: the trainer's speed, then its actions
        for command in start.commands:
            self._fault(command, start.t)
        for action in start.page_actions:
            if action["action"] == "pause":
                driver.apply(intents.Pause())
            elif action["action"] == "resume":
                driver.apply(intents.Resume())
            elif action["action"] == "speed":
                driver.apply(intents.SetSpeed(float(action["value"])))
        step = questions.public_step(self.steps[start.index], start.index)
        driver.update_run(steps_started=start.index + 1)
        driver.apply(intents.Notify({"type": "step", "lesson": self.lesson.name, "step": step, "t": start.t,
                             "of": len(self.steps)}))
        if start.question is not None:
            with driver.held():
                Question.objects.create(run_id=self.run.pk, qid=start.question, step=start.index, asked_at=start.t,
                                        asked_seq=driver.last_event_seq())
            driver.apply(intents.Pause())
            driver.apply(intents.Notify({"type": "question", "question": step["question"], "step": start.index}))


class ComparisonLesson(LiveLesson):
    """A comparison lesson (docs/lessons.md "Comparison lessons"): one lesson over both sides of a comparison.

    It lives in side a's driver (its run holds the lesson's questions and answers, and its viewers get the
    lesson's messages); side b's driver gets a ``SideOfLesson`` that hands its events over. The comparison driver
    (``comparison_driver.py``) takes both sides to the same virtual times, cutting its slices at ``stop_at``; the
    lesson looks at both sides' events once both have reached a time (``LessonRun.feed_sides``), so a step starts
    on both sides at one instant and its fault actions go to both runs."""

    def __init__(self, driver: RunDriver, run: Run, other: RunDriver) -> None:
        super().__init__(driver, run)
        self.drivers = {"a": driver, "b": other}
        self.pending: dict[str, list[dict]] = {"a": [], "b": []}
        self.reached = {"a": driver.virtual_time, "b": other.virtual_time}
        self.follower = SideOfLesson(other, other.run, self)

    def restore(self, events: list[dict], now: float, other_events: list[dict] | None = None, *,
                runner: LessonRun | None = None) -> None:
        """Both sides' replayed events, fed as the run fed them: up to each step's time, and each question's
        reveal (``LiveLesson.restore``, with both sides)."""
        by_side = {"a": events, "b": other_events or []}
        cursor = {"a": 0, "b": 0}

        def feed(chunk_end: float, upto: float) -> None:
            chunks = {}
            for side, listed in by_side.items():
                i = cursor[side]
                start = i
                while i < len(listed) and listed[i]["t"] < chunk_end:
                    i += 1
                cursor[side] = i
                chunks[side] = listed[start:i]
            self.runner.feed_sides(chunks, upto)

        self._restore_with(feed, now, runner)
        for side, listed in by_side.items():  # a side that was ahead: its events after `now` wait for the other
            self.pending[side] = list(listed[cursor[side]:])
            self.reached[side] = self.drivers[side].virtual_time

    def stop_at(self) -> float | None:
        """The next step's time only: the comparison driver itself cuts its slices every EVENT_SLICE while a step
        waits for an event (``cut``), at the same times on both sides."""
        return self.runner.next_stop()

    def cut(self, now: float) -> float | None:
        """Where both sides must stop next: the next step's time, or EVENT_SLICE on while a step waits for an
        event (so that it starts at most that long after its event, on both sides at once)."""
        if self.runner.waiting_for_event():
            return now + EVENT_SLICE
        return self.runner.next_stop()

    def feed(self, events: list[dict], now: float) -> None:
        self.feed_side("a", events, now)

    def feed_side(self, side: str, events: list[dict], now: float) -> None:
        """One side's slice; what both sides have reached goes to the lesson."""
        self.pending[side].extend(events)
        self.reached[side] = now
        common = min(self.reached.values())
        ready = {}
        for key, waiting in self.pending.items():
            cut = next((i for i, event in enumerate(waiting) if event["t"] > common), len(waiting))
            ready[key], self.pending[key] = waiting[:cut], waiting[cut:]
        if not any(ready.values()) and self.runner.now is not None and common <= self.runner.now:
            return
        self._apply(self.runner.feed_sides(ready, common))
        if self.unsettled:
            self._store_settled()

    def _fault(self, command: dict, t: float) -> None:
        for driver in self.drivers.values():  # both sides: the comparison's command log holds it on both runs
            driver.apply(intents.ScheduleFault(dict(command), t))

    def _reveal_evidence(self, question: Question, document: dict) -> dict | None:
        """The event the lesson's run saw settle the question, with the side it came from."""
        return self.runner.question(question.qid).evidence


class SideOfLesson(Teaching):
    """Side b of a comparison lesson: its events go to the lesson (``ComparisonLesson``), which does the rest."""

    def __init__(self, driver: RunDriver, run: Run, lesson: ComparisonLesson) -> None:
        super().__init__(driver, run)
        self.lesson = lesson

    def open_question(self) -> Question | None:
        """Side a's open question: at the end of the run side b waits for its reveal too."""
        return self.lesson.open_question()

    def tick(self, now: float) -> None:
        """Side a's driver sends the tallies."""

    def begin(self, now: float) -> None:
        """The lesson begins on side a."""

    def restore(self, events: list[dict], now: float, *, runner: LessonRun | None = None) -> None:
        """The lesson is restored on side a."""

    def stop_at(self) -> float | None:
        return self.lesson.stop_at()

    def feed(self, events: list[dict], now: float) -> None:
        self.lesson.feed_side("b", events, now)

    def reveal(self) -> None:
        """A comparison's command goes to both sides: side a's lesson reveals."""

    def next(self) -> None:
        """A comparison's command goes to both sides: side a's lesson moves on."""


class LiveDrill(Teaching):
    """A drill: its diagnosis is open from the start; the reveal names the cause."""

    def __init__(self, driver: RunDriver, run: Run) -> None:
        super().__init__(driver, run)
        self.drill = questions.drill_of(run)

    def begin(self, now: float) -> None:
        with self.driver.held():
            if not Question.objects.filter(run_id=self.run.pk, qid=questions.DIAGNOSIS).exists():
                Question.objects.create(run_id=self.run.pk, qid=questions.DIAGNOSIS, asked_at=now)
        self.driver.apply(intents.Notify({"type": "question", "question": questions.diagnosis_question(self.drill),
                                  "drill": self.drill.name}))

    def restore(self, events: list[dict], now: float, *, runner: LessonRun | None = None) -> None:
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
        self.driver.apply(intents.RevealCause())
        fault = {k: v for k, v in self.drill.fault.items() if k != "at"}
        self.driver.apply(intents.Notify({
            "type": "reveal",
            "question": questions.DIAGNOSIS,
            "correct": questions.public_cause(self.drill, self.drill.answer),
            "cause": self.drill.answer,
            "node": self.drill.node,
            "fault": fault,
            "explain": self.drill.document.get("explanation"),
            "evidence": {"event": self._evidence({"type": "fault"}, 0)},
        }))

    def next(self) -> None:
        raise ValueError("a drill has no steps: reveal it")


def teaching_for(driver: RunDriver, run: Run) -> Teaching | None:
    """A run's lesson or drill; None for a comparison's side, whose lesson the comparison driver sets up
    (``comparison_teaching``)."""
    if run.comparison_id:
        return None
    if run.lesson:
        return LiveLesson(driver, run)
    if run.drill:
        return LiveDrill(driver, run)
    return None


def comparison_teaching(a: RunDriver, b: RunDriver) -> ComparisonLesson | None:
    """The lesson of a comparison started for a comparison lesson (its side a names it), or None."""
    if not a.run.lesson:
        return None
    lesson = ComparisonLesson(a, a.run, b)
    a.teaching, b.teaching = lesson, lesson.follower
    return lesson
