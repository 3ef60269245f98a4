"""Two runs of one scenario on one clock: the same seed, different settings (docs/architecture.md §4).

A comparison answers a trainer's "what if" (1.31 against 1.33, a 20 s grace period against 50 s): each side is the
scenario with its own overrides, validated by the scenario validator; both run with the scenario's seed, so
until a setting makes a difference the two sides produce the very same events, and every difference that shows
is caused by the settings.

What is compared is the key transitions a learner watches for (the faults, node conditions, taints, zone states,
nodes created or deleted, pods NotReady or Terminating grouped per node and instant). The builder's preview, the
command line and the live comparison page all take them from here (`KeyTransitions`), so they agree.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from .clock import parse_duration
from .events import SimEvent
from .profiles import DEFAULT_VERSION, PROFILES
from .scenario import Scenario, ScenarioError, load_scenario
from .simulation import Simulation

SIDES = ("a", "b")
# What a learner watches for (docs/kubernetes-node-health.md): a node's Ready and other conditions, taints, zone
# states and nodes coming and going; pods are grouped per node and instant (pods NotReady, evictions).
NODE_KINDS = {"node-ready", "node-condition", "taint-added", "taint-removed", "zone-state", "node-created",
              "node-deleted"}
FIRST_SEEN_KINDS = {"node-ready", "node-condition", "zone-state"}
POD_KINDS = {"pod-ready": "pods-not-ready", "pod-terminating": "pods-terminating"}
POD_NAMES_SHOWN = 5
# Two times closer than this are the same instant: the timelines print milliseconds.
SAME_INSTANT = 0.0005

# The settings a side may change, as dotted keys (the scenario document's own field names).
SECTION_KEYS = ("controllerManager", "kubelet", "apiServer")
OVERRIDE_HELP = ("kubernetesVersion, controllerManager.<field>, kubelet.<field>, apiServer.<field>, "
                 "workloads.<name>.tolerations, workloads.<name>.tolerationSeconds, zones.<name>.nodes, "
                 "cluster.nodes")
# The DefaultTolerationSeconds admission plugin adds these two tolerations to every pod that has none for them
# (plugin/pkg/admission/defaulttolerationseconds/admission.go); `tolerationSeconds` sets both.
NODE_HEALTH_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


class KeyTransitions:
    """The key transitions of one run, fed its events slice by slice (a live driver) or all at once.

    The cluster's own start-up (nodes turning Ready, the first pods) is not what the author scripted: it is left
    out until `quiet_until` (virtual seconds: the start-up's end, or the first fault if that comes sooner)."""

    def __init__(self, quiet_until: float) -> None:
        self.quiet_until = quiet_until * 1e6
        self.transitions: list[dict[str, Any]] = []
        self.version = 0  # counts the feeds that added a transition: pairing the sides again is only needed then
        self._groups: dict[tuple[str, str | None, str, int], dict[str, Any]] = {}
        # the transitions added or grown (a pod group) since `take_touched`: what a live `Pairing` looks at again
        self._touched: dict[int, dict[str, Any]] = {}

    def feed(self, events: Iterable[SimEvent]) -> list[dict[str, Any]]:
        """Take a slice's events; return the transitions they started (a pod group may still grow in place)."""
        new: list[dict[str, Any]] = []
        fresh: set[int] = set()  # the pod groups this feed started
        for event in events:
            fields = event.fields
            at = {"t": event.t / 1e6, "node": event.node, "component": event.component}
            if event.type == "fault":
                self.quiet_until = min(self.quiet_until, event.t)
                new.append({**at, "kind": "fault", "action": fields["action"], "summary": fields["summary"],
                            **{k: fields[k] for k in ("zone", "name") if fields.get(k)}})
                continue
            if event.type != "transition" or event.t < self.quiet_until:
                continue
            kind = fields["kind"]
            if kind in NODE_KINDS:
                if kind in FIRST_SEEN_KINDS and fields.get("from") is None:
                    continue  # a node or zone appearing, not a change
                if kind == "node-condition" and "True" not in (fields["from"], fields["to"]):
                    continue  # a pressure condition following Ready to Unknown and back: Ready says it
                new.append({**at, "kind": kind, **{k: fields[k] for k in ("from", "to", "key", "effect")
                                                   if fields.get(k) is not None}})
            elif kind in POD_KINDS and not (kind == "pod-ready" and fields["to"]):
                group_key = (POD_KINDS[kind], event.node, event.component, event.t)
                group = self._groups.get(group_key)
                if group is None:
                    group = self._groups[group_key] = {**at, "kind": POD_KINDS[kind], "count": 0, "pods": []}
                    new.append(group)
                    fresh.add(id(group))
                elif id(group) not in fresh:  # grown in place: its row changes
                    self._touched[id(group)] = group
                group["count"] += 1
                if len(group["pods"]) < POD_NAMES_SHOWN:
                    group["pods"].append(fields["pod"])
        if self._groups:  # a group only grows within its instant, and later events come after it
            last = max(key[3] for key in self._groups)
            self._groups = {key: group for key, group in self._groups.items() if key[3] == last}
        if new:
            self.transitions.extend(new)
            self.version += 1
            for transition in new:
                self._touched[id(transition)] = transition
        return new

    def take_touched(self) -> list[dict[str, Any]]:
        """The transitions added, or grown in place, since the last call, in the order they first came."""
        touched, self._touched = list(self._touched.values()), {}
        return touched


def key_transitions(events: Iterable[SimEvent], quiet_until: float) -> list[dict[str, Any]]:
    """The faults and key transitions of `events` (`KeyTransitions`), from `quiet_until` (virtual seconds) on."""
    log = KeyTransitions(quiet_until)
    log.feed(events)
    return log.transitions


def identity(transition: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two sides' transitions "the same one": kind, object and change, not the time (nor a pod group's
    size or names: the group is the same moment of the chain whatever pods it holds)."""
    kind = transition["kind"]
    if kind == "fault":
        return (kind, transition["action"], transition.get("node"), transition.get("zone"), transition.get("name"))
    return (kind, transition.get("node"), transition.get("key"), transition.get("effect"), transition.get("from"),
            transition.get("to"))


LABELS = {
    "node-ready": "{node} Ready={to}",
    "node-condition": "{node} {key}={to}",
    "taint-added": "{node} taint +{key}:{effect}",
    "taint-removed": "{node} taint -{key}:{effect}",
    "zone-state": "zone {key} {to}",
    "node-created": "{node} created",
    "node-deleted": "{node} deleted",
    "pods-not-ready": "{node}: pods NotReady",
    "pods-terminating": "{node}: pods Terminating",
    "fault": "fault: {summary}",
}


def label(transition: Mapping[str, Any]) -> str:
    """One line of English naming the transition, without its time ("node-2 Ready=Unknown")."""
    fields = {"node": "", "key": "", "effect": "", "to": "", "summary": "", **transition}
    if transition["kind"] == "zone-state":
        fields["key"] = transition.get("key") or "(unlabelled)"
    return LABELS[transition["kind"]].format(**fields)


@dataclass
class Row:
    """One key transition of either side, with its time on each (None: not on that side, so far)."""

    label: str
    kind: str
    node: str | None
    a: float | None
    b: float | None
    a_pods: list[str] = field(default_factory=list)
    b_pods: list[str] = field(default_factory=list)
    a_count: int | None = None
    b_count: int | None = None
    # what a page needs to say it in its own language: the changed key, effect, value, or the fault's action
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def differs(self) -> bool:
        if self.a is None or self.b is None:
            return True
        return abs(self.a - self.b) > SAME_INSTANT or self.a_count != self.b_count

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"label": self.label, "kind": self.kind, "node": self.node, "a": self.a, "b": self.b,
                               "differs": self.differs, **self.detail}
        if self.a_count is not None or self.b_count is not None:
            out.update(a_count=self.a_count, b_count=self.b_count, a_pods=self.a_pods, b_pods=self.b_pods)
        return out


def rows(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[Row]:
    """Both sides' transitions paired: the n-th occurrence of a transition on A with the n-th on B; in the order
    they first happened on either side."""
    seen: dict[tuple[Any, ...], int] = {}
    b_by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for transition in b:
        b_by_key.setdefault(identity(transition), []).append(transition)
    out: list[Row] = []
    used_b: dict[tuple[Any, ...], int] = {}
    for transition in a:
        key = identity(transition)
        n = seen.get(key, 0)
        seen[key] = n + 1
        candidates = b_by_key.get(key, [])
        other = candidates[n] if n < len(candidates) else None
        used_b[key] = max(used_b.get(key, 0), n + 1 if other is not None else 0)
        out.append(_row(transition, transition, other))
    for key, transitions in b_by_key.items():
        for other in transitions[used_b.get(key, 0):]:
            out.append(_row(other, None, other))
    out.sort(key=lambda row: min(t for t in (row.a, row.b) if t is not None))
    return out


def _row(model: dict[str, Any], a: dict[str, Any] | None, b: dict[str, Any] | None) -> Row:
    row = Row(label=label(model), kind=model["kind"], node=model.get("node"),
              a=None if a is None else a["t"], b=None if b is None else b["t"],
              detail={k: model[k] for k in ("key", "effect", "to", "action") if model.get(k) is not None})
    if model["kind"] in POD_KINDS.values():
        row.a_count, row.a_pods = (a["count"], list(a["pods"])) if a is not None else (None, [])
        row.b_count, row.b_pods = (b["count"], list(b["pods"])) if b is not None else (None, [])
    return row


def row_id(key: tuple[Any, ...], n: int) -> str:
    """A row's name, the same on every driver that pairs the same transitions: its identity and occurrence."""
    return "|".join(["" if part is None else str(part) for part in key] + [str(n)])


class Pairing:
    """Both sides' transitions paired as they come, as `rows` pairs them at once: a live comparison sends only the
    rows that changed (a large zone outage has a thousand of them, each a few hundred bytes, and one new
    transition changes one row), under names that stay the same (`row_id`)."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}
        self._seen: tuple[dict[tuple[Any, ...], int], ...] = ({}, {})  # per side: occurrences of each identity
        self._named: tuple[dict[int, str], ...] = ({}, {})  # per side: the row of each pod group, which grows

    def update(self, a: KeyTransitions, b: KeyTransitions) -> dict[str, Row]:
        """The rows that changed since the last call (every row on the first), by name."""
        changed: dict[str, Row] = {}
        for side, log in enumerate((a, b)):
            for transition in log.take_touched():
                name = self._named[side].get(id(transition))
                if name is None:
                    key = identity(transition)
                    n = self._seen[side].get(key, 0)
                    self._seen[side][key] = n + 1
                    name = row_id(key, n)
                    if transition["kind"] in POD_KINDS.values():
                        self._named[side][id(transition)] = name
                row = self.rows.get(name)
                if row is None:
                    row = self.rows[name] = _row(transition, None, None)
                _place(row, side, transition)
                changed[name] = row
        return changed

    def ordered(self) -> list[tuple[str, Row]]:
        """Every row by name, in the order `rows` gives: the first time on either side."""
        return sorted(self.rows.items(), key=lambda item: min(t for t in (item[1].a, item[1].b) if t is not None))


def _place(row: Row, side: int, transition: Mapping[str, Any]) -> None:
    """One side's time (and a pod group's pods) on its row."""
    pods = row.kind in POD_KINDS.values()
    if side == 0:
        row.a = transition["t"]
        if pods:
            row.a_count, row.a_pods = transition["count"], list(transition["pods"])
    else:
        row.b = transition["t"]
        if pods:
            row.b_count, row.b_pods = transition["count"], list(transition["pods"])


def differences(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[Row]:
    """The rows that differ: a transition at another time on each side, or on one side only."""
    return [row for row in rows(a, b) if row.differs]


def difference_text(row: Row, missing: str = "never") -> str:
    """ "node-2 Ready=Unknown: A 100.2 s, B 110.2 s"; `missing` names a side without it ("never", "not yet")."""
    def when(t: float | None) -> str:
        return missing if t is None else f"{t:.1f} s"
    return f"{row.label}: A {when(row.a)}, B {when(row.b)}"


# -- overrides ------------------------------------------------------------------------------------------------------


def parse_assignment(text: str, side: str) -> tuple[str, Any]:
    """`KEY=VALUE` from the command line; the value is read as YAML (`30`, `20s`, `[{key: ...}]`), except a
    Kubernetes version, kept as written (YAML reads 1.30 as the number 1.3)."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise ScenarioError([(side, f"expected KEY=VALUE, got {text!r} (keys: {OVERRIDE_HELP})")])
    if key == "kubernetesVersion":
        return key, raw
    try:
        return key, yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise ScenarioError([(f"{side}.{key}", f"not a valid value: {exc}")]) from None


