"""Scenario documents (docs/architecture.md §3): parse, validate, normalise.

Every problem is reported with the path of the field it concerns, all at once, so an author
fixes a document in one go. Unknown fields are errors: a typo must never be silently ignored.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .clock import format_duration, parse_duration, parse_start_time
from .faults import normalise_fault
from .names import SLUG
from .profiles import DEFAULT_VERSION, PROFILES

MAX_NODES = 5000
MAX_PODS = 100_000
MAX_DURATION = 24 * 3600.0
LABEL_KEY = re.compile(r"^([a-z0-9.-]+/)?[A-Za-z0-9]([A-Za-z0-9._-]{0,61}[A-Za-z0-9])?$")
TOLERATION_EFFECTS = ("", "NoSchedule", "PreferNoSchedule", "NoExecute")


class ScenarioError(ValueError):
    """A scenario document is invalid; `.errors` lists (field path, message)."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{p}: {m}" if p else m for p, m in errors))


@dataclass(frozen=True)
class Scenario:
    document: dict[str, Any]
    nodes: tuple[tuple[str, str], ...]  # (node name, zone) in creation order
    faults: tuple[dict[str, Any], ...] = field(default=())

    @property
    def name(self) -> str:
        return self.document["name"]

    @property
    def title(self) -> dict[str, str]:
        return self.document["title"]

    @property
    def watch(self) -> dict[str, str]:
        return self.document["watch"]

    @property
    def seed(self) -> int:
        return self.document["seed"]

    @property
    def version(self) -> str:
        return self.document["kubernetesVersion"]

    @property
    def duration(self) -> float:
        return parse_duration(self.document["duration"])

    @property
    def node_count(self) -> int:
        return len(self.nodes)

    @property
    def zones(self) -> list[str]:
        return sorted({z for _n, z in self.nodes})

    @property
    def fault_actions(self) -> list[str]:
        return sorted({f["action"] for f in self.faults})


