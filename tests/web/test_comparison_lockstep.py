"""A comparison's lockstep (comparison_driver.py ``_advance_both``) on a wall clock the test moves: the two sides'
simulations cost wall time as a large cluster's do, a burst at one instant (a zone's nodes going Unknown) and little
elsewhere. What a viewer would notice is the shared clock: it keeps the speed asked for through either side's burst
instead of waiting where the other side stood."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from heartbeat_site.live.driving.comparison_driver import CATCH_UP, ComparisonDriver
from heartbeat_site.live.driving.driver import RunDriver
from heartbeat_site.live.driving.governor import SpeedGovernor
from heartbeat_site.live.driving.pacing import VirtualClock

SPEED = 10.0
INTERVAL = 0.1  # wall seconds between two slices


class Wall:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


class BurstSimulation:
    """``run_until`` moves the wall clock: ``burst`` seconds when it crosses ``at``, ``quiet`` per virtual second."""

    def __init__(self, wall: Wall, t: float, at: float, burst: float, quiet: float) -> None:
        self.wall, self.now, self.at, self.burst, self.quiet = wall, t, at, burst, quiet

    def run_until(self, t: float) -> list:
        self.wall.t += self.quiet * (t - self.now) + (self.burst if self.now < self.at <= t else 0.0)
        self.now = t
        return []


def side(wall: Wall, clock: VirtualClock, burst_at: float, quiet: float) -> RunDriver:
    driver = RunDriver.__new__(RunDriver)  # the driver's own stepping (``_advance``), without Redis or a database
    driver.run_id, driver.mono, driver.duration = "side", wall, 3600.0
    driver.sim = BurstSimulation(wall, clock.t, burst_at, burst=0.7, quiet=quiet)
    driver.clock, driver.pace, driver.teaching, driver.transitions, driver.buffer = clock, 1.0, None, None, []
    driver.governor, driver.run = SpeedGovernor(), SimpleNamespace(speed=SPEED)
    return driver


# wall seconds per virtual second outside a burst: 1,000 nodes (about 200x), and a slower machine's (50x), where a
# side catches up on a burst in several steps, over the slices that follow it
@pytest.mark.parametrize("quiet", [0.005, 0.02])
def test_the_shared_clock_keeps_its_speed_through_each_sides_burst(quiet):
    wall = Wall()
    clock = VirtualClock(t=10.0, speed=SPEED, monotonic=wall)
    driver = ComparisonDriver("c", monotonic=wall)
    a, b = driver.sides = [side(wall, clock, 15.05, quiet), side(wall, clock, 25.05, quiet)]  # b's 10 s later
    a.governor.restart(wall(), clock.t)
    start = wall()
    while wall() < start + 4.0:  # 4 s of wall time: 40 virtual seconds at 10x, both bursts in them
        began = wall()
        driver._advance_both(began)
        wall.t = max(wall(), began + INTERVAL)
    # the clock lost nothing to the bursts (1.4 s of wall time it would have waited for the side behind), and both
    # sides caught up with it (to within a slice)
    assert clock.now() == pytest.approx(10.0 + SPEED * (wall() - start))
    assert a.sim.now == b.sim.now > clock.now() - SPEED * 2 * INTERVAL
    assert a.sim.now > b.sim.at



def test_past_its_catch_up_the_clock_waits_only_for_the_rest():
    """A burst on a slower machine (50x), longer than the clock lets the sides lag (``CATCH_UP``): the clock waits
    for what lies beyond, no more."""
    wall = Wall()
    clock = VirtualClock(t=10.0, speed=SPEED, monotonic=wall)
    driver = ComparisonDriver("c", monotonic=wall)
    a, b = driver.sides = [side(wall, clock, 15.05, 0.02), side(wall, clock, 1e9, 0.02)]
    a.sim.burst = CATCH_UP + 1.0
    a.governor.restart(wall(), clock.t)
    start = wall()
    while wall() < start + 6.0:
        began = wall()
        driver._advance_both(began)
        wall.t = max(wall(), began + INTERVAL)
    lost = 10.0 + SPEED * (wall() - start) - clock.now()
    assert 0 < lost <= SPEED * (1.0 + 2 * INTERVAL)
    assert a.sim.now == b.sim.now > clock.now() - SPEED * 2 * INTERVAL
