"""Event matchers (docs/lessons.md, "Matchers"): a mapping of event fields to wanted values.

A matcher names only fields a page can see on the event dicts of docs/simulation-api.md, with
values of the type that field carries, so a typo (`kind: node-redy`, `to: True` for a node's
Ready condition, which is the string "True") is an error when the document is loaded instead of
a trigger that silently never fires.

Values: a scalar must be equal (a bool only equals a bool); a string ending in `*` matches any
string starting with what comes before it (`pod: web-*`); a list matches any of its items; a
mapping (the `to`/`from` of an endpoint transition) matches a mapping holding at least the
given keys with matching values.
"""

from __future__ import annotations

from typing import Any

from ..events import SimEvent
from ..faults import FAULT_ACTIONS, PRESSURE_RESOURCES
from ..objects import API_VERSION
from ..scenario import _Checker

EVENT_TYPES = ("write", "read", "request-failed", "decision", "transition", "fault")
LANES = ("kubelet-lease", "kubelet-status", "kubelet", "kube-apiserver", "node-lifecycle-controller",
         "taint-eviction-controller", "kube-scheduler", "endpointslice-controller", "replicaset-controller",
         "daemonset-controller", "pod-garbage-collector", "cloud-node-lifecycle-controller", "garbage-collector",
         "statefulset-controller", "persistentvolume-controller", "csi-provisioner", "attachdetach-controller",
         "csi-attacher", "trainer")
TRANSITION_KINDS = ("node-ready", "node-condition", "taint-added", "taint-removed", "pod-ready", "pod-phase",
                    "pod-terminating", "pod-deleted", "pod-created", "pod-scheduled", "pod-disruption-target",
                    "endpoint", "zone-state", "node-created", "node-deleted", "node-unschedulable")
CONDITION_STATUS = ("True", "False", "Unknown")
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed")
ZONE_STATES = ("Initial", "Normal", "PartialDisruption", "FullDisruption")
ENDPOINT_KEYS = ("ready", "serving", "terminating")
WRITE_VERBS = ("create", "update", "patch", "delete")


# A value spec: ("str", None) any string, ("enum", values), ("int", None), ("bool", None),
# ("number", None), ("endpoint", None) a {ready, serving, terminating} mapping, ("any", None);
# `nullable` says whether null is a value the field can carry.
def _spec(kind: str, values: tuple[str, ...] | None = None, nullable: bool = False) -> tuple[str, Any, bool]:
    return (kind, values, nullable)


STR = _spec("str")
STR_OR_NULL = _spec("str", nullable=True)
COMMON = {"type": _spec("enum", EVENT_TYPES), "component": _spec("enum", LANES), "node": STR_OR_NULL}
REQUEST = {"resource": _spec("enum", tuple(API_VERSION)), "subresource": STR, "namespace": STR, "name": STR}
FIELDS: dict[str, dict[str, tuple[str, Any, bool]]] = {
    "write": {"user": STR, "verb": _spec("enum", WRITE_VERBS), **REQUEST, "code": _spec("int"),
              "removed": _spec("bool")},
    "read": {"verb": _spec("enum", ("get", "list")), **REQUEST, "code": _spec("int")},
    "request-failed": {"verb": _spec("enum", ("get", "list", *WRITE_VERBS)), **REQUEST},
    "decision": {"rule": STR, "outcome": STR, "pod": STR_OR_NULL},
    "transition": {"kind": _spec("enum", TRANSITION_KINDS), "from": _spec("any", nullable=True),
                   "to": _spec("any", nullable=True), "pod": STR_OR_NULL, "key": STR_OR_NULL,
                   "effect": _spec("enum", ("NoSchedule", "PreferNoSchedule", "NoExecute"), nullable=True)},
    "fault": {"action": _spec("enum", FAULT_ACTIONS), "resource": _spec("enum", PRESSURE_RESOURCES), "zone": STR,
              "name": STR, "command": _spec("int")},
}
# what `from` and `to` carry for each transition kind
STATES: dict[str, tuple[str, Any, bool]] = {
    "node-ready": _spec("enum", CONDITION_STATUS, nullable=True),
    "node-condition": _spec("enum", CONDITION_STATUS, nullable=True),
    "node-created": _spec("enum", CONDITION_STATUS, nullable=True),
    "node-deleted": _spec("enum", CONDITION_STATUS, nullable=True),
    "pod-ready": _spec("bool"),
    "node-unschedulable": _spec("bool"),
    "pod-phase": _spec("enum", POD_PHASES, nullable=True),
    "pod-created": _spec("enum", POD_PHASES, nullable=True),
    "pod-deleted": _spec("enum", POD_PHASES, nullable=True),
    "pod-scheduled": STR_OR_NULL,
    "zone-state": _spec("enum", ZONE_STATES, nullable=True),
    "endpoint": _spec("endpoint", nullable=True),
    "pod-terminating": _spec("number", nullable=True),
    "taint-added": _spec("enum", (), nullable=True),
    "taint-removed": _spec("enum", (), nullable=True),
    "pod-disruption-target": _spec("enum", (), nullable=True),
}
_ATTRS = ("type", "component", "node")
_MISSING = object()


