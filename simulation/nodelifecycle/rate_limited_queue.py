"""RateLimitedTimedQueue and its token bucket
(pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go; docs/kubernetes-node-health.md §3.8)."""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..clock import US


class TokenBucket:
    """flowcontrol.NewTokenBucketRateLimiter(qps, burst=1): starts full, refills at qps."""

    def __init__(self, qps: float, now: int) -> None:
        self.qps = qps
        self.tokens = 1.0
        self.last = now

    def _refill(self, now: int) -> None:
        if now > self.last:
            self.tokens = min(1.0, self.tokens + (now - self.last) / US * self.qps)
            self.last = now

    def try_accept(self, now: int) -> bool:
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def available(self, now: int) -> float:
        self._refill(now)
        return self.tokens

    @property
    def reported_qps(self) -> float:
        return self.qps


class NeverLimiter:
    """flowcontrol.NewFakeNeverRateLimiter: refuses every token, and reports its rate as 1."""

    qps = 0.0

    def try_accept(self, now: int) -> bool:
        return False

    def available(self, now: int) -> float:
        return 0.0

    @property
    def reported_qps(self) -> float:
        return 1.0


@dataclass(slots=True)
class TimedValue:
    process_at: int
    order: int
    value: str
    uid: str
    added_at: int
    removed: bool = False


class RateLimitedTimedQueue:
    """Entries ordered by (processAt, order) plus the "seen" set that refuses duplicates.

    Removal marks the entry dead instead of re-heapifying: a zone with hundreds of
    waiting nodes re-adds each of them every monitor pass. Those re-adds come in key order
    (processAt = now, rising order), so an entry that sorts after the last one pushed goes to
    a FIFO instead of the heap: in a zone outage, 1,600 re-adds and as many dead entries per
    pass cost O(1) each instead of O(log n). The head is the smaller of the two fronts.
    """

    def __init__(self, qps: float, now: int) -> None:
        self.limiter: TokenBucket | NeverLimiter = TokenBucket(qps, now) if qps > 0 else NeverLimiter()
        self._heap: list[tuple[int, int, TimedValue]] = []  # (processAt, order, item): compared in C
        self._fifo: deque[tuple[int, int, TimedValue]] = deque()  # the same, pushed in key order
        self._set: set[str] = set()  # "seen": blocks re-adding until Remove
        self._live: dict[str, TimedValue] = {}  # entries still waiting (heap or FIFO), not dead
        self._order = 0

    def add(self, value: str, uid: str, now: int) -> bool:
        if value in self._set:
            return False
        self._push(TimedValue(now, 0, value, uid, now))
        self._set.add(value)
        return True

    def _push(self, item: TimedValue) -> None:
        self._order += 1
        item.order = self._order
        entry = (item.process_at, item.order, item)
        if not self._fifo or self._fifo[-1] < entry:
            self._fifo.append(entry)
        else:
            heapq.heappush(self._heap, entry)
        self._live[item.value] = item

    def _drop(self, value: str) -> None:
        item = self._live.pop(value, None)
        if item is not None:
            item.removed = True

    def _head(self) -> TimedValue | None:
        heap, fifo = self._heap, self._fifo
        while heap and heap[0][2].removed:
            heapq.heappop(heap)
        while fifo and fifo[0][2].removed:
            fifo.popleft()
        if heap and (not fifo or heap[0] < fifo[0]):
            return heap[0][2]
        return fifo[0][2] if fifo else None

    def remove(self, value: str) -> bool:
        """Remove from both the waiting entries and the seen set."""
        if value not in self._set:
            return False
        self._set.discard(value)
        self._drop(value)
        return True

    def __contains__(self, value: str) -> bool:
        return value in self._set

    def __len__(self) -> int:
        return len(self._live)

    def items(self) -> list[str]:
        return [v.value for v in sorted(self._live.values(), key=lambda v: (v.process_at, v.order))]

    def try_process(self, now: int, fn: Callable[[TimedValue], tuple[bool, int]]) -> None:
        """Try: a token is asked for before each look at the head item."""
        while (head := self._head()) is not None:
            if not self.limiter.try_accept(now):
                return
            if now < head.process_at:
                return
            done, wait = fn(head)
            self._drop(head.value)
            if not done:
                self._push(TimedValue(now + wait + 1, 0, head.value, head.uid, head.added_at))
            # done: the item leaves the heap but stays in the seen set

    def swap_limiter(self, qps: float, now: int) -> bool:
        """SwapLimiter: no-op at the same reported rate; a rate <= 0 blocks; otherwise a new full
        bucket that gives up one token if the old limiter has none right now."""
        if self.limiter.reported_qps == qps:
            return False
        if qps <= 0:
            self.limiter = NeverLimiter()
            return True
        new = TokenBucket(qps, now)
        if not self.limiter.try_accept(now):
            new.try_accept(now)
        self.limiter = new
        return True
