"""POST /api/scenarios/preview: a document's first minutes, run headless (heartbeat_site/live/runs/preview.py)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from heartbeat_site.live.api.bodies import json_object
from heartbeat_site.live.api.contract import ScenarioPreview, parse
from heartbeat_site.live.api.scenarios import parse_document
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.runs import preview as previews
from simulation.clock import format_duration, parse_duration


def preview(request: HttpRequest) -> JsonResponse:
    """`{"document": ..., "until"?: duration}`: 200 with the key transitions, or 400 naming the field."""
    body = parse(ScenarioPreview, json_object(request))
    scenario = parse_document(body.document)
    if scenario.node_count > previews.MAX_NODES:
        message = (f"cluster: the preview runs at most {previews.MAX_NODES} nodes, this cluster has "
                   f"{scenario.node_count}; save it and start a run to see it whole")
        raise ApiError(400, "preview-too-large", message, limit=previews.MAX_NODES,
                       errors=[{"field": "cluster", "message": message.split(": ", 1)[1]}])
    return JsonResponse(previews.preview(scenario, _until(body.until, scenario.duration)))


def _until(given: object, duration: float) -> float:
    """The virtual time the preview stops at: `until`, else 10 minutes, never past the scenario's duration."""
    if given is None:
        return min(previews.DEFAULT_SECONDS, duration)
    try:
        until = parse_duration(given)
    except ValueError as exc:
        raise ApiError(400, "bad-until", f"until: {exc}") from None
    if not 0 < until <= previews.MAX_SECONDS:
        limit = format_duration(previews.MAX_SECONDS)
        raise ApiError(400, "bad-until", f"until: must be more than 0 and at most {limit}, got {until:g}s")
    return min(until, duration)
