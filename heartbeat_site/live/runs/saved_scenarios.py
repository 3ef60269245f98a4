"""Scenarios saved in the database: the built-ins (``simulation.builtin_scenarios()``, loaded by
``manage.py load_builtins``) and the custom ones posted to ``POST /api/scenarios``."""

from __future__ import annotations

import base64
import hashlib
import json

from heartbeat_site.live.models import Scenario, SharedScenario
from simulation import builtin_scenarios, get_builtin

CONTENT_ID_LENGTH = 10  # base32 characters: 50 bits of the digest, short enough to read out in class


def scenario_summary(scenario) -> dict:
    """The fields a scenario list shows, kept beside the document so listing parses nothing."""
    return {
        "watch": scenario.watch,
        "node_count": scenario.node_count,
        "duration": scenario.duration,
        "version": scenario.version,
        "fault_actions": list(scenario.fault_actions),
    }


def save_scenario(scenario, *, builtin: bool, position: int = 0) -> Scenario:
    row, _ = Scenario.objects.update_or_create(
        name=scenario.name,
        defaults={
            "title": scenario.title,
            "document": scenario.document,
            "summary": scenario_summary(scenario),
            "builtin": builtin,
            "position": position,
        },
    )
    return row


def load_builtins() -> list[str]:
    """Insert or refresh every built-in scenario; return their names in catalogue order."""
    return [save_scenario(scenario, builtin=True, position=i).name for i, scenario in enumerate(builtin_scenarios())]


def find_document(name: str) -> dict | None:
    """A saved scenario's document, else a built-in's (even before ``load_builtins`` ran)."""
    row = Scenario.objects.filter(name=name).only("document").first()
    if row is not None:
        return row.document
    builtin = get_builtin(name)
    return builtin.document if builtin is not None else None


def content_id(document: dict) -> str:
    """The id of a normalised document: the same document (whatever its key order) always gets the same id."""
    canonical = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.b32encode(hashlib.sha256(canonical).digest()).decode("ascii")[:CONTENT_ID_LENGTH].lower()


def share_scenario(scenario) -> SharedScenario:
    """The scenario's link row, kept as first saved: a link never changes meaning."""
    row, _ = SharedScenario.objects.get_or_create(
        id=content_id(scenario.document), defaults={"name": scenario.name, "document": scenario.document}
    )
    return row
