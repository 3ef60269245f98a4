"""A real cluster's run as files (``GET /api/runs/<id>/export/<name>``): what a simulated run's exports are made
of by replay (heartbeat_site/live/lookback/exports.py), made here of its event log, which holds everything it saw."""

from __future__ import annotations

import json
from types import SimpleNamespace

import yaml

from heartbeat_site.live.lookback import exports
from heartbeat_site.live.models import Run
from heartbeat_site.live.runstore import event_log
from heartbeat_site.observe import lookback
from simulation.cli import timeline_line

CHUNK = 5000


def logged(run: Run, t: float) -> list[dict]:
    """The run's logged events up to virtual time ``t``."""
    out: list[dict] = []
    after = 0
    while events := event_log.events_after(run.id, after, CHUNK):
        out += [event for event in events if event["t"] <= t]
        if events[-1]["t"] > t or len(events) < CHUNK:
            break
        after = events[-1]["seq"]
    return out


def export(run: Run, name: str, t: float, start: float, end: float, node: str | None) -> str:
    """The export ``name`` of ``run`` at ``t`` (a sequence diagram: of ``node``, between ``start`` and ``end``)."""
    if name == "objects.yaml":
        snapshot = json.loads(lookback.snapshot_text(run, t + 1e-6))["snapshot"]
        items = [obj for kind in exports.OBJECT_KINDS for obj in snapshot["objects"].get(kind) or ()]
        return yaml.dump({"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}},
                         Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True,
                         default_flow_style=False)
    events = logged(run, t)
    # the timeline's lines as the command line writes them (simulation/cli.py), from the events' dicts
    lines = [timeline_line(SimpleNamespace(t=event["t"] * 1e6, type=event["type"], node=event["node"],  # type: ignore[arg-type]
                                           component=event["component"], fields=event)) for event in events
             if event["type"] == "transition"]
    nodes = sorted({name for event in events if event.get("resource") == "nodes" for name in [event["name"]]})
    replayed = exports.Replayed(run=run, t=t, events=events, timeline=[line for line in lines if line], nodes=nodes)
    if name == "summary.md":
        return exports.summary_md(replayed)
    if name == "audit.jsonl":
        return exports.audit_jsonl(replayed)
    if name == "events.jsonl":
        return exports.events_jsonl(replayed)
    focus = exports.focus_node(replayed, node)
    rows = exports.sequence_rows(replayed, focus, start, end)
    return exports.sequence_mermaid(rows, focus) if name == "sequence.mmd" else exports.sequence_svg(rows, focus)
