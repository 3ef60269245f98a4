"""What StatefulSets and volumes cost: the largest built-ins as they are, then with a StatefulSet added (one
pod and one ReadWriteOnce volume per node, podManagementPolicy Parallel), each run in a process of its own.

Prints CPU seconds (the process's own time: steadier than wall time on a shared machine), events and CPU µs per
event, with this machine's reference workload (bench/simulation_bench.py) to compare machines. The 1,000-node
run with 1,000 volumes is `bench/simulation_bench.py --sizes 1000 --volumes 1000`.

    python bench/statefulset_bench.py [--names zone-outage-large-zones,zone-outage-small-zones]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def run_one(name: str, volumes: bool) -> dict:
    from simulation import Simulation, get_builtin, load_scenario

    scenario = get_builtin(name)
    assert scenario is not None, name
    doc = copy.deepcopy(scenario.document)
    if volumes:
        doc["cluster"]["workloads"].append({"name": "db", "kind": "StatefulSet", "replicas": scenario.node_count,
                                            "podManagementPolicy": "Parallel",
                                            "volumeClaimTemplates": [{"name": "data", "storage": "1Gi"}]})
    scenario = load_scenario(doc)
    cpu0 = time.process_time()
    sim = Simulation(scenario)
    events = 0
    t = 0.0
    while t < scenario.duration:
        t = min(t + 60.0, scenario.duration)
        events += len(sim.run_until(t))
    cpu = time.process_time() - cpu0
    attached = sum(len(n.volumes_attached) for n in sim.api.store["nodes"].values())
    return {"name": name, "volumes": volumes, "nodes": scenario.node_count, "cpu_s": round(cpu, 2), "events": events,
            "us_per_event": round(cpu / events * 1e6, 2), "attached": attached}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--names", default="zone-outage-large-zones,zone-outage-small-zones")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--volumes", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.volumes)))
        return
    from simulation_bench import reference_ms

    print(f"(machine load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; "
          f"reference workload {reference_ms():.0f} ms)", flush=True)
    print(f"{'built-in':<26} {'nodes':>5} {'StatefulSet':>11} {'cpu s':>7} {'events':>8} {'cpu µs/event':>12}")
    for name in args.names.split(","):
        for volumes in (False, True):
            cmd = [sys.executable, __file__, "--one", name] + (["--volumes"] if volumes else [])
            out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                                 env={**os.environ, "PYTHONHASHSEED": "0"})
            r = json.loads(out.stdout.strip().splitlines()[-1])
            added = f"{r['nodes']} pods" if volumes else "none"
            print(f"{name:<26} {r['nodes']:>5} {added:>11} {r['cpu_s']:>7} {r['events']:>8} {r['us_per_event']:>12}"
                  + (f"  ({r['attached']} volumes attached at the end)" if volumes else ""), flush=True)


if __name__ == "__main__":
    main()
