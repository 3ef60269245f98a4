"""Heartbeat Classroom's simulation core: a deterministic model of Kubernetes node heartbeats
(kubelet Lease renewals and NodeStatus) and the control plane's reaction to them.

Pure library: no Django, Celery or Redis. Public API: docs/simulation-api.md.
"""

from .audit import audit_record
from .builtins import builtin_scenarios, get_builtin
from .events import SimEvent as Event
from .faults import FAULT_ACTIONS
from .scenario import Scenario, ScenarioError, load_scenario
from .simulation import CommandError, Simulation, validate_command

__all__ = [
    "FAULT_ACTIONS",
    "CommandError",
    "Event",
    "Scenario",
    "ScenarioError",
    "Simulation",
    "audit_record",
    "builtin_scenarios",
    "get_builtin",
    "load_scenario",
    "validate_command",
]
