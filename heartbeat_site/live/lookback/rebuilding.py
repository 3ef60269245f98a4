"""Rebuild a run's simulation from what is persisted: scenario document + seed + commands.

Determinism (docs/simulation-api.md) makes this exact: a worker taking a run over, a
viewer needing a snapshot after Redis forgot it, and the event pager all use it.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict, deque
from collections.abc import Callable

from heartbeat_site.live.lookback import from_checkpoints
from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Run
from simulation import Simulation, load_scenario
from simulation.events import SimEvent

PAGER_STEP = 1.0  # virtual seconds simulated at a time while a page fills
PAGERS_KEPT = 2  # runs whose replay cursor a process keeps between requests
COLLECT_AFTER_NODES = 1_000  # nodes of dropped simulations after which the process collects them


def applied_fault_commands(run: Run) -> list[Command]:
    return list(
        Command.objects.filter(run=run, kind=CommandKind.FAULT, status=CommandStatus.APPLIED)
        .exclude(at=None)
        .order_by("seq")
    )


def simulation_of(run: Run, commands: list[Command]) -> Simulation:
    """A fresh simulation of ``run`` at virtual time 0 with ``commands`` scheduled."""
    sim = Simulation(load_scenario(run.document), seed=run.seed)
    for command in commands:
        sim.schedule_command(command.payload, command.at)
    return sim


def rebuild(run: Run) -> Simulation:
    """A fresh simulation of ``run`` at virtual time 0 with every applied fault scheduled."""
    return simulation_of(run, applied_fault_commands(run))


def replay_until(run: Run, t: float) -> tuple[Simulation, list[SimEvent]]:
    """The rebuilt simulation advanced to ``t`` and the events it produced on the way.

    The events stay SimEvents: converting a 5,000-node run's start-up (400,000 events, most of them
    with a whole Pod) to dicts costs more than simulating it, and most callers need only a few.
    """
    sim = rebuild(run)
    return sim, (sim.run_until(t) if t > 0 else [])


_dropped_lock = threading.Lock()
_dropped_nodes = 0  # nodes of the simulations dropped since the last collection


def dropped(nodes: int) -> None:
    """A simulation of ``nodes`` nodes is no longer used (the caller holds no reference to it).

    A simulation's objects hold reference cycles, so only the cyclic collector frees them, and its full
    collections come seldom in a process that builds simulations (their objects go straight to the oldest
    generation: simulation.py ``_promote_young_objects``). Without a collection a replay process grew by a
    run's whole size for every run it looked back at (bench/README.md, "Look-back"). A full collection walks
    every object the process keeps (about a second with a 5,000-node run parked), so it runs once
    ``COLLECT_AFTER_NODES`` nodes of simulations were dropped."""
    global _dropped_nodes
    with _dropped_lock:
        _dropped_nodes += nodes
        if _dropped_nodes < COLLECT_AFTER_NODES:
            return
        _dropped_nodes = 0
    gc.collect()


class ReplayCursor:
    """A rebuilt simulation that hands out its events in seq order, page after page.

    The event pager's older pages (beyond Redis's bounded log) come from here. A client paging
    through a run asks for ``after`` = the previous page's end: the cursor goes on from where it
    stopped instead of replaying from virtual time 0 for every page, and only the events a page
    returns are converted to dicts.
    """

    def __init__(self, sim: Simulation, commands: set[int], handed: int = 0) -> None:
        """``sim``: a fresh simulation of the run, or one restored from its checkpoint whose last event is
        ``handed``; ``commands``: the ids of the applied fault commands it has scheduled."""
        self.sim = sim
        self.commands = commands
        self.pending: deque[SimEvent] = deque()  # simulated, not handed out yet
        self.handed = handed  # seq of the last event handed out or passed over

    @property
    def nodes(self) -> int:
        return self.sim.scenario.node_count

    def catch_up(self, commands: list[Command]) -> bool:
        return from_checkpoints.schedule_new_commands(self.sim, self.commands, commands)

    def page(self, after: int, upto: int, t: float, limit: int, wanted: Callable[[SimEvent], bool] | None = None,
             max_scanned: int | None = None) -> tuple[list[dict], int]:
        """Up to ``limit`` wanted events with ``after < seq <= upto`` (simulating up to ``t``; looking at
        no more than ``max_scanned`` events), and the seq of the last event looked at (where the next
        page starts)."""
        found: list[dict] = []
        scanned = after
        while len(found) < limit and (max_scanned is None or scanned - after < max_scanned):
            if not self.pending:
                if self.sim.now >= t:
                    break
                self.pending.extend(self.sim.run_until(min(t, self.sim.now + PAGER_STEP)))
                continue
            event = self.pending[0]
            if event.seq > upto:
                break
            self.pending.popleft()
            self.handed = event.seq
            if event.seq <= after:
                continue
            scanned = event.seq
            if wanted is None or wanted(event):
                found.append(event.to_dict())
        return found, scanned


_lock = threading.Lock()
_cursors: OrderedDict[str, ReplayCursor] = OrderedDict()
_run_locks: dict[str, threading.Lock] = {}


def replayed_page(run: Run, commands: list[Command], after: int, upto: int, t: float, limit: int,
                  wanted: Callable[[SimEvent], bool] | None = None,
                  max_scanned: int | None = None) -> tuple[list[dict], int]:
    """``ReplayCursor.page`` on the run's cursor kept by this process, or a new one when the kept one
    has passed ``after`` (a client went back) or cannot take one of ``commands`` (the run's applied
    faults) applied since. A new cursor starts from the run's latest checkpoint whose last event is at or
    before ``after`` (from_checkpoints.py), as the kept one does when such a checkpoint is far enough ahead of it. The
    web process calls it in the replay process (replay_process.py)."""
    with _lock:
        run_lock = _run_locks.setdefault(run.id, threading.Lock())
    with run_lock:
        with _lock:
            cursor = _cursors.pop(run.id, None)
        gone = 0  # nodes of the simulations dropped here
        if cursor is not None and (cursor.handed > after or not cursor.catch_up(commands)):
            gone, cursor = cursor.nodes, None
        restored = from_checkpoints.restored(run, commands, t, seq=after,
                                     beyond=from_checkpoints.beyond(cursor.sim.now if cursor else None))
        if restored is not None:
            gone += cursor.nodes if cursor is not None else 0
            cursor = ReplayCursor(restored.sim, restored.commands, handed=restored.seq)
        elif cursor is None:
            cursor = ReplayCursor(simulation_of(run, commands), {command.pk for command in commands})
        try:
            return cursor.page(after, upto, t, limit, wanted, max_scanned)
        finally:
            with _lock:
                _cursors[run.id] = cursor
                while len(_cursors) > PAGERS_KEPT:
                    gone += _cursors.popitem(last=False)[1].nodes
            dropped(gone)
