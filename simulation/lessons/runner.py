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

A comparison lesson (`Lesson.sides`) watches two runs on one clock: the driver feeds both sides' events
up to the same virtual time with `feed_sides`; they are looked at in the order of their times, each with
its side, so that a matcher may name the side it wants (`side: a`), and a measure may go from an event
on one side to an event on the other. Every window (a step's, a question's) opens on both sides at once;
a reference to an event ({"seq", "t"}) then names its side too.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..events import SimEvent
from ..simulation import Simulation
from .documents import Lesson, Question, Step
from .matchers import matches
from .ordering import order_fits, run_order


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
    after_seq: dict[str | None, int] | None = None  # per side, events after this seq are in its window (None: not
    # open yet); a lesson of one run has the one side None
    evidence: dict[str, Any] | None = None  # the evidence event (its dict)
    last_from: dict[str, Any] | None = None  # number: {"seq", "t"} of the latest measure.from event
    measure_from: dict[str, Any] | None = None  # number: the from/to pair the measure was taken on
    measure_to: dict[str, Any] | None = None
    measured: float | None = None
    happened: dict[str, dict[str, Any] | None] = field(default_factory=dict)  # order: item id -> {"seq", "t"}

    def __post_init__(self) -> None:
        self.happened = {item["id"]: None for item in self.question.items}

    @property
    def done(self) -> bool:
        """Evidence found and, for a number, measured: later events change nothing. An order
        question's evidence is the event of the last of its items to happen."""
        return self.evidence is not None and (self.question.measure is None or self.measured is not None)

    def order(self) -> list[str]:
        """Order: the ids of the items that happened so far, in the run's order."""
        return run_order(self.happened)

    def times(self) -> dict[str, float] | None:
        """Order: each item's virtual time, once every item has happened."""
        if any(ref is None for ref in self.happened.values()):
            return None
        return {item: ref["t"] for item, ref in self.happened.items() if ref is not None}

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
        if q.kind == "order":
            times = self.times()
            return None if times is None else q.answer is None or order_fits(q.answer, times)
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
        elif q.kind == "order":
            out.update(order=self.order(), happened=dict(self.happened))
        else:
            out.update(measured=self.measured, tolerance=q.tolerance, measure_from=self.measure_from,
                       measure_to=self.measure_to)
        return out

    def observe(self, event: Any, side: str | None = None) -> None:
        """Look at one event (in order); `event` is a dict or a `simulation.Event`, from `side` (a comparison's)."""
        q = self.question
        seq = _seq(event)
        in_window = self.after_seq is not None and seq > self.after_seq.get(side, 0)
        if q.kind == "order":
            if in_window:
                self._observe_items(event, seq, side)
            return
        if in_window and self.evidence is None and matches(q.evidence, event, side):
            self.evidence = _as_dict(event, side)
        if q.measure is None or self.measured is not None:
            return
        if in_window and self.last_from is not None and matches(q.measure["to"], event, side):
            self.measure_from = self.last_from
            self.measure_to = _at(event, side)
            self.measured = round(self.measure_to["t"] - self.last_from["t"], 6)
            return
        if matches(q.measure["from"], event, side):
            self.last_from = _at(event, side)

    def _observe_items(self, event: Any, seq: int, side: str | None) -> None:
        for item in self.question.items:
            if self.happened[item["id"]] is None and matches(item["match"], event, side):
                self.happened[item["id"]] = _at(event, side)
                if self.times() is not None:
                    self.evidence = _as_dict(event, side)


def _seq(event: Any) -> int:
    return event.seq if isinstance(event, SimEvent) else event["seq"]


def _t(event: Any) -> float:
    return event.seconds if isinstance(event, SimEvent) else event["t"]


def _as_dict(event: Any, side: str | None = None) -> dict[str, Any]:
    out = event.to_dict() if isinstance(event, SimEvent) else dict(event)
    if side is not None:
        out["side"] = side
    return out


def _at(event: Any, side: str | None) -> dict[str, Any]:
    """{"seq", "t"} of an event, and its "side" in a comparison."""
    return {"seq": _seq(event), "t": _t(event), **({"side": side} if side is not None else {})}


