"""Run a scenario and read what happened back from its audit log (and decision events)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from simulation import Simulation, audit_record, load_scenario

START = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
EPS = 1.0  # the bound on informer/API propagation delay (docs/kubernetes-node-health.md §0.1)


def seconds(stamp: str) -> float:
    return (datetime.fromisoformat(stamp.replace("Z", "+00:00")) - START).total_seconds()


def scenario(version: str = "1.33", *, faults: list[dict[str, Any]] | None = None, nodes: int = 3,
             zones: list[dict[str, Any]] | None = None, workloads: list[dict[str, Any]] | None = None,
             services: bool = True, **extra: Any) -> dict[str, Any]:
    cluster: dict[str, Any] = {"zones": zones} if zones else {"nodes": nodes}
    cluster["workloads"] = workloads if workloads is not None else [
        {"name": "web", "replicas": 6}, {"name": "agent", "kind": "DaemonSet"}]
    if services:
        cluster["services"] = [{"name": "web", "selector": {"app": "web"}}]
    return {"name": "t", "kubernetesVersion": version, "seed": 11, "duration": "1h", "cluster": cluster,
            "faults": faults or [], **extra}


@dataclass
class Trace:
    events: list[dict[str, Any]]
    audit: list[dict[str, Any]]

    @classmethod
    def run(cls, doc: dict[str, Any], until: float, seed: int | None = None) -> Trace:
        sim = Simulation(load_scenario(doc), seed=seed)
        events = [e.to_dict() for e in sim.run_until(until)]
        return cls(events, [audit_record(e) for e in events if e["type"] == "write"])

    # -- audit-log readers ---------------------------------------------------------------------

    def writes(self, resource: str, name: str | None = None, *, ok: bool = True) -> list[dict[str, Any]]:
        return [r for r in self.audit if r["objectRef"]["resource"] == resource
                and (name is None or r["objectRef"]["name"] == name)
                and (not ok or r["responseStatus"]["code"] < 400)]

    def renewals(self, node: str) -> list[float]:
        return [seconds(r["responseObject"]["spec"]["renewTime"]) for r in self.writes("leases", node)
                if r["verb"] in ("create", "update")]

    def last_renewal_before(self, node: str, t: float) -> float:
        return max(x for x in self.renewals(node) if x <= t)

    def node_versions(self, node: str) -> list[tuple[float, dict[str, Any]]]:
        return [(seconds(r["stageTimestamp"]), r["responseObject"]) for r in self.writes("nodes", node)
                if r["verb"] != "delete"]

    def condition_changes(self, node: str, ctype: str = "Ready") -> list[tuple[float, str, str, str]]:
        """(t, status, reason, writer) each time the condition's status or message changes."""
        out: list[tuple[float, str, str, str]] = []
        last = None
        for r in self.writes("nodes", node):
            if r["verb"] == "delete":
                continue
            conds = {c["type"]: c for c in r["responseObject"]["status"].get("conditions", [])}
            c = conds.get(ctype)
            state = (c["status"], c["reason"], c["message"]) if c else None
            if state != last and state is not None:
                out.append((seconds(r["stageTimestamp"]), state[0], state[2], r["user"]["username"]))
            last = state
        return out

    def first_status(self, node: str, status: str, ctype: str = "Ready", after: float = 0.0) -> float | None:
        return next((t for t, s, _m, _u in self.condition_changes(node, ctype) if s == status and t >= after), None)

    def taint_times(self, node: str, key: str, effect: str) -> list[tuple[float, float | None]]:
        """Intervals [added, removed) during which the taint was on the node."""
        out: list[tuple[float, float | None]] = []
        present = False
        for t, obj in self.node_versions(node):
            has = any(x["key"] == key and x["effect"] == effect for x in obj.get("spec", {}).get("taints", []))
            if has and not present:
                out.append((t, None))
            elif present and not has:
                out[-1] = (out[-1][0], t)
            present = has
        return out

    def pods_on(self, node: str) -> set[str]:
        return {r["objectRef"]["name"] for r in self.writes("pods")
                if (r["responseObject"] or {}).get("spec", {}).get("nodeName") == node}

    def pod_writes(self, user: str | None = None, verb: str | None = None,
                   subresource: str | None = None) -> list[dict[str, Any]]:
        return [r for r in self.writes("pods") if (user is None or r["user"]["username"] == user)
                and (verb is None or r["verb"] == verb)
                and (subresource is None or r["objectRef"].get("subresource", "") == subresource)]

    def decisions(self, rule: str, node: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == "decision" and e["rule"] == rule
                and (node is None or e["node"] == node)]

    def k8s_events(self, reason: str) -> list[dict[str, Any]]:
        return [r["responseObject"] for r in self.writes("events") if r["responseObject"]["reason"] == reason]


NLC = "system:serviceaccount:kube-system:node-controller"
# --node-monitor-grace-period by version: 40 s up to 1.31, 50 s from 1.32 (docs/kubernetes-node-health.md §7)
GRACE = {"1.27": 40.0, "1.28": 40.0, "1.29": 40.0, "1.30": 40.0, "1.31": 40.0, "1.32": 50.0, "1.33": 50.0}
