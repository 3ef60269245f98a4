"""A run's state at any virtual time, for replays: ``GET /api/runs/<id>/snapshot?t=<seconds>``.

A seek starts from the run's latest checkpoint at or before the target (the series its drivers left in Redis,
kept with an ended run's retention: from_checkpoints.py), so that no seek, however far into a long run, replays from
virtual time 0. A process also keeps the simulations it used, parked at their virtual times: a seek continues
the latest one at or before the target when no checkpoint is ahead of it by more than a restore is worth.
Without either (a run with no checkpoints: its Redis retention over, checkpoints off, a comparison's side) it
rebuilds from virtual time 0 (document, seed, applied commands: rebuilding.py), and a background thread then parks
fresh simulations at ``k * reached / CHECKPOINTS`` that no parked one covers, so that the next seek, backwards
as well, continues one at most a quarter of the run behind (bench/seek_bench.py: a 15-minute, 180-node run).

Memory is bounded by the nodes of the parked simulations (``MAX_PARKED_NODES`` for the process,
about 30 kB a node) and their number per run; runs too large for a set of checkpoints keep only
the simulation last used. Determinism (docs/simulation-api.md) makes a continued simulation give
the very snapshot a fresh one run to the same time gives.
"""

from __future__ import annotations

import logging
import math
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from heartbeat_site.live.classroom import questions
from heartbeat_site.live.delivery import detail, frames
from heartbeat_site.live.lookback import from_checkpoints, rebuilding
from heartbeat_site.live.lookback.rebuilding import simulation_of
from heartbeat_site.live.models import Command, Run
from simulation import Simulation

log = logging.getLogger(__name__)

CHECKPOINTS = 4  # checkpoints at a quarter, half, three quarters and the whole of the reached time
MAX_PARKED_PER_RUN = CHECKPOINTS + 2  # and the places of the last seeks
MAX_PARKED_NODES = 3_000  # checkpoints for runs of up to 500 nodes
WARM = True  # build checkpoints in the background after a seek (tests that count rebuilds turn it off)


@dataclass
class Parked:
    """A simulation parked at ``sim.now`` with the ids of the commands it has scheduled."""

    sim: Simulation
    nodes: int
    commands: set[int] = field(default_factory=set)


_lock = threading.Lock()
_parked: OrderedDict[str, list[Parked]] = OrderedDict()  # run id -> its parked simulations, oldest first
_run_locks: dict[str, threading.Lock] = {}
_warming: dict[str, threading.Thread] = {}


def _run_lock(run_id: str) -> threading.Lock:
    with _lock:
        return _run_locks.setdefault(run_id, threading.Lock())


def _take(run_id: str, t: float) -> Parked | None:
    """The parked simulation of the run latest at or before ``t``, taken out of the cache."""
    with _lock:
        entries = _parked.get(run_id) or []
        fitting = [entry for entry in entries if entry.sim.now <= t]
        if not fitting:
            return None
        best = max(fitting, key=lambda entry: entry.sim.now)
        entries.remove(best)
        return best


def _park(run_id: str, entry: Parked) -> None:
    dropped: list[Parked] = []
    with _lock:
        entries = _parked.setdefault(run_id, [])
        entries.append(entry)
        _parked.move_to_end(run_id)
        while len(entries) > MAX_PARKED_PER_RUN:
            dropped.append(_least_useful(entries))
            entries.remove(dropped[-1])
        while sum(e.nodes for runs in _parked.values() for e in runs) > MAX_PARKED_NODES and len(_parked) > 1:
            dropped.extend(_parked.pop(next(iter(_parked))))  # the run sought least recently goes first
        if sum(e.nodes for e in entries) > MAX_PARKED_NODES:
            dropped.extend(entries[:-1])
            entries[:] = entries[-1:]  # one huge run: keep only the simulation just used
    _collect(dropped)


def _collect(dropped: list[Parked]) -> None:
    """Count the dropped simulations for their collection (rebuilding.dropped)."""
    nodes = sum(entry.nodes for entry in dropped)
    dropped.clear()  # the collection may run now: nothing here keeps them
    rebuilding.dropped(nodes)


def _least_useful(entries: list[Parked]) -> Parked:
    """The parked simulation that saves the least replay: the one closest after another (or after 0, where a
    rebuilt one starts)."""
    ordered = sorted(entries, key=lambda entry: entry.sim.now)
    gaps = [(entry.sim.now - (ordered[i - 1].sim.now if i else 0.0), i) for i, entry in enumerate(ordered)]
    return ordered[min(gaps)[1]]


def parked_times(run_id: str) -> list[float]:
    """Virtual times of the run's parked simulations, in order."""
    with _lock:
        return sorted(entry.sim.now for entry in _parked.get(run_id) or ())


def forget(run_id: str) -> None:
    """Drop a run's parked simulations (tests, benchmarks)."""
    wait_warm(run_id)
    with _lock:
        dropped = _parked.pop(run_id, [])
    _collect(dropped)


def _build(run: Run, commands: list[Command]) -> Parked:
    """A fresh simulation of ``run`` at virtual time 0 with ``commands`` scheduled (rebuilding.rebuild, without
    the database: the background thread gets the commands from the request's)."""
    return Parked(simulation_of(run, commands), run.node_count, {command.pk for command in commands})


