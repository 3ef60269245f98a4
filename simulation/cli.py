"""`python -m simulation run|list|validate|compare` (docs/architecture.md §4)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import IO

from .audit import audit_record
from .builtins import builtin_scenarios, get_builtin
from .clock import parse_duration
from .comparison import Comparison, compare, parse_assignment, side_scenarios
from .events import SimEvent
from .scenario import Scenario, ScenarioError, load_scenario
from .simulation import Simulation

TIMELINE_KINDS = {"node-ready", "node-condition", "taint-added", "taint-removed", "pod-ready", "pod-terminating",
                  "pod-deleted", "pod-scheduled", "zone-state", "node-created", "node-deleted", "pod-phase",
                  "node-unschedulable", "endpoint", "pod-created", "pod-disruption-target"}
TIMELINE_RULES = {"nlc.mark-unknown", "nlc.enqueue-taint", "nlc.enter-master-disruption",
                  "nlc.exit-master-disruption", "nlc.swap-limiter", "kubelet.evict-pressure", "podgc.orphaned",
                  "cloud.delete-node", "tec.process-pod", "nlc.mark-pods-not-ready",
                  # StatefulSets and volumes (they appear only in runs with a StatefulSet)
                  "statefulset.create-pod", "statefulset.wait-same-name", "persistentvolume.bind",
                  "attachdetach.attach", "attachdetach.attached", "attachdetach.detach", "attachdetach.wait-unmount",
                  "attachdetach.force-detach-timeout", "attachdetach.force-detach-out-of-service",
                  "attachdetach.multi-attach", "podgc.terminating-out-of-service", "kubelet.volume-mount"}


def resolve(name_or_path: str) -> Scenario:
    path = Path(name_or_path)
    if path.exists():
        return load_scenario(path)
    scenario = get_builtin(name_or_path)
    if scenario is None:
        names = ", ".join(s.name for s in builtin_scenarios())
        raise ScenarioError([("", f"no file and no built-in scenario named {name_or_path!r} (built-ins: {names})")])
    return scenario


def timeline_line(ev: SimEvent) -> str | None:
    f = ev.fields
    when = f"{ev.t / 1e6:9.3f}s"
    if ev.type == "fault":
        return f"{when}  FAULT      {f['summary']}"
    if ev.type == "transition" and f["kind"] in TIMELINE_KINDS:
        kind = f["kind"]
        who = f"{ev.node or f.get('key') or ''}"
        if kind == "node-ready":
            return f"{when}  {who:<10} Ready {f['from']} -> {f['to']}  [{ev.component}]"
        if kind == "node-condition":
            return f"{when}  {who:<10} {f['key']} {f['from']} -> {f['to']}  [{ev.component}]"
        if kind in ("taint-added", "taint-removed"):
            sign = "+" if kind == "taint-added" else "-"
            return f"{when}  {who:<10} taint {sign}{f['key']}:{f['effect']}  [{ev.component}]"
        if kind == "pod-ready":
            return f"{when}  {who:<10} pod {f['pod']} Ready={'True' if f['to'] else 'False'}  [{ev.component}]"
        if kind == "pod-terminating":
            return f"{when}  {who:<10} pod {f['pod']} Terminating (DELETE)  [{ev.component}]"
        if kind == "pod-deleted":
            return f"{when}  {who:<10} pod {f['pod']} removed  [{ev.component}]"
        if kind == "pod-scheduled":
            return f"{when}  {who:<10} pod {f['pod']} scheduled  [{ev.component}]"
        if kind == "pod-phase":
            return f"{when}  {who:<10} pod {f['pod']} phase {f['from']} -> {f['to']}  [{ev.component}]"
        if kind == "endpoint":
            state = "removed" if f["to"] is None else " ".join(f"{k}={str(v).lower()}" for k, v in f["to"].items())
            return f"{when}  {who:<10} endpoint {f['key']}/{f['pod']} {state}  [{ev.component}]"
        if kind == "pod-disruption-target":
            return f"{when}  {who:<10} pod {f['pod']} DisruptionTarget=True ({f['key']})  [{ev.component}]"
        if kind == "pod-created":
            return f"{when}  {'':<10} pod {f['pod']} created  [{ev.component}]"
        if kind == "zone-state":
            return f"{when}  zone {f['key'] or '(unlabelled)'} {f['from']} -> {f['to']}"
        return f"{when}  {who:<10} {kind} {f.get('from')} -> {f.get('to')}"
    if ev.type == "decision" and f["rule"] in TIMELINE_RULES:
        rule, inputs = f["rule"], f["inputs"]
        if rule == "nlc.mark-unknown":
            renew = inputs.get("leaseRenewTime")
            detail = (f"last Lease renewTime {renew:.3f}s, " if renew is not None else "") + \
                f"probe {inputs['probeTimestamp']:.3f}s + grace {inputs['gracePeriod']:g}s < now"
            return f"{when}  {ev.node or '':<10} {rule}: {f['outcome']} ({detail})"
        if rule == "tec.process-pod":
            return f"{when}  {ev.node or '':<10} {rule}: pod {f['pod']}: {f['outcome']}"
        return f"{when}  {ev.node or '':<10} {rule}: {f['outcome']}"
    return None


def _open(target: str | None) -> IO[str] | None:
    if target is None:
        return None
    if target == "-":
        return sys.stdout
    return open(target, "w", encoding="utf-8")


def cmd_run(args: argparse.Namespace) -> int:
    scenario = resolve(args.scenario)
    until = parse_duration(args.until) if args.until else scenario.duration
    sim = Simulation(scenario, seed=args.seed)
    audit = _open(args.audit_log)
    events = _open(args.events)
    quiet_timeline = audit is sys.stdout or events is sys.stdout
    out = sys.stderr if quiet_timeline else sys.stdout
    print(f"# {scenario.name}: {scenario.title['en']} (Kubernetes {scenario.version}, seed {sim.seed}, "
          f"{len(scenario.nodes)} nodes, until {until:g}s)", file=out)
    step = 60.0
    t = 0.0
    counts: dict[str, int] = {}
    while t < until:
        t = min(t + step, until)
        for ev in sim.run_until(t):
            counts[ev.type] = counts.get(ev.type, 0) + 1
            if ev.type == "write" and audit is not None:
                audit.write(json.dumps(audit_record(ev), separators=(",", ":"), ensure_ascii=False) + "\n")
            if events is not None:
                events.write(json.dumps(ev.to_dict(), separators=(",", ":"), ensure_ascii=False) + "\n")
            if not args.no_timeline:
                line = timeline_line(ev)
                if line:
                    print(line, file=out)
    for handle in (audit, events):
        if handle is not None and handle is not sys.stdout:
            handle.close()
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    print(f"# done at {sim.now:g}s: {summary}", file=out)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for s in builtin_scenarios():
        faults = ", ".join(s.fault_actions) or "none"
        print(f"{s.name:<28} {s.version}  {s.node_count:>4} nodes  {s.title['en']}  [faults: {faults}]")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    scenario = load_scenario(Path(args.file))
    print(f"{args.file}: ok ({scenario.name}, {scenario.node_count} nodes, {len(scenario.faults)} faults)")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    base = resolve(args.scenario)
    sides = []
    for side, assignments in (("a", args.a or []), ("b", args.b or [])):
        overrides: dict[str, object] = {}
        for text in assignments:
            key, value = parse_assignment(text, side)
            overrides[key] = value
        sides.append(overrides)
    a, b = side_scenarios(base.document, sides[0], sides[1])
    until = parse_duration(args.until) if args.until else min(a.duration, b.duration)
    result = compare(a, b, until)
    if args.json:
        print(json.dumps(comparison_json(result, sides[0], sides[1]), ensure_ascii=False, indent=1))
    else:
        print_comparison(result, sides[0], sides[1])
    return 0


def _setting_line(scenario: Scenario, overrides: dict[str, object]) -> str:
    doc = scenario.document
    given = " ".join(f"{k}={v}" for k, v in overrides.items()) or "the scenario as it is"
    return (f"({given}) Kubernetes {scenario.version}, "
            f"nodeMonitorGracePeriod {doc['controllerManager']['nodeMonitorGracePeriod']}, "
            f"{scenario.node_count} nodes")


def print_comparison(result: Comparison, a: dict[str, object], b: dict[str, object]) -> None:
    """Both timelines in two columns, one line per key transition; `*` marks a line that differs."""
    print(f"# {result.a.name}: {result.a.title['en']} (seed {result.seed}, until {result.until:g}s)")
    print(f"# A {_setting_line(result.a, a)}")
    print(f"# B {_setting_line(result.b, b)}")
    print(f"  {'A':>10}  {'B':>10}  key transition")
    for row in result.rows:
        times = [f"{t:9.3f}s" if t is not None else "never" for t in (row.a, row.b)]
        what = row.label
        if row.a_count is not None or row.b_count is not None:
            counts = {row.a_count, row.b_count} - {None}
            what += f" ({'/'.join(str(c) for c in sorted(counts))} pods)"  # type: ignore[type-var]
        print(f"{'*' if row.differs else ' '} {times[0]:>10}  {times[1]:>10}  {what}")
    print(f"# {len(result.differences)} of {len(result.rows)} lines differ")


def comparison_json(result: Comparison, a: dict[str, object], b: dict[str, object]) -> dict[str, object]:
    return {
        "scenario": result.a.name,
        "seed": result.seed,
        "until": result.until,
        "a": {"overrides": a, "version": result.a.version, "document": result.a.document},
        "b": {"overrides": b, "version": result.b.version, "document": result.b.document},
        "rows": [row.as_dict() for row in result.rows],
        "differences": [row.as_dict() for row in result.differences],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m simulation",
        description="Simulate Kubernetes node heartbeats and the control plane's reaction.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a scenario headless and print its timeline")
    run.add_argument("scenario", help="a scenario file (YAML/JSON) or a built-in name")
    run.add_argument("--until", help="stop at this virtual time (default: the scenario's duration), e.g. 10m")
    run.add_argument("--audit-log", metavar="FILE", help="write audit.k8s.io/v1 records as JSON lines ('-' = stdout)")
    run.add_argument("--events", metavar="FILE",
                     help="write every event (decisions included) as JSON lines ('-' = stdout)")
    run.add_argument("--seed", type=int, help="override the scenario's seed")
    run.add_argument("--no-timeline", action="store_true", help="do not print the timeline")
    run.set_defaults(func=cmd_run)
    sub.add_parser("list", help="list the built-in scenarios").set_defaults(func=cmd_list)
    val = sub.add_parser("validate", help="check a scenario file")
    val.add_argument("file")
    val.set_defaults(func=cmd_validate)
    cmp = sub.add_parser("compare", help="run a scenario twice with different settings; print both timelines",
                         description="Run SCENARIO twice with the same seed, each side with its own settings, and "
                                     "print the key transitions of both in two columns; '*' marks lines that differ.")
    cmp.add_argument("scenario", help="a scenario file (YAML/JSON) or a built-in name")
    for side in ("a", "b"):
        cmp.add_argument(f"--{side}", action="append", metavar="KEY=VALUE",
                         help=f"a setting of side {side.upper()} (repeat for more): kubernetesVersion=1.31, "
                              "controllerManager.nodeMonitorGracePeriod=20s, kubelet.nodeStatusUpdateFrequency=5s, "
                              "workloads.web.tolerationSeconds=30, zones.zone-a.nodes=5 ...")
    cmp.add_argument("--until", help="stop at this virtual time (default: the scenario's duration)")
    cmp.add_argument("--json", action="store_true", help="print the comparison as JSON")
    cmp.set_defaults(func=cmd_compare)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except BrokenPipeError:
        # the reader went away (`... | head`): stop quietly, as Unix tools do. Point stdout at
        # /dev/null so that the interpreter's final flush does not raise the same error again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by it
    except ScenarioError as exc:
        print("invalid scenario:", file=sys.stderr)
        for path, message in exc.errors:
            print(f"  {path or '(document)'}: {message}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
