"""A run's state at any virtual time, for replays: ``GET /api/runs/<id>/snapshot?t=<seconds>``.

A Simulation only goes forward, and it cannot be copied or pickled (its components are generator
processes), so the checkpoints here are live simulations parked at the times they were last asked
for: a seek continues the nearest one at or before the target and rebuilds from virtual time 0
(replay.rebuild: document, seed, applied commands) only when every parked one is past it. A
scrubber that plays forward thus advances one simulation slice by slice; a seek backwards costs
one replay from the start (a 15-minute, 180-node run: about half a second, bench/seek_bench.py).

Memory is bounded by the nodes of the parked simulations (``MAX_PARKED_NODES`` for the process)
and their number per run. Determinism (docs/simulation-api.md) makes a continued simulation give
the very snapshot a fresh one run to the same time gives.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from heartbeat_site.live import classroom, detail, frames
from heartbeat_site.live.models import Run
from heartbeat_site.live.replay import applied_fault_commands, rebuild
from simulation import Simulation

MAX_PARKED_PER_RUN = 3
MAX_PARKED_NODES = 2_000  # about 11 parked simulations of the 180-node zone outage


@dataclass
class Parked:
    """A simulation parked at ``sim.now`` with the ids of the commands it has scheduled."""

    sim: Simulation
    nodes: int
    commands: set[int] = field(default_factory=set)


_lock = threading.Lock()
_parked: OrderedDict[str, list[Parked]] = OrderedDict()  # run id -> its parked simulations, oldest use first
_run_locks: dict[str, threading.Lock] = {}


def _run_lock(run_id: str) -> threading.Lock:
    with _lock:
        return _run_locks.setdefault(run_id, threading.Lock())


def _take(run: Run, t: float) -> Parked | None:
    """The parked simulation of ``run`` latest at or before ``t``, taken out of the cache."""
    with _lock:
        entries = _parked.get(run.id) or []
        fitting = [entry for entry in entries if entry.sim.now <= t]
        if not fitting:
            return None
        best = max(fitting, key=lambda entry: entry.sim.now)
        entries.remove(best)
        return best


def _park(run_id: str, entry: Parked) -> None:
    with _lock:
        entries = _parked.setdefault(run_id, [])
        entries.append(entry)
        _parked.move_to_end(run_id)
        while len(entries) > MAX_PARKED_PER_RUN:
            entries.pop(0)
        while sum(e.nodes for runs in _parked.values() for e in runs) > MAX_PARKED_NODES and len(_parked) > 1:
            _parked.pop(next(iter(_parked)))  # the run sought least recently goes first
        if sum(e.nodes for e in entries) > MAX_PARKED_NODES:
            entries[:] = entries[-1:]  # one huge run: keep only the simulation just used


def forget(run_id: str) -> None:
    """Drop a run's parked simulations (tests; a run deleted)."""
    with _lock:
        _parked.pop(run_id, None)


def _fresh(run: Run) -> Parked:
    return Parked(rebuild(run), run.node_count, {command.pk for command in applied_fault_commands(run)})


def _catch_up_commands(run: Run, entry: Parked) -> bool:
    """Schedule on ``entry`` the commands applied since it was built; False if one is already in its past."""
    for command in applied_fault_commands(run):
        if command.pk in entry.commands:
            continue
        if command.at < entry.sim.now:
            return False
        entry.sim.schedule_command(command.payload, command.at)
        entry.commands.add(command.pk)
    return True


def snapshot_at(run: Run, t: float) -> dict:
    """The snapshot body (``frames.snapshot_body``) of ``run`` at virtual time ``t``, as a viewer gets it."""
    with _run_lock(run.id):
        entry = _take(run, t)
        if entry is None or not _catch_up_commands(run, entry):
            entry = _fresh(run)
        entry.sim.run_until(t)
        try:
            snapshot = detail.node_snapshot(entry.sim) if detail.is_node_level(run.node_count) else entry.sim.snapshot()
        finally:
            _park(run.id, entry)
    if classroom.hides_cause(run):  # a drill before its reveal: what its viewers see
        snapshot = classroom.viewer_snapshot(snapshot)
    return frames.snapshot_body(snapshot, {"t": round(t, 6), "speed": run.speed, "paused": True},
                                snapshot["last_seq"])
