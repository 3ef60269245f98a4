"""A JSON Schema (draft 2020-12) of the scenario document (docs/architecture.md §3).

Built from the validator's own vocabulary (`scenario.py`, `faults.py`, `profiles.py`: fields, limits, actions,
versions, name patterns), so that editors, forms and API tools check what `load_scenario` checks. What one field
cannot say about another is left to the validator, which names it with the field's path: a fault's node or zone
must exist in the cluster, a force-deleted pod is one of the scenario's StatefulSet pods, a fault's `at` is within
`duration`, disableForceDetachOnTimeout needs Kubernetes 1.30 or later, zone, workload and service names are
unique, the cluster's node and pod totals, `shutdownGracePeriodCriticalPods` <= `shutdownGracePeriod`, and the
upper bounds of durations written as text (`25h`). Whatever the schema rejects, the validator rejects too; the schema is
stricter only where the validator is lenient about form: JSON null for a field, an empty value for `faults`,
kubernetesVersion as a number, durations with spaces or in exponent notation.
"""

from __future__ import annotations

from typing import Any

from .faults import ACTIONS, MAX_LATENCY, PRESSURE_RESOURCES
from .names import SLUG
from .profiles import DEFAULT_VERSION, PROFILES
from .scenario import (
    ACCESS_MODES,
    CLAIM_TEMPLATE_FIELDS,
    CONTROLLER_MANAGER_FIELDS,
    LABEL_KEY,
    MAX_DURATION,
    MAX_NODES,
    MAX_PODS,
    POD_MANAGEMENT_POLICIES,
    QUANTITY,
    STATEFULSET_ONLY,
    TOLERATION_EFFECTS,
    TOP,
    WORKLOAD_FIELDS,
    WORKLOAD_KINDS,
)

SCHEMA_ID = "/api/scenarios/schema.json"
_NUMBER = r"\d+(\.\d+)?"
# simulation/clock.py parse_duration: a plain number of seconds, or h, m, s and ms parts in that order.
DURATION_PATTERN = rf"^(?=.)({_NUMBER}|({_NUMBER}h)?({_NUMBER}m)?({_NUMBER}s)?({_NUMBER}ms)?)$"
POSITIVE_DURATION_PATTERN = "^(?=.*[1-9])" + DURATION_PATTERN[1:]
START_TIME_PATTERN = (
    r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$"
)


def _duration(*, positive: bool = False, maximum: float | None = None, description: str = "") -> dict[str, Any]:
    """A duration: seconds as a number, or text such as 90s, 5m, 1h or 1m30s."""
    number: dict[str, Any] = {"type": "number", ("exclusiveMinimum" if positive else "minimum"): 0}
    if maximum is not None:
        number["maximum"] = maximum
    text = {"type": "string", "pattern": POSITIVE_DURATION_PATTERN if positive else DURATION_PATTERN}
    limits = f"at most {maximum:g} s" if maximum is not None else "no upper bound"
    out: dict[str, Any] = {
        "anyOf": [number, text],
        "description": f"{description + '; ' if description else ''}a duration (90, 90s, 5m, 1h, 1m30s), "
        f"{'greater than 0' if positive else '>= 0'}, {limits}",
    }
    return out


def _integer(minimum: int = 0, maximum: int | None = None, description: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"type": "integer", "minimum": minimum}
    if maximum is not None:
        out["maximum"] = maximum
    if description:
        out["description"] = description
    return out


def _number(minimum: float, maximum: float) -> dict[str, Any]:
    return {"type": "number", "minimum": minimum, "maximum": maximum}


def _object(properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False, **extra}
    if required:
        out["required"] = list(required)
    return out


