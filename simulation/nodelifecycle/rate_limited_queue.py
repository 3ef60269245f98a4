"""RateLimitedTimedQueue and its token bucket
(pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go; reference 3.8)."""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass, field

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


@dataclass(order=True)
class TimedValue:
    process_at: int
    order: int
    value: str = field(compare=False)
    uid: str = field(compare=False)
    added_at: int = field(compare=False)


class RateLimitedTimedQueue:
    def __init__(self, qps: float, now: int) -> None:
        self.limiter: TokenBucket | NeverLimiter = TokenBucket(qps, now) if qps > 0 else NeverLimiter()
        self._heap: list[TimedValue] = []
        self._set: set[str] = set()  # "seen": blocks re-adding until Remove
        self._order = 0

    def add(self, value: str, uid: str, now: int) -> bool:
        if value in self._set:
            return False
        self._order += 1
        heapq.heappush(self._heap, TimedValue(now, self._order, value, uid, now))
        self._set.add(value)
        return True

    def remove(self, value: str) -> bool:
        """Remove from both the heap and the seen set."""
        if value not in self._set:
            return False
        self._set.discard(value)
        self._heap = [v for v in self._heap if v.value != value]
        heapq.heapify(self._heap)
        return True

    def __len__(self) -> int:
        return len(self._heap)

    def items(self) -> list[str]:
        return [v.value for v in sorted(self._heap)]

    def try_process(self, now: int, fn: Callable[[TimedValue], tuple[bool, int]],
                    on_refused: Callable[[str], None] | None = None) -> None:
        """Try: a token is asked for before each look at the head item."""
        while self._heap:
            head = self._heap[0]
            if not self.limiter.try_accept(now):
                if on_refused is not None:
                    on_refused(head.value)
                return
            if now < head.process_at:
                return
            done, wait = fn(head)
            if not done:
                heapq.heappop(self._heap)
                self._order += 1
                heapq.heappush(self._heap, TimedValue(now + wait + 1, self._order, head.value, head.uid, head.added_at))
            else:
                heapq.heappop(self._heap)  # stays in the seen set

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
