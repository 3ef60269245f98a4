"""Run endpoints: create a run, read its state."""

from __future__ import annotations

import logging

import redis
from django.conf import settings
from django.http import HttpRequest, JsonResponse

from heartbeat_site.live.api import links
from heartbeat_site.live.api.bodies import json_object
from heartbeat_site.live.api.contract import RunCreate, parse
from heartbeat_site.live.api.scenarios import parse_document
from heartbeat_site.live.classroom import questions
from heartbeat_site.live.delivery import summary
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Run
from heartbeat_site.live.runs import recipes
from heartbeat_site.live.runs.caps import check_run_caps, check_worker_capacity, client_key
from heartbeat_site.live.runs.saved_scenarios import find_document
from heartbeat_site.live.runs.tokens import hash_token, new_token
from heartbeat_site.live.runstore import activity, run_state, snapshot_and_frames, viewer_presence
from heartbeat_site.live.service import get_run_or_404
from simulation import Scenario

log = logging.getLogger(__name__)


def get_simulated_run(run_id: str, what: str) -> Run:
    """The run, when ``what`` can be made by replaying its simulation; a 409 for a real cluster's (docs/observe.md)."""
    run = get_run_or_404(run_id)
    if not run.simulated:
        raise ApiError(409, "not-simulated",
                       f"{what} is made by replaying a run's simulation; run {run.id} is a {run.kind} of a real "
                       f"cluster, whose events are at GET /api/runs/{run.id}/events")
    return run


def create(request: HttpRequest) -> JsonResponse:
    body = parse(RunCreate, json_object(request))
    lesson = drill = recipe = None
    default_speed = settings.HEARTBEAT["DEFAULT_SPEED"]
    if body.lesson is not None:
        lesson = questions.find_lesson(body.lesson)
        scenario, default_speed = lesson.scenario, lesson.document.get("speed", default_speed)
    elif body.drill is not None:
        drill = questions.find_drill(body.drill)
        scenario, default_speed = drill.scenario, drill.document.get("speed", default_speed)
    elif body.scenario is not None:
        scenario = named_scenario(body.scenario)
    elif body.recipe is not None:
        recipe = recipes.find_recipe(body.recipe)
        scenario = parse_document(recipe.document, field="recipe")
        if recipe.overrides is not None:  # a comparison's recipe plays the comparison again
            from heartbeat_site.live.api import comparisons

            return comparisons.start(request, scenario, recipe.overrides, body, default_speed=default_speed,
                                     recipe=recipe)
    else:
        scenario = parse_document(body.document)
    if lesson is not None and lesson.comparison is not None:
        # a comparison lesson runs as a comparison: both sides on the comparison page (docs/lessons.md)
        from heartbeat_site.live.api import comparisons

        return comparisons.start(request, lesson.scenario, lesson.comparison, body, default_speed=default_speed,
                                 lesson=lesson.name)
    speed, seed, paused = default_speed if body.speed is None else body.speed, body.seed, body.paused
    client = client_key(request)
    check_run_caps(client)
    check_worker_capacity(scenario.node_count)  # also fails (503) before anything is written if Redis is away

    token = new_token()
    run = Run.objects.create(
        scenario_name=scenario.name,
        document=scenario.document,
        seed=recipe.seed if recipe else scenario.seed if seed is None else seed,
        version=str(scenario.version),
        node_count=scenario.node_count,
        duration=float(scenario.duration),
        speed=speed,
        paused=paused,
        control_token_hash=hash_token(token),
        client_key=client,
        lesson=lesson.name if lesson else "",
        drill=drill.name if drill else "",
    )
    if recipe is not None:
        recipes.schedule_recipe(run, recipe)
    start_driver(run)
    return JsonResponse(
        {
            "id": run.id,
            "viewer_url": links.viewer_url(request, run.id),
            "control_url": links.control_url(request, run.id, token),
            "ws_url": links.ws_url(request, run.id),
            "control_token": token,
            "run": run_body(request, run),
        },
        status=201,
    )


def named_scenario(name: str) -> Scenario:
    """The built-in or saved scenario a body's ``scenario`` names, or a 404 naming the field."""
    document = find_document(name)
    if document is None:
        raise ApiError(404, "unknown-scenario", f"scenario: no scenario named {name!r}; GET /api/scenarios lists them")
    return parse_document(document, field="scenario")


def start_driver(run: Run) -> None:
    from heartbeat_site.live.tasks import drive_run

    try:
        activity.mark_active(run.id)
        drive_run.delay(run.id)
    except (redis.RedisError, OSError) as exc:
        log.error("cannot start run %s: %s", run.id, exc)
        Run.objects.filter(pk=run.pk).delete()  # nothing left behind: the client retries
        raise ApiError(503, "redis-unavailable",
                       f"cannot reach Redis to start the run: {exc}; nothing was created, retry shortly",
                       retry_after=5) from None


def run_body(request: HttpRequest, run: Run) -> dict:
    try:
        state = run_state.read_state(run.id)
        viewers = viewer_presence.viewer_count(run.id)
        snapshot = snapshot_and_frames.read_snapshot(run.id)
    except redis.RedisError:
        state, viewers, snapshot = {}, None, None
    if "t" in state:
        clock = {"t": round(float(state["t"]), 6), "speed": float(state["speed"]), "paused": state.get("paused") == "1"}
        last_seq = int(state["last_seq"])
    else:
        clock = {"t": run.t_reached, "speed": run.speed, "paused": run.paused}
        last_seq = run.last_seq
    return {
        "id": run.id,
        "kind": run.kind,
        "scenario": run.scenario_name,
        "title": run.title,
        "version": run.version,
        "seed": run.seed,
        "node_count": run.node_count,
        "duration": run.duration,
        "status": run.status,
        "end_reason": run.end_reason,
        "clock": clock,
        "last_seq": last_seq,
        "viewers": viewers,
        "commands": run.commands.count(),
        "summary": summary.summarise(snapshot.get("snapshot") if snapshot else None),
        # what the run page reads its length and first fault from; a drill's names its cause: not before the reveal
        "document": None if questions.hides_cause(run) else run.document,
        "lesson": run.lesson or None,
        "drill": run.drill or None,
        "viewer_url": links.viewer_url(request, run.id),
        "ws_url": links.ws_url(request, run.id),
        "created_at": run.created_at.isoformat(),
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "ended_at": run.ended_at.isoformat() if run.ended_at else None,
    }


def detail(request: HttpRequest, run_id: str) -> JsonResponse:
    return JsonResponse(run_body(request, get_run_or_404(run_id)))
