"""What a run can be taken away as: a Markdown summary, the audit log, the event log, the
sequence diagram of a time window (Mermaid text and SVG) and the cluster's objects at a virtual
time as ``kubectl get -o yaml`` prints them.

Everything is rebuilt by deterministic replay (docs/architecture.md §2.1) up to the virtual time
the run's viewers have reached, so an export says exactly what the class saw, live or ended. A
drill before its reveal is exported as its viewers saw it: without what names the cause. An ended
run's exports never change: each is built once and kept in Redis for as long as its event log
(``cached``), so a class downloading one at once does not replay the run per request.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from xml.sax.saxutils import escape

import redis
import yaml
from django.conf import settings

from heartbeat_site.live.classroom import questions
from heartbeat_site.live.lookback import from_checkpoints, replay_process, seek
from heartbeat_site.live.lookback.rebuilding import dropped, simulation_of
from heartbeat_site.live.models import Command, Run
from heartbeat_site.live.redis_client import get_redis
from simulation import audit_record, load_scenario
from simulation.cli import timeline_line

log = logging.getLogger(__name__)

EXPORT_NAMES = ("summary.md", "audit.jsonl", "events.jsonl", "sequence.mmd", "sequence.svg", "objects.yaml")
# What `kubectl get` lists of the cluster, in the order of the snapshot's objects (events are in events.jsonl).
OBJECT_KINDS = ("nodes", "leases", "pods", "services", "endpointslices", "statefulsets", "persistentvolumeclaims",
                "persistentvolumes", "volumeattachments")
MAX_OBJECTS_NODES = 1000  # about 8 MB of YAML; a larger cluster is read with kubectl (docs/kubectl.md)
CACHE_MAX_BYTES = 32 * 1024 * 1024  # a larger export (hours of a large run's events) is built per request
APISERVER = "kube-apiserver"
# The lanes of the run page's sequence diagram (static/js/sequence/model.js), left to right.
LANES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("kubelet_lease", "kubelet (Lease)", ("kubelet-lease",)),
    ("kubelet_status", "kubelet (status)", ("kubelet-status", "kubelet")),
    ("kube_apiserver", APISERVER, (APISERVER,)),
    ("nlc", "node-lifecycle-controller", ("node-lifecycle-controller", "cloud-node-lifecycle-controller")),
    ("tec", "taint-eviction-controller", ("taint-eviction-controller",)),
    ("scheduler", "kube-scheduler", ("kube-scheduler",)),
    ("endpointslice", "endpointslice-controller", ("endpointslice-controller",)),
    ("workloads", "workload controllers", ()),
    # a run with StatefulSets and volumes (drawn only when used, as every lane here)
    ("statefulset", "statefulset-controller", ("statefulset-controller",)),
    ("volumes", "attach/detach and PV controllers",
     ("attachdetach-controller", "csi-attacher", "persistentvolume-controller", "csi-provisioner")),
    ("podgc", "pod-garbage-collector", ("pod-garbage-collector",)),
    ("trainer", "trainer (kubectl)", ("trainer",)),
)
LANE_OF_COMPONENT = {component: lane for lane, _label, components in LANES for component in components}
HTTP_VERB = {"create": "POST", "update": "PUT", "patch": "PATCH", "delete": "DELETE", "get": "GET", "list": "LIST",
             "watch": "WATCH"}
# virtual seconds replayed past a sequence diagram's window, so that its events at the window's very end are in
# (``Simulation.run_until`` stops before its time)
SEQUENCE_MARGIN = 1.0
MAX_ROWS = 2000  # a diagram nobody can read is no use; the window is the way to see more
UNSAFE = re.compile(r"[^A-Za-z0-9 ._/\-:=()+,'\[\]@>]")  # what Mermaid might read as syntax (; # % { } < " ...)


class ExportError(ValueError):
    """A request for an export that cannot be made (unknown node, empty window): the message names it."""


@dataclass(frozen=True)
class Replayed:
    """A run replayed to the virtual time its viewers reached, as its viewers may see it."""

    run: Run
    t: float
    events: list[dict]
    timeline: list[str]
    nodes: list[str]


def replay_run(run: Run, commands: list[Command], t: float, since: float = 0.0) -> Replayed:
    """The run replayed to ``t``. ``since``: only the events from that virtual time on are wanted (a sequence
    diagram's window), so the replay starts from the run's latest checkpoint at or before it (from_checkpoints.py)."""
    hiding = questions.hides_cause(run)
    restored = from_checkpoints.restored(run, commands, since) if since > 0 else None
    sim = restored.sim if restored is not None else simulation_of(run, commands)
    nodes = [name for name, _zone in load_scenario(run.document).nodes]
    events: list[dict] = []
    timeline: list[str] = []
    for event in sim.run_until(t) if t > sim.now else []:
        raw = event.to_dict()
        shown = questions.viewer_event(raw) if hiding else raw
        events.append(shown)
        if shown is raw:  # a line of an event a drill's viewers saw changed or hidden would name the cause
            line = timeline_line(event)
            if line:
                timeline.append(line)
    return Replayed(run=run, t=t, events=events, timeline=timeline, nodes=nodes)


def replayed_export(run: Run, commands: list[Command], t: float, name: str, start: float, end: float,
                    node: str | None) -> str:
    """An export made of the run replayed to ``t``: the summary, a log or a sequence diagram of ``node``
    (``ExportError`` when the run has no such node)."""
    if name.startswith("sequence."):  # the window only: from a checkpoint at or before it to just past its end
        replayed = replay_run(run, commands, min(t, end + SEQUENCE_MARGIN), since=start)
    else:  # the whole history
        replayed = replay_run(run, commands, t)
    dropped(run.node_count)  # the replay's simulation, gone with replay_run
    if name == "summary.md":
        return summary_md(replayed)
    if name == "audit.jsonl":
        return audit_jsonl(replayed)
    if name == "events.jsonl":
        return events_jsonl(replayed)
    focus = focus_node(replayed, node)
    rows = sequence_rows(replayed, focus, start, end)
    return sequence_mermaid(rows, focus) if name == "sequence.mmd" else sequence_svg(rows, focus)


def json_lines(records: Iterable[dict]) -> str:
    return "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records)


def events_jsonl(replayed: Replayed) -> str:
    return json_lines(replayed.events)


def audit_jsonl(replayed: Replayed) -> str:
    """audit.k8s.io/v1 Events of the writes, as ``python -m simulation run --audit-log`` writes them."""
    return json_lines(audit_record(e) for e in replayed.events if e.get("type") == "write")


def summary_md(replayed: Replayed) -> str:
    run = replayed.run
    hiding = questions.hides_cause(run)
    title = run.title.get("en") or run.scenario_name
    lines = [
        f"# {title}",
        "",
        f"- Run: `{run.id}` ({run.status}{', ' + run.end_reason if run.end_reason else ''})",
        f"- Scenario: `{run.scenario_name}`, Kubernetes {run.version}, {run.node_count} nodes, seed {run.seed}",
        f"- Virtual time reached: {replayed.t:g} s of {run.duration:g} s",
    ]
    if run.drill:
        lines.append(f"- Drill: `{run.drill}`" + (" (cause not revealed yet)" if hiding else ""))
    if run.lesson:
        lines.append(f"- Lesson: `{run.lesson}`")
    if not hiding:
        faults = run.document.get("faults") or []
        lines += ["", "## Scripted faults", ""]
        lines += [f"- at {f.get('at')}: `{json.dumps(f, sort_keys=True)}`" for f in faults] or ["(none)"]
    commands = Command.objects.filter(run=run).order_by("seq")
    lines += ["", "## Trainer's commands", ""]
    rows = [f"| {c.seq} | {'' if c.at is None else f'{c.at:.3f} s'} | {c.action} | {c.status} |" for c in commands]
    lines += ["| # | virtual time | action | status |", "|---|---|---|---|", *rows] if rows else ["(none)"]
    lines += ["", "## Key transitions and their reasons", "", "```", *replayed.timeline, "```", ""]
    return "\n".join(lines)


def focus_node(replayed: Replayed, requested: str | None) -> str:
    nodes = replayed.nodes
    if requested:
        if nodes and requested not in nodes:
            raise ExportError(f"node: no node named {requested!r} in this run (nodes: {', '.join(nodes[:10])}...)")
        return requested
    if "node-2" in nodes or not nodes:
        return "node-2"
    return nodes[0]


@dataclass(frozen=True)
class Row:
    """One line of the sequence diagram: an arrow between lanes, or a note over a lane."""

    t: float
    kind: str  # "request", "lost" or "note"
    source: str
    target: str
    label: str


def lane_of(component: str | None) -> str:
    return LANE_OF_COMPONENT.get(component or "", "workloads")


def safe(text: str) -> str:
    return UNSAFE.sub(" ", text).strip()


def sequence_rows(replayed: Replayed, node: str, start: float, end: float) -> list[Row]:
    """The focused node's API requests, the decisions about it and the faults, between ``start`` and ``end``."""
    rows: list[Row] = []
    for e in replayed.events:
        if not start <= e["t"] <= end:
            continue
        kind = e.get("type")
        if kind in ("write", "read", "request-failed") and e.get("node") == node:
            path = "/".join(p for p in (e.get("resource"), e.get("name"), e.get("subresource")) if p)
            verb = HTTP_VERB.get(e.get("verb", ""), str(e.get("verb", "")).upper())
            code = "lost" if kind == "request-failed" else str(e.get("code"))
            rows.append(Row(e["t"], "lost" if kind == "request-failed" else "request", lane_of(e.get("component")),
                            "kube_apiserver", f"{verb} {path} {code}"))
        elif kind == "decision" and e.get("node") == node:
            rows.append(Row(e["t"], "note", lane_of(e.get("component")), "", f"{e.get('rule')}: {e.get('outcome')}"))
        elif kind == "fault":
            rows.append(Row(e["t"], "note", "trainer", "", f"FAULT {e.get('summary')}"))
    return rows[:MAX_ROWS]


def used_lanes(rows: list[Row]) -> list[tuple[str, str]]:
    used = {r.source for r in rows} | {r.target for r in rows if r.target} | {"kube_apiserver"}
    return [(lane, label) for lane, label, _components in LANES if lane in used]


def sequence_mermaid(rows: list[Row], node: str) -> str:
    lines = ["sequenceDiagram"]
    for lane, label in used_lanes(rows):
        suffix = f" {node}" if lane.startswith("kubelet") else ""
        lines.append(f"    participant {lane} as {safe(label + suffix)}")
    for row in rows:
        text = safe(f"{row.t:.3f}s {row.label}")
        if row.kind == "note":
            lines.append(f"    Note over {row.source}: {text}")
        else:
            lines.append(f"    {row.source}{'-x' if row.kind == 'lost' else '->>'}{row.target}: {text}")
    return "\n".join(lines) + "\n"


LANE_WIDTH = 190
ROW_HEIGHT = 22
TOP = 50


def sequence_svg(rows: list[Row], node: str) -> str:
    """The same diagram drawn as plain SVG: lanes as vertical lines, requests as arrows, decisions as notes."""
    lanes = used_lanes(rows)
    x = {lane: LANE_WIDTH * i + LANE_WIDTH // 2 for i, (lane, _label) in enumerate(lanes)}
    width = LANE_WIDTH * len(lanes)
    height = TOP + ROW_HEIGHT * (len(rows) + 1)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'font-family="sans-serif" font-size="11">',
        f"<title>{escape(f'API requests and controller decisions about {node}')}</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    for lane, label in lanes:
        suffix = f" {node}" if lane.startswith("kubelet") else ""
        out.append(f'<text x="{x[lane]}" y="20" text-anchor="middle" font-weight="bold">'
                   f'{escape(label + suffix)}</text>')
        out.append(f'<line x1="{x[lane]}" y1="30" x2="{x[lane]}" y2="{height}" stroke="#999" stroke-dasharray="4 3"/>')
    for i, row in enumerate(rows):
        y = TOP + ROW_HEIGHT * i
        text = escape(f"{row.t:.3f}s {row.label}")
        if row.kind == "note":
            out.append(f'<text x="{x[row.source] + 4}" y="{y}" fill="#7a4a00">{text}</text>')
            continue
        x1, x2 = x[row.source], x[row.target]
        colour = "#b00020" if row.kind == "lost" else "#1f4e9a"
        out.append(f'<line x1="{x1}" y1="{y + 6}" x2="{x2}" y2="{y + 6}" stroke="{colour}" marker-end="url(#arrow)"/>')
        out.append(f'<text x="{min(x1, x2) + 4}" y="{y + 2}" fill="{colour}">{text}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def objects_yaml(run: Run, t: float, *, reached: float) -> str:
    """The cluster's objects at ``t`` as ``kubectl get nodes,leases,pods,services,endpointslices,statefulsets,pvc,pv,
    volumeattachments -A -o yaml`` prints them: a ``v1`` ``List`` whose items carry their own apiVersion and kind
    (a run without StatefulSets or volumes has none of the last four). Built in the replay
    process (replay_process.py), the replay and the YAML alike."""
    return replay_process.replay(objects_yaml_of, run, t, reached, t=t)


def objects_yaml_of(run: Run, commands: list[Command], t: float, reached: float) -> str:
    snapshot = seek.state_at(run, commands, t, reached=reached)
    items = [obj for kind in OBJECT_KINDS for obj in snapshot["objects"].get(kind) or ()]
    document = {"apiVersion": "v1", "items": items, "kind": "List", "metadata": {"resourceVersion": ""}}
    # safe_dump's SafeDumper in libyaml's C when PyYAML has it: the same text, about three times faster
    return yaml.dump(document, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper), allow_unicode=True,
                     default_flow_style=False)


_build_locks: dict[str, threading.Lock] = {}
_build_locks_lock = threading.Lock()


def cached(run: Run, request_key: str, build: Callable[[], str]) -> str:
    """``build()``, once per ended run and ``request_key`` (the export's name and query): requests waiting
    for the same run take the body the first one kept. A live run's exports grow, so they are built each
    time; without Redis too."""
    if run.is_active:
        return build()
    digest = hashlib.sha256(f"{request_key}|hidden={questions.hides_cause(run)}".encode()).hexdigest()[:20]
    key = f"hb:run:{{{run.id}}}:export:{digest}"
    with _build_locks_lock:
        lock = _build_locks.setdefault(run.id, threading.Lock())
    with lock:
        try:
            body = get_redis().get(key)
        except redis.RedisError as exc:
            log.warning("export cache of run %s unreadable: %s", run.id, exc)
            return build()
        if isinstance(body, str):
            return body
        body = build()
        if len(body) <= CACHE_MAX_BYTES:
            try:
                get_redis().set(key, body, ex=settings.HEARTBEAT["RETENTION_SECONDS"])
            except redis.RedisError as exc:
                log.warning("export cache of run %s not written: %s", run.id, exc)
        return body
