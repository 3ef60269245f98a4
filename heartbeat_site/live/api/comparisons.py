"""Comparison endpoints (docs/architecture.md §6.9): create one, read it, command both sides."""

from __future__ import annotations

import contextlib

import redis
from django.conf import settings
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse

from heartbeat_site.live.api import links
from heartbeat_site.live.api.bodies import json_object
from heartbeat_site.live.api.contract import ComparisonCreate, StartFields, parse
from heartbeat_site.live.api.control import command_body, presented_token
from heartbeat_site.live.api.qr import viewer_qr_svg
from heartbeat_site.live.api.runs import named_scenario, run_body, start_driver
from heartbeat_site.live.api.scenarios import check_cluster_size, parse_document
from heartbeat_site.live.driving.comparison_driver import read_differences
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Comparison, Recipe, Run
from heartbeat_site.live.runs import comparisons, recipes
from heartbeat_site.live.runs.caps import check_run_caps, check_worker_capacity, client_key
from heartbeat_site.live.runs.tokens import hash_token, new_token, token_matches
from heartbeat_site.live.runstore import activity
from simulation import Scenario


def get_comparison_or_404(comparison_id: str) -> Comparison:
    comparison = Comparison.objects.filter(pk=comparison_id).first()
    if comparison is None:
        raise ApiError(404, "unknown-comparison", f"no comparison with id {comparison_id!r}")
    return comparison


def create(request: HttpRequest) -> JsonResponse:
    body = parse(ComparisonCreate, json_object(request))
    base = named_scenario(body.scenario) if body.scenario is not None else parse_document(body.document)
    return start(request, base, {"a": body.a, "b": body.b}, body)


def start(request: HttpRequest, base: Scenario, overrides: dict, body: StartFields, *,
          default_speed: float | None = None, lesson: str = "", recipe: Recipe | None = None) -> JsonResponse:
    """Create a comparison of `base` with each side's overrides and start its driver (201); `body` gives its speed,
    seed and paused. A comparison lesson (``POST /api/runs`` with its name) names the lesson on side a's run, which
    holds its questions and answers; a comparison's recipe gives both runs its commands at their times, and its
    seed."""
    sides = comparisons.side_documents(base.document, overrides)
    for scenario in sides:
        check_cluster_size(scenario.node_count)
    if default_speed is None:
        default_speed = settings.HEARTBEAT["DEFAULT_SPEED"]
    speed = default_speed if body.speed is None else body.speed
    seed = recipe.seed if recipe is not None else body.seed
    paused = body.paused
    client = client_key(request)
    check_run_caps(client)
    check_worker_capacity(sum(scenario.node_count for scenario in sides))

    token = new_token()
    with transaction.atomic():
        comparison = Comparison.objects.create(scenario_name=base.name, document=base.document, overrides=overrides,
                                               control_token_hash=hash_token(token))
        runs = [
            Run.objects.create(
                scenario_name=scenario.name, document=scenario.document,
                seed=base.seed if seed is None else seed,  # one seed for both: only the settings differ
                version=str(scenario.version), node_count=scenario.node_count, duration=float(scenario.duration),
                speed=speed, paused=paused, control_token_hash=hash_token(token), client_key=client,
                comparison=comparison, side=side, lesson=lesson if side == "a" else "",
            )
            for side, scenario in zip(("a", "b"), sides, strict=True)
        ]
        if recipe is not None:
            for run in runs:
                recipes.schedule_recipe(run, recipe)
    with contextlib.suppress(redis.RedisError, OSError):  # else start_driver answers 503 just below
        activity.mark_active(runs[1].id)
    try:
        start_driver(runs[0])  # the driver of side a drives both (comparison_driver.py)
    except ApiError:
        comparison.delete()
        raise
    return JsonResponse(
        {
            "id": comparison.id,
            "comparison": comparison.id,
            "url": links.comparison_control_url(request, comparison.id, token),
            "control_url": links.comparison_control_url(request, comparison.id, token),
            "viewer_url": links.comparison_url(request, comparison.id),
            "ws_url": links.ws_url(request, runs[0].id),  # side a's: a comparison lesson's messages come there
            "control_token": token,
            "lesson": lesson or None,
            "runs": [run_body(request, run) | {"side": run.side, "overrides": overrides[run.side]} for run in runs],
        },
        status=201,
    )


def detail(request: HttpRequest, comparison_id: str) -> JsonResponse:
    comparison = get_comparison_or_404(comparison_id)
    try:
        differences = read_differences(comparison.id)
    except redis.RedisError:
        differences = None
    return JsonResponse({
        "id": comparison.id,
        "scenario": comparison.scenario_name,
        "overrides": comparison.overrides,
        "viewer_url": links.comparison_url(request, comparison.id),
        "runs": [run_body(request, run) | {"side": run.side, "overrides": comparison.overrides.get(run.side, {})}
                 for run in comparison.sides()],
        "comparison": differences,
    })


def require_comparison_token(token: str, comparison: Comparison) -> None:
    """A 403 unless ``token`` is the comparison's control token."""
    if not token_matches(token, comparison.control_token_hash):
        raise ApiError(403, "wrong-control-token", "the control token does not match this comparison")


def post_command(request: HttpRequest, comparison_id: str) -> JsonResponse:
    token = presented_token(request, "the comparison's")
    comparison = get_comparison_or_404(comparison_id)
    require_comparison_token(token, comparison)
    body = json_object(request)
    stored, acks = comparisons.submit(comparison, body)
    return command_answer(stored, acks)


def command_answer(stored: list, acks: list[dict | None]) -> JsonResponse:
    """202 with each side's command (its run, seq and ack) and the one virtual time both applied at."""
    for command, ack in zip(stored, acks, strict=True):
        if ack is not None and ack.get("status") == "rejected":
            raise ApiError(400, "command-rejected", f"the simulation refused the command: {ack.get('error')}",
                           seq=command.seq, run=command.run_id)
    sides = []
    for command, ack in zip(stored, acks, strict=True):
        side = command_body(command) | {"run": command.run_id}
        if ack is None:
            side["status"] = "pending"
        else:
            side.update(status="applied", at=ack.get("at"), clock=ack.get("clock"))
        sides.append(side)
    applied = all(side["status"] == "applied" for side in sides)
    body = {"action": stored[0].action, "command": stored[0].payload, "status": "applied" if applied else "pending",
            "at": sides[0].get("at") if applied else None, "runs": sides}
    if not applied:
        body["message"] = "accepted; the comparison's driver has not picked it up yet (worker starting or taking over)"
    return JsonResponse(body, status=202)


def viewer_qr(request: HttpRequest, comparison_id: str) -> HttpResponse:
    comparison = get_comparison_or_404(comparison_id)
    response = HttpResponse(viewer_qr_svg(links.comparison_url(request, comparison.id)), content_type="image/svg+xml")
    response["Cache-Control"] = "private, max-age=3600"
    return response
