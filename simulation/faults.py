"""One vocabulary for scenario fault scripts and live commands.

Each action names what it needs; `for: DURATION` schedules the reverse action. Validation
errors carry the field path so the API and the scenario validator report the same words.
"""

from __future__ import annotations

from typing import Any

from .clock import format_duration, parse_duration
from .names import SLUG

# action -> (required fields, optional fields, reverse action or None)
ACTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None]] = {
    "stop-kubelet": (("node",), (), "start-kubelet"),
    "start-kubelet": (("node",), (), None),
    "stop-runtime": (("node",), (), "start-runtime"),
    "start-runtime": (("node",), (), None),
    "partition": (("node",), (), "heal"),
    "heal": (("node",), (), None),
    "start-pressure": (("node", "resource"), (), "stop-pressure"),
    "stop-pressure": (("node", "resource"), (), None),
    "fail-lease-writes": (("node",), (), "restore-lease-writes"),
    "restore-lease-writes": (("node",), (), None),
    "fail-status-writes": (("node",), (), "restore-status-writes"),
    "restore-status-writes": (("node",), (), None),
    "slow-apiserver": (("latency",), ("node",), "restore-apiserver"),
    "restore-apiserver": ((), ("node",), None),
    "shutdown": (("node",), (), "power-on"),
    "power-off": (("node",), (), "power-on"),
    "power-on": (("node",), (), None),
    "cordon": (("node",), (), "uncordon"),
    "uncordon": (("node",), (), None),
    "create-node": (("name",), ("zone", "kubelet"), "delete-node"),
    "delete-node": (("node",), (), None),
    "zone-outage": (("zone",), (), "zone-heal"),
    "zone-heal": (("zone",), (), None),
    "restart-controller-manager": ((), (), None),
    # non-graceful node shutdown: the administrator's out-of-service taint (NoExecute, value nodeshutdown)
    "taint-out-of-service": (("node",), (), "untaint-out-of-service"),
    "untaint-out-of-service": (("node",), (), None),
    # kubectl delete pod <pod> --grace-period=0 --force (pods of the default namespace)
    "force-delete-pod": (("pod",), (), None),
}
FAULT_ACTIONS = tuple(ACTIONS)
PRESSURE_RESOURCES = ("memory", "disk", "pid")
MAX_LATENCY = 120.0


class FaultError(ValueError):
    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{p}: {m}" if p else m for p, m in errors))


def normalise_fault(body: dict[str, Any], known_nodes: set[str] | None, zones: set[str] | None) -> dict[str, Any]:
    """Check one fault/command (without `at`) and return its normalised form.

    `known_nodes` / `zones` are the names that exist (None: do not check).
    """
    errors: list[tuple[str, str]] = []
    action = body.get("action")
    if action is None:
        raise FaultError([("action", f"is required (one of: {', '.join(FAULT_ACTIONS)})")])
    if not isinstance(action, str) or action not in ACTIONS:  # a list or a mapping cannot be looked up
        raise FaultError([("action", f"unknown action {action!r} (known: {', '.join(FAULT_ACTIONS)})")])
    required, optional, reverse = ACTIONS[action]
    out: dict[str, Any] = {"action": action}
    for key in body:
        if key not in ("action", "for", *required, *optional):
            allowed = ", ".join(("action", *required, *optional, *(("for",) if reverse else ())))
            errors.append((key, f"unknown field for {action} (allowed: {allowed})"))
    for key in required:
        if key not in body:
            errors.append((key, f"is required for {action}"))
    if "node" in body:
        node = body["node"]
        if not isinstance(node, str) or not node:
            errors.append(("node", f"must be a node name, got {node!r}"))
        elif known_nodes is not None and node not in known_nodes:
            errors.append(("node", f"unknown node {node!r} (nodes: {_names(known_nodes)})"))
        out["node"] = node
    if "pod" in body:
        pod = body["pod"]
        if not isinstance(pod, str) or not SLUG.match(pod):
            errors.append(("pod", f"must be a pod name (lowercase letters, digits, '-'), got {pod!r}"))
        out["pod"] = pod
    if "zone" in body:
        zone = body["zone"]
        if not isinstance(zone, str):
            errors.append(("zone", f"must be a zone name, got {zone!r}"))
        elif action != "create-node" and zones is not None and zone not in zones:
            errors.append(("zone", f"unknown zone {zone!r} (zones: {_names(zones)})"))
        out["zone"] = zone
    if "resource" in body:
        resource = body["resource"]
        if resource not in PRESSURE_RESOURCES:
            errors.append(("resource", f"must be one of {', '.join(PRESSURE_RESOURCES)}, got {resource!r}"))
        out["resource"] = resource
    if "latency" in body:
        try:
            latency = parse_duration(body["latency"])
            if latency <= 0 or latency > MAX_LATENCY:
                errors.append(("latency", f"must be more than 0 and at most {format_duration(MAX_LATENCY)}"))
            out["latency"] = format_duration(latency)
        except ValueError as exc:
            errors.append(("latency", str(exc)))
    if action == "create-node":
        name = body.get("name")
        if not isinstance(name, str) or not SLUG.match(name):
            errors.append(("name", f"must be a lowercase node name (letters, digits, '-'), got {name!r}"))
        elif known_nodes is not None and name in known_nodes:
            errors.append(("name", f"node {name!r} already exists"))
        out["name"] = name
        kubelet = body.get("kubelet", True)
        if not isinstance(kubelet, bool):
            errors.append(("kubelet", f"must be true or false, got {kubelet!r}"))
        out["kubelet"] = kubelet
        out.setdefault("zone", body.get("zone", ""))
    if "for" in body:
        if reverse is None:
            errors.append(("for", f"{action} cannot be reversed automatically"))
        else:
            try:
                span = parse_duration(body["for"])
                if span <= 0:
                    errors.append(("for", "must be greater than 0"))
                out["for"] = format_duration(span)
            except ValueError as exc:
                errors.append(("for", str(exc)))
    if errors:
        raise FaultError(errors)
    return out


def reverse_of(fault: dict[str, Any]) -> dict[str, Any]:
    """The command that undoes `fault` (used for `for: DURATION`)."""
    action = fault["action"]
    reverse = ACTIONS[action][2]
    assert reverse is not None
    out: dict[str, Any] = {"action": reverse}
    if action == "create-node":
        out["node"] = fault["name"]
        return out
    for key in ("node", "zone", "resource"):
        if key in fault:
            out[key] = fault[key]
    return out


def _names(names: set[str]) -> str:
    ordered = sorted(names, key=lambda n: (len(n), n))
    if len(ordered) > 8:
        return ", ".join(ordered[:8]) + f", … ({len(ordered)} in all)"
    return ", ".join(ordered) or "none"
