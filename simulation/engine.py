"""A small discrete-event engine: timers and callback processes on a virtual clock (µs).

Every scheduled callback is a `Timer`. It waits for its time as the key `(when, priority,
order, timer)` in one of three structures: a lane, a bucket or the heap (below). The first
three fields of a key are unique, so keys compare as plain tuples, in C, and never reach the
timer; the loop always takes the smallest key of all three structures, so the order is the
one a single heap of these keys would give.

Why not SimPy: three things this project needs that SimPy does not offer, and a modest speed
gain. (1) Commands must sort at their instant by their own key, not by when they were
scheduled: a live run schedules a command just before it applies, a rebuilt run schedules it
at the start, and both must give the same bytes. SimPy breaks ties by insertion order. (2)
Timers are cancelled all the time (taint-eviction countdowns, the tainting tick, kubelet work
when a kubelet stops); SimPy timeouts cannot be cancelled. (3) A run's state must be data:
`Simulation.checkpoint()` pickles it, and a restored run continues byte for byte as the run
never interrupted (docs/simulation-model.md). SimPy's processes are generators, and a
suspended generator cannot be pickled. Speed: 5,000 sleeping processes for a simulated hour,
1.76 M wake-ups, took 1.50 µs per wake-up against 2.00 µs with SimPy 4.1.2 (measured when this
engine's processes were generators too; the callback processes below cost no more).

So a process is not a generator here but a chain of callbacks: an `engine.Process` (one
activity of a component: a kubelet's Lease loop, one status PATCH in flight) has at most one
pending timer, `wake`; what a generator did after `yield delay` is a method scheduled with
`sleep(proc, delay, method, *args)`. Everything a timer holds is a bound method or a
functools.partial of one, and plain data: no lambda, closure or local function, so the
queues pickle with the rest. Otherwise we keep SimPy's shape: run until a time, deterministic
tie-breaking.

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
from collections.abc import Callable
from typing import Any

PRIORITY_COMMAND = 0
PRIORITY_NORMAL = 1
BUCKET_SHIFT = 20  # a bucket spans 2**20 µs, about a second
ONE_BUCKET_SHIFT = 62  # a bucket longer than any run: no buckets


class Timer:
    """A scheduled callback, and the handle its scheduler keeps: `cancel()` makes it a no-op.
    A timer that fired is no longer active."""

    __slots__ = ("callback", "args")

    def __init__(self, callback: Callable[..., Any] | None, args: Any) -> None:
        self.callback = callback  # None: cancelled or fired
        self.args = args  # the callback's arguments (a tuple); None once it fired

    def cancel(self) -> None:
        self.callback = None
        self.args = ()

    @property
    def active(self) -> bool:
        return self.callback is not None


# (when, priority, order, timer): what the queues hold and compare. `order` is the scheduling
# sequence number, or a command's own (index, step) key.
Key = tuple[int, int, Any, Timer]


class Process:
    """One activity of a component that runs as a chain of callbacks (a kubelet's Lease loop,
    one status PATCH in flight): at most one of its timers is pending at a time, `wake`.
    `kill()` cancels it, so nothing of the activity runs any more; `Engine.wake_at` moves it.
    A component that is one activity (the Lease controller) is its own Process."""

    __slots__ = ("alive", "wake")

    def __init__(self) -> None:
        self.alive = True
        self.wake: Timer | None = None  # its pending timer

    def kill(self) -> None:
        self.alive = False
        if self.wake is not None:
            self.wake.cancel()
            self.wake = None


class Engine:
    def __init__(self, *, buckets: bool = True) -> None:
        self.now = 0
        self._heap: list[Key] = []
        self._seq = 0
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
        if delay < 0:
            delay = 0
        timer = Timer(fn, args)
        self._after(delay, timer)  # not call_at: the watch deliveries and "right now" timers come this way
        return timer

    def _after(self, delay: int, timer: Timer) -> None:
        """Queue ``timer`` ``delay`` µs from now: in the lane kept for that delay when there is one
        (appended in order, no heap push), else in the heap or its bucket."""
        self._seq += 1
        key = (self.now + delay, PRIORITY_NORMAL, self._seq, timer)
        lane = self._lanes.get(delay)
        if lane is not None:
            lane.append(key)
        else:
            self._heap_or_bucket(key)

    def call_command_at(self, when: int, order: tuple[int, int], fn: Callable[..., Any], *args: Any) -> Timer:
        """Commands sort before everything else at their instant, by their own `order` key
        (command index, step), never by when they were scheduled: a rebuilt run schedules
        them at another moment and must still replay them identically."""
        timer = Timer(fn, args)
        self._heap_or_bucket((when, PRIORITY_COMMAND, order, timer))  # never a lane: it sorts before earlier keys
        return timer

    def sleep(self, proc: Process, delay: int, fn: Callable[..., Any], *args: Any) -> None:
        """Continue `proc` with `fn(*args)` in `delay` µs (what a process's `yield delay` was)."""
        if proc.alive:  # half a million of these in a 1,000-node hour
            timer = proc.wake
            if timer is not None and timer.args is None:  # its last timer, fired: used again
                timer.callback, timer.args = fn, args
            else:
                timer = proc.wake = Timer(fn, args)
            self._after(delay, timer)

    def wake_at(self, proc: Process, when: int) -> None:
        """Move a sleeping process's next wake-up (e.g. a blocked request when the network heals):
        the same continuation, at `when` (not before now)."""
        timer = proc.wake
        if timer is not None and timer.callback is not None:
            fn, args = timer.callback, timer.args
            timer.cancel()
            proc.wake = None
            self.sleep(proc, max(when, self.now) - self.now, fn, *args)

    def run_until(self, until: int) -> None:
        """Handle every timer due before `until`, in order. The loop is the engine's hot path
        (2.5 M timers in a 5,000-node hour), so finding the next key and resuming a process
        is written out in it: no Python call of its own per timer."""
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
            args, timer.args = timer.args, None  # fired (a process's last timer must not hold it: no cycle)
            self.now = when
            fn(*args)
        if until > self.now:
            self.now = until
