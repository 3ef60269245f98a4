"""events.k8s.io/v1 Events: the run's core/v1 Events in the newer shape.

A real API server keeps one kind of Event and serves it in both shapes, converting field for
field (``pkg/apis/events/v1/conversion.go``): involvedObject is ``regarding``, message ``note``,
source ``deprecatedSource``, firstTimestamp, lastTimestamp and count ``deprecated*``. The
simulation's components record with the legacy fields only (``simulation/apiserver.py``
``record_event``), as client-go's core recorder does; ``eventTime``, ``reportingController``,
``reportingInstance`` and ``action`` are filled from them as the events/v1 recorder of the same
component would have written them, so that every field kubectl prints has a value.
"""

from __future__ import annotations


def event_v1(event: dict) -> dict:
    source = event.get("source") or {}
    first = event.get("firstTimestamp") or event.get("eventTime")
    out: dict = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": event.get("metadata") or {},
        "eventTime": event.get("eventTime") or _micro(first),
        "reportingController": event.get("reportingComponent") or source.get("component") or "",
        "reportingInstance": event.get("reportingInstance") or source.get("host") or source.get("component") or "",
        "action": event.get("action") or event.get("reason") or "",
        "reason": event.get("reason") or "",
        "regarding": event.get("involvedObject") or {},
        "note": event.get("message") or "",
        "type": event.get("type") or "",
        "deprecatedSource": source,
        "deprecatedFirstTimestamp": first,
        "deprecatedLastTimestamp": event.get("lastTimestamp") or first,
        "deprecatedCount": event.get("count") or 1,
    }
    if event.get("related"):
        out["related"] = event["related"]
    if event.get("series"):
        out["series"] = event["series"]
    return out


def _micro(timestamp: str | None) -> str | None:
    """A Time (``2026-01-01T00:01:40Z``) as a MicroTime (``2026-01-01T00:01:40.000000Z``)."""
    if not timestamp or "." in timestamp:
        return timestamp
    return timestamp.removesuffix("Z") + ".000000Z"
