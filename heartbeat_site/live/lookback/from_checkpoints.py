"""Look-back from a run's checkpoints: a seek, a replayed event page, a sequence diagram or a run's Kubernetes
objects at a past time start from the run's nearest checkpoint at or before it instead of virtual time 0.

Drivers leave a series of checkpoints in Redis (``Lease.store_checkpoint`` of ``runstore/ownership.py``,
docs/architecture.md "Checkpoints"): every ``HEARTBEAT_CHECKPOINT_SECONDS`` of virtual time, thinned evenly over
the run's life to ``HEARTBEAT_CHECKPOINTS_KEPT``, kept with the run's retention once it ended. A checkpoint
continued to ``t`` gives the very state a replay from 0 gives (``Simulation.restore``, exact), once the applied
fault commands it does not hold are scheduled on it (they were applied after it, so at or after its time).

A restore is not free: about as much work as simulating ``RESTORE_WORTH_SECONDS`` of the same run
(bench/README.md: ``restore()`` about 0.6 ms a node; the simulation about 2 µs a node per virtual second at
1,000 nodes, a little more at 5,000). A caller that has a simulation of its own at or before ``t`` continues
that one unless a checkpoint is further ahead than that.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import redis

from heartbeat_site.live.models import Command, Run
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore import checkpoint_series
from simulation import Simulation

log = logging.getLogger(__name__)

RESTORE_WORTH_SECONDS = 300.0


@dataclass
class Restored:
    """A run's simulation restored from its checkpoint at ``t`` (last event ``seq``), with the ids of the
    applied fault commands it holds or has scheduled."""

    sim: Simulation
    t: float
    seq: int
    commands: set[int]


def restored(run: Run, commands: list[Command], t: float, *, seq: int | None = None,
             beyond: float = -math.inf) -> Restored | None:
    """The run's latest checkpoint at or before virtual time ``t`` (and whose last event is at or before ``seq``)
    restored with ``commands`` (the run's applied faults) scheduled, when it is later than ``beyond`` (where a
    simulation the caller has stands, plus ``RESTORE_WORTH_SECONDS``); else None (none, unreadable: the caller
    replays)."""
    try:
        position = checkpoint_series.nearest_checkpoint(checkpoint_series.checkpoint_positions(run.id), t, seq)
        if position is None or position[0] <= beyond:
            return None
        started = time.monotonic()
        checkpoint = checkpoint_series.read_checkpoint_at(run.id, position)
        if checkpoint is None:  # thinned out meanwhile: the caller replays
            return None
        entry = Restored(Simulation.restore(checkpoint.sim), checkpoint.t, checkpoint.seq, set(checkpoint.commands))
    except (redis.RedisError, OSError) as exc:
        log.warning("run %s: its checkpoints could not be read (%s: %s)", run.id, type(exc).__name__, exc)
        return None
    except Exception as exc:  # a checkpoint of another code version, a damaged one: the replay is exact
        log.warning("run %s: its checkpoint could not be restored (%s: %s)", run.id, type(exc).__name__, exc)
        return None
    if not schedule_new_commands(entry.sim, entry.commands, commands):
        log.warning("run %s: its checkpoint at t=%g cannot take the applied faults", run.id, entry.t)
        return None
    log.info("run %s: look-back to t=%g continues its checkpoint at t=%g (restored in %.2f s)", run.id, t, entry.t,
             time.monotonic() - started)
    return entry


def schedule_new_commands(sim: Simulation, scheduled: set[int], commands: list[Command]) -> bool:
    """Schedule on a rebuilt ``sim`` the applied ``commands`` it lacks (ids in ``scheduled``, updated);
    False if one of them is already in its past (then only a new rebuild is exact)."""
    for command in commands:
        if command.pk in scheduled:
            continue
        if command.at < sim.now:
            return False
        sim.schedule_command(command.payload, command.at)
        scheduled.add(command.pk)
    return True


def has_checkpoints(run_id: str) -> bool:
    """Whether the run has checkpoints to look back from (False when Redis cannot say)."""
    try:
        return bool(get_redis().exists(checkpoint_series.checkpoints_key(run_id)))
    except (redis.RedisError, OSError):
        return False


def beyond(now: float | None) -> float:
    """Where a checkpoint must be to be worth restoring instead of continuing a simulation at ``now`` (None:
    the caller has none, any checkpoint beats a replay from 0)."""
    return -math.inf if now is None else now + RESTORE_WORTH_SECONDS