def rebuild(run: Run, commands: list[Command]) -> Parked:
    return _build(run, commands)


def from_run_checkpoint(run: Run, commands: list[Command], t: float, beyond: float = -math.inf) -> Parked | None:
    """The run's latest checkpoint at or before ``t`` restored (from_checkpoints.py), when it is later than ``beyond``
    and can take ``commands``; else None."""
    entry = from_checkpoints.restored(run, commands, t, beyond=beyond)
    return None if entry is None else Parked(entry.sim, run.node_count, entry.commands)


def _start(run: Run, commands: list[Command], t: float) -> Parked:
    """Where a state at ``t`` starts: the parked simulation latest at or before it, unless one of the run's
    checkpoints is far enough ahead of it to be worth its restore (from_checkpoints.py); a rebuild from 0 without
    either."""
    parked = _take(run.id, t)
    if parked is not None and not _catch_up_commands(parked, commands):
        parked = None
    restored = from_run_checkpoint(run, commands, t, from_checkpoints.beyond(parked.sim.now if parked else None))
    if restored is None:
        return parked or rebuild(run, commands)
    if parked is not None:
        _park(run.id, parked)
    return restored


def _catch_up_commands(entry: Parked, commands: list[Command]) -> bool:
    """Schedule on ``entry`` the commands applied since it was built; False if one is already in its past."""
    return from_checkpoints.schedule_new_commands(entry.sim, entry.commands, commands)


def snapshot_text(run: Run, commands: list[Command], t: float, reached: float, node_level: bool,
                  paused: bool = True) -> str:
    """The snapshot body (``frames.snapshot_body``) of ``run`` at virtual time ``t`` as the JSON a viewer
    gets (what the replay process sends back: replay_process.py).

    ``commands``: the run's applied faults (``rebuilding.applied_fault_commands``); ``reached``: the run's
    reached time, where checkpoints go; ``node_level``: as the run's viewers get it
    (``detail.is_node_level``); ``paused``: its clock's (a seek's clock stands at ``t``).
    """
    snapshot = state_at(run, commands, t, reached=reached, node_level=node_level)
    return frames.dumps(frames.snapshot_body(snapshot, {"t": round(t, 6), "speed": run.speed, "paused": paused},
                                             snapshot["last_seq"]))


def state_text(run: Run, commands: list[Command], t: float) -> str:
    """``state_at`` with every object, as JSON: what the Kubernetes API of a run loads when neither Redis
    nor a driver has its objects (heartbeat_site/k8sapi/cluster.py)."""
    return frames.dumps(state_at(run, commands, t))


def state_at(run: Run, commands: list[Command], t: float, *, reached: float | None = None,
             node_level: bool = False) -> dict:
    """The simulation's snapshot of ``run`` at ``t`` (every object, or node level), a drill's cause hidden
    before its reveal: what the websocket's snapshot and the objects export are made of."""
    with _run_lock(run.id):
        entry = _start(run, commands, t)
        entry.sim.run_until(t)
        try:
            snapshot = detail.node_snapshot(entry.sim) if node_level else entry.sim.snapshot()
        finally:
            _park(run.id, entry)
    if WARM:
        _warm(run, commands, t if reached is None else reached)
    if questions.hides_cause(run):  # a drill before its reveal: what its viewers see
        snapshot = questions.viewer_snapshot(snapshot)
    return snapshot


def missing_checkpoints(parked: list[float], reached: float) -> list[float]:
    """Checkpoint times no parked simulation covers (none within a checkpoint's spacing before it)."""
    spacing = reached / CHECKPOINTS
    wanted = [round(spacing * k, 6) for k in range(1, CHECKPOINTS + 1)]
    return [mark for mark in wanted if not any(mark - spacing < at <= mark for at in parked)]


def _warm(run: Run, commands: list[Command], reached: float) -> None:
    """Park simulations at the missing checkpoints, in a background thread (one per run at a time). Not for a
    run with checkpoints of its own in Redis: a restore serves any seek as well, and building these from 0
    competes with the seeks for the process's CPU (bench/README.md, "Look-back")."""
    if (reached <= 0 or run.node_count * MAX_PARKED_PER_RUN > MAX_PARKED_NODES
            or from_checkpoints.has_checkpoints(run.id)):
        return
    with _lock:
        running = _warming.get(run.id)
        if running is not None and running.is_alive():
            return
        marks = missing_checkpoints(sorted(e.sim.now for e in _parked.get(run.id) or ()), reached)
        if not marks:
            return
        thread = threading.Thread(target=_build_checkpoints, args=(run, commands, marks), daemon=True,
                                  name=f"seek-checkpoints-{run.id}")
        _warming[run.id] = thread
    thread.start()


def _build_checkpoints(run: Run, commands: list[Command], marks: list[float]) -> None:
    try:
        for mark in marks:
            entry = _build(run, commands)
            entry.sim.run_until(mark)
            _park(run.id, entry)
    except Exception:  # a checkpoint is an optimisation: a seek without it replays from the start
        log.exception("checkpoints of run %s", run.id)


def wait_warm(run_id: str, timeout: float | None = None) -> None:
    """Wait until the run's checkpoints are built (tests, benchmarks)."""
    with _lock:
        thread = _warming.get(run_id)
    if thread is not None:
        thread.join(timeout)
