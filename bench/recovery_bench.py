"""Recovery benchmark: how long a live run takes to come back after Redis restarts empty.

For a 3-node and a 1,000-node run at 10x (Daphne, one Celery worker, a redis-server of its
own): Redis is killed with SIGKILL, started again empty after 5 s, and a viewer that
reconnects like the pages do (``?after=<last seq>``, backing off from 0.2 s to 1 s) reports

- restart -> first frame: from Redis answering again to the first frame the viewer gets;
- restart -> speed kept: to the first whole second in which the run's virtual clock again
  advanced by at least 90 % of its speed;
- whether every reconnect resumed exactly where the viewer was (no gap).

    python bench/recovery_bench.py [--sizes 3,1000] [--outage 5]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402

from heartbeat_site import processes  # noqa: E402
from heartbeat_site.embedded_redis import free_port, start_embedded  # noqa: E402

SPEED = 10.0
ORIGIN = "http://127.0.0.1"


def document(nodes: int) -> dict:
    """``nodes`` nodes in three zones with 10 pods each (a DaemonSet and 9 web replicas)."""
    third = nodes // 3
    zones = [{"name": "zone-a", "nodes": nodes - 2 * third}, {"name": "zone-b", "nodes": third},
             {"name": "zone-c", "nodes": third}]
    zones = [zone for zone in zones if zone["nodes"]]
    return {
        "name": f"recovery-{nodes}",
        "seed": 5,
        "duration": "30m",
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3,1000")
    parser.add_argument("--outage", type=float, default=5.0)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="heartbeat-recovery-"))
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
