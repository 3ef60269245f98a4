"""A small discrete-event engine: one heap of (time, priority, order, callback).

Why not SimPy: two things this project needs that SimPy does not
offer, and a modest speed gain. (1) Commands must sort at their instant by their own key, not
by when they were scheduled: a live run schedules a command just before it applies, a rebuilt
run schedules it at the start, and both must give the same bytes. SimPy breaks ties by
insertion order. (2) Timers are cancelled all the time (taint-eviction countdowns, the
tainting tick, kubelet work when a kubelet stops); SimPy timeouts cannot be cancelled. Speed:
5,000 sleeping processes for a simulated hour, 1.76 M wake-ups, took 1.50 µs per wake-up here
against 2.00 µs with SimPy 4.1.2 (measured 2026-11-30, same machine).

We keep SimPy's shape (STYLE.md): processes are generators that yield the microseconds they
want to sleep, `run_until`, deterministic tie-breaking.

Lanes: most entries are scheduled a fixed delay ahead (a request's 2 ms trip to the API
server, the 5 ms watch delivery, "right now"). Entries with one such delay come due in the
order they were scheduled, so each delay gets a plain FIFO ("lane") instead of the heap:
O(1) instead of two O(log n) heap operations that each touch scattered memory. The loop
takes the smallest of the heap's top and the lanes' heads by the same key, so the order,
and every result, is exactly what one heap gives.

Buckets: the rest (a Lease controller's 10 s sleep, a status loop's doze) would make a heap of
10,000 entries at 5,000 nodes, and popping it was the largest single cost of a large run: a
dozen levels of entries scattered over a 500 MB process, a cache miss at each. So entries due
after the current bucket (2**20 µs, about a second) wait unsorted in a list per bucket; when
the loop reaches a bucket, it sorts it (in C, compact) and takes it in order like a lane. The
heap keeps only what is due within the current bucket and is not in a lane: a few entries.

Ordering at one instant: priority first (commands 0, everything else 1), then order.
`run_until(t)` handles everything strictly before `t`, so a command scheduled at the current
instant runs before anything else at that instant, whether it was scheduled long
before or just now: that is what makes live runs and rebuilt runs identical.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Generator
from typing import Any

PRIORITY_COMMAND = 0
PRIORITY_NORMAL = 1
BUCKET_SHIFT = 20  # a bucket spans 2**20 µs, about a second

Process = Generator[int, Any, Any]

# The callback of a process wake-up entry, whose last field is then the handle itself: no
# bound method and no args tuple per wake-up (each would be one more object for the cyclic
# collector to walk, millions in a large run).
_RESUME: Any = object()


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

    __slots__ = ("gen", "alive", "name", "wake")

    def __init__(self, gen: Process, name: str) -> None:
        self.gen = gen
        self.alive = True
        self.name = name
        self.wake: list | None = None  # the heap entry of its next wake-up

    def kill(self) -> None:
        if self.alive:
            self.alive = False
            self.gen.close()


class Engine:
    def __init__(self) -> None:
        self.now = 0
        self._heap: list[list] = []
        self._seq = 0
        self.current: ProcessHandle | None = None  # the process being resumed right now
        self._lanes: dict[int, deque[list]] = {}  # delay -> entries scheduled that far ahead, in order
        self._lane_list: list[deque[list]] = []
        # buckets (see above): entries due at or after `_horizon` (the end of the bucket taken
        # last) wait in `_buckets[when >> BUCKET_SHIFT]`
        self._horizon = 0
        self._buckets: dict[int, list[list]] = {}
        self._bucket_order: list[int] = []  # a heap of the indices in `_buckets`
        self._sorted: deque[list] = deque()  # the bucket being taken, in order: one more lane
        self._lane_list.append(self._sorted)

    def add_lane(self, delay: int) -> None:
        """Give entries scheduled exactly `delay` ahead a FIFO of their own (see above)."""
        if delay not in self._lanes:
            lane: deque[list] = deque()
            self._lanes[delay] = lane
            self._lane_list.append(lane)

    def _push(self, entry: list) -> None:
        lane = self._lanes.get(entry[0] - self.now)
        if lane is not None:
            lane.append(entry)
        else:
            self._heap_or_bucket(entry)

    def _heap_or_bucket(self, entry: list) -> None:
        """The heap for an entry due within the current bucket; its own bucket otherwise."""
        if entry[0] < self._horizon:
            heapq.heappush(self._heap, entry)
            return
        index = entry[0] >> BUCKET_SHIFT
        bucket = self._buckets.get(index)
        if bucket is None:
            self._buckets[index] = [entry]
            heapq.heappush(self._bucket_order, index)
        else:
            bucket.append(entry)

    def _take_bucket(self) -> None:
        """Start on the next bucket: everything in it becomes a lane in order."""
        index = heapq.heappop(self._bucket_order)
        bucket = self._buckets.pop(index)
        bucket.sort()  # [when, priority, order, ...]: the first three fields are unique
        self._sorted.extend(bucket)
        self._horizon = (index + 1) << BUCKET_SHIFT

    def call_at(self, when: int, fn: Callable[..., Any], *args: Any) -> Timer:
        if when < self.now:
            when = self.now
        self._seq += 1
        entry = [when, PRIORITY_NORMAL, self._seq, fn, args]
        self._push(entry)
        return Timer(entry)

    def call_later(self, delay: int, fn: Callable[..., Any], *args: Any) -> Timer:
        return self.call_at(self.now + delay, fn, *args)

    def call_command_at(self, when: int, order: tuple[int, int], fn: Callable[..., Any], *args: Any) -> Timer:
        """Commands sort before everything else at their instant, by their own `order` key
        (command index, step), never by when they were scheduled: a rebuilt run schedules
        them at another moment and must still replay them identically."""
        entry = [when, PRIORITY_COMMAND, order, fn, args]
        self._heap_or_bucket(entry)  # never a lane: it sorts before entries scheduled earlier
        return Timer(entry)

    def spawn(self, gen: Process, name: str = "", delay: int = 0) -> ProcessHandle:
        handle = ProcessHandle(gen, name)
        self._wake(handle, self.now + delay)
        return handle

    def _wake(self, handle: ProcessHandle, when: int) -> None:
        """Schedule the process's next wake-up (the one `wake_at` can move)."""
        self._seq += 1
        entry = [when, PRIORITY_NORMAL, self._seq, _RESUME, handle]
        self._push(entry)
        handle.wake = entry

    def wake_at(self, handle: ProcessHandle, when: int) -> None:
        """Move a sleeping process's next wake-up (e.g. a blocked request when the network heals)."""
        if handle.wake is not None:
            handle.wake[3] = None
        self._wake(handle, max(when, self.now))

    def run_until(self, until: int) -> None:
        """Handle every entry due before `until`, in order. The loop is the engine's hot path
        (2.5 M entries in a 5,000-node hour), so finding the next entry and resuming a process
        are written out in it: no Python call of its own per entry."""
        heap = self._heap
        pop = heapq.heappop
        lanes = self._lane_list
        while True:
            entry = heap[0] if heap else None
            source = None
            for lane in lanes:  # the first due of the heap's top and the lanes' heads
                if lane:
                    head = lane[0]
                    if entry is None or head < entry:
                        entry, source = head, lane
            if entry is None or entry[0] >= self._horizon:
                if self._bucket_order and (entry is None or entry[0] >> BUCKET_SHIFT >= self._bucket_order[0]):
                    self._take_bucket()
                    continue
                if entry is None:
                    break
            if entry[0] >= until:
                break
            if source is None:
                pop(heap)
            else:
                source.popleft()
            fn = entry[3]
            if fn is None:
                continue
            entry[3] = None  # a fired timer is no longer active
            self.now = entry[0]
            if fn is not _RESUME:
                fn(*entry[4])
                continue
            handle = entry[4]
            if not handle.alive:
                handle.wake = None  # it and its last entry would hold each other: a reference cycle
                continue
            self.current = handle
            try:
                delay = handle.gen.send(None)
            except StopIteration:
                handle.alive = False
                handle.wake = None
                continue
            finally:
                self.current = None
            if handle.wake is entry:  # the entry just taken is reused for the next wake-up
                self._seq += 1
                entry[0], entry[2], entry[3] = self.now + delay, self._seq, _RESUME
                self._push(entry)
            else:  # the process was moved meanwhile (wake_at)
                self._wake(handle, self.now + delay)
        if until > self.now:
            self.now = until
