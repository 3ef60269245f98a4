"""Look-back benchmark: a cold seek anywhere in a long run, from its checkpoints
(heartbeat_site/live/lookback/from_checkpoints.py).

A run that ended (``--nodes`` in three zones, 10 pods per node, ``--minutes`` long, a zone-b outage at half time:
bench/simulation_bench.py's cluster; or a built-in with ``--scenario``) gets the checkpoint series its driver would
have left: a checkpoint every ``HEARTBEAT_CHECKPOINT_SECONDS`` (60) through the real Redis script, thinned to
``HEARTBEAT_CHECKPOINTS_KEPT`` / ``_MB`` (placeholders of the real size find which stay, then the real checkpoints
are written at those times). Then ``GET /api/runs/<id>/snapshot?t=`` through the Django view, with the replay
process (started beforehand) holding nothing parked: a cold seek. The targets are the worst places, a second
before each kept checkpoint (the most simulation after the one before), and the end.

``--memory N``: then N runs of that cluster (the same series) are each sought once, and the resident memory of
the web process and of its replay process is printed after each: what a web process keeps of runs it looked back
at.

Each row: wall time of the request, the checkpoint it started from, and the reference workload
(``reference_ms()`` in bench/simulation_bench.py) and load average to compare machines. The database is a
temporary SQLite file; Redis an embedded one.

    python bench/lookback_bench.py [--nodes 5000 --minutes 60 | --scenario zone-outage-large-zones] [--memory 10]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from seek_bench import with_django  # noqa: E402
from simulation_bench import document, reference_ms  # noqa: E402


def ended_run(doc: dict):
    from heartbeat_site.live.models import Run, RunStatus
    from simulation import load_scenario

    scenario = load_scenario(doc)
    return Run.objects.create(
        scenario_name=scenario.name, document=scenario.document, seed=scenario.seed, version=str(scenario.version),
        node_count=scenario.node_count, duration=float(scenario.duration), t_reached=float(scenario.duration),
        status=RunStatus.FINISHED, control_token_hash="-",
    )


def write_series(run) -> tuple[list[tuple[float, int]], int, float]:
    """The checkpoints a driver of ``run`` leaves (as thinned), their positions, size and the wall time it took."""
    from django.conf import settings

    from heartbeat_site.live.redis_client import get_redis
    from heartbeat_site.live.runstore import checkpoint_series, ownership
    from simulation import Simulation, load_scenario

    started = time.perf_counter()
    every = settings.HEARTBEAT["CHECKPOINT_SECONDS"]
    lease = ownership.Lease(run.id, "bench", ttl=3600)
    lease.acquire()
    sim = Simulation(load_scenario(run.document), seed=run.seed)
    marks = [min(run.duration, every * k) for k in range(1, math.ceil(run.duration / every) + 1)]
    seq = sim.run_until(marks[0])[-1].seq
    first = checkpoint_series.Checkpoint(t=sim.now, seq=seq, commands=[], sim=sim.checkpoint())
    for t in marks:  # placeholders of the real size: which the series keeps
        lease.store_checkpoint(checkpoint_series.Checkpoint(t=t, seq=0, commands=[], sim=bytes(len(first.sim))))
    kept = [t for t, _seq in checkpoint_series.checkpoint_positions(run.id)]
    get_redis().delete(checkpoint_series.checkpoints_key(run.id))
    for t in kept:
        if t > sim.now:
            events = sim.run_until(t)
            seq = events[-1].seq if events else seq
        checkpoint = (first if t == first.t
                      else checkpoint_series.Checkpoint(t=t, seq=seq, commands=[], sim=sim.checkpoint()))
        lease.store_checkpoint(checkpoint)
    lease.release()
    return checkpoint_series.checkpoint_positions(run.id), len(first.sim), time.perf_counter() - started


def rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


def measure(doc: dict, memory_runs: int) -> dict:
    from django.test import Client

    from heartbeat_site.live.lookback import replay_process, seek
    from heartbeat_site.live.redis_client import get_redis
    from heartbeat_site.live.runstore import checkpoint_series

    run = ended_run(doc)
    positions, size, took = write_series(run)
    client = Client(HTTP_HOST="127.0.0.1")

    def get(run_id: str, t: float) -> float:
        replay_process.call(seek.forget, run_id, work=math.inf)  # nothing parked: a cold seek
        started = time.perf_counter()
        response = client.get(f"/api/runs/{run_id}/snapshot?t={t}")
        if response.status_code != 200:
            raise SystemExit(f"GET snapshot?t={t}: {response.status_code} {response.content[:200]!r}")
        return time.perf_counter() - started

    child = replay_process.child_pid()  # started before the seeks
    targets = [t - 1.0 for t, _seq in positions] + [run.duration]
    seeks = []
    for t in targets:
        start = checkpoint_series.nearest_checkpoint(positions, t)
        seeks.append((t, start[0] if start else 0.0, get(run.id, t)))
    memory = []
    if memory_runs:
        memory.append(("before", rss_mb(os.getpid()), rss_mb(child)))
        for i in range(memory_runs):
            other = ended_run(doc)
            get_redis().copy(checkpoint_series.checkpoints_key(run.id), checkpoint_series.checkpoints_key(other.id))
            get(other.id, run.duration - 1.0)
            memory.append((f"after run {i + 1}", rss_mb(os.getpid()), rss_mb(child)))
    replay_process.stop()
    return {"nodes": run.node_count, "duration": run.duration, "positions": positions, "size": size, "took": took,
            "seeks": seeks, "memory": memory}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--minutes", type=float, default=60.0)
    parser.add_argument("--scenario", default="", help="a built-in scenario instead of --nodes and --minutes")
    parser.add_argument("--memory", type=int, default=0, help="then seek this many other runs, memory after each")
    args = parser.parse_args()
    if args.scenario:
        from simulation import get_builtin

        scenario = get_builtin(args.scenario)
        if scenario is None:
            raise SystemExit(f"no built-in scenario named {args.scenario!r}")
        doc = scenario.document
    else:
        doc = document(args.nodes, args.minutes * 60)
    load = os.getloadavg()[0]
    figures = with_django(measure, doc, args.memory)
    reference = reference_ms()
    kept = ", ".join(f"{t / 60:g}" for t, _seq in figures["positions"])
    print(f"\n{figures['nodes']:,} nodes, {figures['duration'] / 60:g} virtual minutes; checkpoints kept at minutes "
          f"{kept} ({figures['size'] / 1e6:.1f} MB each; written in {figures['took']:.0f} s)")
    print("| seek to t (min) | starts from the checkpoint at (min) | simulated after it (s) | wall (s) |")
    print("|---|---|---|---|")
    for t, start, wall in figures["seeks"]:
        print(f"| {t / 60:.2f} | {start / 60:g} | {t - start:.0f} | {wall:.2f} |")
    if figures["memory"]:
        print("| runs sought | web process RSS (MB) | its replay process RSS (MB) |")
        print("|---|---|---|")
        for label, web, child in figures["memory"]:
            print(f"| {label} | {web:.0f} | {child:.0f} |")
    print(f"reference workload: {reference:.0f} ms; load average {load:.1f} at the start, "
          f"{os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
