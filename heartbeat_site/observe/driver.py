"""The observing worker: one Celery task watches one real cluster while it holds the observation's Redis lease.

It publishes what it sees as a simulated run's driver publishes its simulation (heartbeat_site/live/driving/driver.py
``_flush``): the events into the run's bounded log and as frames on its feed, a snapshot every few seconds, a
clock message each quiet second, all fenced by the lease. Its time axis is the wall clock: an observation's
virtual time is the seconds since it started, at speed 1, never paused.

The trainer's credentials live only in this process's memory (``sealed.unseal`` reads and deletes them): a takeover
by another worker cannot go on, so an observation whose worker stopped ends, saying why (docs/observe.md).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
import uuid

import redis
from django.conf import settings
from django.db import close_old_connections
from django.utils import timezone

from heartbeat_site.live.delivery import frames
from heartbeat_site.live.delivery.publisher import Publisher
from heartbeat_site.live.driving import fencing
from heartbeat_site.live.driving.driver import QUIET_CLOCK_SECONDS, STOPPED_BY_TRAINER, guarded
from heartbeat_site.live.models import ACTIVE_STATUSES, Command, CommandStatus, Run, RunStatus
from heartbeat_site.live.runstore import activity, command_inbox, ownership, viewer_presence
from heartbeat_site.observe import sealed
from heartbeat_site.observe.changes import Change, ChangeMapper, meta, rfc3339
from heartbeat_site.observe.cluster import Connection, Problem, Seen, Watcher
from heartbeat_site.observe.snapshot import grace_of, observed_snapshot

log = logging.getLogger(__name__)

SNAPSHOT_SECONDS = 2.0  # a joining viewer's snapshot is at most this old (its catch-up comes from the log)
SAVE_SECONDS = 2.0
CREDENTIALS_GONE = ("the observing worker stopped; the cluster's credentials lived only in its memory, so the "
                    "observation cannot go on: start a new one")
# A failing watch is said again at its retries, at most this often: a page that joined just as it was said may
# have had a snapshot read a moment before (heartbeat_site/live/delivery/consumers.py, SNAPSHOT_REUSE_SECONDS)
PROBLEM_REPEAT_SECONDS = 5.0
CLOSING_SECONDS = 5.0  # closing its connection ends each watch at once; this long is a fault worth a warning
ONLY_STOP = "an observation follows the cluster's own time: only stop applies"


class ObservationDriver:
    def __init__(self, run_id: str, *, stop: threading.Event | None = None) -> None:
        conf = settings.HEARTBEAT
        self.run_id = run_id
        self.stop = stop or threading.Event()
        self.interval: float = conf["FRAME_INTERVAL"]
        self.idle_seconds: float = conf["IDLE_SECONDS"]
        self.lease = ownership.Lease(run_id, uuid.uuid4().hex, conf["LEASE_TTL"])
        self.mapper = ChangeMapper()
        self.buffer: list[dict] = []
        self.published_seq = 0
        self.watching = threading.Event()  # set to end the watcher's threads
        self.connection: Connection | None = None
        self.watcher: Watcher | None = None
        self.fence: fencing.Fence | None = None
        self.stopped_by_trainer = False
        self.problem: Problem | None = None  # the watch's current failure, None while it works
        self.snapshot_problem: Problem | None = None
        self.problem_said = 0.0  # when the page was last told the problem (monotonic)
        self.publisher = Publisher(run_id)

    def drive(self) -> str:
        if not self.lease.acquire():
            return "owned-elsewhere"
        self.keeper = ownership.LeaseKeeper(self.lease)
        self.keeper.start()
        try:
            return guarded(f"observation {self.run_id}", self._drive, self._fail)
        finally:
            self._let_go()

    def _let_go(self) -> None:
        """Stop watching, drop the client (and with it the credentials) and give the observation's lease up."""
        self.watching.set()
        if self.connection is not None:
            self.connection.close()
            self.connection = None
        if self.watcher is not None:
            if self.watcher.join(CLOSING_SECONDS):
                log.info("observation %s: watches closed", self.run_id)
            else:
                log.warning("observation %s: watches still open %g s after it ended", self.run_id, CLOSING_SECONDS)
        self.keeper.stop()
        with contextlib.suppress(redis.RedisError, OSError):
            self.lease.release()
        close_old_connections()

    def _drive(self) -> str:
        # the run's database row is this driver's from here on, fenced as a simulated run's (fencing.py)
        self.fence = fencing.take(self.run_id)
        run = Run.objects.filter(pk=self.run_id).first() if self.fence is not None else None
        if run is None or run.status not in ACTIVE_STATUSES:
            activity.mark_inactive(self.run_id)
            return "ended"
        self.run = run
        target = sealed.unseal(self.run_id)
        self.origin = time.time()
        if target is None:
            self.t0 = run.t_reached
            self._end(RunStatus.FAILED, CREDENTIALS_GONE)
            return "no-credentials"
        self.t0 = 0.0
        self.server = target.server
        self.connection = Connection(target)
        del target  # from here on the token is only in the client's configuration
        self.grace = grace_of(run)
        self.title = run.title
        self._update_run(status=RunStatus.RUNNING, started_at=timezone.now())
        self.watcher = Watcher(self.connection, self.watching)
        self.watcher.start()
        if not self.lease.publish([], self._state()):
            return "lease-lost"
        self._store_snapshot()
        self._send_clock()
        return self._loop()

    # -- the loop -------------------------------------------------------------------------

    def now(self) -> float:
        return round(self.t0 + time.time() - self.origin, 6)

    def _loop(self) -> str:
        mono = time.monotonic
        next_tick = mono() + self.interval
        self.last_sent = self.last_snapshot = self.last_save = self.last_idle_check = self.last_activity = mono()
        self.snapshot_seq = 0
        while True:
            if self.stop.is_set():
                self._end(RunStatus.FAILED, CREDENTIALS_GONE)
                return "worker-stopping"
            if self.keeper.lost.is_set():
                return "lease-lost"
            if command_inbox.wait_inbox(self.run_id, next_tick - mono()):  # a command was posted
                self._take_commands()
            if self.stopped_by_trainer:
                self._end(RunStatus.FINISHED, STOPPED_BY_TRAINER)
                return "stopped"
            now = mono()
            if now < next_tick:
                continue
            next_tick = max(next_tick + self.interval, now)
            fatal = self._take_seen()
            if not self._flush():
                return "lease-lost"
            if fatal is not None:
                self._end(RunStatus.FAILED, fatal.sentence, problem=fatal)
                return "failed"
            outcome = self._housekeeping(now)
            if outcome:
                return outcome

    def _take_seen(self) -> Problem | None:
        """What the watcher saw since the last slice, as events in the buffer; a fatal problem, if one came."""
        assert self.watcher is not None  # the loop runs once watching has started
        while True:
            try:
                seen = self.watcher.seen.get_nowait()
            except queue.Empty:
                return None
            if seen.problem is not None:
                failure = seen.problem
                if failure.fatal:
                    return failure
                if failure != self.problem or time.monotonic() - self.problem_said >= PROBLEM_REPEAT_SECONDS:
                    self.problem, self.problem_said = failure, time.monotonic()
                    self._send("run.notice", {**frames.error_message(failure.sentence, "cluster-unavailable"),
                                              "problem": failure.as_message()})
                continue
            if self.problem is not None:  # the page stops saying the watch fails (docs/websocket-protocol.md)
                self.problem = None
                self._send("run.notice", frames.error_message(f"watching {self.server} again", "cluster-available"))
            self.buffer.extend(self._events_of(seen))

    def _events_of(self, seen: Seen) -> list[dict]:
        t = round(self.t0 + seen.wall - self.origin, 6)
        when = rfc3339(seen.wall)
        if seen.kind == "changed":
            obj = seen.obj or {}
            return self.mapper.apply(Change(seen.resource, meta(obj).get("namespace") or "", meta(obj).get("name")
                                            or "", None if seen.deleted else obj, t, when))
        # a (re-)list: every object as it is now, and those the list no longer has are gone
        events = []
        listed = {(meta(obj).get("namespace") or "", meta(obj).get("name") or ""): obj for obj in seen.objects or ()}
        for key in [key for key in self.mapper.objects[seen.resource] if key not in listed]:
            events += self.mapper.apply(Change(seen.resource, key[0], key[1], None, t, when))
        for (namespace, name), obj in listed.items():
            events += self.mapper.apply(Change(seen.resource, namespace, name, obj, t, when))
        return events

    def _take_commands(self) -> None:
        """Stop is the one command an observation takes (the API refuses others before they get here)."""
        for command in Command.objects.filter(run_id=self.run_id, status=CommandStatus.PENDING).order_by("seq"):
            at = self.now()
            if command.action != "stop":
                Command.objects.filter(pk=command.pk).update(status=CommandStatus.REJECTED, error=ONLY_STOP)
                command_inbox.send_ack(self.run_id, command.seq, {"status": "rejected", "error": ONLY_STOP})
                continue
            with self.fence.held() if self.fence is not None else contextlib.nullcontext():
                claimed = Command.objects.filter(pk=command.pk, status=CommandStatus.PENDING).update(
                    at=at, status=CommandStatus.APPLIED, applied_at=timezone.now())
            if claimed:
                self.stopped_by_trainer = True
                command_inbox.send_ack(self.run_id, command.seq,
                                       {"status": "applied", "at": at, "clock": self._clock()})

    def _housekeeping(self, now: float) -> str | None:
        if now - self.last_idle_check >= 1.0:
            self.last_idle_check = now
            viewers = viewer_presence.viewer_count(self.run_id)
            if viewers:
                self.last_activity = now
            elif now - self.last_activity >= self.idle_seconds:
                self._end(RunStatus.IDLE, f"nobody watched for {self.idle_seconds:g} s")
                return "idle"
        if now - self.last_save >= SAVE_SECONDS:
            self._update_run(t_reached=self.now(), last_seq=self.published_seq)
            self.last_save = now
        if self.problem != self.snapshot_problem or (self.published_seq > self.snapshot_seq
                                                      and now - self.last_snapshot >= SNAPSHOT_SECONDS):
            self._store_snapshot()  # a page that joins finds the watch's problem, if any, in it
        if now - self.last_sent >= QUIET_CLOCK_SECONDS:
            self._send_clock()
        return None

    # -- publishing (as heartbeat_site/live/driving/driver.py does) -------------------------------------

    def _update_run(self, **fields: object) -> None:
        """The run's row, while this driver still holds it (``fencing.Deposed`` otherwise, which ``guarded`` ends
        the driver on)."""
        if self.fence is not None:
            self.fence.update_run(**fields)

    def _clock(self) -> dict:
        return {"t": self.now(), "speed": 1.0, "paused": False}

    def _state(self, status: str = RunStatus.RUNNING) -> dict:
        return {"t": repr(self.now()), "last_seq": self.published_seq, "speed": 1.0, "paused": 0, "status": status,
                "fast_forward": ""}

    def _flush(self) -> bool:
        events, self.buffer = self.buffer, []
        encoded = frames.encode_events(events)
        last = events[-1]["seq"] if events else self.published_seq
        state = {**self._state(), "last_seq": last}
        if not self.lease.publish(encoded, state, resume_from=self.published_seq):
            return False
        self.published_seq = last
        if events:
            text = frames.dumps(frames.frame(events, self._clock(), max_events=settings.HEARTBEAT["FRAME_MAX_EVENTS"]))
            self._send_text("run.frame", text, first=events[0]["seq"], last=last)
        return True

    def _store_snapshot(self) -> None:
        snapshot = observed_snapshot(self.mapper, t=self.now(), wall=self.origin + self.now() - self.t0,
                                     version=self.run.version, grace=getattr(self, "grace", 0.0), title=self.run.title,
                                     server=getattr(self, "server", ""), problem=self.problem)
        self.lease.store_snapshot(frames.dumps(frames.snapshot_body(snapshot, self._clock(), self.published_seq)))
        self.snapshot_seq = self.published_seq
        self.snapshot_problem = self.problem
        self.last_snapshot = time.monotonic()

    def _send(self, kind: str, message: dict, **extra: int) -> None:
        self._send_text(kind, frames.dumps(message), **extra)

    def _send_text(self, kind: str, text: str, **extra: int) -> None:
        self.publisher.send({"type": kind, "text": text, **extra})
        self.last_sent = time.monotonic()

    def _send_clock(self) -> None:
        self._send("run.clock", frames.clock_message(self._clock(), self.published_seq))

    def _end(self, status: str, reason: str, problem: Problem | None = None) -> None:
        """The observation ends for ``reason``; ``problem``: the cluster's refusal that ended it, which the last
        snapshot and the status message carry (a watch's earlier, retried problem is no reason any more)."""
        self.problem = problem
        self.watching.set()
        self._flush()
        t = self.now()
        clock = {"t": t, "speed": 1.0, "paused": True}
        self._update_run(status=status, end_reason=reason[:200], ended_at=timezone.now(), t_reached=t,
                         last_seq=self.published_seq, paused=True)
        self.lease.publish([], {**self._state(status), "paused": 1})
        if self.connection is not None:  # a worker that never watched keeps the snapshot its predecessor left
            self._store_snapshot()
        message = frames.status_message(status, reason, clock, self.published_seq)
        if problem is not None:
            message["problem"] = problem.as_message()  # said in the page's language (docs/observe.md)
        self._send("run.status", message)
        activity.mark_inactive(self.run_id)
        log.info("observation %s ended (%s): %s", self.run_id, status, reason)

    def _fail(self, reason: str) -> None:
        with contextlib.suppress(fencing.Deposed):  # another driver has the run: its word stands
            self._update_run(status=RunStatus.FAILED, end_reason=reason[:200], ended_at=timezone.now())
        activity.mark_inactive(self.run_id)
        message = frames.status_message(RunStatus.FAILED, reason, {}, self.published_seq)
        with contextlib.suppress(Exception):
            self.publisher.send({"type": "run.status", "text": frames.dumps(message)})
