"""Recovery benchmark: how long a live run takes to come back after Redis restarts empty, or after the
worker driving it is killed.

For a 3-node and a 1,000-node run at 10x (Daphne, one Celery worker, a redis-server of its
own): Redis is killed with SIGKILL, started again empty after 5 s, and a viewer that
reconnects like the pages do (``?after=<last seq>``, backing off from 0.2 s to 1 s) reports

- restart -> first frame: from Redis answering again to the first frame the viewer gets;
- restart -> speed kept: to the first whole second in which the run's virtual clock again
  advanced by at least 90 % of its speed;
- whether every reconnect resumed exactly where the viewer was (no gap).

With ``--takeover 1000:5,1000:15`` (nodes:virtual minutes), instead: a run driven by one worker until its
clock passes that age, a second worker started, the first killed with SIGKILL; once with the run's
checkpoints (``HEARTBEAT_CHECKPOINT_SECONDS``, default) and once without (``0``: the heir replays from 0):

- kill -> first frame: from the kill to the viewer's first frame from the heir (the lease lapsing,
  ``LEASE_TTL``, is part of it);
- rebuild: the heir's own time to continue the checkpoint (or replay from 0) to the published position;
- the checkpoints' size and write time (in the process beside the driver), from the first worker's log,
  and the driver's longest interval between two slices (a frame goes out each slice) since the previous
  checkpoint, as each checkpoint's log line says.

    python bench/recovery_bench.py [--sizes 3,1000] [--outage 5]
    python bench/recovery_bench.py --takeover 1000:5,1000:15,5000:15 [--speed 20] [--only-checkpoints]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import websockets  # noqa: E402
from simulation_bench import reference_ms  # noqa: E402

from heartbeat_site import processes  # noqa: E402
from heartbeat_site.embedded_redis import free_port, start_embedded  # noqa: E402

SPEED = 10.0
ORIGIN = "http://127.0.0.1"


def document(nodes: int, minutes: float = 20.0) -> dict:
    """``nodes`` nodes in three zones with 10 pods each (a DaemonSet and 9 web replicas), lasting 10 virtual
    minutes past ``minutes`` (30 at least)."""
    third = nodes // 3
    zones = [{"name": "zone-a", "nodes": nodes - 2 * third}, {"name": "zone-b", "nodes": third},
             {"name": "zone-c", "nodes": third}]
    zones = [zone for zone in zones if zone["nodes"]]
    return {
        "name": f"recovery-{nodes}",
        "seed": 5,
        "duration": f"{max(30, int(minutes) + 10)}m",
        "cluster": {"zones": zones,
                    "workloads": [{"name": "web", "replicas": 9 * nodes}, {"name": "agent", "kind": "DaemonSet"}]},
    }


def post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


class Follower:
    """One viewer that reconnects as the pages do and keeps (wall time, virtual time) of frames."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.last_seq = 0
        self.clock: list[tuple[float, float]] = []
        self.frames_at: list[float] = []
        self.resumes: list[str] = []
        self.live = asyncio.Event()

    async def run(self, until: float) -> None:
        ws = None
        parts: list[str] = []
        delay = 0.2
        while time.monotonic() < until:
            if ws is None:
                try:
                    after = f"?after={self.last_seq}" if self.last_seq else ""
                    ws = await websockets.connect(self.url + after, origin=ORIGIN, max_size=None, open_timeout=5)
                    delay = 0.2
                except (OSError, websockets.InvalidHandshake, TimeoutError):
                    await asyncio.sleep(delay)
                    delay = min(2 * delay, 1.0)
                    continue
            try:
                text = await asyncio.wait_for(ws.recv(), max(0.01, until - time.monotonic()))
            except (websockets.ConnectionClosed, TimeoutError):
                ws = None
                continue
            message = json.loads(text)
            if message["type"] == "part":
                parts.append(message["data"])
                if len(parts) < message["parts"]:
                    continue
                message, parts = json.loads("".join(parts)), []
            self.handle(message)
        if ws is not None:
            await ws.close()

    def handle(self, message: dict) -> None:
        kind = message["type"]
        now = time.monotonic()
        if kind in ("snapshot", "resumed"):
            if self.last_seq:
                self.resumes.append("resumed" if kind == "resumed" and message["after"] == self.last_seq else kind)
            self.last_seq = message["last_seq"] if kind == "snapshot" else message["after"]
            if kind == "snapshot" and not message["clock"].get("preparing") and message["clock"].get("t", 0) > 0:
                self.live.set()
        elif kind == "frame":
            self.last_seq = message["seq"][1]
            self.frames_at.append(now)
        if "clock" in message and message["clock"].get("t") is not None and not message["clock"].get("preparing"):
            self.clock.append((now, message["clock"]["t"]))
            if message["clock"]["t"] > 0 and kind in ("frame", "clock"):
                self.live.set()

    def speed_kept_from(self, since: float) -> float | None:
        """The first wall time after ``since`` ending a second in which virtual time advanced >= 90 % of SPEED."""
        points = [(w, t) for w, t in self.clock if w >= since]
        for i, (wall, virtual) in enumerate(points):
            later = [(w, t) for w, t in points[i:] if w - wall >= 1.0]
            if later and (later[0][1] - virtual) / (later[0][0] - wall) >= 0.9 * SPEED:
                return later[0][0]
        return None


