"""``POST /api/runs/<id>/recipe`` and ``POST /api/comparisons/<id>/recipe``: a link (``/r/<id>``) that plays the
session again (live/recipes.py)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from heartbeat_site.live.api import links
from heartbeat_site.live.api.control import presented_token, require_control_token
from heartbeat_site.live.api.runs import get_simulated_run
from heartbeat_site.live.runs import recipes


def create(request: HttpRequest, run_id: str) -> JsonResponse:
    """The trainer's commands so far, with the document and seed; the same session always gets the same id."""
    token = presented_token(request)
    run = get_simulated_run(run_id, "a recipe")
    require_control_token(token, run)
    if run.comparison_id:  # a side's own link: the recipe of the whole comparison
        return answer(request, recipes.take_comparison_recipe(run.comparison))
    return answer(request, recipes.take_recipe(run))


def create_for_comparison(request: HttpRequest, comparison_id: str) -> JsonResponse:
    """A comparison's recipe: both sides' settings with the commands (the comparison's control token)."""
    from heartbeat_site.live.api.comparisons import get_comparison_or_404, require_comparison_token

    token = presented_token(request, "the comparison's")
    comparison = get_comparison_or_404(comparison_id)
    require_comparison_token(token, comparison)
    return answer(request, recipes.take_comparison_recipe(comparison))


def answer(request: HttpRequest, recipe) -> JsonResponse:
    return JsonResponse(
        {"id": recipe.id, "url": links.recipe_url(request, recipe.id), "seed": recipe.seed,
         "commands": recipe.commands, "overrides": recipe.overrides},
        status=201,
    )