def apply_overrides(document: Mapping[str, Any], overrides: Mapping[str, Any], side: str) -> dict[str, Any]:
    """A copy of `document` with one side's overrides; a problem with an override names `<side>.<key>`.

    The values themselves are checked by the scenario validator afterwards (`side_scenario`). A new
    `kubernetesVersion` brings that version's default grace period (docs/kubernetes-node-health.md §1) unless
    the document set another one, or the side sets it too."""
    doc = copy.deepcopy(dict(document))
    errors: list[tuple[str, str]] = []
    if not isinstance(overrides, Mapping):
        raise ScenarioError([(side, f"must be a mapping of settings to values, got {type(overrides).__name__}")])
    for key, value in overrides.items():
        path = f"{side}.{key}"
        parts = str(key).split(".")
        if parts == ["kubernetesVersion"]:
            _follow_version(doc, value, "controllerManager.nodeMonitorGracePeriod" in overrides)
            doc["kubernetesVersion"] = value
        elif len(parts) == 2 and parts[0] in SECTION_KEYS:
            section = doc.get(parts[0])
            doc[parts[0]] = {**(section if isinstance(section, dict) else {}), parts[1]: value}
        elif parts == ["cluster", "nodes"]:
            cluster = doc.setdefault("cluster", {})
            if "zones" in cluster:
                errors.append((path, "the cluster has zones: set zones.<name>.nodes instead"))
            else:
                cluster["nodes"] = value
        elif len(parts) == 3 and parts[0] == "zones" and parts[2] == "nodes":
            zone = _named(doc.get("cluster", {}).get("zones"), parts[1])
            if zone is None:
                errors.append((path, f"the scenario has no zone named {parts[1]!r}"))
            else:
                zone["nodes"] = value
        elif len(parts) == 3 and parts[0] == "workloads" and parts[2] in ("tolerations", "tolerationSeconds"):
            workload = _named(doc.get("cluster", {}).get("workloads"), parts[1])
            if workload is None:
                errors.append((path, f"the scenario has no workload named {parts[1]!r}"))
            elif parts[2] == "tolerations":
                workload["tolerations"] = value
            elif isinstance(value, bool) or not isinstance(value, int) or value < 0:
                errors.append((path, f"must be a whole number of seconds >= 0, got {value!r}"))
            else:
                workload["tolerations"] = _with_toleration_seconds(workload.get("tolerations"), value)
        else:
            errors.append((path, f"not a setting a comparison can change (one of {OVERRIDE_HELP})"))
    if errors:
        raise ScenarioError(errors)
    return doc


