"""The engine's order: time, then commands before everything else, then scheduling order,
whichever of its structures (heap, lanes, buckets) an entry waits in."""

import random

import pytest

from simulation.engine import Engine, Process


def random_schedule(eng: Engine, seed: int, log: list) -> None:
    """Timers, processes and commands at all distances: same-instant ties, lane delays,
    bucket boundaries, far future; some of them cancelled or moved."""
    rng = random.Random(seed)
    for delay in (0, 2_000, 5_000):
        eng.add_lane(delay)
    timers = []

    def fire(tag):
        log.append((eng.now, tag))
        if rng.random() < 0.5:  # entries scheduled from inside the run, often at lane delays
            d = rng.choice(
                [0, 2_000, 5_000, 1, 999_999, 1 << 20, (1 << 20) - eng.now % (1 << 20), rng.randrange(30_000_000)]
            )
            timers.append(eng.call_later(d, fire, f"{tag}>"[-12:]))

    def step(proc, name, i):
        log.append((eng.now, name, i))
        if i < 19:
            eng.sleep(proc, rng.choice([0, 2_000, 5_000, 100_000, 10_000_000, 1 << 20]), step, proc, name, i + 1)

    for i in range(300):
        when = rng.choice([0, 1 << 20, 3 << 20, rng.randrange(60_000_000)])
        timers.append(eng.call_at(when, fire, f"t{i}"))
    for i in range(20):
        proc = Process()
        eng.sleep(proc, rng.randrange(5_000_000), step, proc, f"p{i}", 0)
    for i in range(30):
        when = rng.choice([0, 1 << 20, rng.randrange(60_000_000)])
        eng.call_command_at(when, (i, 0), lambda i=i: log.append((eng.now, "cmd", i)))
    for t in rng.sample(timers, 60):
        t.cancel()


def run(seed: int, slices: list[int], *, buckets: bool = True) -> list:
    eng, log = Engine(buckets=buckets), []
    random_schedule(eng, seed, log)
    for until in slices:
        eng.run_until(until)
    return log


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_buckets_keep_the_order_of_one_heap(seed):
    bucketed = run(seed, [90_000_000])
    plain = run(seed, [90_000_000], buckets=False)  # everything that is not in a lane goes through the heap
    assert len(plain) > 500
    assert bucketed == plain


def test_entries_come_in_time_order_with_commands_first_at_an_instant():
    log = run(4, [90_000_000])
    times = [e[0] for e in log]
    assert times == sorted(times)
    by_instant: dict[int, list] = {}
    for e in log:
        by_instant.setdefault(e[0], []).append(e[1])
    mixed = [tags for tags in by_instant.values() if "cmd" in tags and len(set(tags)) > 1]
    assert mixed, "the schedule should put commands and other entries at one instant"
    for tags in mixed:
        first_other = next(i for i, tag in enumerate(tags) if tag != "cmd")
        assert "cmd" not in tags[first_other:]


def test_slices_ending_anywhere_give_the_same_run():
    whole = run(5, [90_000_000])
    cuts = sorted({1, 2_000, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 7_654_321, 3 << 20, 45_000_000, 90_000_000})
    assert run(5, cuts) == whole


def test_a_run_stops_before_until_even_when_the_next_entry_is_in_a_later_bucket():
    eng = Engine()
    seen = []
    eng.call_at(10 << 20, lambda: seen.append(eng.now))
    eng.run_until(5 << 20)
    assert seen == [] and eng.now == 5 << 20
    eng.run_until((10 << 20) + 1)
    assert seen == [10 << 20]
