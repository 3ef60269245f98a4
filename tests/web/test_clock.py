"""The driver's virtual clock: wall time x speed, rebased on every change."""

import pytest

from heartbeat_site.live.driving.driver import frame_interval
from heartbeat_site.live.driving.governor import LIMIT_WINDOW, SpeedGovernor, kept_speed
from heartbeat_site.live.driving.pacing import VirtualClock


class FakeMonotonic:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_advances_by_wall_time_times_speed():
    wall = FakeMonotonic()
    clock = VirtualClock(t=5.0, speed=10.0, monotonic=wall)
    wall.now += 1.5
    assert clock.now() == pytest.approx(20.0)


def test_speed_change_keeps_time_already_reached():
    wall = FakeMonotonic()
    clock = VirtualClock(speed=2.0, monotonic=wall)
    wall.now += 3
    clock.set_speed(0.5)
    assert clock.now() == pytest.approx(6.0)
    wall.now += 4
    assert clock.now() == pytest.approx(8.0)


def test_pause_freezes_and_resume_continues():
    wall = FakeMonotonic()
    clock = VirtualClock(speed=1.0, monotonic=wall)
    wall.now += 2
    clock.pause()
    wall.now += 50
    assert clock.now() == pytest.approx(2.0)
    clock.resume()
    wall.now += 1
    assert clock.now() == pytest.approx(3.0)


def test_jump_and_bounds():
    wall = FakeMonotonic()
    clock = VirtualClock(monotonic=wall)
    clock.jump_to(40.0)
    assert clock.now() == pytest.approx(40.0)
    with pytest.raises(ValueError, match="between 0.1 and 100"):
        clock.set_speed(101)
    assert clock.as_dict(40.0) == {"t": 40.0, "speed": 1.0, "paused": False}


def test_frame_interval_grows_only_for_big_rooms():
    assert frame_interval(0.1, 0) == frame_interval(0.1, 200) == 0.1
    assert frame_interval(0.1, 400) == pytest.approx(0.2)
    assert frame_interval(0.1, 5000) == 0.25
    assert frame_interval(0.5, 5000) == 0.5


def test_a_limited_speed_remembers_what_was_asked_until_it_is_given_back():
    wall = FakeMonotonic()
    clock = VirtualClock(speed=10.0, monotonic=wall)
    wall.now += 1
    clock.limit_speed(4)
    assert clock.as_dict(clock.now())["limited_from"] == 10 and clock.now() == pytest.approx(10.0)
    clock.limit_speed(2)  # lowered again: still 10x was asked
    assert clock.limited_from == 10
    clock.limit_speed(10)
    assert clock.limited_from is None and "limited_from" not in clock.as_dict(0)


def test_a_speed_the_trainer_sets_replaces_the_limit():
    clock = VirtualClock(speed=20.0, monotonic=FakeMonotonic())
    clock.limit_speed(5)
    clock.set_speed(8)
    assert (clock.speed, clock.limited_from) == (8, None)


def test_a_preparing_clock_says_so():
    clock = VirtualClock(monotonic=FakeMonotonic())
    clock.preparing = True
    assert clock.as_dict(3.0) == {"t": 3.0, "speed": 1.0, "paused": False, "preparing": True}


@pytest.mark.parametrize(("measured", "announced"), [(9.5, 8), (0.71, 0.5), (4.4, 3), (0.05, 0.1), (200, 100)])
def test_the_speed_announced_is_a_round_one_below_what_was_kept(measured, announced):
    assert kept_speed(measured) == announced


def test_a_run_mostly_behind_its_clock_is_lowered_to_what_it_keeps():
    governor = SpeedGovernor()
    governor.restart(0.0, 100.0)
    for i in range(50):
        governor.slice_done(behind=i % 5 != 0)  # 40 of 50 slices behind
    assert governor.decide(LIMIT_WINDOW - 0.1, 112.0, 10.0, None) is None  # the window is not over
    speed, why = governor.decide(LIMIT_WINDOW, 100.0 + 2.4 * LIMIT_WINDOW, 10.0, None)
    assert speed == 2 and "2.40x of 10x" in why


def test_a_limited_run_with_room_speeds_up_at_most_twofold():
    governor = SpeedGovernor()
    governor.restart(0.0, 0.0)
    for _ in range(50):
        governor.slice_done(behind=False)
    governor.busy = 0.05 * LIMIT_WINDOW  # 5 % busy: room for far more
    assert governor.decide(LIMIT_WINDOW, 2 * LIMIT_WINDOW, 2.0, 10.0) == (4, "busy 5 % of the time at 2x")
    for _ in range(50):
        governor.slice_done(behind=False)
    governor.busy = 0.5 * LIMIT_WINDOW  # busy half the time at 8x: 9.6x would fit, 10x would not
    assert governor.decide(2 * LIMIT_WINDOW, 12 * LIMIT_WINDOW, 8.0, 10.0) is None


def test_an_unlimited_run_keeping_up_is_left_alone():
    governor = SpeedGovernor()
    governor.restart(0.0, 0.0)
    for _ in range(50):
        governor.slice_done(behind=False)
    assert governor.decide(LIMIT_WINDOW, 10 * LIMIT_WINDOW, 10.0, None) is None
