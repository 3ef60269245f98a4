"""How a live run's virtual time follows the wall clock: base + wall time elapsed x speed.

The driver paces its simulation by this clock (``simulation/clock.py`` is the virtual time
itself, in microseconds). It reads ``time.monotonic`` (never Celery ETAs or beat, which are
~1 s precise) and is rebased on every pause, resume, speed change or jump, so changing speed
never moves the virtual time already reached.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from simulation import Simulation

MIN_SPEED = 0.1
MAX_SPEED = 100.0


@dataclass
class VirtualClock:
    t: float = 0.0  # virtual seconds at the last rebase
    speed: float = 1.0
    paused: bool = False
    monotonic: Callable[[], float] = field(default=time.monotonic, repr=False)
    # the speed a trainer asked for, when the driver had to lower it to what the worker keeps
    limited_from: float | None = None
    # a large cluster's start-up, simulated ahead of the clock before the run goes live
    preparing: bool = False
    # a lesson's "Next step" running the clock to the step's moment: {"step": index, "speed": the
    # trainer's, "limited_from": its limit}, restored once the step starts (``end_fast_forward``)
    fast_forward: dict | None = None
    _base: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        self._base = self.monotonic()

    def now(self) -> float:
        if self.paused:
            return self.t
        return self.t + (self.monotonic() - self._base) * self.speed

    def _rebase(self, t: float | None = None) -> None:
        self.t = self.now() if t is None else t
        self._base = self.monotonic()

    def pause(self, at: float | None = None) -> None:
        """Stop the clock: where it is now, or at virtual time ``at`` (the simulation's, so that a
        paused run's clock does not stand a few microseconds past its last events)."""
        self._rebase(at)
        self.paused = True

    def resume(self) -> None:
        self._rebase()
        self.paused = False

    def set_speed(self, speed: float) -> None:
        """A speed the trainer chose: it replaces any limit the driver had set."""
        self.limit_speed(speed)
        self.limited_from = None

    def limit_speed(self, speed: float) -> None:
        """Change the speed to what the worker keeps; remembers the speed that was asked for."""
        if not MIN_SPEED <= speed <= MAX_SPEED:
            raise ValueError(f"speed must be between {MIN_SPEED} and {MAX_SPEED}")
        self._rebase()
        if self.limited_from is None and speed < self.speed:
            self.limited_from = self.speed
        elif self.limited_from is not None and speed >= self.limited_from:
            self.limited_from = None  # back to the speed that was asked for
        self.speed = speed

    def start_fast_forward(self, step: int) -> None:
        """Run at the maximum speed (resumed if paused) until lesson step ``step`` starts."""
        if self.fast_forward is None:
            self.fast_forward = {"step": step, "speed": self.speed, "limited_from": self.limited_from}
        if self.paused:
            self.resume()
        self.set_speed(MAX_SPEED)

    def end_fast_forward(self) -> None:
        """Back to the speed the trainer had before the fast-forward."""
        saved, self.fast_forward = self.fast_forward, None
        if saved is not None:
            self.set_speed(saved["speed"])
            self.limited_from = saved.get("limited_from")

    def jump_to(self, t: float) -> None:
        """Continue from virtual time ``t`` (after a step, or to hold at the duration)."""
        self._rebase(t)

    def as_dict(self, t: float) -> dict:
        clock: dict = {"t": round(t, 6), "speed": self.speed, "paused": self.paused}
        if self.limited_from is not None:
            clock["limited_from"] = self.limited_from
        if self.preparing:
            clock["preparing"] = True
        if self.fast_forward is not None:
            clock["fast_forward"] = {"step": self.fast_forward["step"]}
        return clock


class PacedSimulation:
    """A simulation and the clock that paces it, as a lesson reads them (``classroom/teaching.py``): where the
    run stands and the step a fast-forward runs to. The run's driver is one; the lesson tests' stand-in another."""

    sim: Simulation
    clock: VirtualClock

    @property
    def virtual_time(self) -> float:
        """Where the run's simulation stands (virtual seconds)."""
        return self.sim.now

    @property
    def fast_forward_step(self) -> int | None:
        """The lesson step a fast-forward runs to, or None."""
        return self.clock.fast_forward["step"] if self.clock.fast_forward is not None else None
