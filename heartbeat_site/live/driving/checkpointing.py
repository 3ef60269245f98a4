"""A live run's checkpoints (docs/architecture.md "Checkpoints"): written while the run is driven, continued
by a takeover instead of a replay from virtual time 0.

Every ``HEARTBEAT_CHECKPOINT_SECONDS`` of virtual time (and at the run's end) the driver asks for a checkpoint
of its simulation at its published position: virtual time, last event seq, the fault commands the
simulation holds and, for a lesson, its runner's state. It goes to Redis (``runstore/checkpoint_series.py``:
a series thinned evenly over the run's life, for takeovers and look-back: lookback/from_checkpoints.py) fenced by
the driver's lease token. A small run's is written by the driver itself (about a millisecond per node); from
``HEARTBEAT_CHECKPOINT_PROCESS_FROM`` nodes by a process beside it (checkpoint_process.py), which keeps its own
simulation of the run, so a slice never waits.
"""

from __future__ import annotations

import logging
import pickle
import time
from multiprocessing import get_context
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

from django.conf import settings

from heartbeat_site.live.driving import checkpoint_process
from heartbeat_site.live.driving.checkpoint_process import Request, Start
from heartbeat_site.live.lookback.rebuilding import applied_fault_commands
from heartbeat_site.live.models import Run
from heartbeat_site.live.runstore import checkpoint_series, ownership
from simulation import Simulation

log = logging.getLogger(__name__)

FINAL_WAIT = 60.0  # wall seconds an ended run's driver waits for its last checkpoint


def lesson_state(runner: Any) -> bytes:
    """A lesson runner's state (simulation/lessons/runner.py: plain data) for a checkpoint."""
    return pickle.dumps(runner, protocol=5)


def lesson_runner(data: bytes) -> Any:
    return pickle.loads(data)  # written by this service's drivers only, as the simulation's checkpoint


class Checkpointer:
    """Writes one driven run's checkpoints: ``due`` each slice, ``write`` when it is, ``finish`` at the end."""

    def __init__(self, lease: ownership.Lease, run: Run, base: checkpoint_series.Checkpoint | None) -> None:
        conf = settings.HEARTBEAT
        self.lease = lease
        self.run = run
        self.every: float = conf["CHECKPOINT_SECONDS"]
        self.in_process = run.node_count >= conf["CHECKPOINT_PROCESS_FROM"]
        self.base = base  # where the checkpoint process's simulation starts (None: time 0)
        self.next_t = (base.t if base else 0.0) + self.every
        self.last: dict[str, Any] | None = None  # the last checkpoint written (or refused), as reported
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._last_slice = 0.0  # when the driver last called ``collect``
        self._slice_gap = 0.0  # the longest interval between two calls since the process's last report

    def due(self, t: float) -> bool:
        return self.every > 0 and t >= self.next_t

    def write(self, sim: Simulation, seq: int, lesson: bytes | None, *, final: bool = False) -> None:
        """The checkpoint of ``sim`` (whose last event is ``seq``), or a request for it to the process."""
        self.next_t = sim.now + self.every
        commands = [(c.pk, c.payload, c.at) for c in applied_fault_commands(self.run)]
        if not self.in_process:
            started = time.monotonic()
            data = sim.checkpoint()
            seconds = time.monotonic() - started
            checkpoint = checkpoint_series.Checkpoint(t=sim.now, seq=seq, commands=[pk for pk, _, _ in commands],
                                                      sim=data, lesson=lesson)
            written = self.lease.store_checkpoint(checkpoint)
            self._report({"written": written, "t": sim.now, "seq": seq, "seconds": seconds, "bytes": len(data),
                          "why": "" if written else "the lease is held by another driver"})
            return
        conn = self._connection()
        conn.send(Request(t=sim.now, seq=seq, commands=commands, lesson=lesson, final=final))
        self.collect()

    def collect(self, wait: float = 0.0) -> None:
        """Take the checkpoint process's reports (waiting up to ``wait`` seconds for one). The driver calls it
        every slice: the longest interval between two calls since the last report is how long its frames
        waited at most while the process followed the run and wrote that checkpoint, reported with it
        (bench/recovery_bench.py reads it)."""
        now = time.monotonic()
        if self._conn is not None and self._last_slice:
            self._slice_gap = max(self._slice_gap, now - self._last_slice)
        self._last_slice = now
        conn = self._conn
        try:
            while conn is not None and conn.poll(wait):
                self._report(conn.recv())
                wait = 0.0
        except (EOFError, OSError):
            log.warning("run %s: the checkpoint process ended", self.run.pk)
            self.close()

    def finish(self, sim: Simulation, seq: int, lesson: bytes | None) -> None:
        """The run ended: its last checkpoint, waited for (up to FINAL_WAIT seconds)."""
        if self.every <= 0:
            return
        self.write(sim, seq, lesson, final=True)
        deadline = time.monotonic() + FINAL_WAIT
        while self._conn is not None and (self.last is None or self.last["t"] < sim.now):
            left = deadline - time.monotonic()
            if left <= 0:
                log.warning("run %s: its last checkpoint was not written within %g s", self.run.pk, FINAL_WAIT)
                return
            self._last_slice = 0.0  # the driver waits here, no slice is held up
            self.collect(wait=left)

    def close(self) -> None:
        conn, process = self._conn, self._process
        self._conn = self._process = None
        if conn is not None:
            conn.close()  # the process sees the end of its pipe and exits
        if process is not None:
            process.join(1.0)
            if process.is_alive():  # in a checkpoint the lease no longer lets it write
                process.terminate()
                process.join(1.0)

    def _connection(self) -> Connection:
        if self._conn is None:
            base = self.base
            start = Start(run_id=self.run.pk, token=self.lease.token, ttl=self.lease.ttl,
                          redis_url=settings.REDIS_URL, document=self.run.document, seed=self.run.seed,
                          sim=base.sim if base else None, seq=base.seq if base else 0,
                          commands=tuple(base.commands) if base else ())
            context = get_context("spawn")  # nothing of the worker's threads or connections is copied
            ours, theirs = context.Pipe()
            process = context.Process(target=checkpoint_process.main, args=(theirs, start),
                                      name=f"checkpoints {self.run.pk}", daemon=True)
            process.start()
            theirs.close()
            self._conn, self._process, self.base = ours, process, None
        return self._conn

    def _report(self, report: dict[str, Any]) -> None:
        self.last = report
        gap = ""
        if self._conn is not None:  # from the process: the driver went on meanwhile
            gap = f"; the driver's longest slice interval meanwhile {self._slice_gap:.2f} s"
            self._slice_gap = 0.0
        if report["written"]:
            log.info("run %s: checkpoint at t=%.1f s (seq %s): %.2f s, %d bytes%s", self.run.pk, report["t"],
                     report["seq"], report["seconds"], report["bytes"], gap)
        else:
            log.warning("run %s: checkpoint at t=%.1f s not written: %s", self.run.pk, report["t"], report["why"])
