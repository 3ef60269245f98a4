"""Scenario endpoints: list, get, validate and save documents."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, JsonResponse

from heartbeat_site.live.api import links
from heartbeat_site.live.api.bodies import json_object
from heartbeat_site.live.api.contract import ScenarioSave, parse
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Scenario
from heartbeat_site.live.runs.saved_scenarios import find_document, save_scenario, scenario_summary, share_scenario
from simulation import ScenarioError, get_builtin, load_scenario
from simulation.schema import scenario_json_schema

SCHEMA = scenario_json_schema()


def parse_document(document: object, *, field: str = "document"):
    """A loaded Scenario, or a 400 listing every field problem; huge clusters are refused first."""
    if not isinstance(document, dict):
        raise ApiError(400, "wrong-type", f"{field}: must be a JSON object (a scenario document)")
    check_cluster_size(declared_node_count(document))
    try:
        scenario = load_scenario(document)
    except ScenarioError as exc:
        errors = [{"field": path, "message": message} for path, message in getattr(exc, "errors", [])]
        raise ApiError(400, "invalid-scenario", f"invalid scenario document: {exc}", errors=errors) from None
    check_cluster_size(scenario.node_count)
    return scenario


def declared_node_count(document: dict) -> int:
    """Nodes a document asks for, read before parsing so a 10^9-node cluster costs nothing."""
    cluster = document.get("cluster")
    if not isinstance(cluster, dict):
        return 0
    counts: list[object] = [cluster.get("nodes")]
    zones = cluster.get("zones")
    if isinstance(zones, list):
        counts.extend(zone.get("nodes") for zone in zones if isinstance(zone, dict))
    return sum(n for n in counts if isinstance(n, int) and not isinstance(n, bool) and n > 0)


def check_cluster_size(nodes: int) -> None:
    limit = settings.HEARTBEAT["MAX_NODES"]
    if nodes > limit:
        raise ApiError(400, "cluster-too-large", f"cluster: {nodes} nodes requested, the limit is {limit}", limit=limit)


def list_scenarios(request: HttpRequest) -> JsonResponse:
    rows = Scenario.objects.all().values("name", "title", "builtin", "summary")
    return JsonResponse(
        {"scenarios": [{"name": r["name"], "title": r["title"], "builtin": r["builtin"], **r["summary"]} for r in rows]}
    )


def save(request: HttpRequest) -> JsonResponse:
    scenario = parse_document(parse(ScenarioSave, json_object(request)).document)
    existing = Scenario.objects.filter(name=scenario.name).first()
    if get_builtin(scenario.name) is not None or (existing is not None and existing.builtin):
        raise ApiError(409, "name-taken", f"name: {scenario.name!r} is a built-in scenario; choose another name")
    row = save_scenario(scenario, builtin=False)
    shared = share_scenario(scenario)
    status = 200 if existing else 201
    return JsonResponse(
        {
            "id": shared.id,
            "url": links.scenario_url(request, shared.id),
            "name": row.name,
            "title": row.title,
            "document": row.document,
        },
        status=status,
    )


def get_scenario(request: HttpRequest, name: str) -> JsonResponse:
    document = find_document(name)
    if document is None:
        raise ApiError(404, "unknown-scenario", f"no scenario named {name!r}; GET /api/scenarios lists them")
    return JsonResponse(document)


def schema(request: HttpRequest) -> JsonResponse:
    """The scenario document's JSON Schema, for editors, forms and API tools."""
    return JsonResponse(SCHEMA)


def validate(request: HttpRequest) -> JsonResponse:
    """Check a document without saving it: 200 with the normalised document, or 400."""
    body = json_object(request)
    document = parse(ScenarioSave, body).document if set(body) == {"document"} else body
    scenario = parse_document(document)
    return JsonResponse(
        {"valid": True, "name": scenario.name, "document": scenario.document, **scenario_summary(scenario)}
    )
