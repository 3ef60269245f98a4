"""A real cluster's run as it was at a past time, for the run page's look-back (``GET /api/runs/<id>/snapshot?t=``).

A simulated run is replayed to ``t``; a real cluster's cannot be, but its event log holds every change from the
first list (or the first write of the audit log) on, each with the object it left: folding the writes before ``t``
over an empty cluster gives the objects at ``t`` (docs/observe.md, "Look-back").
"""

from __future__ import annotations

from datetime import datetime

from heartbeat_site.live.delivery import frames
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Run
from heartbeat_site.live.runstore import event_log
from heartbeat_site.observe.changes import ChangeMapper
from heartbeat_site.observe.snapshot import grace_of, observed_snapshot

CHUNK = 5000  # events read from the log per call


def snapshot_text(run: Run, t: float) -> str:
    """The snapshot body of ``run`` at ``t``: the objects its writes before ``t`` left, its clock standing at ``t``."""
    mapper = ChangeMapper()
    zero: float | None = None
    after = 0
    while True:
        events = event_log.events_after(run.id, after, CHUNK)
        if after == 0 and events and events[0]["seq"] != 1:
            first = events[0]["seq"]
            raise ApiError(409, "older-than-the-log",
                           f"the run's event log no longer holds its first events (it starts at seq {first}, "
                           "HEARTBEAT_EVENT_LOG_SIZE): a real cluster's past cannot be rebuilt without them")
        for event in events:
            if zero is None:
                zero = datetime.fromisoformat(event["time"].replace("Z", "+00:00")).timestamp() - event["t"]
            if event["t"] >= t:
                return _text(run, mapper, t, zero)
            _fold(mapper, event)
        if len(events) < CHUNK:
            return _text(run, mapper, t, zero)
        after = events[-1]["seq"]


def _fold(mapper: ChangeMapper, event: dict) -> None:
    mapper.seq = event["seq"]
    if event["type"] != "write" or event.get("object") is None:
        return
    store = mapper.objects[event["resource"]]
    key = (event["namespace"] or "", event["name"])
    if event["removed"]:
        store.pop(key, None)
    else:
        store[key] = event["object"]
    if event["node"] and event["component"] in ("kubelet-lease", "kubelet-status"):
        seen = mapper.kubelets.setdefault(event["node"], {"lastRenew": None, "lastStatusReport": None})
        seen["lastRenew" if event["component"] == "kubelet-lease" else "lastStatusReport"] = event["t"]


def _text(run: Run, mapper: ChangeMapper, t: float, zero: float | None) -> str:
    server = (run.document.get("observation") or {}).get("server", "")
    snapshot = observed_snapshot(mapper, t=t, wall=(zero or 0.0) + t, version=run.version,
                                 grace=grace_of(run), title=run.title, server=server)
    return frames.dumps(frames.snapshot_body(snapshot, {"t": round(t, 6), "speed": 1.0, "paused": True},
                                             mapper.seq))
