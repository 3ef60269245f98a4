"""Comparisons on the web side (docs/architecture.md §6.9): create one, command both sides together.

A comparison's command is stored on both runs in one transaction and handed to the one driver that drives both
(``comparison_driver.py``), which applies both halves at one virtual instant; the answer waits for both acks.
"""

from __future__ import annotations

import time

import redis
from django.conf import settings
from django.db import transaction

from heartbeat_site.live import redis_client
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Command, CommandStatus, Comparison, Run
from heartbeat_site.live.runs import commands
from heartbeat_site.live.runstore import command_inbox
from simulation import ScenarioError
from simulation.comparison import SIDES, side_scenarios


def side_documents(document: dict, overrides: dict) -> tuple:
    """Both sides' scenarios, or a 400 listing every problem with the field it concerns (`a.kubernetesVersion`)."""
    for side in SIDES:
        if not isinstance(overrides.get(side, {}), dict):
            raise ApiError(400, "wrong-type", f"{side}: must be an object of settings, e.g. "
                                              '{"kubernetesVersion": "1.31"}')
    try:
        return side_scenarios(document, overrides.get("a", {}), overrides.get("b", {}))
    except ScenarioError as exc:
        errors = [{"field": path, "message": message} for path, message in exc.errors]
        raise ApiError(400, "invalid-overrides", f"invalid comparison settings: {exc}", errors=errors) from None


def submit(comparison: Comparison, body: object) -> tuple[list[Command], list[dict | None]]:
    """A command for both sides: checked against each (a node only one side has is refused), stored on both in
    one transaction, and each half's ack from the driver (None when it did not answer in time)."""
    runs = comparison.sides()
    command = commands.read(body)  # its form, once; then whether each side can take it
    normalised = [commands.for_run(run, command) for run in runs]
    for run in runs:
        if not run.is_active:
            raise ApiError(409, "run-ended",
                           f"comparison {comparison.id} has ended ({run.status}: {run.end_reason or 'no reason'})")
    redis_client.ping()
    kind, action, _payload = normalised[0]
    if action in commands.FOLLOW_ACTIONS:
        pairs = [commands.broadcast_view(run, payload) for run, (_k, _a, payload) in zip(runs, normalised,
                                                                                        strict=True)]
        return [command for command, _ack in pairs], [ack for _command, ack in pairs]
    with transaction.atomic():  # the driver reads both halves in one query: it sees both or neither
        stored = [commands.persist(run, kind, action, payload) for run, (_k, _a, payload) in zip(runs, normalised,
                                                                                                strict=True)]
    try:
        for command in stored:
            command_inbox.notify_command(command.run_id, command.pk)
        deadline = time.monotonic() + settings.HEARTBEAT["COMMAND_ACK_SECONDS"]
        acks = [command_inbox.wait_ack(command.run_id, command.seq, max(0.01, deadline - time.monotonic()))
                for command in stored]
    except (redis.RedisError, OSError):
        pending = Command.objects.filter(pk__in=[c.pk for c in stored], status=CommandStatus.PENDING)
        if pending.count() == len(stored):
            pending.delete()
            raise
        acks = []
        for command in stored:
            command.refresh_from_db()
            acks.append({"status": command.status, "at": command.at, "error": command.error})
    return stored, acks


def side_runs(comparison_id: str) -> list[Run]:
    return list(Run.objects.filter(comparison_id=comparison_id).order_by("side"))
