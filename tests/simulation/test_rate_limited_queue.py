"""The taint queue (RateLimitedTimedQueue) hands out heads in (processAt, order) order
whether an entry waits in its FIFO or its heap."""

import heapq
import random

import pytest

from simulation.nodelifecycle.rate_limited_queue import RateLimitedTimedQueue


def heap_only_push(self, item):
    self._order += 1
    item.order = self._order
    heapq.heappush(self._heap, (item.process_at, item.order, item))
    self._live[item.value] = item


def drive(seed: int) -> list:
    """Monitor-pass-like re-adds (remove then add, in name order), removals, and tainting
    ticks whose callback sometimes asks for a retry later (an out-of-order push)."""
    rng = random.Random(seed)
    q = RateLimitedTimedQueue(qps=5.0, now=0)
    names = [f"node-{i:02d}" for i in range(40)]
    seen = []
    now = 0
    for _step in range(400):
        now += rng.choice([100_000, 100_000, 5_000_000])
        kind = rng.random()
        if kind < 0.3:  # a pass re-adds the waiting nodes
            for name in sorted(rng.sample(names, 25)):
                if rng.random() < 0.7:
                    q.remove(name)
                q.add(name, "uid-" + name, now)
        elif kind < 0.4:
            q.remove(rng.choice(names))

        def taint(item, now=now):
            seen.append((now, item.value, item.process_at))
            return (False, rng.choice([0, 50_000, 3_000_000])) if rng.random() < 0.3 else (True, 0)

        q.try_process(now, taint)
        seen.append(("waiting", tuple(q.items()), len(q)))
    return seen


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_fifo_keeps_the_heap_order(seed, monkeypatch):
    with_fifo = drive(seed)
    monkeypatch.setattr(RateLimitedTimedQueue, "_push", heap_only_push)
    plain = drive(seed)
    assert sum(1 for e in plain if e[0] != "waiting") > 200
    assert with_fifo == plain
