"""Audit records: one `audit.k8s.io/v1` Event per write that reached the API server
(docs/architecture.md §5)."""

from __future__ import annotations

import uuid
from typing import Any

from .events import SimEvent
from .objects import API_VERSION

_VERB_METHOD = {"create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE"}


def audit_record(event: SimEvent | dict[str, Any]) -> dict[str, Any]:
    """Turn a `write` event (object or dict form) into an audit.k8s.io/v1 Event."""
    e = event.to_dict() if isinstance(event, SimEvent) else event
    if e.get("type") != "write":
        raise ValueError(f"only write events become audit records, got {e.get('type')!r}")
    api_version, _kind, group = API_VERSION[e["resource"]]
    ref: dict[str, Any] = {"resource": e["resource"], "name": e["name"], "apiVersion": api_version.split("/")[-1]}
    if e["namespace"]:
        ref["namespace"] = e["namespace"]
    if group:
        ref["apiGroup"] = group
    if e.get("subresource"):
        ref["subresource"] = e["subresource"]
    path = _request_uri(e, group, api_version)
    obj = e.get("object")
    record: dict[str, Any] = {
        "kind": "Event",
        "apiVersion": "audit.k8s.io/v1",
        "level": "RequestResponse",
        "auditID": str(uuid.uuid5(uuid.NAMESPACE_URL, f"heartbeat-classroom/{e['seq']}")),
        "stage": "ResponseComplete",
        "requestURI": path,
        "verb": e["verb"],
        "user": {"username": e["user"], "groups": _groups(e["user"])},
        "sourceIPs": ["10.0.0.1"],
        "userAgent": _user_agent(e["component"]),
        "objectRef": ref,
        "responseStatus": {"metadata": {}, "code": e["code"]},
        "requestObject": obj if e["verb"] in ("create", "update", "patch") and e["code"] < 400 else None,
        "responseObject": obj,
        "requestReceivedTimestamp": e["requestReceivedTimestamp"],
        "stageTimestamp": e["time"],
    }
    if e["code"] >= 400:
        record["responseStatus"].update({"status": "Failure", "message": e.get("message") or "", "code": e["code"]})
    return record


def _request_uri(e: dict[str, Any], group: str, api_version: str) -> str:
    base = f"/apis/{api_version}" if group else "/api/v1"
    ns = f"/namespaces/{e['namespace']}" if e["namespace"] else ""
    name = "" if e["verb"] == "create" and not e.get("subresource") else f"/{e['name']}"
    if e["verb"] == "create" and e.get("subresource"):
        name = f"/{e['name']}"
    sub = f"/{e['subresource']}" if e.get("subresource") else ""
    return f"{base}{ns}/{e['resource']}{name}{sub}"


def _groups(user: str) -> list[str]:
    if user.startswith("system:node:"):
        return ["system:nodes", "system:authenticated"]
    if user.startswith("system:serviceaccount:"):
        return ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]
    if user == "kubernetes-admin":
        return ["kubeadm:cluster-admins", "system:authenticated"]
    return ["system:authenticated"]


def _user_agent(component: str) -> str:
    if component.startswith("kubelet"):
        return "kubelet/v1.33.0 (linux/amd64) kubernetes/8adc0f0"
    if component == "trainer":
        return "kubectl/v1.33.0 (linux/amd64) kubernetes/8adc0f0"
    return f"kube-controller-manager/v1.33.0 (linux/amd64) kubernetes/8adc0f0/{component}"
