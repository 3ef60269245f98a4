"""``/api/runs/<id>/commands``: POST one command (bearer token), GET the command log."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from heartbeat_site.live.api.bodies import json_object
from heartbeat_site.live.api.runs import get_run_or_404
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Command, Run
from heartbeat_site.live.runs import commands
from heartbeat_site.live.runs.tokens import bearer_token, token_matches


def presented_token(request: HttpRequest, whose: str = "the run's") -> str:
    """The request's bearer token, or a 401 saying how to send one: asked before the run is looked up, so that a
    request without credentials learns that first (RFC 9110 §15.5.2), whatever the id."""
    token = bearer_token(request.headers.get("Authorization"))
    if token is None:
        raise ApiError(401, "control-token-required",
                       f"this needs {whose} control token: Authorization: Bearer <control token>")
    return token


def require_control_token(token: str, run: Run) -> None:
    """A 403 unless ``token`` is the run's control token (a viewer's link holds none)."""
    if not token_matches(token, run.control_token_hash):
        raise ApiError(
            403, "wrong-control-token", "the control token does not match this run (viewer links cannot command)"
        )


def post_command(request: HttpRequest, run_id: str) -> JsonResponse:
    token = presented_token(request)
    run = get_run_or_404(run_id)
    require_control_token(token, run)
    body = json_object(request)
    command, ack = commands.submit(run, body)  # read by its model, then checked against the run
    body = command_body(command)
    if ack is None:
        body.update(
            status="pending",
            message="accepted; the run's driver has not picked it up yet (worker starting or taking over)",
        )
        return JsonResponse(body, status=202)
    if ack.get("status") == "rejected":
        raise ApiError(
            400, "command-rejected", f"the simulation refused the command: {ack.get('error')}", seq=command.seq
        )
    body.update(status="applied", at=ack["at"], clock=ack.get("clock"))
    return JsonResponse(body, status=202)


def command_body(command: Command) -> dict:
    return {
        "seq": command.seq,
        "kind": command.kind,
        "action": command.action,
        "command": command.payload,
        "at": command.at,
        "status": command.status,
        "error": command.error or None,
    }


def list_commands(request: HttpRequest, run_id: str) -> JsonResponse:
    run = get_run_or_404(run_id)
    return JsonResponse({"commands": [command_body(c) for c in run.commands.order_by("seq")]})
