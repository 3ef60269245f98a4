"""``POST /api/audit-replays``: a kube-apiserver audit log as a run of its node health traffic (docs/observe.md).

The log's writes go through the mapping every real cluster's changes take (``changes.py``); the run is made at
once, ended, its events in its Redis event log and its snapshot the cluster before the first of them, so a page
that opens it draws the whole log as it joins (the websocket's catch-up), as it draws a live run.
"""

from __future__ import annotations

import re
import uuid
import zlib
from collections.abc import Iterator

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.utils import timezone

from heartbeat_site.live.api import links
from heartbeat_site.live.delivery import frames
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import RecordedLog, Run, RunKind, RunStatus
from heartbeat_site.live.runs.caps import client_key
from heartbeat_site.live.runs.tokens import hash_token, new_token
from heartbeat_site.live.runstore import activity, ownership, run_state
from heartbeat_site.observe.auditlog import NotAnAuditLog, Record, Skipped, records
from heartbeat_site.observe.changes import ChangeMapper
from heartbeat_site.observe.snapshot import grace_period, observed_snapshot
from simulation.profiles import DEFAULT_VERSION

PUBLISH_BATCH = 1000  # events per Redis call
_VERSION = re.compile(r"^kubelet/v(\d+)\.(\d+)")
REPLAYED = "an audit log, replayed"


def _lines(request: HttpRequest) -> Iterator[bytes]:
    """The body's lines, read as they come (a log of many megabytes is never held whole), up to the limit."""
    limit = settings.HEARTBEAT["MAX_AUDIT_BYTES"]
    read = 0
    while line := request.readline():
        read += len(line)
        if read > limit:
            raise ApiError(413, "body-too-large", f"the audit log is larger than the {limit} byte limit "
                                                  "(HEARTBEAT_MAX_AUDIT_BYTES); give the part around the incident")
        yield line


def create(request: HttpRequest) -> JsonResponse:
    skipped = Skipped()
    try:
        writes = sorted(records(_lines(request), skipped), key=lambda record: record.done)
    except NotAnAuditLog as exc:
        raise ApiError(400, "not-an-audit-log",
                       f"the body is not a kube-apiserver audit log: {exc}; give the file --audit-log-path writes "
                       "(audit.k8s.io/v1 Events, JSON lines)") from None
    if not writes:
        raise ApiError(400, "nothing-to-replay",
                       f"the audit log has no write to nodes, leases in kube-node-lease, pods, endpointslices or "
                       f"events ({skipped.total} lines skipped: {dict(sorted(skipped.counts.items()))})")
    mapper = ChangeMapper()
    start = writes[0].done
    events: list[dict] = []
    for record in writes:
        record.change.t = round(record.done - start, 6)
        events += mapper.apply(record.change) if record.object_known else mapper.bare(record.change)
    kept = settings.HEARTBEAT["EVENT_LOG_SIZE"]
    if len(events) > kept:
        raise ApiError(413, "too-many-events", f"the audit log makes {len(events)} node health events; a run keeps "
                                               f"{kept} (HEARTBEAT_EVENT_LOG_SIZE): give the part around the incident")
    run = _store(request, writes, events, mapper, start)
    return JsonResponse({
        "id": run.id,
        "kind": run.kind,
        "url": links.viewer_url(request, run.id),
        "ws_url": links.ws_url(request, run.id),
        "events": len(events),
        "skipped": skipped.total,
        "skipped_by_reason": dict(sorted(skipped.counts.items())),
    }, status=201)


def _version(writes: list[Record]) -> str:
    """The cluster's version as its kubelets' user agents name it (kubelet/v1.31.4 …), else the default."""
    for record in writes:
        match = _VERSION.match(record.agent)
        if match:
            return f"{match.group(1)}.{match.group(2)}"
    return DEFAULT_VERSION


def _store(request: HttpRequest, writes: list[Record], events: list[dict], mapper: ChangeMapper,
           start: float) -> Run:
    """The replay as an ended run: its row, its events in its log, its snapshot before the first of them; the same
    kept in the database for when Redis has forgotten them (``restore_if_forgotten``)."""
    version = _version(writes)
    end = events[-1]["t"] if events else 0.0
    now = timezone.now()
    title = {"en": "An audit log, replayed", "zh": "回放的审计日志"}
    run = Run.objects.create(
        kind=RunKind.AUDIT_REPLAY, scenario_name="audit-replay",
        document={"name": "audit-replay", "title": title, "observation": {"server": "audit.k8s.io/v1"}},
        seed=0, version=version, node_count=len(mapper.objects["nodes"]), duration=end, speed=1.0, paused=True,
        t_reached=end, last_seq=mapper.seq, status=RunStatus.FINISHED, end_reason=REPLAYED,
        control_token_hash=hash_token(new_token()), client_key=client_key(request), started_at=now, ended_at=now,
    )
    before = observed_snapshot(ChangeMapper(), t=0.0, wall=start, version=version, grace=grace_period(version),
                               title=title, server="audit.k8s.io/v1")
    snapshot = frames.dumps(frames.snapshot_body(before, {"t": end, "speed": 1.0, "paused": True}, 0))
    encoded = frames.encode_events(events)
    RecordedLog.objects.create(run=run, events=zlib.compress("\n".join(text for _, text in encoded).encode()),
                               snapshot=zlib.compress(snapshot.encode()))
    _publish(run, encoded, snapshot)
    return run


def _publish(run: Run, encoded: list[tuple[int, str]], snapshot: str) -> None:
    """The replay's events, state and snapshot in Redis, as an ended run's, kept for the retention."""
    lease = ownership.Lease(run.id, uuid.uuid4().hex, settings.HEARTBEAT["LEASE_TTL"] * 10)
    lease.acquire()
    for i in range(0, len(encoded), PUBLISH_BATCH):
        lease.publish(encoded[i:i + PUBLISH_BATCH], {})
    lease.publish([], {"t": repr(run.t_reached), "last_seq": run.last_seq, "speed": 1.0, "paused": 1,
                       "status": RunStatus.FINISHED, "fast_forward": ""})
    lease.store_snapshot(snapshot)
    lease.release()
    activity.mark_inactive(run.id)


def restore_if_forgotten(run: Run) -> None:
    """Publish a replayed audit log again when Redis no longer has it (its retention passed, Redis was emptied):
    the page, its look-back, event pages and exports then read it as on the day it was uploaded."""
    if run.kind != RunKind.AUDIT_REPLAY or "t" in run_state.read_state(run.id):
        return
    kept = RecordedLog.objects.filter(run=run).first()
    if kept is None:
        return
    lines = zlib.decompress(kept.events).decode().split("\n")
    encoded = [(seq, text) for seq, text in enumerate(lines, start=1)]
    _publish(run, encoded, zlib.decompress(kept.snapshot).decode())
