"""Steps of a lesson in a run: which step starts when, and what settles each question.

`LessonRun` holds no simulation and no clock: a driver (the headless `run_lesson` below, or the
web layer's live driver) runs its `Simulation` in slices and feeds each slice's events with the
virtual time the slice reached. Every step that starts comes back as a `StepStart`: the driver
schedules its fault commands at `StepStart.t` (through `Simulation.schedule_command`) and carries
out its page actions (pause, resume, speed, focus, tab), which are not simulation commands.

A step with `trigger: {at: T}` starts when the fed time reaches T; a driver cuts its slice at
`next_stop()` so that this is exactly T. A step with `trigger: {event: matcher}` starts at the end
of the slice that holds the first matching event after the step before started (`trigger` names
that event). A step without a trigger starts together with the step before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..events import SimEvent
from ..simulation import Simulation
from .documents import Lesson, Question, Step
from .matchers import matches


@dataclass(frozen=True)
class StepStart:
    step: str  # the step's id
    index: int
    t: float  # virtual time the step started; its commands are dated here
    trigger: dict[str, Any] | None  # {"seq", "t"} of the event that started it (event triggers)
    commands: tuple[dict[str, Any], ...]  # fault commands to schedule at `t`
    page_actions: tuple[dict[str, Any], ...]
    question: str | None  # the id of the question the step asks

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "index": self.index, "t": self.t, "trigger": self.trigger,
                "commands": [dict(c) for c in self.commands], "page_actions": [dict(a) for a in self.page_actions],
                "question": self.question}


@dataclass
class QuestionState:
    """What the run says about one question so far."""

    question: Question
    step: str
    asked_at: float | None = None  # virtual time its step started
    after_seq: int | None = None  # events after this seq are in its window (None: not open yet)
    evidence: dict[str, Any] | None = None  # the evidence event (its dict)
    last_from: dict[str, Any] | None = None  # number: {"seq", "t"} of the latest measure.from event
    measure_from: dict[str, Any] | None = None  # number: the from/to pair the measure was taken on
    measure_to: dict[str, Any] | None = None
    measured: float | None = None

    @property
    def done(self) -> bool:
        """Evidence found and, for a number, measured: later events change nothing."""
        return self.evidence is not None and (self.question.measure is None or self.measured is not None)

    def evidence_choices(self) -> list[str]:
        """The ids of the choices whose `match` fits the evidence event."""
        if self.evidence is None:
            return []
        return [ch["id"] for ch in self.question.choices if matches(ch["match"], self.evidence)]

    def consistent(self) -> bool | None:
        """Whether the run confirms the document's answer (None while it cannot tell yet)."""
        q = self.question
        if q.kind == "choice":
            return None if self.evidence is None else self.evidence_choices() == [q.answer]
        if self.measured is None:
            return None
        return abs(self.measured - float(q.answer)) <= q.tolerance + 1e-9

    def to_dict(self) -> dict[str, Any]:
        q = self.question
        out: dict[str, Any] = {"id": q.id, "step": self.step, "kind": q.kind, "answer": q.answer,
                               "asked_at": self.asked_at, "evidence": _ref(self.evidence),
                               "consistent": self.consistent()}
        if q.kind == "choice":
            out["evidence_choices"] = self.evidence_choices()
        else:
            out.update(measured=self.measured, tolerance=q.tolerance, measure_from=self.measure_from,
                       measure_to=self.measure_to)
        return out

    def observe(self, event: Any) -> None:
        """Look at one event (in order); `event` is a dict or a `simulation.Event`."""
        q = self.question
        seq = _seq(event)
        in_window = self.after_seq is not None and seq > self.after_seq
        if in_window and self.evidence is None and matches(q.evidence, event):
            self.evidence = _as_dict(event)
        if q.measure is None or self.measured is not None:
            return
        if in_window and self.last_from is not None and matches(q.measure["to"], event):
            self.measure_from = self.last_from
            self.measure_to = {"seq": seq, "t": _t(event)}
            self.measured = round(self.measure_to["t"] - self.last_from["t"], 6)
            return
        if matches(q.measure["from"], event):
            self.last_from = {"seq": seq, "t": _t(event)}