def _named(items: Any, name: str) -> dict[str, Any] | None:
    if not isinstance(items, list):
        return None
    return next((item for item in items if isinstance(item, dict) and item.get("name") == name), None)


def _follow_version(doc: dict[str, Any], version: Any, grace_given: bool) -> None:
    """Drop a grace period that is only the old version's default, so that the new version's applies."""
    old = PROFILES.get(str(doc.get("kubernetesVersion", DEFAULT_VERSION)))
    manager = doc.get("controllerManager")
    if grace_given or old is None or not isinstance(manager, dict) or "nodeMonitorGracePeriod" not in manager:
        return
    try:
        grace = parse_duration(manager["nodeMonitorGracePeriod"])
    except ValueError:
        return
    if grace == old.node_monitor_grace_period and str(version) in PROFILES:
        doc["controllerManager"] = {k: v for k, v in manager.items() if k != "nodeMonitorGracePeriod"}


def _with_toleration_seconds(tolerations: Any, seconds: int) -> list[Any]:
    """The workload's tolerations with NoExecute tolerations of the not-ready and unreachable taints for
    `seconds` (in place of any it had for them): what a manifest writes to shorten or lengthen the 300 s."""
    kept = [t for t in (tolerations if isinstance(tolerations, list) else [])
            if not (isinstance(t, dict) and t.get("key") in NODE_HEALTH_TAINTS)]
    return kept + [{"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": seconds}
                   for key in NODE_HEALTH_TAINTS]


