"""How fast a run may go: the speed a worker really keeps, measured window by window.

A driver that falls behind its clock is not paced faster: its clock waits (the driver's
slices stop at their budget). If that happened in most slices of a LIMIT_WINDOW, the speed
actually kept is announced as the run's speed (the clock's ``limited_from`` says what was
asked), so every page shows the truth instead of a clock that keeps stalling. A burst (a zone
going down) passes: when a later window kept up with the driver busy less than ROOM_SHARE of
the time, the speed goes back up towards the one asked for, at most twofold per window.
"""

from __future__ import annotations

from dataclasses import dataclass

LIMIT_WINDOW = 5.0  # wall seconds over which the speed a run keeps is measured
ROOM_SHARE = 0.6  # a limited run speeds up again while its driver is busy less than this share of the time
NICE_SPEEDS = (0.1, 0.2, 0.25, 0.5, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 75, 100)


def kept_speed(measured: float) -> float:
    """The speed to announce when a run keeps only ``measured``: a round figure with room."""
    fitting = [speed for speed in NICE_SPEEDS if speed <= measured * 0.9]
    return fitting[-1] if fitting else NICE_SPEEDS[0]


@dataclass
class SpeedGovernor:
    start: float = 0.0  # wall time the window began
    t: float = 0.0  # virtual time then
    slices: int = 0
    behind: int = 0  # slices that ended behind the clock
    busy: float = 0.0  # wall seconds spent simulating and publishing

    def restart(self, now: float, t: float) -> None:
        self.start, self.t, self.slices, self.behind, self.busy = now, t, 0, 0, 0.0

    def slice_done(self, *, behind: bool) -> None:
        self.slices += 1
        self.behind += behind

    def decide(self, now: float, t: float, speed: float, limited_from: float | None) -> tuple[float, str] | None:
        """At the end of a window: the new speed and why, or None to keep the current one."""
        elapsed = now - self.start
        if elapsed < LIMIT_WINDOW:
            return None
        mostly_behind, never_behind = self.behind * 2 > self.slices, self.behind == 0
        measured, busy = (t - self.t) / elapsed, self.busy / elapsed
        self.restart(now, t)
        if mostly_behind:
            lower = kept_speed(measured)
            return (lower, f"keeps {measured:.2f}x of {speed:g}x") if lower < speed else None
        if limited_from is not None and never_behind and busy < ROOM_SHARE:
            doubled = max(nice for nice in NICE_SPEEDS if nice <= 2 * speed)
            higher = min(limited_from, doubled, kept_speed(speed * ROOM_SHARE / max(busy, 0.01)))
            return (higher, f"busy {100 * busy:.0f} % of the time at {speed:g}x") if higher > speed else None
        return None
