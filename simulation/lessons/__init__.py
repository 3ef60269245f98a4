"""Lessons and drills on top of the simulation (docs/lessons.md): documents, event matching, a
headless lesson run and the filters that hide a drill's fault. Pure: no web framework."""

from .catalogue import builtin_drills, builtin_lessons, get_drill, get_lesson
from .documents import Drill, Lesson, LessonError, Question, Step, load_drill, load_lesson
from .drills import drill_simulation, hide_cause, hide_in_snapshot
from .matchers import matches
from .ordering import in_place, order_fits, run_order, shown_order, shuffled
from .runner import LessonRun, QuestionState, StepStart, Transcript, run_lesson

__all__ = [
    "Drill",
    "Lesson",
    "LessonError",
    "LessonRun",
    "Question",
    "QuestionState",
    "Step",
    "StepStart",
    "Transcript",
    "builtin_drills",
    "builtin_lessons",
    "drill_simulation",
    "get_drill",
    "get_lesson",
    "hide_cause",
    "hide_in_snapshot",
    "in_place",
    "load_drill",
    "load_lesson",
    "matches",
    "order_fits",
    "run_lesson",
    "run_order",
    "shown_order",
    "shuffled",
]
