"""A small discrete-event engine: one heap of (time, priority, sequence, callback).

Why not SimPy: a run of a 5,000-node cluster schedules tens of millions of wake-ups; SimPy
wraps each in an Event object with a callback list and a Timeout, which measured several
times slower than a bare heap tuple here (see bench/simulation_bench.py). We keep SimPy's
shape (STYLE.md): a heap with deterministic tie-breaking, processes written as generators
that yield the microseconds they want to sleep, `run_until`.

Ordering at one instant: priority first (commands 0, everything else 1), then insertion
order. `run_until(t)` handles everything strictly before `t`, so a command scheduled at the
current instant runs before anything else at that instant, whether it was scheduled long
before or just now: that is what makes live runs and rebuilt runs identical.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Generator
from typing import Any

PRIORITY_COMMAND = 0
PRIORITY_NORMAL = 1

Process = Generator[int, Any, Any]


class Timer:
    """Handle of a scheduled callback; `cancel()` makes it a no-op."""

    __slots__ = ("entry",)

    def __init__(self, entry: list) -> None:
        self.entry = entry

    def cancel(self) -> None:
        self.entry[3] = None

    @property
    def when(self) -> int:
        return self.entry[0]

    @property
    def active(self) -> bool:
        return self.entry[3] is not None


class ProcessHandle:
    """A running generator process; `kill()` stops it at its next wake-up."""

    __slots__ = ("gen", "alive", "name")

    def __init__(self, gen: Process, name: str) -> None:
        self.gen = gen
        self.alive = True
        self.name = name

    def kill(self) -> None:
        if self.alive:
            self.alive = False
            self.gen.close()


class Engine:
    def __init__(self) -> None:
        self.now = 0
        self._heap: list[list] = []
        self._seq = 0

    def call_at(self, when: int, fn: Callable[..., Any], *args: Any) -> Timer:
        if when < self.now:
            when = self.now
        self._seq += 1
        entry = [when, PRIORITY_NORMAL, self._seq, fn, args]
        heapq.heappush(self._heap, entry)
        return Timer(entry)

    def call_later(self, delay: int, fn: Callable[..., Any], *args: Any) -> Timer:
        return self.call_at(self.now + delay, fn, *args)

    def call_command_at(self, when: int, order: tuple[int, int], fn: Callable[..., Any], *args: Any) -> Timer:
        """Commands sort before everything else at their instant, by their own `order` key
        (command index, step), never by when they were scheduled: a rebuilt run schedules
        them at another moment and must still replay them identically."""
        entry = [when, PRIORITY_COMMAND, order, fn, args]
        heapq.heappush(self._heap, entry)
        return Timer(entry)

    def spawn(self, gen: Process, name: str = "", delay: int = 0) -> ProcessHandle:
        handle = ProcessHandle(gen, name)
        self.call_later(delay, self._resume, handle, None)
        return handle

    def _resume(self, handle: ProcessHandle, value: Any) -> None:
        if not handle.alive:
            return
        try:
            delay = handle.gen.send(value)
        except StopIteration:
            handle.alive = False
            return
        self._seq += 1
        heapq.heappush(self._heap, [self.now + delay, PRIORITY_NORMAL, self._seq, self._resume, (handle, None)])

    def peek(self) -> int | None:
        while self._heap and self._heap[0][3] is None:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    def run_until(self, until: int) -> None:
        heap = self._heap
        pop = heapq.heappop
        while heap and heap[0][0] < until:
            entry = pop(heap)
            fn = entry[3]
            if fn is None:
                continue
            entry[3] = None  # a fired timer is no longer active
            self.now = entry[0]
            fn(*entry[4])
        if until > self.now:
            self.now = until
