"""`python -m simulation run|list|validate` (docs/architecture.md §4)."""

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
from .events import SimEvent
from .scenario import Scenario, ScenarioError, load_scenario
from .simulation import Simulation

TIMELINE_KINDS = {"node-ready", "node-condition", "taint-added", "taint-removed", "pod-ready", "pod-terminating",
                  "pod-deleted", "pod-scheduled", "zone-state", "node-created", "node-deleted", "pod-phase",
                  "node-unschedulable", "endpoint", "pod-created", "pod-disruption-target"}
TIMELINE_RULES = {"nlc.mark-unknown", "nlc.enqueue-taint", "nlc.enter-master-disruption",
                  "nlc.exit-master-disruption", "nlc.swap-limiter", "kubelet.evict-pressure", "podgc.orphaned",
                  "cloud.delete-node", "tec.process-pod", "nlc.mark-pods-not-ready"}


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
