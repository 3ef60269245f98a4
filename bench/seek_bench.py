"""Seek benchmark: ``GET /api/runs/<id>/snapshot?t=`` on a 15-minute, 180-node run (the built-in
zone-outage-large-zones), as the server builds it (heartbeat_site/live/seek.py, then the JSON text).

A run that reached its end (900 s), in rounds each on an empty cache:

1. opening the replay: a seek to 0, after which the checkpoints (a quarter, half, three quarters
   and all of the reached time) are built in the background; the time until they are ready;
2. a seek to the end, back to the middle, then to 700 s: each continues a checkpoint;
3. for comparison, without checkpoints: a seek to the end replays from virtual time 0.

Each row: the median wall time, the snapshot's size and detail level. The database is a
temporary SQLite file; Redis is not needed (the reached time is the run's own).

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


def setup_django(directory: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/seek-bench.sqlite3"
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenario", default="zone-outage-large-zones")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, each on an empty cache (medians reported)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        setup_django(directory)
        from heartbeat_site.live import frames, seek

        run = ended_run(args.scenario)
        end = run.t_reached

        def seek_to(t: float) -> tuple[int, str]:
            body = seek.snapshot_at(run, t, reached=end)
            return len(frames.dumps(body)), body["snapshot"].get("detail", "objects")

        steps = [("open the replay (seek to 0)", 0.0), ("checkpoints ready (background)", None),
                 ("to the end (checkpoint at the end)", end), ("back to the middle (checkpoint there)", end / 2),
                 ("to 700 s (checkpoint at 675 s)", 700.0), ("to the end without checkpoints (replay from 0)", end)]
        times: dict[str, list[float]] = {label: [] for label, _ in steps}
        sizes: dict[str, tuple[int, str]] = {}
        for _ in range(args.repeat):
            seek.forget(run.id)
            seek.WARM = True
            for label, t in steps:
                if label.startswith("to the end without"):
                    seek.forget(run.id)
                    seek.WARM = False
                if t is None:
                    wall, _ = timed(lambda: seek.wait_warm(run.id))
                    times[label].append(wall)
                    continue
                wall, sizes[label] = timed(lambda t=t: seek_to(t))
                times[label].append(wall)
        print(f"{args.scenario}: {run.node_count} nodes, {end:.0f} virtual s; median of {args.repeat} rounds")
        print(f"{'step':<50} {'t (s)':>7} {'wall (s)':>9} {'snapshot':>10}  detail")
        for label, t in steps:
            size, detail = sizes.get(label, (0, ""))
            at = "" if t is None else f"{t:.1f}"
            shown = f"{size / 1e6:>8.2f}MB" if size else ""
            print(f"{label:<50} {at:>7} {statistics.median(times[label]):>9.3f} {shown:>10}  {detail}")


if __name__ == "__main__":
    main()