async def measure(base: str, redis, nodes: int, outage: float) -> dict:
    run = post(f"{base}/api/runs", {"document": document(nodes), "speed": SPEED})
    follower = Follower(run["ws_url"])
    task = asyncio.create_task(follower.run(time.monotonic() + 600))
    await asyncio.wait_for(follower.live.wait(), 300)
    await asyncio.sleep(5)
    await asyncio.to_thread(redis.kill)
    await asyncio.sleep(outage)
    await asyncio.to_thread(redis.restart)
    back = time.monotonic()
    deadline = back + 120
    while time.monotonic() < deadline:
        first = next((t for t in follower.frames_at if t > back), None)
        kept = follower.speed_kept_from(back)
        if first is not None and kept is not None:
            break
        await asyncio.sleep(0.1)
    task.cancel()
    return {
        "nodes": nodes,
        "first_frame_ms": round(1000 * (first - back)) if first else None,
        "speed_kept_s": round(kept - back, 2) if kept else None,
        "resumes": follower.resumes,
    }


TAKEOVER_SPEED = 20.0
LEASE_TTL = 2.0
CHECKPOINT_LINE = re.compile(r"checkpoint at t=([\d.]+) s \(seq \d+\): ([\d.]+) s, (\d+) bytes"
                             r"(?:; the driver's longest slice interval meanwhile ([\d.]+) s)?")
REBUILD_LINE = re.compile(r"(continued its checkpoint at t=([\d.]+) s|replayed from 0) .*to t=([\d.]+) s in ([\d.]+) s")


