"""``GET /api/runs/<id>/export/<name>``: a run's summary, logs and sequence diagram as files to keep."""

from __future__ import annotations

import math

from django.http import HttpRequest, HttpResponse

from heartbeat_site.live import exports
from heartbeat_site.live.api.events import published_position
from heartbeat_site.live.api.runs import get_run_or_404
from heartbeat_site.live.errors import ApiError

CONTENT_TYPES = {  # one per name in exports.EXPORT_NAMES
    "summary.md": "text/markdown; charset=utf-8",
    "audit.jsonl": "application/jsonl; charset=utf-8",
    "events.jsonl": "application/jsonl; charset=utf-8",
    "sequence.mmd": "text/vnd.mermaid; charset=utf-8",
    "sequence.svg": "image/svg+xml; charset=utf-8",
}


def query_seconds(request: HttpRequest, name: str, default: float) -> float:
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ApiError(400, "bad-query", f"?{name}= must be a virtual time in seconds (a number >= 0); got {raw!r}")
    return value


def export(request: HttpRequest, run_id: str, name: str) -> HttpResponse:
    if name not in CONTENT_TYPES:
        raise ApiError(400, "unknown-export", f"no export named {name!r}; one of {', '.join(exports.EXPORT_NAMES)}")
    run = get_run_or_404(run_id)
    t, _last_seq = published_position(run)
    start = query_seconds(request, "from", 0.0)
    end = query_seconds(request, "to", t)
    if start > end:
        raise ApiError(400, "bad-window", f"?from= ({start:g}) is after ?to= ({end:g})")
    replayed = exports.replay_run(run, t)
    if name == "summary.md":
        body = exports.summary_md(replayed)
    elif name == "audit.jsonl":
        body = exports.audit_jsonl(replayed)
    elif name == "events.jsonl":
        body = exports.events_jsonl(replayed)
    else:
        try:
            node = exports.focus_node(replayed, request.GET.get("node"))
        except exports.ExportError as exc:
            raise ApiError(400, "unknown-node", str(exc)) from None
        rows = exports.sequence_rows(replayed, node, start, end)
        body = exports.sequence_mermaid(rows, node) if name == "sequence.mmd" else exports.sequence_svg(rows, node)
    response = HttpResponse(body, content_type=CONTENT_TYPES[name])
    response["Content-Disposition"] = f'attachment; filename="run-{run.id}-{name}"'
    return response
