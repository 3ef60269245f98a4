"""Command intake on the web side: check, persist in order, hand to the driver, await its ack.

The web process never decides *when* a command applies: the driver does, at its current
virtual time, and persists that ``at`` before applying (see heartbeat_site.live.driver).
"""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max

from heartbeat_site.live import runstore
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.fields import number_field, reject_unknown_keys
from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Run
from heartbeat_site.live.pacing import MAX_SPEED, MIN_SPEED
from simulation import FAULT_ACTIONS, CommandError, load_scenario, validate_command

# reveal, next: lessons and drills; stop: the trainer ends the run (status finished)
CONTROL_ACTIONS = ("pause", "resume", "speed", "step", "reveal", "next", "stop")


def normalise(run: Run, body: dict) -> tuple[str, str, dict]:
    """(kind, action, payload) for a command body, or a 400 that names the problem."""
    action = body.get("action")
    if not isinstance(action, str):
        raise ApiError(
            400,
            "missing-action",
            'a command needs an "action" string, e.g. {"action": "stop-kubelet", "node": "node-2"}',
        )
    if action in CONTROL_ACTIONS:
        if action == "speed":
            reject_unknown_keys(body, {"action", "value"}, where="speed command")
            if "value" not in body:
                raise ApiError(
                    400,
                    "missing-field",
                    f"value: the speed command needs a value between {MIN_SPEED:g} and {MAX_SPEED:g}",
                )
            value = number_field(body, "value", minimum=MIN_SPEED, maximum=MAX_SPEED)
            return CommandKind.CONTROL, action, {"action": action, "value": value}
        reject_unknown_keys(body, {"action"}, where=f"{action} command")
        return CommandKind.CONTROL, action, {"action": action}
    if action not in FAULT_ACTIONS:
        known = ", ".join((*CONTROL_ACTIONS, *FAULT_ACTIONS))
        raise ApiError(400, "unknown-action", f"action: unknown action {action!r}; known actions: {known}")
    try:
        payload = validate_command(body, load_scenario(run.document))
    except CommandError as exc:
        raise ApiError(400, "invalid-command", f"invalid command: {exc}") from None
    return CommandKind.FAULT, action, payload


def persist(run: Run, kind: str, action: str, payload: dict) -> Command:
    """Append the command to the run's log with the next seq (retrying a concurrent race)."""
    for _ in range(5):
        try:
            with transaction.atomic():
                last = Command.objects.filter(run=run).aggregate(m=Max("seq"))["m"] or 0
                return Command.objects.create(run=run, seq=last + 1, kind=kind, action=action, payload=payload)
        except IntegrityError:
            continue
    raise ApiError(409, "busy", "too many concurrent commands for this run; retry")


def submit(run: Run, body: dict) -> tuple[Command, dict | None]:
    """Persist a command and wait (bounded) for the driver to give it its virtual time.

    All or nothing: with Redis away the command is refused before it is persisted, and if
    Redis fails once it is persisted, it is taken back unless the driver already applied it
    (then the answer is that application). A dependency error becomes a 503 (``errors.py``).
    """
    kind, action, payload = normalise(run, body)
    if not run.is_active:
        raise ApiError(
            409, "run-ended", f"run {run.id} has ended ({run.status}: {run.end_reason or 'no reason recorded'})"
        )
    runstore.ping()
    command = persist(run, kind, action, payload)
    try:
        runstore.notify_command(run.id, command.pk)
        ack = runstore.wait_ack(run.id, command.seq, settings.HEARTBEAT["COMMAND_ACK_SECONDS"])
    except (redis.RedisError, OSError):
        if Command.objects.filter(pk=command.pk, status=CommandStatus.PENDING).delete()[0]:
            raise
        command.refresh_from_db()  # the driver took it before Redis went: report what it did
        if command.status == CommandStatus.REJECTED:
            return command, {"status": "rejected", "error": command.error}
        return command, {"status": "applied", "at": command.at}
    return command, ack
