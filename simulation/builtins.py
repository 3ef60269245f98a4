"""The built-in scenario catalogue: the YAML documents in simulation/builtin/."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from .scenario import Scenario, load_scenario

BUILTIN_DIR = Path(__file__).parent / "builtin"


@lru_cache(maxsize=1)
def _catalogue() -> tuple[Scenario, ...]:
    scenarios = [load_scenario(path) for path in sorted(BUILTIN_DIR.glob("*.yaml"))]
    return tuple(scenarios)


def builtin_scenarios() -> list[Scenario]:
    return list(_catalogue())


def get_builtin(name: str) -> Scenario | None:
    return next((s for s in _catalogue() if s.name == name), None)
