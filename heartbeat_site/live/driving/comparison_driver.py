"""The driver of a comparison: one Celery task drives both sides on one clock (docs/architecture.md §6.9).

Each side is a run with its own lease, event log, frames and viewers, driven by a ``RunDriver`` of its own
(``driver.py``); this driver owns both leases and runs the two in lockstep: they share one ``VirtualClock``,
every slice takes both to the same virtual time (the one behind first), and a command is applied to both at the
same virtual instant. Commands for a comparison are stored on both runs in one transaction
(``comparisons.submit``) and read back here in one query, so both halves of a command are always taken together.
The key transitions of both sides are compared as they happen (``simulation/comparison.py``); the differences
go to the viewers of side a's run as ``comparison`` messages (the comparison page opens both runs' websockets).

When its worker dies both leases lapse; the watchdog dispatches a driver for each run, and the first to hold
both rebuilds both sides (each from its own document, seed and commands, exactly: ``lookback/rebuilding.py``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable

import redis
from django.db import DatabaseError, close_old_connections

from heartbeat_site.live.classroom.teaching import ComparisonLesson, comparison_teaching
from heartbeat_site.live.delivery import frames
from heartbeat_site.live.delivery.publisher import Publisher
from heartbeat_site.live.driving import fencing
from heartbeat_site.live.driving.driver import (
    SLICE_BUDGET,
    STEP_EPSILON,
    STOPPED_BY_TRAINER,
    SUB_STEP,
    RunDriver,
    guarded,
)
from heartbeat_site.live.models import Command, CommandStatus, Comparison, Run, RunStatus
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore import command_inbox, ownership
from simulation.comparison import Pairing

log = logging.getLogger(__name__)

PUBLISH_EVERY = 1.0  # wall seconds between two comparison messages at most
# Wall seconds of the clock the sides may lag behind it and catch up on in the next slices, before the clock waits
# for them. Each side has its bursts (a zone's nodes going Unknown: a second of work at one instant, and side a's
# come 10 s before side b's), and two sides' bursts are twice one run's: were the clock to wait for every one, as one
# run's does, it would lose their wall time for good (bench/README.md, "Two clusters, one clock"). Beyond it the
# clock waits (the sides stay this far behind it), and a speed the sides do not keep is lowered (governor.py).
CATCH_UP = 2.0


def differences_key(comparison_id: str) -> str:
    return f"hb:cmp:{{{comparison_id}}}:differences"


def rows_key(comparison_id: str) -> str:
    return f"hb:cmp:{{{comparison_id}}}:rows"


def read_differences(comparison_id: str) -> dict | None:
    """Every row of the strip as the driver last published it, for a page that opens or fell behind (or None):
    the ``comparison`` message of docs/websocket-protocol.md, whole."""
    client = get_redis()
    with client.pipeline(transaction=True) as pipe:
        pipe.get(differences_key(comparison_id))
        pipe.hgetall(rows_key(comparison_id))
        head, stored = pipe.execute()
    if not head:
        return None
    message = json.loads(head)
    found = [json.loads(text) for text in stored.values()]
    message["rows"] = sorted(found, key=lambda row: min(t for t in (row["a"], row["b"]) if t is not None))
    return message


class ComparisonDriver:
    def __init__(self, comparison_id: str, *, stop: threading.Event | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.comparison_id = comparison_id
        self.stop = stop or threading.Event()
        self.mono = monotonic
        self.sides: list[RunDriver] = []
        self.published_versions: tuple[int, int, bool] | None = None  # the sides' transitions last published
        self.published_at = -1e9
        self.pairing = Pairing()
        self.epoch = secrets.token_hex(4)  # names this driver's messages: a page never merges two drivers' rows
        self.published = 0  # the strip's messages this driver sent
        self.lesson: ComparisonLesson | None = None  # a comparison lesson (teaching.py)

    def drive(self) -> str:
        comparison = Comparison.objects.filter(pk=self.comparison_id).first()
        if comparison is None:
            return "unknown-comparison"
        runs = comparison.sides()
        self.sides = [RunDriver(run.id, stop=self.stop, monotonic=self.mono) for run in runs]
        held: list[RunDriver] = []
        try:
            return guarded(f"comparison {self.comparison_id}", lambda: self._hold_and_drive(held), self._fail)
        finally:
            for side in self.sides:
                if hasattr(side, "keeper"):
                    side.keeper.stop()
                if hasattr(side, "publisher"):
                    side.publisher.close()
            for side in held:
                with contextlib.suppress(redis.RedisError, OSError):
                    side.lease.release()
            close_old_connections()

    def _hold_and_drive(self, held: list[RunDriver]) -> str:
        if not self._acquire(held):
            return "owned-elsewhere"
        for side in self.sides:
            side.keeper = ownership.LeaseKeeper(side.lease)
            side.keeper.start()
            side.publisher = Publisher(side.run_id)
            side.track_transitions = True
        return self._drive()

    def _fail(self, reason: str) -> None:
        for side in self.sides:
            if hasattr(side, "publisher"):
                side._fail(reason)

    def _acquire(self, held: list[RunDriver]) -> bool:
        """Both leases, side a first (so that two drivers dispatched at once never hold one each). The second
        lease may still be held by a dead worker for up to a TTL after the first lapsed: wait that long."""
        first, second = self.sides
        if not first.lease.acquire():
            return False
        held.append(first)
        deadline = self.mono() + first.lease.ttl * 1.5
        while not second.lease.acquire():
            if self.mono() > deadline or self.stop.wait(0.1):
                return False
        held.append(second)
        return True

    def _drive(self) -> str:
        for side in self.sides:
            outcome = side._prepare()
            if outcome:
                self._end_others(side)
                return outcome
        a, b = self.sides
        # one clock for both, where the side that is further on stands (a takeover may have left one behind)
        b.clock = a.clock
        a.clock.jump_to(max(a.sim.now, b.sim.now))
        self.lesson = comparison_teaching(a, b)
        if self.lesson is not None:
            if a.sim.now > 0 or b.sim.now > 0 or a.run.steps_started:
                self.lesson.restore([event.to_dict() for event in a.replayed], min(a.sim.now, b.sim.now),
                                    [event.to_dict() for event in b.replayed])
            else:
                self.lesson.begin(a.sim.now)
            for side in self.sides:  # the lesson may have paused the clock (a question at once): every page knows
                side.lease.publish([], side._state())
                side._send_clock()
        for side in self.sides:
            side.replayed = []
        now = self.mono()
        for side in self.sides:
            side._start_loop(now)
        self._publish_differences()
        while True:
            try:
                outcome = self._slice()
            except (redis.RedisError, OSError) as exc:
                outcome = None
                for side in self.sides:
                    outcome = outcome or side._ride_out_redis_outage(exc)
            except DatabaseError as exc:
                outcome = None
                for side in self.sides:
                    outcome = outcome or side._ride_out_database_outage(exc)
            except fencing.Deposed as exc:  # another driver took a side: it takes the other too (fencing.py)
                outcome = a._deposed(exc)
            if outcome:
                return outcome

    def _slice(self) -> str | None:
        a, b = self.sides
        if self.stop.is_set():
            for side in self.sides:
                side._flush()
                side._save_position()
            return "worker-stopping"
        if a.keeper.lost.is_set() or b.keeper.lost.is_set():
            log.warning("comparison %s: a lease was lost, another worker drives it now", self.comparison_id)
            return "lease-lost"
        woken = command_inbox.wait_inbox(a.run_id, a.next_tick - self.mono())
        woken += command_inbox.wait_inbox(b.run_id, 0)
        if (woken or a.commands_due or b.commands_due) and self._take_commands():
            a.next_tick = self.mono()  # a trainer's fault goes out at once, in a frame of its own
        if a.stopped_by_trainer:
            return self._stop_both()
        now = self.mono()
        if not a._slice_due(now):
            return None
        self._advance_both(now)
        if not a.clock.preparing:
            for side in self.sides:
                if not side._flush():
                    return "lease-lost"
                if side.node_level:
                    side._answer_asks()
            a.governor.busy += self.mono() - now
            self._publish_differences()
        return self._housekeeping(now)

    def _stop_both(self) -> str:
        """The trainer stopped the comparison: both sides end, at the same virtual instant."""
        for side in self.sides:
            side._end(RunStatus.FINISHED, STOPPED_BY_TRAINER)
        return "stopped"

    def _advance_both(self, now: float) -> None:
        """Both sides to the clock, in lockstep: the one behind goes first, the other follows up to it, and the
        clock waits where the slower of the two stands once it lags by more than ``CATCH_UP``."""
        a, b = self.sides
        clock = a.clock
        deadline = now + SLICE_BUDGET
        if clock.preparing:
            for side in self.sides:
                side._advance(side.startup_end, deadline=deadline)
            clock.jump_to(min(a.sim.now, b.sim.now))
            if all(side.sim.now >= side.startup_end for side in self.sides):
                for side in self.sides:
                    side._go_live()
                # the clock and the speed kept go on from here: going live (twice) took wall time, not run time
                clock.jump_to(min(a.sim.now, b.sim.now))
                a._start_window(self.mono())
            return
        target = clock.now()
        if self.lesson is not None:
            self._advance_together(target, deadline)
        else:
            first, second = sorted(self.sides, key=lambda side: side.sim.now)
            first._advance(target, deadline=now + SLICE_BUDGET / 2)
            second._advance(first.sim.now, deadline=deadline)
        common = min(a.sim.now, b.sim.now)
        lag = min(target, a.duration) - common
        behind = lag > 1e-6
        if behind and clock.paused:  # a paused clock stands where both sides are
            clock.jump_to(common)
        elif lag > CATCH_UP * clock.speed:  # it waits for what the sides lag beyond that, no more
            clock.jump_to(common + CATCH_UP * clock.speed)
        a.governor.slice_done(behind=behind)
        a._limit_speed(self.mono())
        if b.clock.speed != b.run.speed:  # a's speed was lowered or raised (a._limit_speed saved it): b's too
            b.update_run(speed=b.clock.speed)
            b.run.speed = b.clock.speed

    def _advance_together(self, target: float, deadline: float | None = None) -> None:
        """A comparison lesson: both sides in short steps to the same times, cut where the lesson needs them
        (``ComparisonLesson.cut``), so that a step starts, pauses and applies its faults on both at one instant."""
        a, b = self.sides
        assert self.lesson is not None
        target = min(target, a.duration)
        while True:
            common = min(a.sim.now, b.sim.now)
            if common >= target or a.clock.paused or (deadline is not None and self.mono() >= deadline):
                return
            step_to = min(target, common + max(STEP_EPSILON, a.pace * SUB_STEP))
            cut = self.lesson.cut(common)
            if cut is not None and common < cut < step_to:
                step_to = cut
            started = self.mono()
            for side in (a, b):
                side._advance(step_to)
            if min(a.sim.now, b.sim.now) <= common:
                return  # within the simulation's resolution of the target, or paused on the way
            spent = self.mono() - started
            a.pace = min((step_to - common) / spent, 4 * a.pace) if spent > 0 else 4 * a.pace

    def _take_commands(self) -> bool:
        """Both sides at the clock's time, then every pending command of either run applied there: the two halves
        of a comparison's command (stored together) at one virtual instant. True when a fault was scheduled."""
        a, b = self.sides
        # the clock's time, or where the viewers are while the sides catch up with it (``CATCH_UP``): a fault lands
        # at most a slice past what the trainer saw, not seconds ahead of it
        target = min(a.clock.now(), max(a.sim.now, b.sim.now) + a.clock.speed * a.interval)
        if self.lesson is not None:
            self._advance_together(target)
        else:
            a._advance(target)
            b._advance(a.sim.now)
            a._advance(b.sim.now)  # a side that was ahead (the clock waited for the other) stays; the other follows
        pending = list(Command.objects.filter(run_id__in=[a.run_id, b.run_id], status=CommandStatus.PENDING)
                       .order_by("seq"))
        faults = False
        for side in self.sides:
            side.commands_due = False
            faults = side._apply_commands([c for c in pending if c.run_id == side.run_id]) or faults
        return faults

    def _housekeeping(self, now: float) -> str | None:
        outcome = None
        for side in self.sides:
            outcome = side._housekeeping(now) or outcome
            if outcome:
                self._end_others(side)
                return outcome
        return None

    def _end_others(self, ended: RunDriver) -> None:
        """One side ended (its duration, nobody watching, a dead run): the other ends the same way."""
        run = Run.objects.filter(pk=ended.run_id).first()
        if run is None:
            return
        for side in self.sides:
            if side is not ended and hasattr(side, "sim") and Run.objects.filter(
                    pk=side.run_id, status__in=(RunStatus.PENDING, RunStatus.RUNNING)).exists():
                side._end(run.status, run.end_reason)
        self._publish_differences(final=True)

    def _publish_differences(self, final: bool = False) -> None:
        """The rows of the strip that changed to the viewers of side a's run (all of them first), when a side made a
        new key transition; every row is kept in Redis for a page that opens (``read_differences``)."""
        a, b = self.sides
        if a.transitions is None or b.transitions is None or not hasattr(b, "sim"):
            return
        versions = (a.transitions.version, b.transitions.version, final)
        # Only when a side made a new transition, and at most once a second of wall time (the next slice publishes
        # what waited): a large zone outage makes a thousand in a few seconds.
        if versions == self.published_versions or (not final and self.mono() - self.published_at < PUBLISH_EVERY):
            return
        self.published_versions, self.published_at = versions, self.mono()
        changed = self.pairing.update(a.transitions, b.transitions)
        first = self.published == 0
        self.published += 1
        head = {"type": "comparison", "comparison": self.comparison_id, "t": round(min(a.sim.now, b.sim.now), 6),
                "v": f"{self.epoch}.{self.published}"}
        if final:
            head["final"] = True
        if not first:  # the rows that changed since the page's message ``since`` (docs/websocket-protocol.md)
            head["since"] = f"{self.epoch}.{self.published - 1}"
        shown = self.pairing.ordered() if first else list(changed.items())
        rows = [{"id": name, **row.as_dict()} for name, row in shown]
        expires = int(a.run.duration) + 24 * 3600
        with get_redis().pipeline(transaction=True) as pipe:
            if first:
                pipe.delete(rows_key(self.comparison_id))
            if rows:
                pipe.hset(rows_key(self.comparison_id), mapping={row["id"]: json.dumps(row) for row in rows})
            pipe.expire(rows_key(self.comparison_id), expires)
            pipe.set(differences_key(self.comparison_id),
                     json.dumps({key: value for key, value in head.items() if key != "since"}), ex=expires)
            pipe.execute()
        # on side a's feed only: the comparison page opens both sides' websockets and needs the strip once
        a._send_text("run.notice", frames.dumps({**head, "rows": rows}))
