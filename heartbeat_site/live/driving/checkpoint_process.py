"""The checkpoint process beside a large run's driver (checkpointing.py): it follows the run and writes its
checkpoints, so the driver's frames never wait for one.

``Simulation.checkpoint()`` takes about a millisecond per node (seconds at 5,000 nodes, bench/README.md),
far over a slice's budget, and a thread would hold the interpreter's lock against the driver (and
could not pickle a simulation the driver changes meanwhile); ``fork`` is no option in a worker with
threads. So this process keeps a simulation of its own of the same run: determinism makes it the
driver's. Asked for a checkpoint at virtual time ``t`` whose last event is ``seq`` (the driver's
published position), it schedules the run's fault commands it lacks, simulates to ``t``, checks that
its last event is ``seq`` and writes the checkpoint with the driver's lease token (refused once that
driver lost the run). It takes the newest request only, rests as long as a checkpoint took before the next
(at most half a core goes to pickling), and exits when the driver closes the pipe or dies.

This module imports nothing of Django's at the top: the spawned child imports it before Django is set up.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

import redis

log = logging.getLogger(__name__)

REST_FACTOR = 1.0  # wall seconds of rest per second a checkpoint took: at most half a core for them
MAX_REST = 60.0
# below the driver's worker and the web server on a shared machine: pickling a 5,000-node run takes a core for
# seconds (os.nice adds to the process's niceness: 0 for a worker started as usual)
NICENESS = 10


@dataclass
class Request:
    """Write the run's checkpoint at ``t``, whose last event is ``seq``. ``commands``: every applied fault
    command of the run as (id, payload, at); ``lesson``: the lesson runner's state at ``t``; ``final``: at
    once (the run ended, its driver waits)."""

    t: float
    seq: int
    commands: list[tuple[int, dict, float]]
    lesson: bytes | None = None
    final: bool = False


@dataclass
class Start:
    """Where the process's simulation starts: the run's scenario document and seed at time 0, or a
    checkpoint (``sim``, its last event ``seq`` and the commands it holds)."""

    run_id: str
    token: str
    ttl: float
    redis_url: str
    document: dict
    seed: int
    sim: bytes | None = None
    seq: int = 0
    commands: tuple[int, ...] = ()


def main(conn: Connection, start: Start) -> None:
    """The process's entry point (``spawn``). It runs at a lower priority than its driver (``NICENESS``): a
    checkpoint may come a little later, a frame may not (bench/README.md, "Takeover")."""
    with contextlib.suppress(OSError):  # a platform without priorities: as before
        os.nice(NICENESS)
    os.environ["REDIS_URL"] = start.redis_url  # the driver's Redis, whatever this environment says
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heartbeat_site.settings")
    import django

    django.setup()
    follower = Follower(start)
    with contextlib.suppress(EOFError, OSError):  # the driver is gone
        serve(conn, follower)


def serve(conn: Connection, follower: Follower) -> None:
    pending: Request | None = None
    rest_until = 0.0
    while True:
        if pending is None:
            wait: float | None = None
        elif pending.final:
            wait = 0.0
        else:
            wait = max(0.0, rest_until - time.monotonic())
        if conn.poll(wait):  # requests that came meanwhile first: only the newest is written
            message = conn.recv()
            if message is None:
                return
            pending = message
            continue
        if pending is None:
            continue
        started = time.monotonic()
        conn.send(follower.write(pending))
        pending = None
        rest_until = time.monotonic() + min(MAX_REST, REST_FACTOR * (time.monotonic() - started))


class Follower:
    """The process's simulation of the run, and its writes."""

    def __init__(self, start: Start) -> None:
        from heartbeat_site.live.runstore import ownership
        from simulation import Simulation, load_scenario

        self.lease = ownership.Lease(start.run_id, start.token, start.ttl)
        if start.sim is not None:
            self.sim = Simulation.restore(start.sim)
        else:
            self.sim = Simulation(load_scenario(start.document), seed=start.seed)
        self.seq = start.seq
        self.scheduled = set(start.commands)

    def write(self, request: Request) -> dict[str, Any]:
        """Catch up with ``request`` and write its checkpoint; what happened, for the driver."""
        from heartbeat_site.live.runstore import checkpoint_series

        for pk, payload, at in request.commands:
            if pk in self.scheduled:
                continue
            if at < self.sim.now:  # cannot happen: a command is applied at the driver's time, ahead of this one
                return {"written": False, "t": request.t, "why": f"command {pk} at {at} is behind t={self.sim.now}"}
            self.sim.schedule_command(payload, at)
            self.scheduled.add(pk)
        if request.t > self.sim.now:
            events = self.sim.run_until(request.t)
            if events:
                self.seq = events[-1].seq
        if self.seq != request.seq or abs(self.sim.now - request.t) > 1e-6:
            return {"written": False, "t": request.t,
                    "why": f"at t={self.sim.now} the last event is {self.seq}, the driver's is {request.seq}"}
        started = time.monotonic()
        data = self.sim.checkpoint()
        seconds = time.monotonic() - started
        checkpoint = checkpoint_series.Checkpoint(t=request.t, seq=request.seq, commands=sorted(self.scheduled),
                                                  sim=data, lesson=request.lesson)
        try:
            written = self.lease.store_checkpoint(checkpoint)
            why = "" if written else "the lease is held by another driver"
        except redis.RedisError as exc:  # the next request tries again
            written, why = False, f"Redis: {type(exc).__name__}: {exc}"
        return {"written": written, "t": request.t, "seq": request.seq, "seconds": seconds, "bytes": len(data),
                "why": why}
