"""Comparison benchmark: two 1,000-node sides on one clock against one 1,000-node run.

On a stack of its own (bench/large_bench.py's: an embedded Redis, a Celery worker, Daphne), the same cluster as the
large-cluster bench (3 zones, 10 pods per node) at 10x through a zone-b outage, first as one run, then as a
comparison of two sides (1.31 against 1.33), one driver for both (docs/architecture.md §6.9). For each: seconds
until live (the start-up simulated ahead of the clock), a joining viewer's bytes and seconds, bytes per second per
viewer in the window from the outage command, the speed kept (virtual seconds per wall second, and any
``limited_from``), and for the comparison the gap between the two sides' clocks once paused (0: in step).

    python bench/comparison_bench.py [--nodes 1000] [--window 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from large_bench import LIVE_AT, OUTAGE, SPEED, Parts, Watcher, connect, join, load, mib, running_stack  # noqa: E402
from simulation_bench import reference_ms  # noqa: E402

from tests.web.conftest import large_document  # noqa: E402
from tests.web.live import http  # noqa: E402

TIMEOUT = 120.0


class TypedWatcher(Watcher):
    """A watcher that also adds up the bytes of each type of message (a message in parts counts as its whole):
    where a side's bytes go (frames, clock, the strip of differences)."""

    def __init__(self, ws) -> None:
        self.typed: list[tuple[float, str, int]] = []  # (monotonic, type, bytes) of every whole message
        super().__init__(ws)

    async def follow(self) -> None:
        parts = Parts()
        async for text in self.ws:
            now = time.monotonic()
            self.received.append((now, len(text.encode())))
            whole = parts.take(text)
            if whole is None:
                continue
            message = json.loads(whole)
            self.typed.append((now, message["type"], len(whole.encode())))
            clock = message.get("clock")
            if clock:
                self.clocks.append((now, clock))
                if not clock.get("preparing") and clock["t"] >= LIVE_AT - 1e-3:
                    self.live.set()

    def by_type(self, begin: float, end: float) -> dict[str, float]:
        """Bytes per second of each type of message between two monotonic times."""
        totals: dict[str, int] = {}
        for at, kind, size in self.typed:
            if begin <= at <= end:
                totals[kind] = totals.get(kind, 0) + size
        return {kind: size / (end - begin) for kind, size in sorted(totals.items(), key=lambda item: -item[1])}


async def post(url: str, body: dict, token: str | None = None) -> tuple[int, dict]:
    deadline = time.monotonic() + TIMEOUT
    while True:
        status, answer = await asyncio.to_thread(http, "POST", url, body, token)
        if status != 503 or time.monotonic() > deadline:  # 503: the worker is not seen yet
            return status, answer
        await asyncio.sleep(1)


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system


def worker_process() -> psutil.Process:
    """The stack's Celery worker (bench/large_bench.py starts it as large-bench@<host>): the drivers' process."""
    for process in psutil.Process().children(recursive=True):
        if any("large-bench@" in part for part in process.cmdline()):
            return process
    raise RuntimeError("the stack's worker is not running")


async def measure(base: str, server_pid: int, document: dict, window: float, comparison: bool) -> dict:
    created = time.monotonic()
    if comparison:
        status, made = await post(f"{base}/api/comparisons", {"document": document, "speed": SPEED,
                                                             "a": {"kubernetesVersion": "1.31"},
                                                             "b": {"kubernetesVersion": "1.33"}})
        assert status == 201, made
        runs, commands = made["runs"], f"{base}/api/comparisons/{made['id']}/commands"
    else:
        status, made = await post(f"{base}/api/runs", {"document": document, "speed": SPEED})
        assert status == 201, made
        runs, commands = [made["run"]], f"{base}/api/runs/{made['id']}/commands"
    watchers = [TypedWatcher(await connect(run["ws_url"], TIMEOUT)) for run in runs]
    row: dict = {"kind": "comparison (2 sides)" if comparison else "one run"}
    try:
        await asyncio.wait_for(asyncio.gather(*(w.live.wait() for w in watchers)), TIMEOUT)
        row["live_after"] = time.monotonic() - created
        row["join"] = [await join(run["ws_url"], TIMEOUT) for run in runs]
        worker, server = worker_process(), psutil.Process(server_pid)
        begin, worker_before, server_before = time.monotonic(), cpu_seconds(worker), cpu_seconds(server)
        status, answer = await post(commands, OUTAGE, made["control_token"])
        assert status == 202, answer
        await asyncio.sleep(window)
        end = time.monotonic()
        row["cpu"] = {"worker": (cpu_seconds(worker) - worker_before) / (end - begin),
                      "server": (cpu_seconds(server) - server_before) / (end - begin)}
        row["windows"] = [w.window(begin, end) for w in watchers]
        row["by_type"] = [w.by_type(begin, end) for w in watchers]
        status, answer = await post(commands, {"action": "pause"}, made["control_token"])
        assert status == 202, answer
        await asyncio.sleep(1.0)
        row["paused_at"] = [w.last_clock().get("t") for w in watchers]
    finally:
        for watcher in watchers:
            await watcher.close()
    row["load"] = load()
    return row


def line(row: dict) -> str:
    joins = " + ".join(f"{mib(j['bytes'])} in {j['seconds']:.2f} s" for j in row["join"])
    per_viewer = " / ".join(f"{w['bytes_per_s'] / 1024:.0f} KiB/s" for w in row["windows"])
    paces = " / ".join(f"{w['pace']:.1f}x" if w["pace"] else "-" for w in row["windows"])
    limited = sorted({x for w in row["windows"] for x in w["limited_from"]})
    gap = max(row["paused_at"]) - min(row["paused_at"]) if None not in row["paused_at"] else None
    return (f"| {row['kind']} | {row['live_after']:.1f} s | {joins} | {per_viewer} | {paces}"
            f"{' (lowered from ' + str(limited) + ')' if limited else ''} | "
            f"{'-' if gap is None else f'{gap:.3f} s'} | {row['load']} |")


async def main_async(args: argparse.Namespace) -> None:
    document = large_document(args.nodes, f"large-{args.nodes}")
    document["duration"] = "1h"
    rows = []
    async with running_stack(ROOT, "daphne", TIMEOUT) as stack:
        for comparison in (False, True):
            rows.append(await measure(stack.base, stack.server_pid, document, args.window, comparison))
    print(f"{args.nodes:,} nodes at {SPEED:g}x, zone-b outage, {args.window:g} s window")
    print("| what | live after | join (each side) | per viewer in the outage | speed kept | clocks apart when paused "
          "| load |")
    print("|---|---|---|---|---|---|---|")
    for row in rows:
        print(line(row))
    print("\nIn the outage window, CPU time of the worker (its drivers) and of the ASGI server, % of a core:")
    for row in rows:
        print(f"- {row['kind']}: worker {100 * row['cpu']['worker']:.0f} %, server {100 * row['cpu']['server']:.0f} %")
    print("\nPer viewer in the outage, by type of message:")
    for row in rows:
        for side, by_type in zip("ab", row["by_type"], strict=False):
            kinds = ", ".join(f"{kind} {rate / 1024:.1f} KiB/s" for kind, rate in by_type.items())
            print(f"- {row['kind']}{'' if len(row['by_type']) == 1 else ' side ' + side}: {kinds}")
    print(f"\nReference workload {reference_ms():.0f} ms.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured from the outage command")
    asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    main()
