"""A run's checkpoints, ``hb:run:{<id>}:checkpoints``: a hash from ``"<t> <seq>"`` to a packed checkpoint,
thinned evenly over the run's life (docs/architecture.md §9.5).

Written by the driver or its checkpoint process (``ownership.Lease.store_checkpoint``, fenced by the lease); read
by takeovers and look-back (``lookback/from_checkpoints.py``).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import cast

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore.naming import run_key


def checkpoints_key(run_id: str) -> str:
    """The run's checkpoints (a hash: field ``"<t> <seq>"``, value ``pack_checkpoint``; ``Lease.store_checkpoint``)."""
    return run_key(run_id, "checkpoints")


@dataclass
class Checkpoint:
    """A run's simulation at virtual time ``t`` (``Simulation.checkpoint()``), whose last event is ``seq``;
    ``commands``: the applied fault commands (ids) it holds; ``lesson``: the lesson runner's state then."""

    t: float
    seq: int
    commands: list[int]
    sim: bytes
    lesson: bytes | None = None

    @property
    def field(self) -> str:
        return f"{self.t!r} {self.seq}"


Position = tuple[float, int]  # a checkpoint's virtual time and last seq

CHECKPOINT_MAGIC = b"heartbeat-run-checkpoint/1\n"


def pack_checkpoint(checkpoint: Checkpoint) -> bytes:
    """One Redis value: a header line (JSON: t, seq, commands, the simulation's length), the simulation's bytes,
    then the lesson's."""
    header = json.dumps({"t": checkpoint.t, "seq": checkpoint.seq, "commands": checkpoint.commands,
                         "sim": len(checkpoint.sim)}).encode()
    return b"".join((CHECKPOINT_MAGIC, header, b"\n", checkpoint.sim, checkpoint.lesson or b""))


def unpack_checkpoint(data: bytes) -> Checkpoint:
    """What ``pack_checkpoint`` wrote; ValueError (or KeyError) for anything else."""
    if not data.startswith(CHECKPOINT_MAGIC):
        raise ValueError("not a run checkpoint (or one of another format version)")
    end = data.index(b"\n", len(CHECKPOINT_MAGIC))
    header = json.loads(data[len(CHECKPOINT_MAGIC):end])
    sim_end = end + 1 + int(header["sim"])
    if sim_end > len(data):
        raise ValueError("a truncated run checkpoint")
    return Checkpoint(t=float(header["t"]), seq=int(header["seq"]), commands=list(header["commands"]),
                      sim=data[end + 1:sim_end], lesson=data[sim_end:] or None)


def checkpoint_positions(run_id: str) -> list[Position]:
    """The (virtual time, last seq) of each of the run's checkpoints, in order."""
    fields = cast("list[str]", get_redis().hkeys(checkpoints_key(run_id)))
    positions = []
    for field in fields:
        t, _, seq = field.partition(" ")
        positions.append((float(t), int(seq)))
    return sorted(positions)


def nearest_checkpoint(positions: list[Position], t: float, seq: int | None = None) -> Position | None:
    """The latest of ``positions`` at or before virtual time ``t`` (and, given ``seq``, whose last event is at or
    before it), or None."""
    fitting = [p for p in positions if p[0] <= t and (seq is None or p[1] <= seq)]
    return max(fitting) if fitting else None


def read_checkpoint(run_id: str, t: float = math.inf, seq: int | None = None) -> Checkpoint | None:
    """The run's latest checkpoint at or before virtual time ``t`` (and last seq ``seq``), or None; a malformed
    one raises ValueError (or KeyError)."""
    position = nearest_checkpoint(checkpoint_positions(run_id), t, seq)
    if position is None:
        return None
    return read_checkpoint_at(run_id, position)


def read_checkpoint_at(run_id: str, position: Position) -> Checkpoint | None:
    """The run's checkpoint at ``position`` (from ``checkpoint_positions``), None if it went meanwhile."""
    data = get_redis(binary=True).hget(checkpoints_key(run_id), f"{position[0]!r} {position[1]}")
    return None if data is None else unpack_checkpoint(cast("bytes", data))