def side_scenario(document: Mapping[str, Any], overrides: Mapping[str, Any], side: str) -> Scenario:
    """One side's scenario: the document with the side's overrides, validated; every error names
    `<side>.<field>` (`a.controllerManager.nodeMonitorGracePeriod: must be greater than 0`)."""
    doc = apply_overrides(document, overrides, side)
    try:
        return load_scenario(doc)
    except ScenarioError as exc:
        raise ScenarioError([(f"{side}.{path}" if path else side, message) for path, message in exc.errors]) \
            from None


def side_scenarios(document: Mapping[str, Any], a: Mapping[str, Any],
                   b: Mapping[str, Any]) -> tuple[Scenario, Scenario]:
    """Both sides' scenarios, or one ScenarioError listing every problem of both."""
    errors: list[tuple[str, str]] = []
    out: list[Scenario] = []
    for side, overrides in zip(SIDES, (a, b), strict=True):
        try:
            out.append(side_scenario(document, overrides, side))
        except ScenarioError as exc:
            errors.extend(exc.errors)
    if errors:
        raise ScenarioError(errors)
    return out[0], out[1]


# -- headless comparison --------------------------------------------------------------------------------------------


@dataclass
class Comparison:
    a: Scenario
    b: Scenario
    seed: int
    until: float
    rows: list[Row]

    @property
    def differences(self) -> list[Row]:
        return [row for row in self.rows if row.differs]


def compare(a: Scenario, b: Scenario, until: float, seed: int | None = None) -> Comparison:
    """Run both sides headless from 0 to `until` with one seed (A's scenario's unless given)."""
    seed = a.seed if seed is None else seed
    logs = []
    for scenario in (a, b):
        simulation = Simulation(scenario, seed=seed)
        log = KeyTransitions(simulation.startup_done_at)
        log.feed(simulation.run_until(until))
        logs.append(log.transitions)
    return Comparison(a=a, b=b, seed=seed, until=until, rows=rows(logs[0], logs[1]))
