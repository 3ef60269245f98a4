"""The built-in lessons (simulation/lessons/builtin/) and drills (simulation/lessons/drills/)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .documents import Drill, Lesson, load_drill, load_lesson

LESSON_DIR = Path(__file__).parent / "builtin"
DRILL_DIR = Path(__file__).parent / "drills"


@lru_cache(maxsize=1)
def _lessons() -> tuple[Lesson, ...]:
    return tuple(sorted((load_lesson(p) for p in LESSON_DIR.glob("*.yaml")), key=lambda x: (x.position, x.name)))


@lru_cache(maxsize=1)
def _drills() -> tuple[Drill, ...]:
    return tuple(sorted((load_drill(p) for p in DRILL_DIR.glob("*.yaml")), key=lambda x: (x.position, x.name)))


def builtin_lessons() -> list[Lesson]:
    """The lesson path, in order."""
    return list(_lessons())


def get_lesson(name: str) -> Lesson | None:
    return next((x for x in _lessons() if x.name == name), None)


def builtin_drills() -> list[Drill]:
    return list(_drills())


def get_drill(name: str) -> Drill | None:
    return next((x for x in _drills() if x.name == name), None)
