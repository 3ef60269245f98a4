"""Rebuild a run's simulation from what is persisted: scenario document + seed + commands.

Determinism (docs/simulation-api.md) makes this exact: a worker taking a run over, a
viewer needing a snapshot after Redis forgot it, and the event pager all use it.
"""

from __future__ import annotations

from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Run
from simulation import Simulation, load_scenario


def applied_fault_commands(run: Run) -> list[Command]:
    return list(
        Command.objects.filter(run=run, kind=CommandKind.FAULT, status=CommandStatus.APPLIED)
        .exclude(at=None)
        .order_by("seq")
    )


def rebuild(run: Run) -> Simulation:
    """A fresh simulation of ``run`` at virtual time 0 with every applied fault scheduled."""
    sim = Simulation(load_scenario(run.document), seed=run.seed)
    for command in applied_fault_commands(run):
        sim.schedule_command(command.payload, command.at)
    return sim


def replay_until(run: Run, t: float) -> tuple[Simulation, list[dict]]:
    """The rebuilt simulation advanced to ``t`` and the events it produced on the way."""
    sim = rebuild(run)
    events = [event.to_dict() for event in sim.run_until(t)] if t > 0 else []
    return sim, events
