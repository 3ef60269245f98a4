"""Thin views: they pick the language's texts and hand the page its configuration."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.templatetags.static import static
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language

from heartbeat_site.live.models import Recipe, SharedScenario
from heartbeat_site.pages.cards import card_for, drill_cards, find_scenario, lesson_cards, localized, scenario_cards
from heartbeat_site.pages.faults import fault_actions
from heartbeat_site.pages.myths import myth_cards
from heartbeat_site.pages.strings import TEXTS, action_names, ui_strings
from simulation import load_scenario
from simulation.scenario import dump_document


def _language() -> str:
    return get_language() or settings.LANGUAGE_CODE


def home(request: HttpRequest) -> HttpResponse:
    language = _language()
    return render(
        request,
        "pages/home.html",
        {
            "lessons": lesson_cards(language),
            "drills": drill_cards(language),
            "cards": scenario_cards(language),
            "action_names": action_names(),
            "page_config": {"strings": ui_strings(), "lang": language},
        },
    )


def run_page(request: HttpRequest, run_id: str) -> HttpResponse:
    if len(run_id) > 64:
        raise Http404("no such run")
    config = {
        "run": run_id,
        "ws": f"/ws/runs/{run_id}/",
        "lang": _language(),
        "faultActions": list(fault_actions()),
        "strings": ui_strings(),
        "mermaid": static("vendor/mermaid.min.js"),
        "duration": 900,
    }
    return render(request, "pages/run.html", {"page_config": config, "run_id": run_id})


def scenario_link(request: HttpRequest, name: str) -> HttpResponse:
    """A scenario link: opening it starts a private run of that recipe (the page POSTs it)."""
    scenario = find_scenario(name)
    if scenario is None:
        raise Http404("no such scenario")
    language = _language()
    return render(
        request,
        "pages/scenario.html",
        {
            "scenario": scenario,
            "title": localized(scenario.title, language),
            "watch": localized(scenario.watch, language),
            "page_config": {"strings": ui_strings(), "lang": language, "scenario": scenario.name},
        },
    )


def shared_scenario(request: HttpRequest, scenario_id: str) -> HttpResponse:
    """A saved scenario's link (``/s/<id>``): its page, whose buttons start a run of exactly its document."""
    shared = SharedScenario.objects.filter(pk=scenario_id.lower()).first()
    if shared is None:
        raise Http404("no such scenario")
    return _scenario_card_page(request, shared.document, {"shared_id": shared.id,
                                                           "yaml": dump_document(shared.document)})


def recipe_page(request: HttpRequest, recipe_id: str) -> HttpResponse:
    """A recipe link (``/r/<id>``): a recorded session, whose buttons play it again (live/recipes.py)."""
    recipe = Recipe.objects.filter(pk=recipe_id.lower()).first()
    if recipe is None:
        raise Http404("no such recipe")
    commands = [{"at": item["at"], "text": " ".join(f"{k}={v}" for k, v in item["command"].items())}
                for item in recipe.commands]
    return _scenario_card_page(request, recipe.document, {"recipe": recipe, "commands": commands})


def _scenario_card_page(request: HttpRequest, document: dict, extra: dict) -> HttpResponse:
    """The page of a link to one exact document (a saved scenario, a recipe): its card and start buttons."""
    scenario = load_scenario(document)
    language = _language()
    return render(
        request,
        "pages/scenario.html",
        {
            "scenario": scenario,
            "card": card_for(scenario, language),
            "action_names": action_names(),
            "title": localized(scenario.title, language),
            "watch": localized(scenario.watch, language),
            "page_config": {"strings": ui_strings(), "lang": language, "document": document},
            **extra,
        },
    )


def myths(request: HttpRequest) -> HttpResponse:
    """Myth against fact: what is usually said about node heartbeats, next to what happens."""
    language = _language()
    myth_list, questions = myth_cards(language)
    strings = {key: str(TEXTS[key]) for key in ("home.starting", "home.failed")}  # the "See it" button's
    return render(
        request,
        "pages/myths.html",
        {"myths": myth_list, "questions": questions, "page_config": {"strings": strings, "lang": language}},
    )


def switch_language(request: HttpRequest, code: str) -> HttpResponse:
    """Sets the language cookie LocaleMiddleware reads, then goes back where the user was."""
    if code not in dict(settings.LANGUAGES):
        raise Http404("no such language")
    target = request.GET.get("next") or "/"
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "/"
    response = HttpResponseRedirect(target)
    response.set_cookie(settings.LANGUAGE_COOKIE_NAME, code, max_age=365 * 24 * 3600, samesite="Lax")
    return response
