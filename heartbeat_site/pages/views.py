"""Thin views: they pick the language's texts and hand the page its configuration."""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.templatetags.static import static
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import get_language

from heartbeat_site.live.models import Comparison, Recipe, Run, SharedScenario
from heartbeat_site.pages.cards import card_for, drill_cards, find_scenario, lesson_cards, localized, scenario_cards
from heartbeat_site.pages.faults import fault_actions
from heartbeat_site.pages.myths import myth_cards
from heartbeat_site.pages.strings import TEXTS, action_names, ui_strings
from simulation import load_scenario
from simulation.lessons.catalogue import get_drill, get_lesson
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
    context = {"page_config": config, "run_id": run_id, "lesson_bar": _lesson_bar(run_id, config["lang"]),
               "observed": _observed(run_id)}
    return render(request, "pages/run.html", context)


def _observed(run_id: str) -> dict | None:
    """A real cluster's run (docs/observe.md): its kind and server, said plainly on the page; None for a
    simulation."""
    run = Run.objects.filter(id=run_id).only("kind", "document", "version").first()
    if run is None or run.simulated:
        return None
    return {"kind": run.kind, "server": (run.document.get("observation") or {}).get("server", ""),
            "version": run.version}


def compare_page(request: HttpRequest, comparison_id: str) -> HttpResponse:
    """Both sides of a comparison on one clock (docs/architecture.md §6.9): the run page's panels, twice."""
    comparison = Comparison.objects.filter(pk=comparison_id).first() if len(comparison_id) <= 64 else None
    if comparison is None:
        raise Http404("no such comparison")
    runs = comparison.sides()
    faults = load_scenario(comparison.document).faults
    config = {
        "comparison": comparison.id,
        "runs": [{"id": run.id, "side": run.side, "ws": f"/ws/runs/{run.id}/"} for run in runs],
        "focus": next((fault["node"] for fault in faults if fault.get("node")), None),
        "lang": _language(),
        "faultActions": list(fault_actions()),
        "strings": ui_strings(),
        # a comparison lesson (docs/lessons.md): side a's run holds its questions; the page shows its lesson bar
        "lesson": runs[0].lesson or None,
    }
    sides = [{"key": run.side, "letter": run.side.upper(), "version": run.version,
              "settings": [f"{key}={value}" for key, value in comparison.overrides.get(run.side, {}).items()]}
             for run in runs]
    title = localized(comparison.document.get("title") or {}, _language()) or comparison.scenario_name
    lesson_bar = _lesson_bar(runs[0].id, config["lang"]) if runs and runs[0].lesson else None
    return render(request, "pages/compare.html", {"page_config": config, "comparison": comparison, "sides": sides,
                                                  "title": title, "lesson_bar": lesson_bar})


def _lesson_bar(run_id: str, language: str) -> dict[str, str] | None:
    """The lesson bar as js/lesson.js draws it when the run's state arrives (its kind, title, step and text), here
    already in the first paint: a phone in the room reads the step before the scripts and the snapshot have come,
    and nothing moves when they do. None for a run that is no lesson or drill."""
    run = Run.objects.filter(id=run_id).only("lesson", "drill", "steps_started").first()
    if run is None:
        return None
    if run.lesson and (lesson := get_lesson(run.lesson)) is not None:
        steps = lesson.document["steps"]
        step = min(run.steps_started, len(steps)) - 1
        return {
            "kind": "lesson", "label": str(TEXTS["lesson.lesson"]).format(n=lesson.position),
            "title": localized(lesson.title, language),
            "progress": str(TEXTS["lesson.step-of"]).format(n=step + 1, of=len(steps)) if step >= 0 else "",
            "text": localized(steps[step].get("text"), language) if step >= 0 else "",
        }  # fmt: skip
    if run.drill and (drill := get_drill(run.drill)) is not None:
        return {"kind": "drill", "label": str(TEXTS["lesson.drill"]), "title": localized(drill.title, language),
                "progress": "", "text": localized(drill.document.get("brief"), language)}
    return None


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
    # a comparison's recipe: each side's settings (as the comparison page heads its sides)
    sides = [{"letter": side.upper(), "settings": [f"{key}={value}" for key, value in settings.items()]}
             for side, settings in (recipe.overrides or {}).items()]
    return _scenario_card_page(request, recipe.document, {"recipe": recipe, "commands": commands, "sides": sides})


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


def observe_page(request: HttpRequest) -> HttpResponse:
    """Watch a real cluster or replay its audit log (docs/observe.md): the forms, and whether the operator enabled
    watching."""
    return render(request, "pages/observe.html", {"enabled": settings.HEARTBEAT["OBSERVE"]})


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
