"""``GET /api/runs/<id>/snapshot?t=<seconds>``: a run's snapshot at any virtual time it has reached.

The shape is the websocket's (``frames.snapshot_body``; node level for large runs, a drill's cause
hidden before its reveal), so a replaying page resets its store from it as from a live snapshot.
"""

from __future__ import annotations

import math

from django.http import HttpRequest, HttpResponse

from heartbeat_site.live.api.events import published_position
from heartbeat_site.live.api.runs import get_run_or_404
from heartbeat_site.live.delivery import detail
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.lookback import replay_process, seek
from heartbeat_site.observe import lookback, replays


def query_time(request: HttpRequest, reached: float) -> float:
    """``?t=``: virtual seconds between 0 and the run's reached time (that time when absent)."""
    raw = request.GET.get("t")
    if raw is None or raw == "":
        return reached
    try:
        t = float(raw)
    except ValueError:
        raise ApiError(400, "bad-query", f"?t= must be a number of virtual seconds, got {raw!r}") from None
    if not math.isfinite(t) or t < 0:
        raise ApiError(400, "bad-query", f"?t= must be a number of virtual seconds >= 0, got {raw!r}")
    t = round(t, 6)
    if t > reached:
        raise ApiError(400, "not-reached", f"?t={t:g}: the run has reached only t={reached:.6f} s; seek up to it")
    return t


def snapshot(request: HttpRequest, run_id: str) -> HttpResponse:
    run = get_run_or_404(run_id)
    if not run.simulated:
        replays.restore_if_forgotten(run)  # a replayed audit log past Redis's retention (docs/observe.md)
    reached, _ = published_position(run)
    reached = round(reached, 6)
    t = query_time(request, reached)
    if not run.simulated:  # a real cluster's: its log's writes folded up to t (docs/observe.md, "Look-back")
        return HttpResponse(lookback.snapshot_text(run, t), content_type="application/json")
    text = replay_process.replay(seek.snapshot_text, run, t, reached, detail.is_node_level(run.node_count), t=t)
    return HttpResponse(text, content_type="application/json")
