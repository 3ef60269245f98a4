"""``POST /api/runs/<id>/recipe``: a link (``/r/<id>``) that plays the session again (live/recipes.py)."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from heartbeat_site.live import recipes
from heartbeat_site.live.api import links
from heartbeat_site.live.api.control import require_control_token
from heartbeat_site.live.api.runs import get_run_or_404


def create(request: HttpRequest, run_id: str) -> JsonResponse:
    """The trainer's commands so far, with the document and seed; the same session always gets the same id."""
    run = get_run_or_404(run_id)
    require_control_token(request, run)
    recipe = recipes.take_recipe(run)
    return JsonResponse(
        {"id": recipe.id, "url": links.recipe_url(request, recipe.id), "seed": recipe.seed,
         "commands": recipe.commands},
        status=201,
    )