def _seq(event: Any) -> int:
    return event.seq if isinstance(event, SimEvent) else event["seq"]


def _t(event: Any) -> float:
    return event.seconds if isinstance(event, SimEvent) else event["t"]


def _as_dict(event: Any) -> dict[str, Any]:
    return event.to_dict() if isinstance(event, SimEvent) else dict(event)


def _ref(event: dict[str, Any] | None) -> dict[str, Any] | None:
    return None if event is None else {"seq": event["seq"], "t": event["t"]}


class LessonRun:
    """The steps and questions of one lesson, fed with the events of a run slice by slice.

    `hold_questions=True` (a live class): after a step that asks a question, the next steps wait
    for `release()` (the trainer's reveal); their triggers are still watched meanwhile.
    """

    def __init__(self, lesson: Lesson, *, hold_questions: bool = False) -> None:
        self.lesson = lesson
        self.hold_questions = hold_questions
        self.started: list[StepStart] = []
        self.questions: dict[str, QuestionState] = {}
        self.now: float | None = None
        self.held = False
        self._last_seq = 0  # the last event fed
        self._after_seq = 0  # the next event trigger looks at events after this seq
        self._pending_trigger: dict[str, Any] | None = None  # event that fired the next step while held
        for step in lesson.steps:
            if step.question is not None:
                state = QuestionState(step.question, step.id)
                if step.question.since == "start":
                    state.after_seq = 0
                self.questions[step.question.id] = state

    # -- what the driver asks ----------------------------------------------------------------

    @property
    def next_step(self) -> Step | None:
        steps = self.lesson.steps
        return steps[len(self.started)] if len(self.started) < len(steps) else None

    @property
    def finished(self) -> bool:
        return self.next_step is None

    @property
    def settled(self) -> bool:
        """Every step started and every question has its evidence (and measure)."""
        return self.finished and all(q.done for q in self.questions.values())

    def next_stop(self) -> float | None:
        """The virtual time a driver must not run past before feeding again (an `at` trigger)."""
        step = self.next_step
        if step is None or self.held or step.at is None:
            return None
        return step.at

    def waiting_for_event(self) -> bool:
        step = self.next_step
        return step is not None and not self.held and step.event is not None

    def start(self, now: float = 0.0) -> list[StepStart]:
        """Begin the lesson at virtual time `now`: starts the steps that are due at once."""
        if self.now is not None:
            raise RuntimeError("the lesson has already started")
        self.now = now
        return self._start_due(now)

    def feed(self, events: Iterable[Any], now: float) -> list[StepStart]:
        """Process one slice: its events (dicts or `simulation.Event`s, in order, all before
        `now`) and the virtual time it reached. Returns the steps that started."""
        if self.now is None:
            raise RuntimeError("call start() first")
        out: list[StepStart] = []
        for event in events:
            seq = _seq(event)
            self._last_seq = seq
            step = self.next_step
            if step is not None and step.event is not None and seq > self._after_seq and self._pending_trigger is None \
                    and matches(step.event, event):
                trigger = {"seq": seq, "t": _t(event)}
                if self.held:
                    self._pending_trigger = trigger
                else:
                    out.extend(self._begin(step, now, trigger))
                    out.extend(self._start_due(now))
            for state in self.questions.values():
                if not state.done:
                    state.observe(event)
        self.now = now
        out.extend(self._start_due(now))
        return out

    def release(self, now: float | None = None) -> list[StepStart]:
        """Let the steps after a held question go on (at `now`, default the last fed time)."""
        if not self.held:
            return []
        self.held = False
        when = self.now if now is None else now
        assert when is not None
        self.now = when
        return self._start_due(when)

    def skip(self, now: float) -> list[StepStart]:
        """The trainer moves on: the next step starts at `now` whatever its trigger (after a held
        question, this is its release). Returns the steps that started."""
        if self.held:
            return self.release(now)
        step = self.next_step
        if step is None:
            return []
        self.now = now
        self._pending_trigger = None
        return self._begin(step, now, None) + self._start_due(now)

    # -- results --------------------------------------------------------------------------------

    def question(self, question_id: str) -> QuestionState:
        return self.questions[question_id]

    def transcript(self) -> Transcript:
        missing = [s.id for s in self.lesson.steps[len(self.started):]]
        return Transcript(lesson=self.lesson.name, scenario=self.lesson.scenario.name, end=self.now or 0.0,
                          steps=list(self.started), questions=[q.to_dict() for q in self.questions.values()],
                          missing_steps=missing)

    # -- internals ------------------------------------------------------------------------------

    def _start_due(self, now: float) -> list[StepStart]:
        out: list[StepStart] = []
        while not self.held:
            step = self.next_step
            if step is None:
                break
            if step.at is not None:
                if step.at > now:
                    break
                out.extend(self._begin(step, now, None))
            elif step.event is not None:
                if self._pending_trigger is None:
                    break
                trigger, self._pending_trigger = self._pending_trigger, None
                out.extend(self._begin(step, now, trigger))
            else:
                out.extend(self._begin(step, now, None))
        return out

    def _begin(self, step: Step, now: float, trigger: dict[str, Any] | None) -> list[StepStart]:
        boundary = trigger["seq"] if trigger is not None else self._last_seq
        self._after_seq = boundary
        start = StepStart(step=step.id, index=step.index, t=now, trigger=trigger, commands=step.commands,
                          page_actions=step.page_actions, question=step.question.id if step.question else None)
        self.started.append(start)
        if step.question is not None:
            state = self.questions[step.question.id]
            state.asked_at = now
            if state.after_seq is None:
                state.after_seq = boundary
            if self.hold_questions:
                self.held = True
        return [start]


