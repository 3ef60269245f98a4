"""The run driver: one Celery task owns one run while it holds the run's Redis lease.

Each slice (``HEARTBEAT_FRAME_INTERVAL``, 0.1 s) it advances the simulation to
``virtual clock now`` (wall time x speed), publishes the new events as one frame, appends
them to the bounded event log and renews the lease, all fenced by the lease token.
Commands wake it at once: it gives each the current virtual time, persists that ``at``
and only then applies it (docs/architecture.md §2.4), so a takeover that replays
scenario + seed + commands reproduces the run exactly. A trainer's commands and a lesson's
intents go through one function (``RunDriver.apply``); every database write of the driver
is fenced by the epoch at which it took the run (``fencing.py``), as its Redis writes are
by its lease. Every ``HEARTBEAT_CHECKPOINT_SECONDS`` of
virtual time it leaves a checkpoint (checkpointing.py): a takeover continues the newest instead of
replaying the run from virtual time 0.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable

import redis
from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.utils import timezone

from heartbeat_site.live.classroom import questions
from heartbeat_site.live.classroom.teaching import teaching_for
from heartbeat_site.live.delivery import detail, frames
from heartbeat_site.live.delivery.publisher import Publisher
from heartbeat_site.live.driving import checkpointing, fencing
from heartbeat_site.live.driving.governor import SpeedGovernor
from heartbeat_site.live.driving.intents import (
    Intent,
    Notify,
    Pause,
    Resume,
    RevealCause,
    ScheduleFault,
    SetSpeed,
    move_clock,
)
from heartbeat_site.live.driving.pacing import PacedSimulation, VirtualClock
from heartbeat_site.live.lookback.rebuilding import applied_fault_commands, replay_until
from heartbeat_site.live.models import ACTIVE_STATUSES, Command, CommandKind, CommandStatus, Run, RunStatus
from heartbeat_site.live.runs import commands
from heartbeat_site.live.runstore import (
    activity,
    checkpoint_series,
    command_inbox,
    detail_asks,
    ownership,
    run_state,
    snapshot_and_frames,
    viewer_presence,
)
from simulation import CommandError, Simulation, load_scenario
from simulation.comparison import KeyTransitions
from simulation.events import SimEvent

log = logging.getLogger(__name__)

STEP_EPSILON = 1e-6  # run_until(t) is exclusive: step just past the controller pass
DB_SAVE_SECONDS = 2.0
QUIET_CLOCK_SECONDS = 1.0  # a clock message when no frame went out for this long
IDLE_CHECK_SECONDS = 1.0
# Wall seconds of simulation one slice may take at most: however large the cluster, a frame
# (or a clock message) goes out this often, and commands are taken between slices.
SLICE_BUDGET = 0.3
SUB_STEP = 0.05  # wall seconds one run_until call aims at, so a slice keeps its budget
# Clusters this large simulate their start-up (nodes registering, every pod created, scheduled
# and started: a burst of ~90 events per node) ahead of the clock, as fast as the worker can,
# and go live once it is over, at a steady state.
PREPARE_NODES = 500
OUTAGE_FIRST_RETRY = 0.2  # seconds before the first retry when Redis or the database is away
OUTAGE_MAX_RETRY = 1.0  # retries back off up to this (well inside a watchdog's patience)
REPUBLISH_BATCH = 1000  # events per Redis call when a restarted Redis gets them back
DETAIL_SECONDS = 60.0  # how long frames carry a node's details after a viewer asked for them
MAX_WATCHED = 64  # nodes whose details frames carry at once
STOPPED_BY_TRAINER = "stopped by the trainer"  # a run's end_reason after a stop command


def frame_interval(base: float, viewers: int) -> float:
    """Slice length for an audience: ``base`` (10 frames/s) up to 200 viewers, then longer
    so a big room costs the ASGI servers a constant number of messages per second (each
    message is per viewer); at most 0.25 s, still well inside "a blink"."""
    return min(max(base, base * viewers / 200), max(base, 0.25))


def guarded(what: str, drive: Callable[[], str], fail: Callable[[str], None]) -> str:
    """``drive()``'s outcome; a dependency lost meanwhile or the driver's own error as an outcome too."""
    try:
        return drive()
    except fencing.Deposed as exc:
        log.warning("%s: %s; this driver stops without writing anything more", what, exc)
        return "deposed"
    except (redis.RedisError, OSError, DatabaseError) as exc:
        # Redis or the database went away while the run was being set up: not the run's
        # fault. Its lease lapses and a watchdog dispatches it again once they are back.
        log.warning("%s: could not start driving (%s: %s); it will be dispatched again", what, type(exc).__name__, exc)
        return "dependency-unavailable"
    except Exception as exc:
        log.exception("driver for %s failed", what)
        fail(f"{type(exc).__name__}: {exc}")
        return "failed"


class RunDriver(PacedSimulation):
    def __init__(self, run_id: str, *, stop: threading.Event | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        conf = settings.HEARTBEAT
        self.run_id = run_id
        self.stop = stop or threading.Event()
        self.mono = monotonic
        self.base_interval: float = conf["FRAME_INTERVAL"]
        self.interval = self.base_interval
        self.idle_seconds: float = conf["IDLE_SECONDS"]
        self.max_frame_events: int = conf["FRAME_MAX_EVENTS"]
        self.lease = ownership.Lease(run_id, uuid.uuid4().hex, conf["LEASE_TTL"])
        self.buffer: list[dict] = []
        self.published_seq = 0
        self.snapshot_seq = -1
        self.viewers = -1
        self.stopped_by_trainer = False  # a stop command was applied: the run ends after its ack
        # a comparison's side keeps its key transitions (comparison_driver.py)
        self.track_transitions = False
        self.transitions: KeyTransitions | None = None
        self.checkpointer: checkpointing.Checkpointer | None = None
        self.restored_from: checkpoint_series.Checkpoint | None = None  # the checkpoint this driver continued
        self.fence: fencing.Fence | None = None  # the epoch this driver took the run at (``_prepare``)
        self.revealed = False  # a drill's cause has been revealed: its events go out as they happened

    # -- life cycle -------------------------------------------------------------------

    def drive(self) -> str:
        """Drive the run until it ends, the worker stops or the lease is lost."""
        if not self.lease.acquire():
            return "owned-elsewhere"
        self.keeper = ownership.LeaseKeeper(self.lease)
        self.keeper.start()  # before the rebuild, which may take seconds on a large cluster
        self.publisher = Publisher(self.run_id)
        try:
            return guarded(f"run {self.run_id}", self._drive, self._fail)
        finally:
            if self.checkpointer is not None:
                self.checkpointer.close()
            self.keeper.stop()
            with contextlib.suppress(redis.RedisError, OSError):
                self.lease.release()
            self.publisher.close()
            close_old_connections()

    def _drive(self) -> str:
        return self._prepare() or self._loop()

    def _prepare(self) -> str | None:
        """Rebuild the run where viewers are and announce it; an outcome when there is nothing to drive."""
        # first of all, before the command log and the published position are read: a deposed driver's write
        # in flight is then either in what this driver reads, or refused (fencing.py)
        fence = fencing.take(self.run_id)
        run = Run.objects.filter(pk=self.run_id).first() if fence is not None else None
        if fence is None or run is None:
            # Redis remembers a run the database does not have (a database reset under a
            # shared Redis): nothing to drive, and nobody should dispatch it again.
            log.warning("run %s: listed as active in Redis but not in the database; dropped", self.run_id)
            activity.mark_inactive(self.run_id)
            return "unknown-run"
        if run.status not in ACTIVE_STATUSES:
            activity.mark_inactive(self.run_id)
            return "ended"
        self.run, self.fence = run, fence
        self.revealed = run.revealed
        self.scenario = load_scenario(run.document)
        self.duration = run.duration
        state = run_state.read_state(self.run_id)
        t0, seq0 = self._published_position(run, state)
        replayed = self._rebuild(run, t0, seq0)
        if self.track_transitions:
            self.transitions = KeyTransitions(self.sim.startup_done_at)
            self.transitions.feed(replayed)
            self.replayed = replayed  # a comparison lesson is restored from both sides' (comparison_driver.py)
        base_seq = self.restored_from.seq if self.restored_from is not None else 0
        replayed_seq = replayed[-1].seq if replayed else base_seq
        if replayed_seq != seq0:
            log.error("run %s: replay to t=%s gave seq %s, published seq is %s", self.run_id, t0, replayed_seq, seq0)
        self.published_seq = max(seq0, replayed_seq)
        self.clock = VirtualClock(t=self.sim.now, speed=run.speed, paused=run.paused, monotonic=self.mono)
        if state.get("fast_forward"):  # a lesson's "next" under way: the trainer's speed comes back at its step
            self.clock.fast_forward = json.loads(state["fast_forward"])
        self.startup_end = self.sim.startup_done_at
        self.clock.preparing = run.node_count >= PREPARE_NODES and self.sim.now < self.startup_end
        self.pace = 1.0  # virtual seconds simulated per wall second, as last measured
        self.governor = SpeedGovernor()
        self.prepared: deque = deque(maxlen=settings.HEARTBEAT["EVENT_LOG_SIZE"])
        self.node_level = detail.is_node_level(run.node_count)
        # what a restarted Redis lost, kept to be put back (``_republish``)
        self.recent_events: deque[tuple[int, str]] = deque(maxlen=settings.HEARTBEAT["EVENT_LOG_SIZE"])
        self.recent_frames: deque[tuple[int, int, str]] = deque(maxlen=snapshot_and_frames.FRAMES_KEPT)
        self.commands_due = False  # pending commands to take although no notification came
        self.watched: dict[str, float] = {}  # node -> until when frames carry its details
        # a drill's events that name its cause, published as placeholders until the reveal
        self.hidden_events: dict[int, str] = {}
        self.teaching = teaching_for(self, run)
        if not run.comparison_id:  # a comparison's sides are rebuilt from time 0 (their key transitions)
            self.checkpointer = checkpointing.Checkpointer(self.lease, run, self.restored_from)
        fence.update_run(status=RunStatus.RUNNING, started_at=run.started_at or timezone.now())
        restored = self.restored_from
        if self.teaching is not None:
            # before the first state is published: a lesson whose first question comes at once pauses the clock,
            # and a page that joins in between must not get a running clock from that state
            if t0 > 0 or run.steps_started:
                runner = checkpointing.lesson_runner(restored.lesson) if restored and restored.lesson else None
                self.teaching.restore([event.to_dict() for event in replayed], self.sim.now, runner=runner)
            else:
                self.teaching.begin(self.sim.now)
        if not self.lease.publish([], {**self._state(), "checkpoint_t": repr(restored.t) if restored else "",
                                       "checkpoint_seq": restored.seq if restored else ""}):
            return "lease-lost"
        self._store_snapshot()
        self._send_clock()
        return None

    def _rebuild(self, run: Run, t0: float, seq0: int) -> list[SimEvent]:
        """``self.sim`` at the published position ``t0``: the run's newest checkpoint continued when there is
        one at or before it, else the run replayed from virtual time 0. The events simulated on the way."""
        checkpoint = self._usable_checkpoint(run, t0, seq0)
        if checkpoint is not None:
            started = time.monotonic()
            try:
                sim = Simulation.restore(checkpoint.sim)
                held = set(checkpoint.commands)
                for command in applied_fault_commands(run):
                    if command.pk not in held:  # applied after the checkpoint: at or after its time
                        sim.schedule_command(command.payload, command.at)
                events = sim.run_until(t0) if t0 > sim.now else []
            except Exception as exc:  # a checkpoint of another code version, a truncated one: the replay is exact
                log.warning("run %s: its checkpoint at t=%.1f s could not be continued (%s: %s); replaying from 0",
                            self.run_id, checkpoint.t, type(exc).__name__, exc)
            else:
                self.sim, self.restored_from = sim, checkpoint
                log.info("run %s: continued its checkpoint at t=%.1f s (seq %d) to t=%.1f s in %.2f s",
                         self.run_id, checkpoint.t, checkpoint.seq, t0, time.monotonic() - started)
                return events
        started = time.monotonic()
        self.sim, replayed = replay_until(run, t0)
        if t0 > 0:
            log.info("run %s: replayed from 0 to t=%.1f s in %.2f s", self.run_id, t0, time.monotonic() - started)
        return replayed

    def _usable_checkpoint(self, run: Run, t0: float, seq0: int) -> checkpoint_series.Checkpoint | None:
        """The run's latest checkpoint at or before the published position, when a takeover can continue it
        (logging why not otherwise)."""
        if t0 <= 0 or run.comparison_id:
            return None
        try:
            checkpoint = checkpoint_series.read_checkpoint(self.run_id, t0, seq0)
        except (ValueError, KeyError) as exc:
            log.warning("run %s: its checkpoint is unreadable (%s: %s); replaying from 0", self.run_id,
                        type(exc).__name__, exc)
            return None
        why = None
        if checkpoint is None:
            why = "it has no checkpoint at or before the published position"
        elif run.lesson and checkpoint.lesson is None:
            why = "its checkpoint lacks the lesson's state"
        if why is not None:
            log.info("run %s: %s; replaying from 0 to t=%.1f s", self.run_id, why, t0)
            return None
        return checkpoint

    def _published_position(self, run: Run, state: dict) -> tuple[float, int]:
        """Where viewers are: Redis state when it exists, else what the database last saw."""
        if "t" in state and "last_seq" in state:
            return float(state["t"]), int(state["last_seq"])
        return run.t_reached, run.last_seq

    def _start_loop(self, now: float) -> None:
        self.next_tick = now + self.interval
        self.last_sent = self.last_db_save = self.last_idle_check = self.last_snapshot = now
        self.last_activity = now
        self._start_window(now)

    def _loop(self) -> str:
        self._start_loop(self.mono())
        while True:
            try:
                outcome = self._slice()
            except (redis.RedisError, OSError) as exc:  # OSError: a socket error redis-py did not wrap
                outcome = self._ride_out_redis_outage(exc)
            except DatabaseError as exc:
                outcome = self._ride_out_database_outage(exc)
            except fencing.Deposed as exc:
                outcome = self._deposed(exc)
            if outcome:
                return outcome

    def _deposed(self, exc: fencing.Deposed) -> str:
        """Another driver took the run while this one was held up past its lease: stop here, with nothing
        written, acknowledged or published (fencing.py)."""
        log.warning("%s; this driver stops", exc)
        return "deposed"

    def _slice(self) -> str | None:
        """Wait for the next slice (or a command), simulate it and publish it."""
        if self.stop.is_set():
            self._flush()
            self._save_position()
            return "worker-stopping"
        if self.keeper.lost.is_set():
            log.warning("run %s: lease lost, another worker drives it now", self.run_id)
            return "lease-lost"
        woken = command_inbox.wait_inbox(self.run_id, self.next_tick - self.mono())
        if (woken or self.commands_due) and self._take_commands():
            # Show a trainer's fault now, in its own frame, and start the next slice from
            # it: waiting for the slice (up to 0.1-0.25 s) was most of a command's latency.
            # Faults come one per acked POST, so this adds a frame per command, no more.
            self.next_tick = self.mono()
        if self.stopped_by_trainer:
            self._end(RunStatus.FINISHED, STOPPED_BY_TRAINER)
            return "stopped"
        now = self.mono()
        if not self._slice_due(now):
            return None
        self._advance_slice(now)
        if self.clock.preparing:
            return self._housekeeping(now)
        if not self._flush():
            log.warning("run %s: lease lost, another worker drives it now", self.run_id)
            return "lease-lost"
        if self.checkpointer is not None:
            self._checkpoint()
        self.governor.busy += self.mono() - now
        if self.node_level:
            self._answer_asks()
        return self._housekeeping(now)

    def _slice_due(self, now: float) -> bool:
        """Whether the next slice is due at wall time ``now``; when it is, the one after is due an interval later,
        or an interval from now if this driver fell behind (slices missed are not made up). A comparison's
        driver paces both sides by side a's (comparison_driver.py)."""
        if now < self.next_tick:
            return False
        self.next_tick = self.next_tick + self.interval if self.next_tick + self.interval > now else now + self.interval
        return True

    # -- outages of the services around the run -------------------------------------------

    def _ride_out_redis_outage(self, exc: Exception) -> str | None:
        """Redis is away: keep the simulation, retry with backoff, then take the run up again.

        Nothing is published meanwhile and virtual time waits (the clock is moved to where the
        simulation is), so viewers miss nothing. When Redis answers again the driver takes its
        lease back (unless another worker holds the run: then it yields) and puts back what a
        restarted, empty Redis lost: the run's state, its recent events (so that viewers resume
        with ``?after=`` without a gap), kept frames and a snapshot.
        """
        log.warning("run %s: Redis unreachable (%s: %s); the run waits for it", self.run_id, type(exc).__name__, exc)
        delay = OUTAGE_FIRST_RETRY
        while not self.stop.wait(delay):
            delay = min(2 * delay, OUTAGE_MAX_RETRY)
            try:
                if not self.lease.reclaim():
                    log.warning("run %s: another worker took the run during the outage", self.run_id)
                    return "owned-elsewhere"
                self._republish()
            except (redis.RedisError, OSError):
                continue
            self.clock.jump_to(self.sim.now)
            self.next_tick = self.mono()
            self._start_window(self.mono())
            log.info("run %s: Redis is back; the run goes on from t=%.1f s", self.run_id, self.sim.now)
            return None
        return "worker-stopping"

    def _republish(self) -> None:
        """What viewers need from Redis, again: state, recent events and frames, a snapshot."""
        activity.mark_active(self.run_id)
        recent = list(self.recent_events)
        for i in range(0, len(recent), REPUBLISH_BATCH):
            if not self.lease.publish(recent[i : i + REPUBLISH_BATCH], {}):
                raise redis.RedisError("the lease was lost while republishing")
        for first, last, text in list(self.recent_frames):
            self.lease.store_frame(first, last, text)
        if not self.lease.publish([], self._state()):
            raise redis.RedisError("the lease was lost while republishing")
        self._store_snapshot()
        self._send_clock()

    def _ride_out_database_outage(self, exc: Exception) -> str | None:
        """The database is away: the run goes on; what needed it is tried again later.

        Pending commands are taken at the next slice (``commands_due``), the position is saved
        at the next DB_SAVE_SECONDS, and the end of the run is recorded at the next slice.
        """
        log.warning("run %s: database unreachable (%s: %s); retrying", self.run_id, type(exc).__name__, exc)
        connection.close()  # a fresh connection at the next query
        self.commands_due = True
        self.stop.wait(OUTAGE_FIRST_RETRY)
        return None

    def _housekeeping(self, now: float) -> str | None:
        if self.sim.now >= self.duration:
            if self.teaching is not None and self.teaching.open_question() is not None:
                # a class still answering: the run waits at its end for the trainer's reveal
                if not self.clock.paused:
                    self.apply(Pause())
                    self._send_clock()
            else:
                self._end(RunStatus.FINISHED, "the scenario's duration was reached")
                return "finished"
        if now - self.last_idle_check >= IDLE_CHECK_SECONDS:
            self.last_idle_check = now
            viewers = viewer_presence.viewer_count(self.run_id)
            if viewers != self.viewers:
                self.viewers = viewers
                self._send("run.presence", {"type": "presence", "viewers": viewers})
                self.interval = frame_interval(self.base_interval, viewers)
            if viewers:
                self.last_activity = now
            elif now - self.last_activity >= self.idle_seconds:
                self._end(RunStatus.IDLE, f"nobody watched or commanded for {self.idle_seconds:g} s")
                return "idle"
        if now - self.last_db_save >= DB_SAVE_SECONDS and not self.clock.preparing:
            self._save_position()
        if self.published_seq > self.snapshot_seq and now - self.last_snapshot >= self.snapshot_every:
            self._store_snapshot()
        if now - self.last_sent >= QUIET_CLOCK_SECONDS:
            self._send_clock()
        if self.teaching is not None:
            self.teaching.tick(now)
        return None

    # -- simulation -------------------------------------------------------------------

    def _advance(self, target: float, deadline: float | None = None) -> bool:
        """Simulate up to ``target`` (virtual s); with a wall ``deadline``, stop there if the
        simulation is slower than that. True when ``target`` was reached.

        The work goes in steps of about SUB_STEP wall seconds, sized by the pace measured so
        far, so a burst of hundreds of thousands of events cannot hold a slice for seconds.
        """
        target = min(target, self.duration)
        while self.sim.now < target:
            step_to = target
            if deadline is not None:
                if self.mono() >= deadline:
                    return False
                step_to = min(target, self.sim.now + max(STEP_EPSILON, self.pace * SUB_STEP))
            stop = self.teaching.stop_at() if self.teaching is not None else None
            if stop is not None and self.sim.now < stop < step_to:
                step_to = stop  # a lesson step starts exactly at its time
            started, before = self.mono(), self.sim.now
            events = self.sim.run_until(step_to)
            if self.transitions is not None:
                self.transitions.feed(events)
            if self.clock.preparing:
                self.prepared.extend(events)  # converted once the start-up is over (``_go_live``)
            else:
                converted = [event.to_dict() for event in events]
                self.buffer.extend(converted)
                if self.teaching is not None:
                    self.teaching.feed(converted, self.sim.now)
                    if self.clock.paused:
                        return True  # a step paused the run (a question): the rest waits
            if self.sim.now == before:
                return True  # ``target`` is within a microsecond, the simulation's resolution
            spent = self.mono() - started
            if spent > 0:
                # follow the pace down at once, up at most fourfold per step
                self.pace = min((self.sim.now - before) / spent, 4 * self.pace)
            else:
                self.pace *= 4
        return True

    def _advance_slice(self, now: float) -> None:
        """One slice's simulation: up to the clock, or through the start-up while preparing."""
        if self.clock.preparing:
            self._advance(self.startup_end, deadline=now + SLICE_BUDGET)
            self.clock.jump_to(self.sim.now)  # the clock starts where the start-up ends
            if self.sim.now >= self.startup_end:
                self._go_live()
            return
        behind = not self._advance(self.clock.now(), deadline=now + SLICE_BUDGET)
        if behind:
            self.clock.jump_to(self.sim.now)  # the clock waits for the simulation: no lag builds up
        self.governor.slice_done(behind=behind)
        self._limit_speed(self.mono())

    def _go_live(self) -> None:
        """End of a large cluster's start-up: publish it, then every viewer gets a snapshot.

        While preparing, no frame goes out (clock messages say ``preparing`` and how far the
        start-up is): its hundreds of thousands of events would cost every viewer tens of
        megabytes to skip. Only the events the bounded log can hold are converted and logged;
        ``GET /api/runs/<id>/events`` regenerates older ones by replay.
        """
        self.clock.preparing = False
        if self.prepared:
            self.published_seq = self.prepared[-1].seq
        self.buffer.extend(event.to_dict() for event in self.prepared)
        self.prepared.clear()
        events = frames.encode_events(self.buffer)
        self.buffer.clear()
        self.lease.publish(events, self._state())
        self._save_position()
        self._store_snapshot()
        self.publisher.send({"type": "run.snapshot"})
        self._send_clock()
        self._start_window(self.mono())
        log.info("run %s: start-up simulated, live from t=%.1f s", self.run_id, self.sim.now)

    def _start_window(self, now: float) -> None:
        self.governor.restart(now, self.sim.now)

    def _limit_speed(self, now: float) -> None:
        """Lower the speed when the worker does not keep it, raise it back when it has room
        (``governor.py``), and tell every page."""
        decision = self.governor.decide(now, self.sim.now, self.clock.speed, self.clock.limited_from)
        if decision is None or self.clock.paused or self.sim.now >= self.duration:
            return
        speed, why = decision
        log.info("run %s: %s; speed now %gx", self.run_id, why, speed)
        self.clock.limit_speed(speed)
        self.update_run(speed=speed)
        self._send_clock()

    def _take_commands(self) -> bool:
        """Apply pending commands at the current virtual time, persisting ``at`` first.

        Returns True when a fault was scheduled (its event is due in the next slice)."""
        self._advance(self.clock.now())
        pending = list(Command.objects.filter(run_id=self.run_id, status=CommandStatus.PENDING).order_by("seq"))
        self.commands_due = False
        return self._apply_commands(pending)

    def _apply_commands(self, pending: list[Command]) -> bool:
        """Claim and apply ``pending`` at the simulation's time (``_take_commands``); True when a fault was
        scheduled."""
        faults = controls = False
        for command in pending:
            at = self.sim.now
            with self.held():  # a deposed driver claims nothing (``Deposed``): its successor takes the command
                claimed = Command.objects.filter(pk=command.pk, status=CommandStatus.PENDING).update(
                    at=at, status=CommandStatus.APPLIED, applied_at=timezone.now()
                )
            if not claimed:
                continue
            try:
                if command.kind == CommandKind.FAULT:
                    self.apply(ScheduleFault(command.payload, at, recorded=True))
                    faults = True
                else:
                    self._apply_control(command)
                    controls = True
            except (CommandError, ValueError) as exc:
                with self.held():
                    Command.objects.filter(pk=command.pk).update(status=CommandStatus.REJECTED, error=str(exc)[:500])
                command_inbox.send_ack(self.run_id, command.seq, {"status": "rejected", "error": str(exc)})
                continue
            self.last_activity = self.mono()
            command_inbox.send_ack(self.run_id, command.seq, {"status": "applied", "at": at, "clock": self._clock()})
        if controls:
            # pause/speed/step: every screen's clock changes now, after the events simulated up to the
            # command (``_advance`` above), so that the clock names the last of them (its ``last_seq``)
            self._flush()
            self._send_clock()
        return faults

    def _apply_control(self, command: Command) -> None:
        action = command.action
        if action == "pause":
            self.apply(Pause())  # at the command's time (the simulation's), not where the clock ran ahead to
        elif action == "resume":
            self.apply(Resume())
        elif action == "speed":
            self.apply(SetSpeed(float(command.payload["value"])))
        elif action == "step":
            self._advance(self.sim.next_monitor_pass() + STEP_EPSILON)
            self.clock.jump_to(self.sim.now)
        elif action == "stop":
            self.stopped_by_trainer = True  # ``_slice`` ends the run once the command is acked
        elif action in ("reveal", "next"):
            if self.teaching is None:
                raise ValueError(f"{action}: this run has no lesson or drill")
            if action == "reveal":
                self.teaching.reveal()
            else:
                self.teaching.next()
            self._start_window(self.mono())
        else:
            raise ValueError(f"unknown control action {action!r}")
        self.update_run(speed=self.clock.speed, paused=self.clock.paused)

    # -- the one path: a trainer's commands and a lesson's or drill's intents ----------------------

    def apply(self, intent: Intent) -> None:
        """Apply one intent, whoever asked: a trainer's command (``_apply_commands``) or a lesson or drill
        (``teaching.py``), which never touch the simulation, the clock or the run's row themselves."""
        match intent:
            case ScheduleFault(command=command, at=at, recorded=recorded):
                if not recorded:
                    self._record_fault(command, at)
                self.sim.schedule_command(dict(command), at)
                return
            case Notify(message=message):
                self._send("run.notice", message)
                return
            case RevealCause():
                self._reveal_cause()
                return
        move_clock(self.clock, intent, self.sim.now)  # at the simulation's time: the clock may run a little ahead
        self._start_window(self.mono())
        self.update_run(speed=self.clock.speed, paused=self.clock.paused)

    def _record_fault(self, command: dict, at: float) -> None:
        """A lesson's fault in the run's command log, dated, before it is scheduled: a takeover replays it."""
        with self.held():
            persisted = commands.persist(self.run, CommandKind.FAULT, command["action"], dict(command))
            Command.objects.filter(pk=persisted.pk).update(at=at, status=CommandStatus.APPLIED,
                                                           applied_at=timezone.now())

    def _reveal_cause(self) -> None:
        """A drill's reveal: "revealed" is this driver's state, then the run's row, then the event log's."""
        self.update_run(revealed=True)
        self.revealed = True
        self._reveal_hidden()

    def update_run(self, **fields: object) -> None:
        """The run's row, while this driver still holds the run (``fencing.Deposed`` otherwise)."""
        assert self.fence is not None, "the run is not taken yet (_prepare)"
        self.fence.update_run(**fields)

    def held(self) -> contextlib.AbstractContextManager[None]:
        """A transaction whose writes commit only while this driver holds the run (``fencing.Fence.held``)."""
        assert self.fence is not None, "the run is not taken yet (_prepare)"
        return self.fence.held()

    def hides_cause(self) -> bool:
        """A drill before its reveal: events that name the cause go out as placeholders."""
        return bool(self.run.drill) and not self.revealed

    # -- publishing -------------------------------------------------------------------

    def _clock(self) -> dict:
        return self.clock.as_dict(self.sim.now)

    def _state(self, status: str = RunStatus.RUNNING, last_seq: int | None = None) -> dict:
        return {
            "t": repr(self.sim.now),
            "last_seq": self.published_seq if last_seq is None else last_seq,
            "speed": self.clock.speed,
            "paused": int(self.clock.paused),
            "status": status,
            "fast_forward": json.dumps(self.clock.fast_forward) if self.clock.fast_forward else "",
        }

    def _flush(self) -> bool:
        """Publish buffered events (log first, then the frame). False if the lease is gone.

        The events count as published only once the log has them: if Redis fails half way
        they stay buffered and go out after the outage (``_ride_out_redis_outage``).
        """
        events = [event for event in self.buffer if event["seq"] > self.published_seq]
        if self.hides_cause():
            events = self._hide_cause(events)
        encoded = frames.encode_events(events)
        last = events[-1]["seq"] if events else self.published_seq
        if not self.lease.publish(encoded, self._state(last_seq=last), resume_from=self.published_seq):
            return False
        self.buffer.clear()
        self.published_seq = last
        self.recent_events.extend(encoded)
        if events:
            first = events[0]["seq"]
            if self.node_level:
                text = frames.dumps(detail.node_frame(events, self._clock(), self.sim, self._watched(),
                                                      frames.wall_ms()))
                self.recent_frames.append((first, last, text))
                if not self.lease.store_frame(first, last, text):
                    return False
            else:
                text = frames.dumps(frames.frame(events, self._clock(), max_events=self.max_frame_events))
            self._send_text("run.frame", text, first=first, last=last)
        return True

    # -- lessons and drills (teaching.py) -------------------------------------------------------

    def pause_here(self) -> None:
        """Pause at the simulation's time (the clock may have run a little ahead of it)."""
        self.clock.pause(at=self.sim.now)

    def last_event_seq(self) -> int:
        return self.buffer[-1]["seq"] if self.buffer else self.published_seq

    def recent_event_dicts(self) -> list[dict]:
        """The events the driver still holds, as they happened (a drill's hidden ones included)."""
        held = [json.loads(self.hidden_events.get(seq, text)) for seq, text in self.recent_events]
        return held + [event for event in self.buffer if event["seq"] > self.published_seq]

    def _hide_cause(self, events: list[dict]) -> list[dict]:
        """A drill before its reveal: events that name the cause go out as placeholders."""
        shown = []
        for event in events:
            viewer = questions.viewer_event(event)
            if viewer is not event:
                self.hidden_events[event["seq"]] = frames.dumps(event)
            shown.append(viewer)
        return shown

    def _reveal_hidden(self) -> None:
        """After a drill's reveal the log gets the hidden events back, for every later reader."""
        pairs = sorted(self.hidden_events.items())
        self.lease.replace_events(pairs)
        self.recent_events = deque(((seq, self.hidden_events.get(seq, text)) for seq, text in self.recent_events),
                                   maxlen=self.recent_events.maxlen)
        self.hidden_events.clear()

    # -- a node's details, for viewers of a node-level run -----------------------------------

    def _watched(self) -> list[str]:
        """Nodes a viewer opened in the last DETAIL_SECONDS: frames carry their full events."""
        now = self.mono()
        for node in [node for node, until in self.watched.items() if until <= now]:
            del self.watched[node]
        return sorted(self.watched)

    def _answer_asks(self) -> None:
        """Answer viewers' requests for a node's full objects, as of the last published seq."""
        for ask in detail_asks.take_asks(self.run_id):
            if ask.get("kind") == detail.OBJECTS_ASK:  # the run's Kubernetes API (heartbeat_site/k8sapi/cluster.py)
                detail_asks.answer(ask["reply"], frames.dumps({**detail.cluster_objects(self.sim),
                                                            "last_seq": self.published_seq}))
                continue
            node = ask.get("node")
            objects = detail.node_detail(self.sim, node) if isinstance(node, str) else None
            if not isinstance(node, str) or objects is None:
                reply = frames.error_message(f"the run has no node named {node!r}", "unknown-node")
            else:
                self.watched.pop(node, None)
                self.watched[node] = self.mono() + DETAIL_SECONDS
                while len(self.watched) > MAX_WATCHED:
                    del self.watched[next(iter(self.watched))]  # the longest unrenewed goes first
                reply = {"type": "detail", "node": node, "last_seq": self.published_seq, "objects": objects}
            detail_asks.answer(ask["reply"], frames.dumps(reply))

    def _send(self, kind: str, message: dict, **extra: int) -> None:
        self._send_text(kind, frames.dumps(message), **extra)

    def _send_text(self, kind: str, text: str, **extra: int) -> None:
        self.publisher.send({"type": kind, "text": text, **extra})
        self.last_sent = self.mono()

    def _send_clock(self) -> None:
        self._send("run.clock", frames.clock_message(self._clock(), self.published_seq))

    def _store_snapshot(self) -> None:
        started = self.mono()
        snapshot = detail.node_snapshot(self.sim) if self.node_level else self.sim.snapshot()
        if self.hides_cause():
            snapshot = questions.viewer_snapshot(snapshot)
        text = frames.dumps(frames.snapshot_body(snapshot, self._clock(), self.published_seq))
        self.lease.store_snapshot(text)
        self.snapshot_seq = self.published_seq
        self.last_snapshot = self.mono()
        # Big clusters make snapshots expensive: keep them to a small share of the driver's time.
        self.snapshot_every = max(1.0, 20 * (self.last_snapshot - started))

    def _checkpoint(self, *, final: bool = False) -> None:
        """The run's checkpoint at its published position, when one is due (``final``: the run ended)."""
        checkpointer = self.checkpointer
        if checkpointer is None:
            return
        if not final and not checkpointer.due(self.sim.now):
            checkpointer.collect()
            return
        lesson = self.teaching.checkpoint_state() if self.teaching is not None else None
        if final:
            checkpointer.finish(self.sim, self.published_seq, lesson)
        else:
            checkpointer.write(self.sim, self.published_seq, lesson)

    def _save_position(self) -> None:
        self.update_run(t_reached=self.sim.now, last_seq=self.published_seq)
        self.last_db_save = self.mono()

    def _end(self, status: str, reason: str) -> None:
        self._flush()
        self.pause_here()  # an ended run's clock stands at its end on every page, live or opened later
        self.update_run(
            status=status, end_reason=reason, ended_at=timezone.now(), t_reached=self.sim.now,
            last_seq=self.published_seq,
        )
        self.lease.publish([], self._state(status))
        self._store_snapshot()
        self._send("run.status", frames.status_message(status, reason, self._clock(), self.published_seq))
        self._checkpoint(final=True)  # before mark_inactive, which gives the run's keys their retention
        activity.mark_inactive(self.run_id)

    def _fail(self, reason: str) -> None:
        fields = {"status": RunStatus.FAILED, "end_reason": reason[:200], "ended_at": timezone.now()}
        if self.fence is None:  # it failed before taking the run
            Run.objects.filter(pk=self.run_id).update(**fields)
        else:
            try:
                self.fence.update_run(**fields)
            except fencing.Deposed:
                log.warning("run %s: another driver took it; its failure here is not the run's", self.run_id)
                return
        activity.mark_inactive(self.run_id)
        message = frames.status_message(RunStatus.FAILED, reason, {}, self.published_seq)
        try:
            self.publisher.send({"type": "run.status", "text": frames.dumps(message)})
        except Exception:  # the failure may be Redis itself; the database row already says it
            log.exception("run %s: could not announce the failure", self.run_id)
