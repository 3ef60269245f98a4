"""Heartbeat Classroom's simulation core: a deterministic model of Kubernetes node heartbeats
(kubelet Lease renewals and NodeStatus) and the control plane's reaction to them.

Pure library: no Django, Celery or Redis. Public API: docs/simulation-api.md.
"""

from .audit import audit_record
from .builtins import builtin_scenarios, get_builtin
from .events import SimEvent as Event
from .faults import FAULT_ACTIONS
from .lessons import (
    Drill,
    Lesson,
    LessonError,
    LessonRun,
    builtin_drills,
    builtin_lessons,
    drill_simulation,
    get_drill,
    get_lesson,
    hide_cause,
    hide_in_snapshot,
    load_drill,
    load_lesson,
    matches,
    run_lesson,
)
from .scenario import Scenario, ScenarioError, load_scenario
from .simulation import CommandError, Shortcuts, Simulation, validate_command

__all__ = [
    "FAULT_ACTIONS",
    "CommandError",
    "Drill",
    "Event",
    "Lesson",
    "LessonError",
    "LessonRun",
    "Scenario",
    "ScenarioError",
    "Shortcuts",
    "Simulation",
    "audit_record",
    "builtin_drills",
    "builtin_lessons",
    "builtin_scenarios",
    "drill_simulation",
    "get_builtin",
    "get_drill",
    "get_lesson",
    "hide_cause",
    "hide_in_snapshot",
    "load_drill",
    "load_lesson",
    "load_scenario",
    "matches",
    "run_lesson",
    "validate_command",
]
