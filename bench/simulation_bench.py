"""Simulation core benchmark: clusters of 100, 1,000 and 5,000 nodes, 10 pods per
node, 3 zones, simulated for one hour with defaults and a zone-b outage at 30 min.

Prints wall time, simulated seconds per wall second, events per second and peak memory.
Each size runs in its own process so peak memory is its own. `--quick` simulates 10 minutes.
`--checkpoint` also times `Simulation.checkpoint()` and `Simulation.restore()` at half time
(the outage just started), outside the run's own figures: size, checkpoint and restore time.
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


def document(nodes: int, duration: float, volumes: int = 0) -> dict:
    """`volumes`: add a StatefulSet of that many replicas (Parallel), one ReadWriteOnce claim each."""
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
            + [{"name": "agent", "kind": "DaemonSet"}]
            + ([{"name": "db", "kind": "StatefulSet", "replicas": volumes, "podManagementPolicy": "Parallel",
                 "volumeClaimTemplates": [{"name": "data", "storage": "1Gi"}]}] if volumes else []),
            "services": [{"name": "app-0", "selector": {"app": "app-0"}}],
        },
        "faults": [{"at": f"{int(duration / 2)}s", "action": "zone-outage", "zone": "zone-b"}],
    }


def checkpoint_figures(sim) -> dict:
    """Checkpoint size and time, restore time (wall and CPU), and whether a checkpoint of the
    restored run is the same bytes."""
    from simulation import Simulation

    started, cpu0 = time.perf_counter(), time.process_time()
    data = sim.checkpoint()
    saved, saved_cpu = time.perf_counter() - started, time.process_time() - cpu0
    started, cpu0 = time.perf_counter(), time.process_time()
    restored = Simulation.restore(data)
    loaded, loaded_cpu = time.perf_counter() - started, time.process_time() - cpu0
    same = restored.checkpoint() == data
    del restored
    return {"ckpt_mib": round(len(data) / 2**20, 1), "ckpt_s": round(saved, 2), "ckpt_cpu_s": round(saved_cpu, 2),
            "restore_s": round(loaded, 2), "restore_cpu_s": round(loaded_cpu, 2), "ckpt_same": same}


def run_one(nodes: int, duration: float, volumes: int = 0, checkpoint: bool = False) -> dict:
    from simulation import Simulation, load_scenario

    scenario = load_scenario(document(nodes, duration, volumes))
    started = time.perf_counter()
    cpu0 = time.process_time()
    sim = Simulation(scenario)
    counts: Counter[str] = Counter()
    by_type = attrgetter("type")
    t = 0.0
    ckpt: dict = {}
    paused_wall = paused_cpu = 0.0
    while t < duration:
        t = min(t + 60.0, duration)
        # counted in C: a Python loop over 3 M events was the harness's own cost, not the core's
        counts.update(map(by_type, sim.run_until(t)))
        if checkpoint and not ckpt and t >= duration / 2 + 60:
            w0, c0 = time.perf_counter(), time.process_time()
            ckpt = checkpoint_figures(sim)
            paused_wall, paused_cpu = time.perf_counter() - w0, time.process_time() - c0
    events = counts.total()
    wall = time.perf_counter() - started - paused_wall
    cpu = time.process_time() - cpu0 - paused_cpu
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    pods = len(sim.api.store["pods"])
    attached = sum(len(getattr(n, "volumes_attached", ())) for n in sim.api.store["nodes"].values())
    return {"nodes": nodes, "pods": pods, "volumes": volumes, "attached": attached, "simulated_s": duration,
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "speedup": round(duration / wall, 1), "events": events,
            "events_per_s": round(events / wall),
            "us_per_event": round(wall / events * 1e6, 2), "cpu_us_per_event": round(cpu / events * 1e6, 2),
            "peak_mib": round(peak_kib / 1024), "by_type": dict(counts), **ckpt}


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
    parser.add_argument("--volumes", type=int, default=0,
                        help="add a StatefulSet of this many replicas, one volume each (e.g. --sizes 1000 "
                             "--volumes 1000)")
    parser.add_argument("--checkpoint", action="store_true",
                        help="also time a checkpoint and a restore a minute into the outage")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    duration = 600.0 if args.quick else 3600.0
    if args.one:
        print(json.dumps(run_one(args.one, duration, args.volumes, args.checkpoint)))
        return
    print(f"simulation core: {duration / 60:g} simulated minutes, 3 zones, ~10 pods per node, "
          "zone-b outage at half time" + (f", a StatefulSet of {args.volumes} pods with a volume each"
                                          if args.volumes else ""))
    print(f"(machine load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          "'x (cpu)' uses the process's own CPU time, steadier on a busy machine)")
    print(f"(this machine's plain-Python speed: reference workload {reference_ms():.0f} ms, best of 5; "
          "compare figures from machines by it)", flush=True)
    print(f"{'nodes':>6} {'pods':>7} {'wall s':>8} {'cpu s':>8} {'x real time':>12} {'x (cpu)':>9} {'events':>10} "
          f"{'events/s':>9} {'µs/event':>9} {'cpu µs/ev':>9} {'peak MiB':>9}")
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        cmd = ([sys.executable, __file__, "--one", str(size), "--volumes", str(args.volumes)]
               + (["--quick"] if args.quick else []) + (["--checkpoint"] if args.checkpoint else []))
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
        r = json.loads(out.stdout.strip().splitlines()[-1])
        results.append(r)
        print(f"{r['nodes']:>6} {r['pods']:>7} {r['wall_s']:>8} {r['cpu_s']:>8} {r['speedup']:>11}x "
              f"{r['simulated_s'] / r['cpu_s']:>8.1f}x {r['events']:>10} {r['events_per_s']:>9} "
              f"{r['us_per_event']:>9} {r['cpu_us_per_event']:>9} {r['peak_mib']:>9}"
              + (f"  ({r['attached']} volumes attached at the end)" if args.volumes else ""), flush=True)
        if args.checkpoint:
            print(f"{'':>6} checkpoint {r['ckpt_mib']} MiB in {r['ckpt_s']} s (cpu {r['ckpt_cpu_s']} s), "
                  f"restore {r['restore_s']} s (cpu {r['restore_cpu_s']} s), "
                  f"checkpoint of the restored run {'identical' if r['ckpt_same'] else 'DIFFERENT'}", flush=True)
    if len(results) > 1:
        a, b = results[0], results[-1]
        print(f"cost growth: {b['nodes'] / a['nodes']:g}x the nodes -> {b['wall_s'] / a['wall_s']:.1f}x the wall time; "
              f"" + (f"goal >= 60x real time at 5,000 nodes: {'met' if b['speedup'] >= 60 else 'NOT met'}"
                     if b['nodes'] == 5000 else ""))


if __name__ == "__main__":
    main()
