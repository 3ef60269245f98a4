"""A run's one-glance summary, derived from its latest snapshot (state is never stored twice)."""

from __future__ import annotations

from collections import Counter


def _ready_status(node: dict) -> str:
    for condition in node.get("status", {}).get("conditions", []) or []:
        if condition.get("type") == "Ready":
            return str(condition.get("status"))
    return "None"


def _pod_ready(pod: dict) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in pod.get("status", {}).get("conditions", []) or []
    )


def summarise(snapshot: dict | None) -> dict:
    if not snapshot:
        return {}
    objects = snapshot.get("objects", {})
    nodes = objects.get("nodes", []) or []
    pods = objects.get("pods", []) or []
    taints = Counter(t.get("key") for n in nodes for t in (n.get("spec", {}).get("taints") or []))
    return {
        "nodes": {"total": len(nodes), "ready": dict(Counter(_ready_status(n) for n in nodes))},
        "taints": dict(taints),
        "pods": {
            "total": len(pods),
            "ready": sum(1 for p in pods if _pod_ready(p)),
            "terminating": sum(1 for p in pods if p.get("metadata", {}).get("deletionTimestamp")),
        },
    }
