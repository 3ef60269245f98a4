"""Seek benchmark: ``GET /api/runs/<id>/snapshot?t=`` on a 15-minute, 180-node run (the built-in
zone-outage-large-zones) that reached its end, through the Django view (heartbeat_site/live/api/snapshots.py,
heartbeat_site/live/lookback/seek.py), in rounds each on an empty cache of parked simulations:

1. the first seek to the end: nothing is parked, the run is replayed from virtual time 0; then the
   checkpoints (a quarter, half, three quarters and all of the reached time) are built in the background,
   and the time until they are ready;
2. the same seek repeated, then back to the middle and to 700 s: each continues a checkpoint.

Each row: the median wall time of the request, the body's size and detail level, and the reference workload
(``reference_ms()`` in bench/simulation_bench.py) to compare machines. The database is a temporary SQLite
file; Redis an embedded one of its own (the view reads the run's published position there).

    python bench/seek_bench.py [--scenario NAME] [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from simulation_bench import reference_ms  # noqa: E402

from heartbeat_site.embedded_redis import start_embedded  # noqa: E402


def with_django(measure, *args):
    """``measure(*args)`` with Django set up on a temporary SQLite database and an embedded Redis."""
    redis = start_embedded()
    try:
        with tempfile.TemporaryDirectory() as directory:
            setup_django(directory, redis.url)
            return measure(*args)
    finally:
        redis.stop()


def setup_django(directory: str, redis_url: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/seek-bench.sqlite3"
    os.environ["REDIS_URL"] = redis_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heartbeat_site.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def ended_run(name: str):
    from heartbeat_site.live.models import Run, RunStatus
    from simulation import get_builtin

    scenario = get_builtin(name)
    if scenario is None:
        raise SystemExit(f"no built-in scenario named {name!r}")
    return Run.objects.create(
        scenario_name=scenario.name, document=scenario.document, seed=scenario.seed, version=str(scenario.version),
        node_count=scenario.node_count, duration=float(scenario.duration), t_reached=float(scenario.duration),
        status=RunStatus.FINISHED, control_token_hash="-",
    )


def timed(action) -> tuple[float, object]:
    started = time.perf_counter()
    result = action()
    return time.perf_counter() - started, result


STEPS = ("first seek to the end (replay from 0)", "checkpoints ready (background)", "the same seek again",
         "back to the middle", "to 700 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", default="zone-outage-large-zones")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each on an empty cache (medians reported)")
    args = parser.parse_args()
    rows = with_django(measure, args.scenario, args.repeat)
    reference = reference_ms()
    scenario, nodes, end, table = rows
    print(f"{scenario}: {nodes} nodes, {end:.0f} virtual s; median of {args.repeat} rounds; "
          f"reference workload {reference:.0f} ms")
    print(f"{'step':<42} {'t (s)':>7} {'wall (s)':>9} {'body':>9}  detail")
    for label, t, wall, size, detail in table:
        at = "" if t is None else f"{t:.1f}"
        shown = f"{size / 1e6:.2f} MB" if size else ""
        print(f"{label:<42} {at:>7} {wall:>9.3f} {shown:>9}  {detail}")


def measure(name: str, repeat: int) -> tuple[str, int, float, list[tuple]]:
    from django.test import Client

    from heartbeat_site.live.lookback import seek

    run = ended_run(name)
    end = run.t_reached
    client = Client(HTTP_HOST="127.0.0.1")

    def get(t: float) -> tuple[int, str]:
        response = client.get(f"/api/runs/{run.id}/snapshot?t={t}")
        if response.status_code != 200:
            raise SystemExit(f"GET snapshot?t={t}: {response.status_code} {response.content[:200]!r}")
        return len(response.content), response.json()["snapshot"].get("detail", "objects")

    targets: dict[str, float | None] = dict(zip(STEPS, (end, None, end, end / 2, 700.0), strict=True))
    times: dict[str, list[float]] = {label: [] for label in STEPS}
    sizes: dict[str, tuple[int, str]] = {}
    for _ in range(repeat):
        seek.forget(run.id)
        for label, t in targets.items():
            if t is None:
                wall, _ = timed(lambda: seek.wait_warm(run.id))
            else:
                wall, sizes[label] = timed(lambda t=t: get(t))
            times[label].append(wall)
    table = [(label, t, statistics.median(times[label]), *sizes.get(label, (0, ""))) for label, t in targets.items()]
    return name, run.node_count, end, table


if __name__ == "__main__":
    main()
