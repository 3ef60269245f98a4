"""A small discrete-event engine: timers and generator processes on a virtual clock (µs).

Every scheduled callback is a `Timer`. It waits for its time as the key `(when, priority,
order, timer)` in one of three structures: a lane, a bucket or the heap (below). The first
three fields of a key are unique, so keys compare as plain tuples, in C, and never reach the
timer; the loop always takes the smallest key of all three structures, so the order is the
one a single heap of these keys would give.

Why not SimPy: two things this project needs that SimPy does not offer, and a modest speed
gain. (1) Commands must sort at their instant by their own key, not by when they were
scheduled: a live run schedules a command just before it applies, a rebuilt run schedules it
at the start, and both must give the same bytes. SimPy breaks ties by insertion order. (2)
Timers are cancelled all the time (taint-eviction countdowns, the tainting tick, kubelet work
when a kubelet stops); SimPy timeouts cannot be cancelled. Speed: 5,000 sleeping processes
for a simulated hour, 1.76 M wake-ups, took 1.50 µs per wake-up against 2.00 µs with SimPy 4.1.2.

We keep SimPy's shape: processes are generators that yield the microseconds they want to
sleep, `run_until`, deterministic tie-breaking.

Lanes: most timers are scheduled a fixed delay ahead (a request's 2 ms trip to the API
server, the 5 ms watch delivery, "right now"). Keys with one such delay come due in the
order they were scheduled, so each delay gets a plain FIFO ("lane"): O(1) instead of two
O(log n) heap operations that each touch scattered memory.

Buckets: the rest (a Lease controller's 10 s sleep, a status loop's doze) would make a heap
of 10,000 keys at 5,000 nodes, and popping it was the largest single cost of a large run: a
dozen levels scattered over a 500 MB process, a cache miss at each. So keys due after the
current bucket (2**20 µs, about a second) wait unsorted in a list per bucket; when the loop
reaches a bucket, it sorts it (in C, compact) and takes it in order like a lane. The heap
keeps only what is due within the current bucket and is not in a lane: a few keys.
`Engine(buckets=False)` makes one bucket that reaches past any run: everything that is not
in a lane goes through the heap (tests compare the two).

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
ONE_BUCKET_SHIFT = 62  # a bucket longer than any run: no buckets

Process = Generator[int, Any, Any]

# The callback of a process wake-up, whose `args` is then the process's handle itself: no
# bound method and no args tuple per wake-up (each would be one more object for the cyclic
# collector to walk, millions in a large run).
_RESUME: Any = object()


class Timer:
    """A scheduled callback, and the handle its scheduler keeps: `cancel()` makes it a no-op.
    A timer that fired is no longer active."""

    __slots__ = ("callback", "args")

    def __init__(self, callback: Callable[..., Any] | None, args: Any) -> None:
        self.callback = callback  # None: cancelled or fired
        self.args = args  # the callback's arguments (a tuple), or the handle of a process wake-up

    def cancel(self) -> None:
        self.callback = None

    @property
    def active(self) -> bool:
        return self.callback is not None


# (when, priority, order, timer): what the queues hold and compare. `order` is the scheduling
# sequence number, or a command's own (index, step) key.
Key = tuple[int, int, Any, Timer]


class ProcessHandle:
    """A running generator process; `kill()` stops it at its next wake-up."""

    __slots__ = ("gen", "alive", "name", "wake")

    def __init__(self, gen: Process, name: str) -> None:
        self.gen = gen
        self.alive = True
        self.name = name
        self.wake: Timer | None = None  # its next wake-up

    def kill(self) -> None:
        if self.alive:
            self.alive = False
            self.gen.close()


class Engine:
    def __init__(self, *, buckets: bool = True) -> None:
        self.now = 0
        self._heap: list[Key] = []
        self._seq = 0
        self.current: ProcessHandle | None = None  # the process being resumed right now
        self._lanes: dict[int, deque[Key]] = {}  # delay -> keys scheduled that far ahead, in order
        self._lane_list: list[deque[Key]] = []
        # buckets (see above): keys due at or after `_horizon` (the end of the bucket taken
        # last) wait in `_buckets[when >> _bucket_shift]`
        self._bucket_shift = BUCKET_SHIFT if buckets else ONE_BUCKET_SHIFT
        self._horizon = 0
        self._buckets: dict[int, list[Key]] = {}
        self._bucket_order: list[int] = []  # a heap of the indices in `_buckets`
        self._sorted: deque[Key] = deque()  # the bucket being taken, in order: one more lane
        self._lane_list.append(self._sorted)

    def add_lane(self, delay: int) -> None:
        """Give timers scheduled exactly `delay` ahead a FIFO of their own (see above)."""
        if delay not in self._lanes:
            lane: deque[Key] = deque()
            self._lanes[delay] = lane
            self._lane_list.append(lane)

    def _push(self, key: Key) -> None:
        lane = self._lanes.get(key[0] - self.now)
        if lane is not None:
            lane.append(key)
        else:
            self._heap_or_bucket(key)

    def _heap_or_bucket(self, key: Key) -> None:
        """The heap for a key due within the current bucket; its own bucket otherwise."""
        when = key[0]
        if when < self._horizon:
            heapq.heappush(self._heap, key)
            return
        index = when >> self._bucket_shift
        bucket = self._buckets.get(index)
        if bucket is None:
            self._buckets[index] = [key]
            heapq.heappush(self._bucket_order, index)
        else:
            bucket.append(key)

    def _take_bucket(self) -> None:
        """Start on the next bucket: everything in it becomes a lane in order."""
        index = heapq.heappop(self._bucket_order)
        bucket = self._buckets.pop(index)
        bucket.sort()  # by (when, priority, order): unique, the timers are never compared
        self._sorted.extend(bucket)
        self._horizon = (index + 1) << self._bucket_shift

    def call_at(self, when: int, fn: Callable[..., Any], *args: Any) -> Timer:
        if when < self.now:
            when = self.now
        self._seq += 1
        timer = Timer(fn, args)
        self._push((when, PRIORITY_NORMAL, self._seq, timer))
        return timer

    def call_later(self, delay: int, fn: Callable[..., Any], *args: Any) -> Timer:
        return self.call_at(self.now + delay, fn, *args)

    def call_command_at(self, when: int, order: tuple[int, int], fn: Callable[..., Any], *args: Any) -> Timer:
        """Commands sort before everything else at their instant, by their own `order` key
        (command index, step), never by when they were scheduled: a rebuilt run schedules
        them at another moment and must still replay them identically."""
        timer = Timer(fn, args)
        self._heap_or_bucket((when, PRIORITY_COMMAND, order, timer))  # never a lane: it sorts before earlier keys
        return timer

    def spawn(self, gen: Process, name: str = "", delay: int = 0) -> ProcessHandle:
        handle = ProcessHandle(gen, name)
        self._wake(handle, self.now + delay)
        return handle

    def _wake(self, handle: ProcessHandle, when: int) -> None:
        """Schedule the process's next wake-up (the one `wake_at` can move)."""
        self._seq += 1
        timer = Timer(_RESUME, handle)
        self._push((when, PRIORITY_NORMAL, self._seq, timer))
        handle.wake = timer

    def wake_at(self, handle: ProcessHandle, when: int) -> None:
        """Move a sleeping process's next wake-up (e.g. a blocked request when the network heals)."""
        if handle.wake is not None:
            handle.wake.cancel()
        self._wake(handle, max(when, self.now))

    def run_until(self, until: int) -> None:
        """Handle every timer due before `until`, in order. The loop is the engine's hot path
        (2.5 M timers in a 5,000-node hour), so finding the next key and resuming a process
        are written out in it: no Python call of its own per timer."""
        heap = self._heap
        pop = heapq.heappop
        lanes = self._lane_list
        shift = self._bucket_shift
        while True:
            key = heap[0] if heap else None
            source = None
            for lane in lanes:  # the first due of the heap's top and the lanes' heads
                if lane:
                    head = lane[0]
                    if key is None or head < key:
                        key, source = head, lane
            if key is None or key[0] >= self._horizon:
                if self._bucket_order and (key is None or key[0] >> shift >= self._bucket_order[0]):
                    self._take_bucket()
                    continue
                if key is None:
                    break
            when, _priority, _order, timer = key
            if when >= until:
                break
            if source is None:
                pop(heap)
            else:
                source.popleft()
            fn = timer.callback
            if fn is None:
                continue
            timer.callback = None  # a fired timer is no longer active
            self.now = when
            if fn is not _RESUME:
                fn(*timer.args)
                continue
            handle = timer.args
            if not handle.alive:
                handle.wake = None  # it and its last timer would hold each other: a reference cycle
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
            if handle.wake is timer:  # the timer just taken is reused for the next wake-up
                self._seq += 1
                timer.callback = _RESUME
                self._push((when + delay, PRIORITY_NORMAL, self._seq, timer))
            else:  # the process was moved meanwhile (wake_at)
                self._wake(handle, when + delay)
        if until > self.now:
            self.now = until