async def measure_takeover(base: str, nodes: int, minutes: float, speed: float, workers: dict, start_heir) -> dict:
    from heartbeat_site.live.runstore import ownership

    run = post(f"{base}/api/runs", {"document": document(nodes, minutes), "speed": speed})
    follower = Follower(run["ws_url"])
    patience = 600 + 3 * 60 * minutes / speed  # wall seconds the run may take to reach its age
    task = asyncio.create_task(follower.run(time.monotonic() + patience + 300))
    await asyncio.to_thread(start_heir)  # now: it is up (its watchdog too) when the age is reached
    deadline = time.monotonic() + patience
    while not follower.clock or follower.clock[-1][1] < 60 * minutes:
        assert time.monotonic() < deadline, f"the run did not reach its age within {patience:.0f} s"
        await asyncio.sleep(0.05)
    holder = ownership.lease_holder(run["id"])
    age = follower.clock[-1][1]
    killed = time.monotonic()
    # the longest wait between two frames while the run was live (checkpoints written meanwhile)
    live_from = next((w for w, t in follower.clock if t > 60), killed)
    before = [w for w in follower.frames_at if live_from <= w <= killed]
    gap = max((b - a for a, b in zip(before, before[1:], strict=False)), default=None)
    os.kill(workers["first"].pid, signal.SIGKILL)
    workers["first"].wait()
    while ownership.lease_holder(run["id"]) in (holder, None) and time.monotonic() < killed + 300:
        await asyncio.sleep(0.05)
    taken = time.monotonic()
    while time.monotonic() < taken + 300 and not any(t > taken for t in follower.frames_at):
        await asyncio.sleep(0.05)
    first = next((t for t in follower.frames_at if t > taken), None)
    task.cancel()
    return {"nodes": nodes, "minutes": minutes, "age": age, "max_frame_gap_s": round(gap, 2) if gap else None,
            "first_frame_s": round(first - killed, 2) if first else None}


