"""A kube-apiserver audit log (``--audit-log-path``: one ``audit.k8s.io/v1`` Event per line) read as the changes it
records, for the mapping every real cluster's events go through (``changes.py``).

Only what node health is made of is kept: writes (create, update, patch, delete) to Nodes, Leases in
``kube-node-lease``, Pods, EndpointSlices and Events, at their ``ResponseComplete`` stage. A line that is not JSON,
JSON that is not an audit Event, another stage, a read, a failed write or another resource is skipped and counted.
The object after a write is the record's ``responseObject`` (policy level RequestResponse); at the levels that
leave it out (Metadata, Request) the write is still drawn, who made it and what, without transitions.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime

from heartbeat_site.observe.changes import (
    EVENT_LANES,
    LEASE_NAMESPACE,
    NLC,
    OWNER_LANES,
    RESOURCES,
    TEC,
    Actor,
    Change,
    meta,
)

WRITES = ("create", "update", "patch", "delete")
DONE_STAGES = ("ResponseComplete", "Panic")
# A service account of kube-system -> its lane (the controllers' names: cmd/kube-controller-manager/names in
# kubernetes/kubernetes)
SERVICE_ACCOUNT_LANES = {
    "node-controller": NLC, "taint-eviction-controller": TEC, "endpointslice-controller": "endpointslice-controller",
    "replicaset-controller": "replicaset-controller", "daemon-set-controller": "daemonset-controller",
    "statefulset-controller": "statefulset-controller", "pod-garbage-collector": "pod-garbage-collector",
    "generic-garbage-collector": "garbage-collector",
    "cloud-node-lifecycle-controller": "cloud-node-lifecycle-controller",
}
KNOWN_LANES = frozenset({*SERVICE_ACCOUNT_LANES.values(), *EVENT_LANES.values(), *OWNER_LANES.values(), "kubelet",
                         "kubelet-lease", "kubelet-status", "kube-scheduler", "trainer"})
KUBELET_LANES = {"leases": "kubelet-lease", "nodes": "kubelet-status"}  # a node's own writes, by resource


class NotAnAuditLog(ValueError):
    """The body holds no audit Event at all."""


@dataclass
class Skipped:
    """Lines left out, by why (the reasons are the keys of ``counts``)."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, why: str) -> None:
        self.counts[why] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass
class Record:
    """One write of the log as a change, with when the API server received and completed it (Unix seconds)."""

    change: Change
    done: float
    object_known: bool
    agent: str = ""


def records(lines: Iterable[bytes], skipped: Skipped) -> Iterator[Record]:
    """The log's writes in the order they were written; raises NotAnAuditLog at the end when there was none."""
    audit_events = 0
    for raw in lines:
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            skipped.add("malformed")
            continue
        if not (isinstance(entry, dict) and entry.get("kind") == "Event"
                and str(entry.get("apiVersion", "")).startswith("audit.k8s.io/")):
            skipped.add("not-audit-events")
            continue
        audit_events += 1
        record = _record(entry, skipped)
        if record is not None:
            yield record
    if not audit_events:
        raise NotAnAuditLog(f"no audit.k8s.io/v1 Event in it ({skipped.counts['malformed']} lines not JSON, "
                            f"{skipped.counts['not-audit-events']} JSON of other kinds)")


def _record(entry: dict, skipped: Skipped) -> Record | None:
    ref = entry.get("objectRef") or {}
    resource, namespace, name = ref.get("resource"), ref.get("namespace") or "", ref.get("name") or ""
    verb = entry.get("verb")
    code = int((entry.get("responseStatus") or {}).get("code") or 0)
    done = _seconds(entry.get("stageTimestamp"))
    if entry.get("stage") not in DONE_STAGES:
        skipped.add("other-stages")
    elif verb not in WRITES:
        skipped.add("reads")
    elif resource not in RESOURCES or (resource == "leases" and namespace != LEASE_NAMESPACE):
        skipped.add("other-resources")
    elif not 200 <= code < 300:
        skipped.add("failed-writes")
    elif done is None or not isinstance(name, str):
        skipped.add("malformed")
    else:
        response = entry.get("responseObject")
        new = response if isinstance(response, dict) and response.get("kind") not in (None, "Status") else None
        known = new is not None
        if verb == "delete" and new is not None and not _still_there(new):
            new = None
        if not name:
            name = meta(response if isinstance(response, dict) else None).get("name") or ""
        actor = _actor(entry, resource, ref.get("subresource") or "", verb, code)
        change = Change(resource, namespace, name, new, 0.0, str(entry.get("stageTimestamp")), actor,
                        received=entry.get("requestReceivedTimestamp"))
        return Record(change, done, known or verb == "delete", str(entry.get("userAgent") or ""))
    return None


def _still_there(obj: dict) -> bool:
    """A graceful delete answers the object marked for deletion, still stored until its grace period ends."""
    metadata = meta(obj)
    return bool(metadata.get("deletionTimestamp")) and bool(metadata.get("deletionGracePeriodSeconds"))


def _actor(entry: dict, resource: str, subresource: str, verb: str, code: int) -> Actor:
    """Who wrote: the lane a controller's user agent names (kube-controller-manager/… /<lane>), else its user."""
    user = str((entry.get("user") or {}).get("username") or "")
    agent = str(entry.get("userAgent") or "")
    lane = agent.rsplit("/", 1)[-1] if agent.startswith("kube-controller-manager/") else ""
    if lane not in KNOWN_LANES:
        lane = _lane_of_user(user, resource)
    return Actor(user, lane, verb, subresource, code)


def _lane_of_user(user: str, resource: str) -> str:
    if user.startswith("system:node:"):
        return KUBELET_LANES.get(resource, "kubelet")
    if user.startswith("system:serviceaccount:kube-system:"):
        return SERVICE_ACCOUNT_LANES.get(user.rsplit(":", 1)[-1], "trainer")
    if user == "system:kube-scheduler":
        return "kube-scheduler"
    return "trainer"


def _seconds(stamp: object) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
