"""Command intake on the web side: check, persist in order, hand to the driver, await its ack.

The web process never decides *when* a command applies: the driver does, at its current
virtual time, and persists that ``at`` before applying (see heartbeat_site.live.driving.driver).
"""

from __future__ import annotations

import redis
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Max
from pydantic import BaseModel

from heartbeat_site.live import redis_client
from heartbeat_site.live.delivery import frames, publisher
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Run
from heartbeat_site.live.runs.command_bodies import FOLLOW_ACTIONS, FaultCommand, FocusCommand
from heartbeat_site.live.runs.command_bodies import Command as CommandBody
from heartbeat_site.live.runs.fields import parse
from heartbeat_site.live.runstore import command_inbox, run_state
from simulation import CommandError, load_scenario, validate_command


def run_nodes(run: Run) -> set[str]:
    """Every node the run has had: its scenario's, those its faults create, and those the trainer created."""
    scenario = load_scenario(run.document)
    created = Command.objects.filter(run=run, action="create-node").values_list("payload", flat=True)
    scripted = {fault["name"] for fault in scenario.faults if fault["action"] == "create-node"}
    return {name for name, _zone in scenario.nodes} | scripted | {payload["name"] for payload in created}


def normalise(run: Run, body: object) -> tuple[str, str, dict]:
    """(kind, action, payload) for a command body, or a 400 that names the problem: its form as its model reads it
    (:func:`read`), then what this run can take (:func:`for_run`)."""
    return for_run(run, read(body))


def read(body: object) -> BaseModel:
    """The command a body holds, read by its model, or a 400 naming the field: the one check of its form."""
    return parse(CommandBody, body).root


def for_run(run: Run, command: BaseModel) -> tuple[str, str, dict]:
    """(kind, action, payload) of a command read by :func:`read`, or a 400 when this run cannot take it: a real
    cluster's takes only stop, a focus names one of its nodes, a fault must fit its scenario."""
    body = command.model_dump(exclude_unset=True)  # as sent, a speed's value a float
    action = body["action"]
    if not run.simulated and action != "stop":
        raise ApiError(400, "not-simulated",
                       f"action: a {run.kind} shows a real cluster; it takes no faults, pacing or follow commands, "
                       'only {"action": "stop"}')
    if isinstance(command, FocusCommand) and command.node is not None and command.node not in run_nodes(run):
        raise ApiError(400, "unknown-node", f"node: no node named {command.node!r} in this run")
    if not isinstance(command, FaultCommand):
        return CommandKind.CONTROL, action, body
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


def submit(run: Run, body: object) -> tuple[Command, dict | None]:
    """Persist a command and wait (bounded) for the driver to give it its virtual time.

    All or nothing: with Redis away the command is refused before it is persisted, and if
    Redis fails once it is persisted, it is taken back unless the driver already applied it
    (then the answer is that application). A dependency error becomes a 503 (``errors.py``).
    """
    if run.comparison_id:  # a comparison's side: its commands go to both sides, at one instant
        from heartbeat_site.live.runs import comparisons

        stored, acks = comparisons.submit(run.comparison, body)
        mine = next(i for i, command in enumerate(stored) if command.run_id == run.id)
        return stored[mine], acks[mine]
    kind, action, payload = normalise(run, body)
    if not run.is_active:
        raise ApiError(
            409, "run-ended", f"run {run.id} has ended ({run.status}: {run.end_reason or 'no reason recorded'})"
        )
    redis_client.ping()
    if action in FOLLOW_ACTIONS:
        return broadcast_view(run, payload)
    command = persist(run, kind, action, payload)
    try:
        command_inbox.notify_command(run.id, command.pk)
        ack = command_inbox.wait_ack(run.id, command.seq, settings.HEARTBEAT["COMMAND_ACK_SECONDS"])
    except (redis.RedisError, OSError):
        if Command.objects.filter(pk=command.pk, status=CommandStatus.PENDING).delete()[0]:
            raise
        command.refresh_from_db()  # the driver took it before Redis went: report what it did
        if command.status == CommandStatus.REJECTED:
            return command, {"status": "rejected", "error": command.error}
        return command, {"status": "applied", "at": command.at}
    return command, ack


def broadcast_view(run: Run, payload: dict) -> tuple[Command, dict]:
    """A follow or focus command: kept in the run's command log at the virtual time the class sees, and sent
    to every viewer at once as a ``follow`` message; the driver never gets it."""
    state = run_state.read_state(run.id)
    at = round(float(state["t"]), 6) if "t" in state else run.t_reached
    command = persist(run, CommandKind.CONTROL, payload["action"], payload)
    Command.objects.filter(pk=command.pk).update(status=CommandStatus.APPLIED, at=at)
    command.status, command.at = CommandStatus.APPLIED, at
    message = {"type": "follow", **{k: v for k, v in payload.items() if k != "action"}, "seq": command.seq}
    publisher.publish(run.id, {"type": "run.notice", "text": frames.dumps(message)})
    return command, {"status": "applied", "at": at}


def follow_state(run_id: str) -> dict | None:
    """The ``follow`` message a page joining (or reconnecting to) the run needs now, or None when the trainer never
    used "Viewers follow me": whether it is on and, if so, the trainer's latest node and panel since it was turned
    on. Read back from the command log, newest first, the way ``static/js/follow.js`` folds the messages: a focus
    implies the toggle is on; a follow command ends what came before it."""
    rows = (Command.objects.filter(run_id=run_id, action__in=FOLLOW_ACTIONS).order_by("-seq")
            .values_list("seq", "action", "payload"))
    latest: int | None = None
    on = True
    where: dict[str, str] = {}
    for seq, action, payload in rows.iterator(chunk_size=100):
        latest = latest or seq
        if action == "follow":
            on = payload["on"] or bool(where)
            break
        for key in ("node", "tab"):
            if payload.get(key):
                where.setdefault(key, payload[key])
    if latest is None:
        return None
    return {"type": "follow", "on": on, **(where if on else {}), "seq": latest}
