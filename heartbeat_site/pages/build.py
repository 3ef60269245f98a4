"""The scenario builder (`/build/`): a form and a YAML view of one scenario document (docs/architecture.md §3),
checked live by `POST /api/scenarios/validate`, previewed by `POST /api/scenarios/preview`, saved by
`POST /api/scenarios`. "Edit a copy" on a scenario's page opens it here with that scenario's document."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import get_language

from heartbeat_site.live.models import SharedScenario
from heartbeat_site.live.runs import preview
from heartbeat_site.live.runs.saved_scenarios import find_document
from heartbeat_site.pages.build_strings import builder_strings
from heartbeat_site.pages.strings import ui_strings
from simulation import ScenarioError, load_scenario
from simulation.faults import ACTIONS, PRESSURE_RESOURCES
from simulation.profiles import DEFAULT_VERSION, PROFILES
from simulation.scenario import TOLERATION_EFFECTS

COMPONENTS = ("kubelet", "controllerManager", "apiServer")
# A new scenario: two zones, a Deployment behind a Service, a DaemonSet, and one fault to start from.
STARTER: dict[str, Any] = {
    "name": "my-scenario",
    "title": {"en": "My scenario", "zh": "我的场景"},
    "duration": "15m",
    "cluster": {
        "zones": [{"name": "zone-a", "nodes": 2}, {"name": "zone-b", "nodes": 1}],
        "workloads": [{"name": "web", "replicas": 6}, {"name": "agent", "kind": "DaemonSet"}],
        "services": [{"name": "web", "selector": {"app": "web"}}],
    },
    "faults": [{"at": "60s", "action": "stop-kubelet", "node": "node-2"}],
}
# Normalised values the validator fills in by itself: a copy leaves them out, so the form shows them as defaults.
WORKLOAD_DEFAULTS = {"kind": "Deployment", "tolerations": [], "nodeSelector": {}, "terminationGracePeriodSeconds": 30}


def build_page(request: HttpRequest) -> HttpResponse:
    language = get_language() or settings.LANGUAGE_CODE
    document = _starting_document(request)
    config = {
        "strings": {**ui_strings(), **builder_strings()},
        "lang": language,
        "document": document,
        "defaults": {version: component_defaults(version) for version in PROFILES},
        "defaultVersion": DEFAULT_VERSION,
        "actions": {action: {"required": list(required), "optional": list(optional), "reverse": reverse}
                    for action, (required, optional, reverse) in ACTIONS.items()},
        "resources": list(PRESSURE_RESOURCES),
        "effects": list(TOLERATION_EFFECTS),
        "previewMaxNodes": preview.MAX_NODES,
    }
    return render(request, "pages/build.html", {"page_config": config})


def _starting_document(request: HttpRequest) -> dict[str, Any]:
    """A copy of the scenario named by ?scenario=<name> or ?s=<saved id>, else the starter."""
    if name := request.GET.get("scenario"):
        document = find_document(name[:100])
    elif shared_id := request.GET.get("s"):
        shared = SharedScenario.objects.filter(pk=shared_id[:64].lower()).first()
        document = shared.document if shared is not None else None
    else:
        return STARTER
    if document is None:
        raise Http404("no such scenario")
    return copy_of(document)


def component_defaults(version: str) -> dict[str, dict[str, Any]]:
    """The kubelet, controller-manager and API server settings a document gets when it gives none."""
    document = load_scenario({"name": "defaults", "kubernetesVersion": version}).document
    return {component: document[component] for component in COMPONENTS}


def copy_of(document: dict[str, Any]) -> dict[str, Any]:
    """A normalised document under a new name, without the values the validator would fill in anyway, so that
    the form shows what the author chose. Left whole if leaving them out changed its meaning."""
    name = document["name"]
    copy = {**document, "name": (name[:58].rstrip("-") + "-copy") if not name.endswith("-copy") else name}
    version = copy.get("kubernetesVersion", DEFAULT_VERSION)
    defaults = component_defaults(version)
    for component in COMPONENTS:
        kept = {k: v for k, v in copy.get(component, {}).items() if defaults[component].get(k) != v}
        copy.pop(component, None)
        if kept:
            copy[component] = kept
    for key, default in (("seed", 1), ("startTime", "2026-01-01T00:00:00Z")):
        if copy.get(key) == default:
            copy.pop(key)
    cluster = copy.get("cluster", {})
    cluster["workloads"] = [{k: v for k, v in w.items() if WORKLOAD_DEFAULTS.get(k, ...) != v}
                            for w in cluster.get("workloads", [])]
    copy["cluster"] = {k: v for k, v in cluster.items() if v != []}
    try:
        same = load_scenario(copy).document == {**document, "name": copy["name"]}
    except ScenarioError:
        same = False
    return copy if same else {**document, "name": copy["name"]}