def takeover(workdir: Path, cases: list[tuple[int, float]], speed: float, modes: tuple[bool, ...]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heartbeat_site.settings")
    import django
    from django.conf import settings

    django.setup()  # runstore reads the lease holder in the Redis of each case (settings.REDIS_URL)
    results = []
    for nodes, minutes in cases:
        for checkpoints in modes:
            redis = start_embedded()
            settings.REDIS_URL = redis.url
            tag = f"{nodes}-{minutes:g}-{'ckpt' if checkpoints else 'replay'}"
            env = {
                "REDIS_URL": redis.url,
                "DATABASE_URL": f"sqlite:///{workdir / f'takeover-{tag}.sqlite3'}",
                "HEARTBEAT_MAX_RUNS_PER_CLIENT": "100",
                "HEARTBEAT_LEASE_TTL": str(LEASE_TTL),
                "LOG_LEVEL": "INFO",
                **({} if checkpoints else {"HEARTBEAT_CHECKPOINT_SECONDS": "0"}),
            }
            subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT,
                           env={**os.environ, **env}, check=True)
            logs = {name: workdir / f"worker-{tag}-{name}.log" for name in ("first", "heir")}
            workers = {"first": processes.start_worker(env, concurrency=4, name=f"first-{tag}", log_path=logs["first"])}

            def start_heir(env=env, workers=workers, logs=logs, tag=tag) -> None:
                workers["heir"] = processes.start_worker(env, concurrency=4, name=f"heir-{tag}", log_path=logs["heir"])

            port = free_port()
            server = processes.start_asgi("daphne", port, env, log_path=workdir / f"daphne-{tag}.log")
            try:
                processes.wait_http(f"http://127.0.0.1:{port}/api/openapi.json", server)
                result = asyncio.run(measure_takeover(f"http://127.0.0.1:{port}", nodes, minutes, speed, workers,
                                                      start_heir))
            finally:
                processes.stop(server)
                for worker in workers.values():
                    processes.stop(worker)
                redis.stop()
            written = CHECKPOINT_LINE.findall(logs["first"].read_text(errors="replace"))
            rebuilt = REBUILD_LINE.findall(logs["heir"].read_text(errors="replace"))
            result.update(checkpoints=checkpoints, written=written, rebuilt=rebuilt[-1] if rebuilt else None)
            results.append(result)
            print(json.dumps(result), flush=True)
    load = os.getloadavg()
    print(f"\ntakeover benchmark: runs at up to {speed:g}x, lease TTL {LEASE_TTL:g} s, the driving worker "
          f"killed with SIGKILL, {os.cpu_count()} cores, load {load[0]:.1f}, reference workload "
          f"{reference_ms():.0f} ms (logs: {workdir})")
    print("| nodes | age (virtual) | heir starts from | kill -> first frame | heir's rebuild | checkpoint size | "
          "checkpoint write (beside the driver) | longest frame gap before the kill | "
          "the driver's longest slice interval (checkpoints beside it) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        rebuilt = r["rebuilt"]
        start = "no checkpoint: replay from 0"
        if rebuilt and rebuilt[1]:
            start = f"checkpoint at {float(rebuilt[1]) / 60:.1f} min"
        rebuild = f"{float(rebuilt[3]):.2f} s" if rebuilt else "?"
        first = f"{r['first_frame_s']:.2f} s" if r["first_frame_s"] is not None else "none within 300 s"
        sizes = [int(b) for _, _, b, _ in r["written"]]
        times = [float(s) for _, s, _, _ in r["written"]]
        slices = [float(g) for _, _, _, g in r["written"] if g]
        size = f"{max(sizes) / 1e6:.1f} MB" if sizes else ""
        write = f"{min(times):.2f} to {max(times):.2f} s ({len(times)})" if times else ""
        gap = f"{r['max_frame_gap_s']:.2f} s" if r["max_frame_gap_s"] is not None else ""
        interval = f"{max(slices):.2f} s" if slices else ""
        age = f"{r['age'] / 60:.1f} min"
        print(f"| {r['nodes']:,} | {age} | {start} | {first} | {rebuild} | {size} | {write} | {gap} | {interval} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3,1000")
    parser.add_argument("--outage", type=float, default=5.0)
    parser.add_argument("--takeover", default="",
                        help="nodes:minutes,... (a worker killed, with and without checkpoints)")
    parser.add_argument("--speed", type=float, default=TAKEOVER_SPEED, help="the runs' speed with --takeover")
    parser.add_argument("--only-checkpoints", action="store_true",
                        help="with --takeover: not the second run without checkpoints (the heir replays from 0)")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="heartbeat-recovery-"))
    if args.takeover:
        cases = [(int(n), float(m)) for n, m in (case.split(":") for case in args.takeover.split(","))]
        takeover(workdir, cases, args.speed, (True,) if args.only_checkpoints else (True, False))
        return
    results = []
    for nodes in (int(n) for n in args.sizes.split(",")):
        redis = start_embedded()
        env = {
            "REDIS_URL": redis.url,
            "DATABASE_URL": f"sqlite:///{workdir / f'bench-{nodes}.sqlite3'}",
            "HEARTBEAT_MAX_RUNS_PER_CLIENT": "100",
            "LOG_LEVEL": "WARNING",
        }
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env={**os.environ, **env},
                       check=True)
        worker = processes.start_worker(env, concurrency=4, name=f"recovery-{nodes}",
                                        log_path=workdir / f"worker-{nodes}.log")
        port = free_port()
        server = processes.start_asgi("daphne", port, env, log_path=workdir / f"daphne-{nodes}.log")
        try:
            processes.wait_http(f"http://127.0.0.1:{port}/api/openapi.json", server)
            results.append(asyncio.run(measure(f"http://127.0.0.1:{port}", redis, nodes, args.outage)))
        finally:
            processes.stop(server)
            processes.stop(worker)
            redis.stop()
    load = os.getloadavg()
    print(f"\nrecovery benchmark: Redis killed and restarted empty after {args.outage:g} s, runs at {SPEED:g}x, "
          f"{os.cpu_count()} cores, load {load[0]:.1f} (logs: {workdir})")
    print("| nodes | Redis back -> first frame | Redis back -> speed kept again | reconnects |")
    print("|---|---|---|---|")
    for r in results:
        first = f"{r['first_frame_ms']:,} ms" if r["first_frame_ms"] is not None else "none within 120 s"
        kept = f"{r['speed_kept_s']:.2f} s" if r["speed_kept_s"] is not None else "not within 120 s"
        resumes = ", ".join(r["resumes"]) or "none"
        print(f"| {r['nodes']:,} | {first} | {kept} | {resumes} |")


if __name__ == "__main__":
    main()
