"""``GET /api/runs/<id>/export/<name>``: a run's summary, logs and sequence diagram as files to keep."""

from __future__ import annotations

import math

from django.http import HttpRequest, HttpResponse

from heartbeat_site.live.api.events import published_position
from heartbeat_site.live.api.runs import get_run_or_404
from heartbeat_site.live.api.snapshots import query_time
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.lookback import exports, replay_process
from heartbeat_site.live.models import Run
from heartbeat_site.observe import files, replays

CONTENT_TYPES = {  # one per name in exports.EXPORT_NAMES
    "summary.md": "text/markdown; charset=utf-8",
    "audit.jsonl": "application/jsonl; charset=utf-8",
    "events.jsonl": "application/jsonl; charset=utf-8",
    "sequence.mmd": "text/vnd.mermaid; charset=utf-8",
    "sequence.svg": "image/svg+xml; charset=utf-8",
    "objects.yaml": "application/yaml; charset=utf-8",
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
    if name == "objects.yaml":
        if run.node_count > exports.MAX_OBJECTS_NODES:
            raise ApiError(400, "too-many-objects",
                           f"objects.yaml is made for clusters of up to {exports.MAX_OBJECTS_NODES} nodes, this run "
                           f"has {run.node_count}; read its objects with kubectl (docs/kubectl.md)")
        at = query_time(request, round(t, 6))
        body = exports.cached(run, f"{name}?t={at}", lambda: replayed_export(run, at, name, 0.0, at, None)
                              if not run.simulated else exports.objects_yaml(run, at, reached=t))
        filename = f"run-{run.id}-objects-t{at:g}s.yaml"  # a class downloads several moments of one run
    else:
        query_seconds(request, "t", t)  # not read here, but a t that is no time is refused as objects.yaml does
        start = query_seconds(request, "from", 0.0)
        end = query_seconds(request, "to", t)
        if start > end:
            raise ApiError(400, "bad-window", f"?from= ({start:g}) is after ?to= ({end:g})")
        node = request.GET.get("node")
        window = f"&from={start}&to={end}&node={node}" if name.startswith("sequence.") else ""
        body = exports.cached(run, f"{name}?t={t}{window}", lambda: replayed_export(run, t, name, start, end, node))
        filename = f"run-{run.id}-{name}"
    response = HttpResponse(body, content_type=CONTENT_TYPES[name])
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def replayed_export(run: Run, t: float, name: str, start: float, end: float, node: str | None) -> str:
    """An export made of the run replayed to ``t`` (in the replay process: replay_process.py); a real cluster's, made of
    its event log (docs/observe.md)."""
    try:
        if not run.simulated:
            replays.restore_if_forgotten(run)  # a replayed audit log past Redis's retention (docs/observe.md)
            return files.export(run, name, t, start, end, node)
        return replay_process.replay(exports.replayed_export, run, t, name, start, end, node, t=t)
    except exports.ExportError as exc:
        raise ApiError(400, "unknown-node", str(exc)) from None