@dataclass
class Transcript:
    """What a headless run of a lesson did: when each step started, what settled each question."""

    lesson: str
    scenario: str
    end: float
    steps: list[StepStart] = field(default_factory=list)
    questions: list[dict[str, Any]] = field(default_factory=list)
    missing_steps: list[str] = field(default_factory=list)

    def question(self, question_id: str) -> dict[str, Any]:
        return next(q for q in self.questions if q["id"] == question_id)

    def step(self, step_id: str) -> StepStart:
        return next(s for s in self.steps if s.step == step_id)

    def to_dict(self) -> dict[str, Any]:
        return {"lesson": self.lesson, "scenario": self.scenario, "end": self.end,
                "steps": [s.to_dict() for s in self.steps], "questions": self.questions,
                "missing_steps": self.missing_steps}


def run_lesson(lesson: Lesson, until: float | None = None, *, seed: int | None = None, slice_seconds: float = 1.0,
               hold_questions: bool = False) -> Transcript:
    """Run the lesson's scenario headless, starting steps and applying their fault actions as a
    live driver would, and return the transcript. It stops at `until`, or by default once every
    step has started and every question is settled (at the latest at the scenario's end)."""
    sim = Simulation(lesson.scenario, seed=seed)
    run = LessonRun(lesson, hold_questions=hold_questions)
    end = lesson.scenario.duration if until is None else until
    _apply(sim, run.start(0.0))
    t = 0.0
    while t < end and (until is not None or not run.settled):
        target = end
        stop = run.next_stop()
        if stop is not None and stop > t:
            target = min(target, stop)
        if run.waiting_for_event():
            target = min(target, t + slice_seconds)
        elif until is None and run.finished:  # only questions left: look every 10 s whether they are settled
            target = min(target, t + max(slice_seconds, 10.0))
        t = target
        _apply(sim, run.feed(sim.run_until(t), t))
        if run.held:  # a headless class answers at once
            _apply(sim, run.release(t))
    return run.transcript()


def _apply(sim: Simulation, starts: list[StepStart]) -> None:
    for start in starts:
        for command in start.commands:
            sim.schedule_command(command, start.t)