def _fault(action: str, ref: str) -> dict[str, Any]:
    """The fields one fault action takes (faults.py ACTIONS), beside `at` and `action`."""
    required, optional, reverse = ACTIONS[action]
    field_schemas: dict[str, Any] = {
        "node": {"type": "string", "minLength": 1, "description": "a node of the cluster (node-1, node-2, ...)"},
        "zone": {"type": "string", "description": "a zone of the cluster"},
        "resource": {"enum": list(PRESSURE_RESOURCES)},
        "latency": _duration(positive=True, maximum=MAX_LATENCY),
        "name": {"type": "string", "pattern": SLUG.pattern, "description": "the new node's name"},
        "kubelet": {"type": "boolean", "description": "whether the new node's kubelet runs"},
        "pod": {"type": "string", "pattern": SLUG.pattern,
                "description": "a pod of the default namespace; in a scenario, a StatefulSet pod (<set>-<ordinal>)"},
    }
    properties: dict[str, Any] = {"at": {"$ref": ref + "Duration"}, "action": {"const": action}}
    properties.update({key: field_schemas[key] for key in (*required, *optional)})
    if reverse is not None:
        properties["for"] = _duration(positive=True, description=f"then {reverse} follows by itself")
    return _object(properties, ("at", "action", *required))


def scenario_schema(ref: str = "#/$defs/Scenario") -> tuple[dict[str, Any], dict[str, Any]]:
    """(the document's schema, its named parts). `ref` prefixes the parts' references: the OpenAPI document
    keeps them among its components (`#/components/schemas/Scenario`), the standalone schema under `$defs`."""
    profiles = list(PROFILES)
    defs: dict[str, Any] = {
        "Duration": _duration(),
        "Text": {
            "description": "a text in English and Chinese, or one text for both",
            "anyOf": [
                {"type": "string"},
                _object({"en": {"type": "string"}, "zh": {"type": "string"}}),
            ],
        },
        "Name": {"type": "string", "pattern": SLUG.pattern, "description": "a lowercase slug (letters, digits, '-')"},
        "Labels": {
            "type": "object",
            "propertyNames": {"pattern": LABEL_KEY.pattern},
            "additionalProperties": {"type": "string"},
        },
        "Toleration": _object(
            {
                "key": {"type": "string"},
                "operator": {"enum": ["Exists", "Equal"], "default": "Equal"},
                "value": {"type": "string"},
                "effect": {"enum": list(TOLERATION_EFFECTS)},
                "tolerationSeconds": {"type": "integer", "description": "only with effect NoExecute"},
            },
            allOf=[
                {"if": {"required": ["operator"], "properties": {"operator": {"const": "Exists"}}},
                 "then": {"properties": {"value": {"maxLength": 0}}}},
                {"if": {"not": {"required": ["key"], "properties": {"key": {"minLength": 1}}}},
                 "then": {"required": ["operator"], "properties": {"operator": {"const": "Exists"}}}},
                {"if": {"required": ["tolerationSeconds"]},
                 "then": {"required": ["effect"], "properties": {"effect": {"const": "NoExecute"}}}},
            ],
        ),
        "Workload": _object(
            {
                "name": {"$ref": ref + "Name"},
                "kind": {"enum": list(WORKLOAD_KINDS), "default": "Deployment"},
                "replicas": _integer(0, MAX_PODS, "a Deployment's or StatefulSet's pods (a DaemonSet runs one per "
                                                  "node)"),
                "tolerations": {"type": "array", "items": {"$ref": ref + "Toleration"}},
                "nodeSelector": {"$ref": ref + "Labels"},
                "terminationGracePeriodSeconds": _integer(0, 3600),
                "priorityClassName": {"type": "string"},
                "podManagementPolicy": {"enum": list(POD_MANAGEMENT_POLICIES), "default": "OrderedReady",
                                        "description": "StatefulSet only"},
                "volumeClaimTemplates": {"type": "array", "items": {"$ref": ref + "ClaimTemplate"},
                                         "description": "StatefulSet only: one claim per pod, <name>-<set>-<ordinal>"},
            },
            ("name",),
            allOf=[
                {"if": {"required": ["kind"], "properties": {"kind": {"const": "DaemonSet"}}},
                 "then": {"not": {"required": ["replicas"]}}},
                {"if": {"not": {"required": ["kind"], "properties": {"kind": {"const": "StatefulSet"}}}},
                 "then": {"not": {"anyOf": [{"required": [key]} for key in STATEFULSET_ONLY]}}},
            ],
        ),
        "ClaimTemplate": _object(
            {
                "name": {"$ref": ref + "Name"},
                "storage": {"type": "string", "pattern": QUANTITY.pattern, "description": "the claim's size, e.g. 1Gi"},
                "accessModes": {"type": "array", "minItems": 1, "items": {"enum": list(ACCESS_MODES)}},
                "storageClassName": {"type": "string"},
            },
            ("name", "storage"),
        ),
        "Service": _object(
            {"name": {"$ref": ref + "Name"}, "selector": {"allOf": [{"$ref": ref + "Labels"}, {"minProperties": 1}]}},
            ("name", "selector"),
        ),
        "Fault": {
            "type": "object",
            "required": ["at", "action"],
            "properties": {"action": {"enum": list(ACTIONS)}},
            "allOf": [
                {"if": {"properties": {"action": {"const": action}}}, "then": _fault(action, ref)} for action in ACTIONS
            ],
        },
    }
    cluster = _object(
        {
            "zones": {
                "type": "array",
                "minItems": 1,
                "items": _object({"name": {"$ref": ref + "Name"}, "nodes": _integer(0, MAX_NODES)}, ("name",)),
                "description": "nodes are named node-1, node-2, ... in zone order",
            },
            "nodes": _integer(0, MAX_NODES, "one unlabelled zone of this many nodes"),
            "workloads": {"type": "array", "items": {"$ref": ref + "Workload"}},
            "services": {"type": "array", "items": {"$ref": ref + "Service"}},
        },
    )
    cluster["not"] = {"required": ["zones", "nodes"]}  # one of the two ways to give the nodes
    kubelet = _object({
        "nodeStatusUpdateFrequency": _duration(positive=True, maximum=3600),
        "nodeStatusReportFrequency": _duration(positive=True, maximum=24 * 3600),
        "nodeLeaseDurationSeconds": _integer(1, 3600),
        "shutdownGracePeriod": _duration(maximum=3600),
        "shutdownGracePeriodCriticalPods": _duration(maximum=3600),
    })
    controller_manager = _object({
        "nodeMonitorPeriod": _duration(positive=True, maximum=600),
        "nodeMonitorGracePeriod": _duration(positive=True, maximum=3600),
        "nodeStartupGracePeriod": _duration(positive=True, maximum=3600),
        "nodeEvictionRate": _number(0, 1000),
        "secondaryNodeEvictionRate": _number(0, 1000),
        "largeClusterSizeThreshold": _integer(0),
        "unhealthyZoneThreshold": _number(0, 1),
        "disableForceDetachOnTimeout": {"type": "boolean",
                                        "description": "kube-controller-manager 1.30 and later only"},
    })
    assert tuple(controller_manager["properties"]) == CONTROLLER_MANAGER_FIELDS
    api_server = _object({
        "defaultNotReadyTolerationSeconds": _integer(0),
        "defaultUnreachableTolerationSeconds": _integer(0),
        "defaultTolerationSeconds": {"type": "boolean"},
    })
    properties = {
        "name": {"$ref": ref + "Name"},
        "title": {"$ref": ref + "Text"},
        "watch": {"$ref": ref + "Text"},
        "kubernetesVersion": {"enum": profiles, "default": DEFAULT_VERSION},
        "seed": _integer(0, 2**63 - 1),
        "startTime": {"type": "string", "pattern": START_TIME_PATTERN, "description": "RFC 3339, virtual time zero"},
        "duration": _duration(positive=True, maximum=MAX_DURATION),
        "cluster": cluster,
        "kubelet": kubelet,
        "controllerManager": controller_manager,
        "apiServer": api_server,
        "faults": {"type": "array", "items": {"$ref": ref + "Fault"}},
    }
    assert tuple(properties) == TOP, "the schema's fields are the validator's"
    assert set(defs["Workload"]["properties"]) == set(WORKLOAD_FIELDS)
    assert set(defs["ClaimTemplate"]["properties"]) == set(CLAIM_TEMPLATE_FIELDS)
    document = _object(properties, ("name",), title="Heartbeat Classroom scenario document",
                       description="docs/architecture.md §3")
    return document, {f"{ref.rsplit('/', 1)[1]}{key}": value for key, value in defs.items()}


def scenario_json_schema() -> dict[str, Any]:
    """The standalone schema (served at /api/scenarios/schema.json)."""
    document, defs = scenario_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID, **document, "$defs": defs}