def _ref(event: dict[str, Any] | None) -> dict[str, Any] | None:
    if event is None:
        return None
    return {"seq": event["seq"], "t": event["t"], **({"side": event["side"]} if "side" in event else {})}


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
        self.sides = lesson.side_names
        self._last_seq = dict.fromkeys(self.sides, 0)  # per side, the last event fed
        self._after_seq = dict.fromkeys(self.sides, 0)  # the next event trigger looks at events after these
        self._pending_trigger: dict[str, Any] | None = None  # event that fired the next step while held
        self._pending_bounds: dict[str | None, int] = {}  # the last event of each side when it fired
        for step in lesson.steps:
            if step.question is not None:
                state = QuestionState(step.question, step.id)
                if step.question.since == "start":
                    state.after_seq = dict.fromkeys(self.sides, 0)
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
        if self.sides != (None,):
            raise RuntimeError("a comparison lesson is fed both sides' events: feed_sides()")
        return self._feed(((None, event) for event in events), now)

    def feed_sides(self, sides: Mapping[str, Iterable[Any]], now: float) -> list[StepStart]:
        """A comparison lesson's slice: each side's events up to `now` (both sides brought to the same
        virtual time), looked at in the order of their times (side a first at one instant)."""
        if set(sides) - set(self.sides):
            raise ValueError(f"unknown sides {sorted(set(sides) - set(self.sides))}: the lesson has {self.sides}")
        order = {side: i for i, side in enumerate(self.sides)}
        merged = heapq.merge(*[[((_t(event), order[side]), side, event) for event in events]
                               for side, events in sides.items()], key=lambda item: item[0])
        return self._feed(((side, event) for _key, side, event in merged), now)

    def _feed(self, tagged: Iterable[tuple[str | None, Any]], now: float) -> list[StepStart]:
        if self.now is None:
            raise RuntimeError("call start() first")
        out: list[StepStart] = []
        for side, event in tagged:
            seq = _seq(event)
            self._last_seq[side] = seq
            step = self.next_step
            if step is not None and step.event is not None and seq > self._after_seq[side] \
                    and self._pending_trigger is None and matches(step.event, event, side):
                trigger = _at(event, side)
                if self.held:
                    self._pending_trigger, self._pending_bounds = trigger, dict(self._last_seq)
                else:
                    out.extend(self._begin(step, now, trigger, dict(self._last_seq)))
                    out.extend(self._start_due(now))
            for state in self.questions.values():
                if not state.done:
                    state.observe(event, side)
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
                out.extend(self._begin(step, now, None, dict(self._last_seq)))
            elif step.event is not None:
                if self._pending_trigger is None:
                    break
                trigger, self._pending_trigger = self._pending_trigger, None
                out.extend(self._begin(step, now, trigger, self._pending_bounds))
            else:
                out.extend(self._begin(step, now, None, dict(self._last_seq)))
        return out

    def _begin(self, step: Step, now: float, trigger: dict[str, Any] | None,
               bounds: dict[str | None, int]) -> list[StepStart]:
        """`bounds`: each side's last event when the step started (when its trigger event came)."""
        boundary = dict(bounds)
        self._after_seq = boundary
        start = StepStart(step=step.id, index=step.index, t=now, trigger=trigger, commands=step.commands,
                          page_actions=step.page_actions, question=step.question.id if step.question else None)
        self.started.append(start)
        if step.question is not None:
            state = self.questions[step.question.id]
            state.asked_at = now
            if state.after_seq is None:
                state.after_seq = dict(boundary)
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
    if lesson.sides is not None:  # a comparison: both sides on one clock, with the seed of the lesson's scenario
        sims = dict(zip(lesson.side_names, (Simulation(s, seed=lesson.scenario.seed if seed is None else seed)
                                           for s in lesson.sides), strict=True))
    else:
        sims = {None: Simulation(lesson.scenario, seed=seed)}
    run = LessonRun(lesson, hold_questions=hold_questions)
    end = lesson.scenario.duration if until is None else until
    _apply(sims, run.start(0.0))
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
        if lesson.sides is not None:
            _apply(sims, run.feed_sides({side: sim.run_until(t) for side, sim in sims.items() if side is not None}, t))
        else:
            _apply(sims, run.feed(sims[None].run_until(t), t))
        if run.held:  # a headless class answers at once
            _apply(sims, run.release(t))
    return run.transcript()


def _apply(sims: dict[str | None, Simulation], starts: list[StepStart]) -> None:
    """A step's fault actions, on every side at the step's time."""
    for start in starts:
        for command in start.commands:
            for sim in sims.values():
                sim.schedule_command(dict(command), start.t)