def check_matcher(c: _Checker, value: Any, path: str) -> dict[str, Any]:
    """Validate a matcher, reporting into `c`; returns its normalised (plain, copied) form."""
    if not isinstance(value, dict) or not value:
        c.error(path, f"must be a non-empty mapping of event fields to values, got {value!r}")
        return {}
    types = value.get("type")
    listed = [types] if isinstance(types, str) else types if isinstance(types, list) else []
    known_types = [t for t in listed if t in FIELDS]
    allowed: dict[str, tuple[str, Any, bool]] = dict(COMMON)
    for t in known_types or EVENT_TYPES:
        for key, spec in FIELDS[t].items():
            allowed[key] = _union(allowed[key], spec) if key in allowed else spec
    kinds = value.get("kind")
    kinds = [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []
    out: dict[str, Any] = {}
    for key, want in value.items():
        p = f"{path}.{key}"
        if key not in allowed:
            scope = f" of {'/'.join(known_types)} events" if known_types else ""
            c.error(p, f"unknown event field{scope} (allowed: {', '.join(allowed)})")
            continue
        spec = allowed[key]
        if key in ("from", "to") and kinds and all(k in STATES for k in kinds):
            spec = STATES[kinds[0]] if len(kinds) == 1 else _spec("any", nullable=True)
        out[key] = _check_value(c, want, p, spec, top=True)
    # the fields an Event carries as attributes first: most events fail on them, before the
    # (lazily built) other fields of a write are ever made
    return dict(sorted(out.items(), key=lambda item: item[0] not in _ATTRS))


def _union(a: tuple[str, Any, bool], b: tuple[str, Any, bool]) -> tuple[str, Any, bool]:
    """One spec for a field that several event types carry (a matcher without one `type`)."""
    if a == b:
        return a
    if a[0] == b[0] == "enum":
        return _spec("enum", tuple(dict.fromkeys((*a[1], *b[1]))), a[2] or b[2])
    if a[0] == b[0]:
        return _spec(a[0], None, a[2] or b[2])
    return _spec("any", nullable=True)


def _check_value(c: _Checker, want: Any, path: str, spec: tuple[str, Any, bool], *, top: bool) -> Any:
    kind, values, nullable = spec
    if isinstance(want, list):
        if not top or not want:
            c.error(path, "a list (any of its items) must be non-empty and cannot nest")
            return want
        return [_check_value(c, w, f"{path}[{i}]", spec, top=False) for i, w in enumerate(want)]
    if want is None:
        if not nullable:
            c.error(path, "cannot be null for this field")
        return None
    if kind == "any":
        return dict(want) if isinstance(want, dict) else want
    if kind == "endpoint":
        if not isinstance(want, dict) or not want:
            c.error(path, f"must be a mapping of {', '.join(ENDPOINT_KEYS)} to true/false, got {want!r}")
            return want
        for k, v in want.items():
            if k not in ENDPOINT_KEYS:
                c.error(f"{path}.{k}", f"unknown endpoint condition (allowed: {', '.join(ENDPOINT_KEYS)})")
            elif not isinstance(v, bool):
                c.error(f"{path}.{k}", f"must be true or false, got {v!r}")
        return dict(want)
    if kind == "bool" and not isinstance(want, bool):
        c.error(path, f"must be true or false, got {want!r}")
    elif kind == "int" and (isinstance(want, bool) or not isinstance(want, int)):
        c.error(path, f"must be a whole number, got {want!r}")
    elif kind == "number" and (isinstance(want, bool) or not isinstance(want, (int, float))):
        c.error(path, f"must be a number, got {want!r}")
    elif kind in ("str", "enum") and not isinstance(want, str):
        hint = " (quote it: YAML reads True/False as booleans)" if isinstance(want, bool) else ""
        c.error(path, f"must be a string, got {want!r}{hint}")
    elif (kind == "enum" and want not in values
          and not (want.endswith("*") and any(v.startswith(want[:-1]) for v in values))):
        allowed = ", ".join(repr(v) for v in values) if values else "null only"
        c.error(path, f"unknown value {want!r} (allowed: {allowed})")
    return want


def event_value(event: Any, key: str) -> Any:
    """A field of an event dict or of a `simulation.Event` (fields are built only if needed)."""
    if isinstance(event, SimEvent):
        if key in _ATTRS:
            return getattr(event, key)
        return event.fields.get(key, _MISSING)
    return event.get(key, _MISSING)


def matches(matcher: dict[str, Any], event: Any, side: str | None = None) -> bool:
    """Whether `event` (a dict or a `simulation.Event`) has every field the matcher names.

    A comparison lesson's matcher may name the `side` (a or b) the event must come from: `side` says which
    side `event` came from (an event dict of a comparison may carry it as its own `side` field instead)."""
    for key, want in matcher.items():
        have = side if key == "side" and side is not None else event_value(event, key)
        if not _same(want, have):
            return False
    return True


def _same(want: Any, have: Any) -> bool:
    if have is _MISSING:
        return False
    if isinstance(want, list):
        return any(_same(w, have) for w in want)
    if isinstance(want, dict):
        return isinstance(have, dict) and all(k in have and _same(v, have[k]) for k, v in want.items())
    if isinstance(want, str) and want.endswith("*"):
        return isinstance(have, str) and have.startswith(want[:-1])
    if isinstance(want, bool) or isinstance(have, bool):
        return isinstance(want, bool) and isinstance(have, bool) and want == have
    return want == have
