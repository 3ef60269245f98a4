"""Recipe links (``/r/<id>``): a session captured as scenario document, seed and the trainer's fault commands with
their virtual times, and played again event for event.

Determinism (docs/architecture.md §2.1) makes the replay exact: a run is its document, seed and applied fault
commands (``replay.rebuild``). A run started from a recipe gets those commands as already applied rows with their
``at``, so its driver schedules them when it rebuilds the simulation at virtual time 0, exactly as a worker taking a
run over does. Pause, speed and step only pace the clock and never change the stream, so they are not kept.

A comparison's recipe keeps the document both sides start from, each side's settings and the commands, which a
comparison applies to both sides at one instant: playing it starts a comparison again (``POST /api/runs``).
"""

from __future__ import annotations

from django.utils import timezone

from heartbeat_site.live.classroom import questions
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.lookback.rebuilding import applied_fault_commands
from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Comparison, Recipe, Run
from heartbeat_site.live.runs.saved_scenarios import content_id


def recipe_content(run: Run) -> dict:
    commands = [{"at": command.at, "command": command.payload} for command in applied_fault_commands(run)]
    return {"document": run.document, "seed": run.seed, "commands": commands}


def take_recipe(run: Run) -> Recipe:
    """The recipe of ``run`` as far as it went: the same session gives the same id."""
    if questions.hides_cause(run):
        raise ApiError(409, "drill-not-revealed",
                       "a drill's recipe names its cause: reveal it first, then take the recipe")
    content = recipe_content(run)
    recipe, _ = Recipe.objects.get_or_create(id=content_id(content), defaults={**content, "source_run": run.id})
    return recipe


def take_comparison_recipe(comparison: Comparison) -> Recipe:
    """The recipe of a comparison as far as it went: its base document, both sides' settings, the seed and the
    commands (side a's log holds each of them, as side b's does)."""
    side_a = comparison.sides()[0]
    content = {**recipe_content(side_a), "document": comparison.document, "overrides": comparison.overrides}
    recipe, _ = Recipe.objects.get_or_create(id=content_id(content), defaults={**content, "source_run": side_a.id})
    return recipe


def find_recipe(recipe_id: object) -> Recipe:
    if not isinstance(recipe_id, str):
        raise ApiError(400, "wrong-type", "recipe: must be a recipe id (string)")
    recipe = Recipe.objects.filter(pk=recipe_id.lower()).first()
    if recipe is None:
        raise ApiError(404, "unknown-recipe", f"recipe: no recipe with id {recipe_id!r}")
    return recipe


def schedule_recipe(run: Run, recipe: Recipe) -> None:
    """Give the new run the recipe's commands as applied at their times, before its driver starts."""
    now = timezone.now()
    Command.objects.bulk_create(
        Command(run=run, seq=seq, kind=CommandKind.FAULT, action=item["command"]["action"], payload=item["command"],
                at=item["at"], status=CommandStatus.APPLIED, applied_at=now)
        for seq, item in enumerate(recipe.commands, start=1)
    )
