"""What a lesson or a drill asks of the run's driver (docs/architecture.md §9.6).

Lesson and drill code (``teaching.py``) never touches the driver's simulation, clock, event log or ``Run`` row: it
hands the driver intents, and the driver applies them through ``RunDriver.apply``, the function a trainer's
commands go through too. So a lesson's fault lands in the run's command log the way a trainer's does, and every
database write stays the driver's own, fenced by its epoch (``fencing.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from heartbeat_site.live.driving.pacing import VirtualClock


@dataclass(frozen=True)
class ScheduleFault:
    """A fault at virtual time ``at``. ``recorded``: a trainer's command whose claim already wrote its ``at``;
    a lesson's is written into the run's command log first (a takeover replays it)."""

    command: dict
    at: float
    recorded: bool = False


@dataclass(frozen=True)
class Pause:
    """Stop the clock at the simulation's time (the clock may have run a little ahead of it)."""


@dataclass(frozen=True)
class Resume:
    pass


@dataclass(frozen=True)
class SetSpeed:
    """A speed chosen now: it replaces a fast-forward's and the governor's."""

    value: float


@dataclass(frozen=True)
class FastForward:
    """A lesson's "next": the maximum speed until step ``step`` starts."""

    step: int


@dataclass(frozen=True)
class EndFastForward:
    """The step a fast-forward ran to has started: the trainer's speed again."""


@dataclass(frozen=True)
class Notify:
    """A lesson or drill message (step, question, tally, reveal) for every viewer."""

    message: dict = field(default_factory=dict)


@dataclass(frozen=True)
class RevealCause:
    """A drill's reveal: its hidden events go out as they happened, to every later reader too."""


Intent = ScheduleFault | Pause | Resume | SetSpeed | FastForward | EndFastForward | Notify | RevealCause

PACING = (Pause, Resume, SetSpeed, FastForward, EndFastForward)  # the intents that move the run's clock


def move_clock(clock: VirtualClock, intent: Intent, now: float) -> None:
    """A pacing intent applied to the run's clock; ``now``: the simulation's time, where a pause stops it."""
    match intent:
        case Pause():
            clock.pause(at=now)
        case Resume():
            clock.resume()
        case SetSpeed(value=value):
            clock.fast_forward = None  # a speed picked now is the one to keep
            clock.set_speed(value)
        case FastForward(step=step):
            clock.start_fast_forward(step)
        case EndFastForward():
            clock.end_fast_forward()
        case _:
            raise ValueError(f"{intent!r} does not move the clock")
