"""The home page's cards (lessons, drills, scenarios) in the page's language."""

from __future__ import annotations

from dataclasses import dataclass

from heartbeat_site.live.runs.saved_scenarios import find_document
from heartbeat_site.pages.faults import fault_actions
from simulation import builtin_scenarios, load_scenario
from simulation.lessons import builtin_drills, builtin_lessons


@dataclass(frozen=True)
class ScenarioCard:
    name: str
    title: str
    watch: str
    node_count: int
    zone_count: int
    duration: float
    version: str
    faults: list[str]

    @property
    def minutes(self) -> int:
        return max(1, round(self.duration / 60))


def localized(text: dict | str | None, language: str) -> str:
    """Pick the zh or en text of a library `{en, zh}` field for a Django language code."""
    if isinstance(text, dict):
        if language.startswith("zh"):
            return text.get("zh") or text.get("en", "")
        return text.get("en") or text.get("zh", "")
    return text or ""


def _zone_count(document: dict) -> int:
    zones = (document.get("cluster") or {}).get("zones") or []
    return max(1, len(zones))


def card_for(scenario, language: str) -> ScenarioCard:
    document = scenario.document
    return ScenarioCard(
        name=scenario.name,
        title=localized(scenario.title, language),
        watch=localized(scenario.watch, language),
        node_count=scenario.node_count,
        zone_count=_zone_count(document),
        duration=scenario.duration,
        version=scenario.version,
        faults=[a for a in scenario.fault_actions if a in fault_actions()],
    )


def scenario_cards(language: str) -> list[ScenarioCard]:
    return [card_for(s, language) for s in builtin_scenarios()]


def find_scenario(name: str):
    """A built-in or a saved scenario by name (what ``/scenarios/<name>/`` runs)."""
    document = find_document(name)
    return load_scenario(document) if document is not None else None


@dataclass(frozen=True)
class LessonCard:
    """A lesson on the path (what GET /api/lessons lists), in the page's language."""

    name: str
    position: int
    title: str
    summary: str
    steps: int
    questions: int
    compared: bool = False  # a comparison lesson: two clusters side by side on one clock


@dataclass(frozen=True)
class DrillCard:
    """A drill (what GET /api/drills lists): its brief, never its cause."""

    name: str
    position: int
    title: str
    brief: str


def lesson_cards(language: str) -> list[LessonCard]:
    return [
        LessonCard(name=lesson.name, position=lesson.position, title=localized(lesson.title, language),
                   summary=localized(lesson.document.get("summary"), language), steps=len(lesson.steps),
                   questions=len(lesson.questions), compared=lesson.comparison is not None)
        for lesson in builtin_lessons()
    ]


def drill_cards(language: str) -> list[DrillCard]:
    return [
        DrillCard(name=drill.name, position=drill.position, title=localized(drill.title, language),
                  brief=localized(drill.public_document.get("brief"), language))
        for drill in builtin_drills()
    ]
