"""Myth against fact (myths.yaml): what is usually said about node heartbeats next to what
Kubernetes does, and common interview questions about them answered again.

Each entry carries both languages, the Kubernetes source files to read (paths in the
kubernetes/kubernetes tree) and a "see it" link: a built-in lesson and one of its steps, or a
built-in scenario and a virtual time within its duration. Validated like lessons: unknown fields
and bad values are reported with the path of the field, every problem at once. Pure: no web
framework.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..builtins import get_builtin
from ..clock import format_duration
from ..scenario import read_document
from .catalogue import builtin_lessons, get_lesson
from .documents import LessonError, _DocChecker

MYTHS_FILE = Path(__file__).with_name("myths.yaml")
TOP_FIELDS = ("myths", "questions")
MYTH_FIELDS = ("id", "myth", "fact", "sources", "see")
QUESTION_FIELDS = ("id", "question", "usual", "answer", "sources", "see")
# A file of the Kubernetes tree, relative to its root: no scheme, no leading slash, no "..".
SOURCE_PATH = re.compile(r"(?:[A-Za-z0-9_][A-Za-z0-9_.-]*/)*[A-Za-z0-9_][A-Za-z0-9_.-]*\.(?:go|md|yaml)")


class MythError(LessonError):
    """The myths document is invalid; `.errors` lists (field path, message)."""


@dataclass(frozen=True)
class SeeIt:
    """Where a claim can be watched: a lesson's step, or a scenario at a virtual time."""

    scenario: str  # the scenario the run plays (a lesson's own scenario for a lesson link)
    lesson: str | None = None
    step: str | None = None
    step_index: int | None = None  # 0-based position of the step in its lesson
    step_count: int | None = None
    at: float | None = None  # scenario links: virtual seconds

    @property
    def kind(self) -> str:
        return "lesson" if self.lesson else "scenario"

    def run_body(self) -> dict[str, str]:
        """The body of `POST /api/runs` that starts a run showing it."""
        return {"lesson": self.lesson} if self.lesson else {"scenario": self.scenario}


@dataclass(frozen=True)
class Myth:
    id: str
    myth: dict[str, str]  # as it is usually told
    fact: dict[str, str]  # what happens, with the numbers the simulation shows
    sources: tuple[str, ...]
    see: SeeIt


@dataclass(frozen=True)
class InterviewQuestion:
    id: str
    question: dict[str, str]
    usual: dict[str, str]  # the answer as usually given
    answer: dict[str, str]  # the corrected answer
    sources: tuple[str, ...]
    see: SeeIt


@dataclass(frozen=True)
class MythBook:
    myths: tuple[Myth, ...]
    questions: tuple[InterviewQuestion, ...]


def load_myths(source: Any = MYTHS_FILE) -> MythBook:
    """Parse and validate a myths document from a dict, YAML/JSON text, or a file path."""
    c = _DocChecker()
    doc = c.mapping(read_document(source, "myths document", MythError), "", TOP_FIELDS)
    ids: set[str] = set()
    myths = [Myth(**e) for e in _entries(c, doc, "myths", MYTH_FIELDS, ids)]
    questions = [InterviewQuestion(**e) for e in _entries(c, doc, "questions", QUESTION_FIELDS, ids)]
    if c.errors:
        raise MythError(c.errors)
    return MythBook(myths=tuple(myths), questions=tuple(questions))


@lru_cache(maxsize=1)
def builtin_myths() -> MythBook:
    """The shipped myths.yaml."""
    return load_myths(MYTHS_FILE)


def _entries(c: _DocChecker, doc: dict[str, Any], key: str, fields: tuple[str, ...],
             ids: set[str]) -> list[dict[str, Any]]:
    """The entries of the list `key`: id (unique across both lists), texts, sources, see."""
    out = []
    for i, raw in enumerate(c.listing(doc.get(key), key)):
        path = f"{key}[{i}]"
        entry = c.mapping(raw, path, fields)
        if not isinstance(raw, dict):
            continue
        ident = c.slug_id(entry.get("id"), f"{path}.id", ids, "id")
        texts = {name: c.bitext(entry.get(name), f"{path}.{name}")
                 for name in fields if name not in ("id", "sources", "see")}
        out.append({"id": ident, **texts,
                    "sources": _sources(c, entry.get("sources"), f"{path}.sources"),
                    "see": _see(c, entry.get("see"), f"{path}.see")})
    return out


def _sources(c: _DocChecker, raw: Any, path: str) -> tuple[str, ...]:
    out = []
    for j, item in enumerate(c.listing(raw, path)):
        if not isinstance(item, str) or not SOURCE_PATH.fullmatch(item):
            c.error(f"{path}[{j}]", f"must be a file path in the Kubernetes tree, e.g. "
                                    f"pkg/controller/nodelifecycle/node_lifecycle_controller.go, got {item!r}")
            continue
        out.append(item)
    return tuple(out)


def _see(c: _DocChecker, raw: Any, path: str) -> SeeIt:
    """{lesson, step} or {scenario, at}; the lesson and its step, or the scenario, must exist."""
    s = c.mapping(raw, path, ("lesson", "step", "scenario", "at"))
    if raw is None:
        c.error(path, "is required: {lesson: <name>, step: <step id>} or {scenario: <name>, at: <virtual time>}")
        return SeeIt(scenario="")
    if not isinstance(raw, dict):
        return SeeIt(scenario="")
    if ("lesson" in s) == ("scenario" in s):
        c.error(path, "give exactly one of 'lesson' (with 'step') or 'scenario' (with 'at')")
        return SeeIt(scenario="")
    if "lesson" in s:
        if "at" in s:
            c.error(f"{path}.at", "belongs to a scenario link; a lesson link names a step")
        return _see_lesson(c, s, path)
    if "step" in s:
        c.error(f"{path}.step", "belongs to a lesson link; a scenario link gives a time ('at')")
    name = s["scenario"]
    scenario = get_builtin(name) if isinstance(name, str) else None
    if scenario is None:
        c.error(f"{path}.scenario", f"no built-in scenario named {name!r}")
        return SeeIt(scenario=str(name))
    if "at" not in s:
        c.error(f"{path}.at",
                f"is required (a virtual time within the scenario's {format_duration(scenario.duration)})")
        return SeeIt(scenario=scenario.name)
    at = c.duration(s["at"], f"{path}.at", 0.0, maximum=scenario.duration)
    return SeeIt(scenario=scenario.name, at=at)


def _see_lesson(c: _DocChecker, s: dict[str, Any], path: str) -> SeeIt:
    name = s["lesson"]
    lesson = get_lesson(name) if isinstance(name, str) else None
    if lesson is None:
        names = ", ".join(x.name for x in builtin_lessons())
        c.error(f"{path}.lesson", f"no built-in lesson named {name!r} (lessons: {names})")
        return SeeIt(scenario="", lesson=str(name))
    steps = [step.id for step in lesson.steps]
    if "step" not in s:
        c.error(f"{path}.step", f"is required (a step of {lesson.name}: {', '.join(steps)})")
        return SeeIt(scenario=lesson.scenario.name, lesson=lesson.name, step_count=len(steps))
    step = s["step"]
    if step not in steps:
        c.error(f"{path}.step", f"lesson {lesson.name} has no step {step!r} (steps: {', '.join(steps)})")
        return SeeIt(scenario=lesson.scenario.name, lesson=lesson.name, step_count=len(steps))
    return SeeIt(scenario=lesson.scenario.name, lesson=lesson.name, step=step, step_index=steps.index(step),
                 step_count=len(steps))
