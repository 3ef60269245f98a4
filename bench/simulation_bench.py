"""Simulation core benchmark: clusters of 100, 1,000 and 5,000 nodes, 10 pods per
node, 3 zones, simulated for one hour with defaults and a zone-b outage at 30 min.

Prints wall time, simulated seconds per wall second, events per second and peak memory.
Each size runs in its own process so peak memory is its own. `--quick` simulates 10 minutes.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from operator import attrgetter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def document(nodes: int, duration: float) -> dict:
    per_zone = nodes // 3
    zones = [{"name": "zone-a", "nodes": nodes - 2 * per_zone}, {"name": "zone-b", "nodes": per_zone},
             {"name": "zone-c", "nodes": per_zone}]
    return {
        "name": f"bench-{nodes}",
        "seed": 1,
        "duration": f"{int(duration)}s",
        "cluster": {
            "zones": zones,
            # 10 pods per node: 9 Deployment replicas per node spread over 3 workloads, plus a DaemonSet
            "workloads": [{"name": f"app-{i}", "replicas": 3 * nodes} for i in range(3)]
            + [{"name": "agent", "kind": "DaemonSet"}],
            "services": [{"name": "app-0", "selector": {"app": "app-0"}}],
        },
        "faults": [{"at": f"{int(duration / 2)}s", "action": "zone-outage", "zone": "zone-b"}],
    }


def run_one(nodes: int, duration: float) -> dict:
    from simulation import Simulation, load_scenario

    scenario = load_scenario(document(nodes, duration))
    started = time.perf_counter()
    cpu0 = time.process_time()
    sim = Simulation(scenario)
    counts: Counter[str] = Counter()
    by_type = attrgetter("type")
    t = 0.0
    while t < duration:
        t = min(t + 60.0, duration)
        # counted in C: a Python loop over 3 M events was the harness's own cost, not the core's
        counts.update(map(by_type, sim.run_until(t)))
    events = counts.total()
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu0
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    pods = len(sim.api.store["pods"])
    return {"nodes": nodes, "pods": pods, "simulated_s": duration, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "speedup": round(duration / wall, 1), "events": events, "events_per_s": round(events / wall),
            "us_per_event": round(wall / events * 1e6, 2), "peak_mib": round(peak_kib / 1024), "by_type": dict(counts)}


def reference_ms() -> float:
    """How fast this machine runs plain Python, for comparing figures across machines: a fixed
    workload of the kind the core does (a heap of tuples, a dict of small lists), independent
    of the project's code. Machines here differ by 2.5x on the same code; best of 5."""
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        heap: list[tuple[int, int]] = []
        table: dict[int, list[int]] = {}
        for i in range(50_000):
            heapq.heappush(heap, (i * 7919 % 100_003, i))
            table[i % 5_000] = [i, i]
        while heap:
            heapq.heappop(heap)
        best = min(best, time.perf_counter() - started)
    return best * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="simulate 10 minutes instead of an hour")
    parser.add_argument("--sizes", default="100,1000,5000")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    duration = 600.0 if args.quick else 3600.0
    if args.one:
        print(json.dumps(run_one(args.one, duration)))
        return
    print(f"simulation core: {duration / 60:g} simulated minutes, 3 zones, ~10 pods per node, "
          "zone-b outage at half time")
    print(f"(machine load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          "'x (cpu)' uses the process's own CPU time, steadier on a busy machine)")
    print(f"(this machine's plain-Python speed: reference workload {reference_ms():.0f} ms, best of 5; "
          "compare figures from machines by it)", flush=True)
    print(f"{'nodes':>6} {'pods':>7} {'wall s':>8} {'cpu s':>8} {'x real time':>12} {'x (cpu)':>9} {'events':>10} "
          f"{'events/s':>9} {'µs/event':>9} {'peak MiB':>9}")
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        cmd = [sys.executable, __file__, "--one", str(size)] + (["--quick"] if args.quick else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"{r['nodes']:>6} {r['pods']:>7} {r['wall_s']:>8} {r['cpu_s']:>8} {r['speedup']:>11}x "
              f"{r['simulated_s'] / r['cpu_s']:>8.1f}x {r['events']:>10} {r['events_per_s']:>9} "
              f"{r['us_per_event']:>9} {r['peak_mib']:>9}", flush=True)
    if len(results) > 1:
        a, b = results[0], results[-1]
        print(f"cost growth: {b['nodes'] / a['nodes']:g}x the nodes -> {b['wall_s'] / a['wall_s']:.1f}x the wall time; "
              f"" + (f"goal >= 60x real time at 5,000 nodes: {'met' if b['speedup'] >= 60 else 'NOT met'}"
                     if b['nodes'] == 5000 else ""))


if __name__ == "__main__":
    main()