class _Checker:
    def __init__(self) -> None:
        self.errors: list[tuple[str, str]] = []

    def error(self, path: str, message: str) -> None:
        self.errors.append((path, message))

    def mapping(self, value: Any, path: str, allowed: tuple[str, ...]) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(path, f"must be a mapping, got {type(value).__name__}")
            return {}
        for key in value:
            if key not in allowed:
                self.error(f"{path}.{key}" if path else str(key), f"unknown field (allowed: {', '.join(allowed)})")
        return value

    def duration(self, value: Any, path: str, default: float, *, minimum: float = 0.0, maximum: float | None = None,
                 positive: bool = False) -> float:
        if value is None:
            return default
        try:
            s = parse_duration(value)
        except ValueError as exc:
            self.error(path, str(exc))
            return default
        if positive and s <= 0:
            self.error(path, "must be greater than 0")
        elif s < minimum:
            self.error(path, f"must be at least {format_duration(minimum)}")
        elif maximum is not None and s > maximum:
            self.error(path, f"must be at most {format_duration(maximum)}")
        return s

    def integer(self, value: Any, path: str, default: int, *, minimum: int = 0, maximum: int | None = None) -> int:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.error(path, f"must be a whole number, got {value!r}")
            return default
        if value < minimum:
            self.error(path, f"must be a whole number >= {minimum}, got {value}")
        elif maximum is not None and value > maximum:
            self.error(path, f"must be at most {maximum}, got {value}")
        return value

    def number(self, value: Any, path: str, default: float, *, minimum: float = 0.0,
               maximum: float | None = None) -> float:
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.error(path, f"must be a number, got {value!r}")
            return default
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"between {minimum} and {maximum}" if maximum is not None else f">= {minimum}"
            self.error(path, f"must be {bound}, got {value}")
        return float(value)

    def boolean(self, value: Any, path: str, default: bool) -> bool:
        if value is None:
            return default
        if not isinstance(value, bool):
            self.error(path, f"must be true or false, got {value!r}")
            return default
        return value

    def string(self, value: Any, path: str, default: str = "") -> str:
        if value is None:
            return default
        if not isinstance(value, str):
            self.error(path, f"must be a string, got {value!r}")
            return default
        return value

    def slug(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not SLUG.match(value):
            self.error(path, f"must be a lowercase slug (letters, digits, '-'), got {value!r}")
            return str(value)
        return value

    def labels(self, value: Any, path: str) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.error(path, f"must be a mapping of label keys to values, got {type(value).__name__}")
            return {}
        out = {}
        for k, v in value.items():
            if not isinstance(k, str) or not LABEL_KEY.match(k):
                self.error(f"{path}.{k}", "is not a valid label key")
            elif not isinstance(v, str):
                self.error(f"{path}.{k}", f"label values must be strings, got {v!r}")
            else:
                out[k] = v
        return out

    def unique_name(self, m: dict[str, Any], path: str, default: str, seen: set[str], what: str,
                    required: str = "is required") -> str:
        """The `name` of one entry of a list whose names are unique (zones, claim templates)."""
        if "name" not in m:
            self.error(f"{path}.name", required)
        name = self.slug(m.get("name", default), f"{path}.name")
        if name in seen:
            self.error(f"{path}.name", f"duplicate {what} {name!r}")
        seen.add(name)
        return name

    def sequence(self, value: Any, path: str) -> list[Any]:
        """A list field: absent is empty; anything else but a list is an error (and empty)."""
        if value is None:
            return []
        if not isinstance(value, list):
            self.error(path, f"must be a list, got {type(value).__name__}")
            return []
        return value

    def text(self, value: Any, path: str, default: str) -> dict[str, str]:
        if value is None:
            return {"en": default, "zh": default}
        if isinstance(value, str):
            return {"en": value, "zh": value}
        m = self.mapping(value, path, ("en", "zh"))
        en = self.string(m.get("en"), f"{path}.en", default)
        return {"en": en, "zh": self.string(m.get("zh"), f"{path}.zh", en)}


TOP = ("name", "title", "watch", "kubernetesVersion", "seed", "startTime", "duration", "cluster", "kubelet",
       "controllerManager", "apiServer", "faults")


def read_document(source: Any, what: str = "scenario", error: type[ScenarioError] = ScenarioError) -> dict[str, Any]:
    """The mapping in a dict, YAML/JSON text, or a file path (also used for lessons and drills)."""
    if isinstance(source, Path):
        try:
            source = source.read_text(encoding="utf-8")
        except OSError as exc:
            raise error([("", f"cannot read {exc.filename}: {exc.strerror}")]) from None
    if isinstance(source, (str, bytes)):
        try:
            source = yaml.safe_load(source)
        except yaml.YAMLError as exc:
            raise error([("", f"not valid YAML or JSON: {exc}")]) from None
    if not isinstance(source, dict):
        raise error([("", f"a {what} must be a mapping, got {type(source).__name__}")])
    return source


def load_scenario(source: Any) -> Scenario:
    """Parse and validate a scenario from a dict, YAML/JSON text, or a file path."""
    source = read_document(source)
    c = _Checker()
    doc = c.mapping(source, "", TOP)
    out: dict[str, Any] = {}
    if "name" not in doc:
        c.error("name", "is required")
    out["name"] = c.slug(doc.get("name", "unnamed"), "name")
    out["title"] = c.text(doc.get("title"), "title", out["name"])
    out["watch"] = c.text(doc.get("watch"), "watch", "")
    version = doc.get("kubernetesVersion", DEFAULT_VERSION)
    if isinstance(version, float) and f"{version}" in PROFILES:
        version = f"{version}"
    if not isinstance(version, str) or version not in PROFILES:
        c.error("kubernetesVersion", f"must be one of {', '.join(PROFILES)} (as a string), got {version!r}")
        version = DEFAULT_VERSION
    out["kubernetesVersion"] = version
    out["seed"] = c.integer(doc.get("seed"), "seed", 1, maximum=2**63 - 1)
    start = c.string(doc.get("startTime"), "startTime", "2026-01-01T00:00:00Z")
    try:
        parse_start_time(start)
    except ValueError as exc:
        c.error("startTime", f"must be an RFC 3339 time such as 2026-01-01T00:00:00Z: {exc}")
        start = "2026-01-01T00:00:00Z"
    out["startTime"] = start
    out["duration"] = format_duration(c.duration(doc.get("duration"), "duration", 900.0, positive=True,
                                                 maximum=MAX_DURATION))

    nodes = _cluster(c, doc.get("cluster"), out)
    _kubelet(c, doc.get("kubelet"), out)
    _controller_manager(c, doc.get("controllerManager"), out, PROFILES[version].node_monitor_grace_period, version)
    api = c.mapping(doc.get("apiServer"), "apiServer",
                    ("defaultNotReadyTolerationSeconds", "defaultUnreachableTolerationSeconds",
                     "defaultTolerationSeconds"))
    out["apiServer"] = {
        "defaultNotReadyTolerationSeconds": c.integer(api.get("defaultNotReadyTolerationSeconds"),
                                                      "apiServer.defaultNotReadyTolerationSeconds", 300),
        "defaultUnreachableTolerationSeconds": c.integer(api.get("defaultUnreachableTolerationSeconds"),
                                                         "apiServer.defaultUnreachableTolerationSeconds", 300),
        "defaultTolerationSeconds": c.boolean(api.get("defaultTolerationSeconds"),
                                              "apiServer.defaultTolerationSeconds", True),
    }
    faults = doc.get("faults")
    if faults is None:  # absent, or YAML's empty value (`faults:`); an empty mapping or string is no list
        faults = []
    known_nodes = {n for n, _z in nodes}
    zones = {z for _n, z in nodes}
    norm_faults: list[dict[str, Any]] = []
    if not isinstance(faults, list):
        c.error("faults", f"must be a list, got {type(faults).__name__}")
        faults = []
    duration = parse_duration(out["duration"])
    statefulset_pods = {f"{w['name']}-{o}" for w in out["cluster"]["workloads"] if w["kind"] == "StatefulSet"
                        for o in range(w["replicas"])}
    for index, fault in sorted(enumerate(faults), key=lambda p: _fault_time(p[1])):
        path = f"faults[{index}]"
        if not isinstance(fault, dict):
            c.error(path, f"must be a mapping with at least 'at' and 'action', got {fault!r}")
            continue
        if fault.get("at") is None:  # null too: a fault with no time is a mistake, never "at 0"
            c.error(f"{path}.at", "is required (when the fault happens, e.g. 60s)")
        at = c.duration(fault.get("at"), f"{path}.at", 0.0, maximum=duration)
        body = {k: v for k, v in fault.items() if k != "at"}
        try:
            norm = normalise_fault(body, known_nodes, zones)
        except ValueError as exc:
            for p, m in getattr(exc, "errors", [("", str(exc))]):
                c.error(f"{path}.{p}" if p else path, m)
            continue
        if norm["action"] == "create-node":
            known_nodes.add(norm["name"])
        if norm["action"] == "force-delete-pod" and norm["pod"] not in statefulset_pods:
            examples = ", ".join(sorted(statefulset_pods)[:3]) or "none: the scenario has no StatefulSet"
            c.error(f"{path}.pod", f"no pod named {norm['pod']!r} can exist when the fault runs: name a "
                                   f"StatefulSet pod, <set>-<ordinal> (here: {examples})")
            continue
        norm_faults.append({"at": format_duration(at), **norm})
    out["faults"] = norm_faults
    if c.errors:
        raise ScenarioError(c.errors)
    return Scenario(document=out, nodes=tuple(nodes), faults=tuple(norm_faults))


def _fault_time(fault: Any) -> float:
    try:
        return parse_duration(fault.get("at")) if isinstance(fault, dict) else 0.0
    except ValueError:
        return 0.0


def _cluster(c: _Checker, raw: Any, out: dict[str, Any]) -> list[tuple[str, str]]:
    cluster = c.mapping(raw, "cluster", ("zones", "nodes", "workloads", "services"))
    nodes: list[tuple[str, str]] = []
    norm: dict[str, Any] = {}
    if "zones" in cluster and "nodes" in cluster:
        c.error("cluster", "give either 'zones' or 'nodes', not both")
    if "zones" in cluster:
        zones = cluster["zones"]
        if not isinstance(zones, list) or not zones:
            c.error("cluster.zones", "must be a non-empty list of {name, nodes}")
            zones = []
        seen: set[str] = set()
        norm["zones"] = []
        for i, z in enumerate(zones):
            path = f"cluster.zones[{i}]"
            zm = c.mapping(z, path, ("name", "nodes"))
            zname = c.unique_name(zm, path, f"zone-{i}", seen, "zone")
            count = c.integer(zm.get("nodes"), f"{path}.nodes", 1, maximum=MAX_NODES)
            norm["zones"].append({"name": zname, "nodes": count})
            nodes.extend((f"node-{len(nodes) + 1}", zname) for _ in range(count))
    else:
        count = c.integer(cluster.get("nodes"), "cluster.nodes", 3, maximum=MAX_NODES)
        norm["nodes"] = count
        nodes = [(f"node-{i + 1}", "") for i in range(count)]
    if len(nodes) > MAX_NODES:
        c.error("cluster", f"at most {MAX_NODES} nodes, got {len(nodes)}")
    norm["workloads"] = _workloads(c, cluster.get("workloads"), len(nodes))
    norm["services"] = _services(c, cluster.get("services"))
    out["cluster"] = norm
    return nodes


WORKLOAD_FIELDS = ("name", "kind", "replicas", "tolerations", "nodeSelector", "terminationGracePeriodSeconds",
                   "priorityClassName", "podManagementPolicy", "volumeClaimTemplates")
WORKLOAD_KINDS = ("Deployment", "DaemonSet", "StatefulSet")
STATEFULSET_ONLY = ("podManagementPolicy", "volumeClaimTemplates")
POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
CLAIM_TEMPLATE_FIELDS = ("name", "storage", "accessModes", "storageClassName")
ACCESS_MODES = ("ReadWriteOnce",)  # the simulated disk driver attaches to one node at a time
# a storage request: a resource.Quantity with a binary or decimal suffix (1Gi, 500Mi, 10G)
QUANTITY = re.compile(r"^[1-9][0-9]*(Ki|Mi|Gi|Ti|Pi|k|M|G|T|P)?$")


def _workloads(c: _Checker, raw: Any, node_count: int) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        c.error("cluster.workloads", f"must be a list, got {type(raw).__name__}")
        return []
    out = []
    names: dict[str, str] = {}
    total = 0
    for i, w in enumerate(raw):
        path = f"cluster.workloads[{i}]"
        wm = c.mapping(w, path, WORKLOAD_FIELDS)
        if "name" not in wm:
            c.error(f"{path}.name", "is required")
        name = c.slug(wm.get("name", f"w{i}"), f"{path}.name")
        kind = wm.get("kind", "Deployment")
        if kind not in WORKLOAD_KINDS:
            c.error(f"{path}.kind", f"must be Deployment, DaemonSet or StatefulSet, got {kind!r}")
            kind = "Deployment"
        if name in names:
            other = names[name]
            c.error(f"{path}.name", f"duplicate workload {name!r}: a {other} already has this name (workload names "
                                    "are unique: pods carry the label app: <name>)")
        names[name] = kind
        item: dict[str, Any] = {"name": name, "kind": kind}
        if kind != "StatefulSet":
            for key in STATEFULSET_ONLY:
                if key in wm:
                    c.error(f"{path}.{key}", f"only a StatefulSet has {key} (this workload is a {kind})")
        if kind in ("Deployment", "StatefulSet"):
            item["replicas"] = c.integer(wm.get("replicas"), f"{path}.replicas", 1, maximum=MAX_PODS)
            total += item["replicas"]
            if kind == "StatefulSet":
                policy = wm.get("podManagementPolicy", "OrderedReady")
                if policy not in POD_MANAGEMENT_POLICIES:
                    c.error(f"{path}.podManagementPolicy", f"must be OrderedReady or Parallel, got {policy!r}")
                    policy = "OrderedReady"
                item["podManagementPolicy"] = policy
                item["volumeClaimTemplates"] = _claim_templates(c, wm.get("volumeClaimTemplates"),
                                                                f"{path}.volumeClaimTemplates")
        else:
            if "replicas" in wm:
                c.error(f"{path}.replicas", "a DaemonSet runs one pod per node; remove 'replicas'")
            total += node_count
        item["tolerations"] = _tolerations(c, wm.get("tolerations"), f"{path}.tolerations")
        item["nodeSelector"] = c.labels(wm.get("nodeSelector"), f"{path}.nodeSelector")
        item["terminationGracePeriodSeconds"] = c.integer(wm.get("terminationGracePeriodSeconds"),
                                                          f"{path}.terminationGracePeriodSeconds", 30, maximum=3600)
        pc = c.string(wm.get("priorityClassName"), f"{path}.priorityClassName", "")
        if pc:
            item["priorityClassName"] = pc
        out.append(item)
    if total > MAX_PODS:
        c.error("cluster.workloads", f"at most {MAX_PODS} pods in all, got {total}")
    return out


def _claim_templates(c: _Checker, raw: Any, path: str) -> list[dict[str, Any]]:
    """A StatefulSet's volumeClaimTemplates: each claim needs a name and a size (spec.resources.requests.storage)."""
    out = []
    seen: set[str] = set()
    for i, t in enumerate(c.sequence(raw, path)):
        p = f"{path}[{i}]"
        tm = c.mapping(t, p, CLAIM_TEMPLATE_FIELDS)
        if not isinstance(t, dict):
            continue
        name = c.unique_name(tm, p, f"data{i}", seen, "claim template",
                             "is required (the volume's name; claims are named <name>-<set>-<ordinal>)")
        storage = tm.get("storage")
        if storage is None:
            c.error(f"{p}.storage", "is required: the claim's size, such as 1Gi")
            storage = "1Gi"
        elif not isinstance(storage, str) or not QUANTITY.match(storage):
            c.error(f"{p}.storage", f"must be a size such as 1Gi, 500Mi or 10G, got {storage!r}")
            storage = "1Gi"
        modes = tm.get("accessModes", ["ReadWriteOnce"])
        if not isinstance(modes, list) or not modes or any(m not in ACCESS_MODES for m in modes):
            c.error(f"{p}.accessModes", f"must be [ReadWriteOnce] (the simulated disks attach to one node), "
                                         f"got {modes!r}")
            modes = ["ReadWriteOnce"]
        storage_class = c.string(tm.get("storageClassName"), f"{p}.storageClassName", "standard") or "standard"
        out.append({"name": name, "storage": storage, "accessModes": list(modes), "storageClassName": storage_class})
    return out


def _tolerations(c: _Checker, raw: Any, path: str) -> list[dict[str, Any]]:
    out = []
    for i, t in enumerate(c.sequence(raw, path)):
        p = f"{path}[{i}]"
        tm = c.mapping(t, p, ("key", "operator", "value", "effect", "tolerationSeconds"))
        item: dict[str, Any] = {}
        key = c.string(tm.get("key"), f"{p}.key")
        op = tm.get("operator", "Equal")
        if op not in ("Exists", "Equal"):
            c.error(f"{p}.operator", f"must be Exists or Equal, got {op!r}")
        value = c.string(tm.get("value"), f"{p}.value")
        if op == "Exists" and value:
            c.error(f"{p}.value", "must be empty when operator is Exists")
        if not key and op != "Exists":
            c.error(f"{p}.operator", "must be Exists when key is empty")
        effect = tm.get("effect", "")
        if effect not in TOLERATION_EFFECTS:
            c.error(f"{p}.effect", f"must be one of NoSchedule, PreferNoSchedule, NoExecute (or empty), got {effect!r}")
        if key:
            item["key"] = key
        item["operator"] = op
        if value:
            item["value"] = value
        if effect:
            item["effect"] = effect
        if "tolerationSeconds" in tm:
            if effect != "NoExecute":
                c.error(f"{p}.tolerationSeconds", "only applies with effect NoExecute")
            seconds = tm["tolerationSeconds"]
            if isinstance(seconds, bool) or not isinstance(seconds, int):
                c.error(f"{p}.tolerationSeconds", f"must be a whole number of seconds, got {seconds!r}")
            else:
                item["tolerationSeconds"] = seconds
        out.append(item)
    return out


def _services(c: _Checker, raw: Any) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        c.error("cluster.services", f"must be a list, got {type(raw).__name__}")
        return []
    out = []
    names: set[str] = set()
    for i, s in enumerate(raw):
        path = f"cluster.services[{i}]"
        sm = c.mapping(s, path, ("name", "selector"))
        if "name" not in sm:
            c.error(f"{path}.name", "is required")
        name = c.slug(sm.get("name", f"svc{i}"), f"{path}.name")
        if name in names:
            c.error(f"{path}.name", f"duplicate service {name!r}")
        names.add(name)
        selector = c.labels(sm.get("selector"), f"{path}.selector")
        if not selector:
            c.error(f"{path}.selector", "is required (e.g. {app: web}; pods carry app: <workload name>)")
        out.append({"name": name, "selector": selector})
    return out


def _kubelet(c: _Checker, raw: Any, out: dict[str, Any]) -> None:
    k = c.mapping(raw, "kubelet", ("nodeStatusUpdateFrequency", "nodeStatusReportFrequency", "nodeLeaseDurationSeconds",
                                   "shutdownGracePeriod", "shutdownGracePeriodCriticalPods"))
    update = c.duration(k.get("nodeStatusUpdateFrequency"), "kubelet.nodeStatusUpdateFrequency", 10.0, positive=True,
                        maximum=3600)
    # pkg/kubelet/apis/config/v1beta1/defaults.go: an explicit update frequency without a report
    # frequency makes them equal.
    report_default = update if "nodeStatusUpdateFrequency" in k else 300.0
    report = c.duration(k.get("nodeStatusReportFrequency"), "kubelet.nodeStatusReportFrequency", report_default,
                        positive=True, maximum=24 * 3600)
    lease = c.integer(k.get("nodeLeaseDurationSeconds"), "kubelet.nodeLeaseDurationSeconds", 40, minimum=1,
                      maximum=3600)
    shutdown = c.duration(k.get("shutdownGracePeriod"), "kubelet.shutdownGracePeriod", 0.0, maximum=3600)
    critical = c.duration(k.get("shutdownGracePeriodCriticalPods"), "kubelet.shutdownGracePeriodCriticalPods", 0.0,
                          maximum=3600)
    if critical > shutdown:
        c.error("kubelet.shutdownGracePeriodCriticalPods", "must not exceed shutdownGracePeriod")
    out["kubelet"] = {
        "nodeStatusUpdateFrequency": format_duration(update),
        "nodeStatusReportFrequency": format_duration(report),
        "nodeLeaseDurationSeconds": lease,
        "shutdownGracePeriod": format_duration(shutdown),
        "shutdownGracePeriodCriticalPods": format_duration(critical),
    }


CONTROLLER_MANAGER_FIELDS = ("nodeMonitorPeriod", "nodeMonitorGracePeriod", "nodeStartupGracePeriod",
                             "nodeEvictionRate", "secondaryNodeEvictionRate", "largeClusterSizeThreshold",
                             "unhealthyZoneThreshold", "disableForceDetachOnTimeout")


def _controller_manager(c: _Checker, raw: Any, out: dict[str, Any], grace_default: float,
                        version: str = DEFAULT_VERSION) -> None:
    cm = c.mapping(raw, "controllerManager", CONTROLLER_MANAGER_FIELDS)
    p = "controllerManager."

    def period(key: str, default: float, maximum: float) -> str:
        return format_duration(c.duration(cm.get(key), p + key, default, positive=True, maximum=maximum))

    out["controllerManager"] = {
        "nodeMonitorPeriod": period("nodeMonitorPeriod", 5.0, 600),
        "nodeMonitorGracePeriod": period("nodeMonitorGracePeriod", grace_default, 3600),
        "nodeStartupGracePeriod": period("nodeStartupGracePeriod", 60.0, 3600),
        "nodeEvictionRate": c.number(cm.get("nodeEvictionRate"), p + "nodeEvictionRate", 0.1, maximum=1000),
        "secondaryNodeEvictionRate": c.number(cm.get("secondaryNodeEvictionRate"), p + "secondaryNodeEvictionRate",
                                              0.01, maximum=1000),
        "largeClusterSizeThreshold": c.integer(cm.get("largeClusterSizeThreshold"), p + "largeClusterSizeThreshold",
                                               50),
        "unhealthyZoneThreshold": c.number(cm.get("unhealthyZoneThreshold"), p + "unhealthyZoneThreshold", 0.55,
                                           maximum=1.0),
    }
    if "disableForceDetachOnTimeout" in cm:  # kept out of documents that do not set it
        value = c.boolean(cm.get("disableForceDetachOnTimeout"), p + "disableForceDetachOnTimeout", False)
        if not PROFILES[version].disable_force_detach_flag:
            c.error(p + "disableForceDetachOnTimeout",
                    f"kube-controller-manager has --disable-force-detach-on-timeout from 1.30 on, not in {version}")
        out["controllerManager"]["disableForceDetachOnTimeout"] = value


def dump_document(doc: dict[str, Any], fmt: str = "yaml") -> str:
    if fmt == "json":
        return json.dumps(doc, ensure_ascii=False, indent=2)
    return yaml.safe_dump(doc, allow_unicode=True, sort_keys=False)
