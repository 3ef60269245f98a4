"""``labelSelector`` and ``fieldSelector`` as the API server reads them
(``k8s.io/apimachinery/pkg/labels/selector.go``, ``pkg/fields/selector.go``).

Field selectors accept, as the real server does, only the fields each resource indexes
(``pkg/registry/*/strategy.go``, ``GetAttrs``/``ToSelectableFields``); any other is a 400.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from heartbeat_site.k8sapi.status import K8sError

Predicate = Callable[[dict], bool]

_META_FIELDS = ("metadata.name", "metadata.namespace")
FIELDS: dict[str, tuple[str, ...]] = {
    "nodes": ("spec.unschedulable",),
    "pods": ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
             "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"),
    "events": ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
               "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
               "reportingComponent", "source", "type"),
    "namespaces": ("status.phase",),
    # "name" (the object's name): kept "for backward compatibility" (pkg/registry/core/persistentvolumeclaim/
    # strategy.go, pkg/registry/core/persistentvolume/strategy.go ToSelectableFields)
    "persistentvolumeclaims": ("name",),
    "persistentvolumes": ("name",),
}


def field_value(obj: dict, path: str) -> str:
    """The value a field selector compares: a string, "true"/"false" for booleans, "" if absent."""
    if path == "source":
        return ((obj.get("source") or {}).get("component")) or ""
    if path == "name":
        return (obj.get("metadata") or {}).get("name") or ""
    value: object = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, bool):
        return "true" if value else "false"
    if path == "spec.unschedulable" and value is None:
        return "false"
    return "" if value is None else str(value)


def field_selector(text: str, resource: str) -> Predicate:
    terms: list[tuple[str, bool, str]] = []
    for term in _split(text):
        match = re.fullmatch(r"([^!=]+)(==|=|!=)(.*)", term)
        if match is None:
            raise K8sError(400, f'invalid field selector: "{term}": expected KEY=VALUE, KEY==VALUE or KEY!=VALUE')
        key, op, value = match.group(1).strip(), match.group(2), match.group(3).strip()
        if key not in _META_FIELDS + FIELDS.get(resource, ()):
            raise K8sError(400, f'field label not supported: {key}')
        terms.append((key, op != "!=", value))
    return lambda obj: all((field_value(obj, key) == value) == equal for key, equal, value in terms)


_LABEL_TERM = re.compile(r"^\s*(!?)\s*([A-Za-z0-9./_-]+)\s*(?:(==|=|!=|\s+in\s+|\s+notin\s+)\s*(.*?))?\s*$")


def label_selector(text: str) -> Predicate:
    tests: list[Predicate] = []
    for term in _split(text):
        match = _LABEL_TERM.match(term)
        if match is None:
            raise K8sError(400, f'unable to parse requirement: "{term}"')
        negate, key, op, value = match.group(1), match.group(2), (match.group(3) or "").strip(), match.group(4)
        if negate and op:
            raise K8sError(400, f'unable to parse requirement: "{term}"')
        tests.append(_label_test(key, op, value or "", bool(negate)))
    return lambda obj: all(test(((obj.get("metadata") or {}).get("labels")) or {}) for test in tests)


def _label_test(key: str, op: str, value: str, negate: bool) -> Callable[[dict], bool]:
    if not op:
        return (lambda labels: key not in labels) if negate else (lambda labels: key in labels)
    if op in ("=", "=="):
        return lambda labels: labels.get(key) == value
    if op == "!=":
        return lambda labels: labels.get(key) != value
    values = {v.strip() for v in value.strip().removeprefix("(").removesuffix(")").split(",") if v.strip()}
    if op == "in":
        return lambda labels: labels.get(key) in values
    return lambda labels: labels.get(key) not in values


def _split(text: str) -> list[str]:
    """Comma-separated terms, commas inside ``( )`` kept."""
    terms, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            terms.append(current)
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    terms.append(current)
    return [t for t in (term.strip() for term in terms) if t]
