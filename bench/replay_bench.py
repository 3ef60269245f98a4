"""Replay benchmark: what a seek of a large run costs everyone else a web process serves.

A web process sends every viewer's frames from one event loop, and runs requests in threads beside it.
A seek (``GET /api/runs/<id>/snapshot?t=``) of a run nobody sought before replays it from virtual time 0:
for 5,000 nodes, their whole start-up again. This bench seeks a 5,000-node run (3 zones, 10 pods per node,
reached t = 60 s) from a thread while an asyncio task in the same process wakes every 10 ms, as the loop
does to send frames, and reports how late it woke (the loop's lag) meanwhile:

- ``in the web process``: ``HEARTBEAT_REPLAY_PROCESS=0``, the replay in the request's thread;
- ``replay process``: the default, the replay in the web process's replay process
  (heartbeat_site/live/lookback/replay_process.py), started beforehand so that its start is not counted.

Each row: the seek's wall time, the lag's median, p99 and maximum, and the reference workload
(``reference_ms()`` in bench/simulation_bench.py) to compare machines. Each mode starts with nothing
parked (a cold seek, the case that costs). The database is a temporary SQLite file; Redis an embedded one.

    python bench/replay_bench.py [--nodes N] [--repeat N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from fanout_bench import percentile  # noqa: E402
from seek_bench import with_django  # noqa: E402
from simulation_bench import reference_ms  # noqa: E402

TICK = 0.01  # s: how often the loop's task asks to wake
REACHED = 60.0  # virtual s the run has reached: its start-up (20 s) and 40 s after it


def ended_run(nodes: int):
    from heartbeat_site.live.models import Run, RunStatus
    from simulation import load_scenario
    from tests.web.conftest import large_document

    scenario = load_scenario({**large_document(nodes, f"replay-bench-{nodes}"), "duration": "2m"})
    return Run.objects.create(
        scenario_name=scenario.name, document=scenario.document, seed=scenario.seed, version=str(scenario.version),
        node_count=scenario.node_count, duration=float(scenario.duration), t_reached=REACHED,
        status=RunStatus.FINISHED, control_token_hash="-",
    )


async def lag_during(seek) -> tuple[float, list[float]]:
    """The wall time of ``seek()`` in a thread, and how late a 10 ms timer of the loop woke meanwhile."""
    lags: list[float] = []
    done = False

    async def tick() -> None:
        while not done:
            asked = time.perf_counter()
            await asyncio.sleep(TICK)
            lags.append(time.perf_counter() - asked - TICK)

    ticker = asyncio.create_task(tick())
    started = time.perf_counter()
    await asyncio.to_thread(seek)
    wall = time.perf_counter() - started
    done = True
    await ticker
    return wall, lags


def measure(nodes: int, repeat: int) -> list[tuple[str, float, list[float]]]:
    from django.conf import settings
    from django.test import Client

    from heartbeat_site.live.lookback import replay_process, seek

    run = ended_run(nodes)
    client = Client(HTTP_HOST="127.0.0.1")

    def get() -> None:
        response = client.get(f"/api/runs/{run.id}/snapshot?t={REACHED}")
        if response.status_code != 200:
            raise SystemExit(f"GET snapshot: {response.status_code} {response.content[:200]!r}")

    rows = []
    for label, in_child in (("in the web process", False), ("replay process", True)):
        walls: list[float] = []
        lags: list[float] = []
        for _ in range(repeat):
            settings.HEARTBEAT = {**settings.HEARTBEAT, "REPLAY_PROCESS": in_child}
            seek.forget(run.id)
            replay_process.stop()
            if in_child:
                replay_process.child_pid()  # started before the seek
            wall, round_lags = asyncio.run(lag_during(get))
            walls.append(wall)
            lags.extend(round_lags)
        rows.append((label, statistics.median(walls), lags))
    replay_process.stop()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    reference = reference_ms()
    rows = with_django(measure, args.nodes, args.repeat)
    print(f"\nA cold seek of a {args.nodes:,}-node run (t = {REACHED:g} s) and the web process's event loop "
          f"(a 10 ms timer), median of {args.repeat}")
    print("| replayed | seek, s | loop lag median, ms | p99, ms | max, ms |")
    print("|---|---|---|---|---|")
    for label, wall, lags in rows:
        ms = sorted(1000 * lag for lag in lags)
        print(f"| {label} | {wall:.1f} | {statistics.median(ms):.1f} | {percentile(ms, 99):.1f} | {ms[-1]:.1f} |")
    print(f"reference workload: {reference:.0f} ms; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
