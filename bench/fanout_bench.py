"""Fan-out benchmark on loopback: one run, 10 / 100 / 500 websocket viewers, Daphne vs uvicorn.

For each server and audience size it reports frame latency (``sent_at`` in the frame to
receipt by a viewer) p50 / p95 / p99, frames per second per viewer, the ASGI server's CPU,
and command-to-frame latency (POST of a fault to the viewers receiving its event) p95, and the
number of Redis subscriptions to the run's feed (PUBSUB NUMSUB: one per ASGI process, whatever
the audience).
Everything runs on this machine: the viewers share one client process, so the figures
include client-side queuing; they are comparative (Daphne vs uvicorn), not absolute.

    python bench/fanout_bench.py [--viewers 10,100,500] [--seconds 8] [--servers daphne,uvicorn]
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

import psutil  # noqa: E402
import redis  # noqa: E402
import websockets  # noqa: E402

from heartbeat_site import processes  # noqa: E402
from heartbeat_site.embedded_redis import free_port, redis_answers, start_embedded  # noqa: E402
from heartbeat_site.live.runstore import naming  # noqa: E402

DOCUMENT = {
    "name": "bench-fanout",
    "seed": 3,
    "duration": "2h",
    "cluster": {
        "zones": [{"name": "zone-a", "nodes": 5}, {"name": "zone-b", "nodes": 5}],
        "workloads": [{"name": "web", "replicas": 10}],
    },
}
SPEED = 10.0
WARM_UP = 2.0


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def post(url: str, body: dict, token: str | None = None) -> dict:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json"}
    )
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


class Audience:
    """N viewers of one run; records latency of every frame and when each saw each fault."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.frames = 0
        self.fault_seen: dict[tuple[str, int], list[float]] = {}
        self.retries = 0
        self.parsed: dict[str, list[tuple[str, int]]] = {}

    async def connect(self, url: str):
        """Join like a page does: retry a refused handshake with a growing back-off."""
        for attempt in range(8):
            try:
                return await websockets.connect(
                    url, origin="http://127.0.0.1", max_size=None, open_timeout=60, compression=None
                )
            except (OSError, websockets.exceptions.InvalidMessage, websockets.exceptions.InvalidStatus):
                self.retries += 1
                await asyncio.sleep(0.5 * 2**attempt)
        raise RuntimeError(f"could not join {url} after 8 attempts")

    async def viewer(
        self, url: str, ready: asyncio.Event, measuring: asyncio.Event, counter: list[int], total: int
    ) -> None:
        """Read until cancelled: a timeout around each receive (asyncio.wait_for) cost the
        client a task and a timer per message, a quarter of its CPU at 500 viewers."""
        async with await self.connect(url) as ws:
            await ws.recv()  # snapshot
            counter[0] += 1
            if counter[0] == total:
                ready.set()
            async for text in ws:
                received = time.time() * 1000
                if not text.startswith('{"type":"frame"'):
                    continue
                # The client must stay cheaper than the server it measures: read sent_at from
                # the end of the frame, and parse a frame that carries a fault once for all
                # viewers (they all get the same text; its seq range names it).
                if measuring.is_set():
                    self.latencies.append(received - int(text[text.rindex('"sent_at":') + 10 : -1]))
                    self.frames += 1
                if '"type":"fault"' in text:
                    seen = time.monotonic()
                    for fault in self.faults_in(text):
                        self.fault_seen.setdefault(fault, []).append(seen)

    def faults_in(self, text: str) -> list[tuple[str, int]]:
        key = text[: text.index("]")]  # '{"type":"frame","seq":[first,last'
        faults = self.parsed.get(key)
        if faults is None:
            faults = self.parsed[key] = [
                (e["action"], e["seq"]) for e in json.loads(text)["events"] if e["type"] == "fault"
            ]
        return faults


async def measure(base: str, ws_base: str, server_pid: int, viewers: int, seconds: float, redis_url: str) -> dict:
    run = await asyncio.to_thread(post, f"{base}/api/runs", {"document": DOCUMENT, "speed": SPEED})
    url = f"{ws_base}/ws/runs/{run['id']}/"
    audience = Audience()
    ready, measuring, counter = asyncio.Event(), asyncio.Event(), [0]
    tasks = []
    for _ in range(viewers):
        tasks.append(asyncio.create_task(audience.viewer(url, ready, measuring, counter, viewers)))
        await asyncio.sleep(0.01)  # a class joins over a moment, not in one SYN burst
    await asyncio.wait_for(ready.wait(), 120)
    await asyncio.sleep(WARM_UP)  # joining (snapshots, catch-up) is not steady-state fan-out
    measuring.set()
    server, client = psutil.Process(server_pid), psutil.Process()
    server.cpu_percent(None)
    client.cpu_percent(None)
    started = time.monotonic()
    commands: list[tuple[float, str]] = []
    for i in range(6):
        await asyncio.sleep(seconds / 6)
        action = "stop-kubelet" if i % 2 == 0 else "start-kubelet"
        sent = time.monotonic()
        await asyncio.to_thread(
            post, f"{base}/api/runs/{run['id']}/commands", {"action": action, "node": "node-3"}, run["control_token"]
        )
        commands.append((sent, action))
    await asyncio.sleep(1.0)
    elapsed = time.monotonic() - started
    cpu, client_cpu = server.cpu_percent(None), client.cpu_percent(None)
    channel = naming.feed_channel(run["id"])
    with redis.Redis.from_url(redis_url) as store:
        subscriptions = dict(store.pubsub_numsub(channel))[channel.encode()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    command_latencies = []
    faults = sorted(audience.fault_seen.items(), key=lambda item: item[0][1])
    for (sent, action), ((seen_action, _), seen) in zip(commands, faults, strict=False):
        if seen_action == action:
            command_latencies.extend((t - sent) * 1000 for t in seen)
    return {
        "viewers": viewers,
        "p50": percentile(audience.latencies, 50),
        "p95": percentile(audience.latencies, 95),
        "p99": percentile(audience.latencies, 99),
        "fps": audience.frames / viewers / elapsed,
        "cpu": cpu,
        "client_cpu": client_cpu,
        "cmd_p95": percentile(command_latencies, 95),
        "commands_seen": len(command_latencies),
        "join_retries": audience.retries,
        "subscriptions": subscriptions,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", default="10,100,500")
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--servers", default="daphne,uvicorn")
    args = parser.parse_args()
    sizes = [int(v) for v in args.viewers.split(",")]

    embedded = None
    redis_url = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/8"
    if not redis_answers(redis_url):
        embedded = start_embedded()
        redis_url = embedded.url
    workdir = Path(tempfile.mkdtemp(prefix="heartbeat-bench-"))
    env = {
        "REDIS_URL": redis_url,
        "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
        "HEARTBEAT_IDLE_SECONDS": "3",
        "HEARTBEAT_MAX_RUNS_PER_CLIENT": "100",
        "LOG_LEVEL": "WARNING",
    }
    subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=ROOT, env={**os.environ, **env}, check=True)
    worker = processes.start_worker(env, concurrency=4, name="bench", log_path=workdir / "worker.log")
    results: dict[str, list[dict]] = {}
    try:
        for server_name in args.servers.split(","):
            port = free_port()
            server = processes.start_asgi(server_name, port, env, log_path=workdir / f"{server_name}.log")
            try:
                processes.wait_http(f"http://127.0.0.1:{port}/api/openapi.json", server)
                results[server_name] = [
                    asyncio.run(
                        measure(
                            f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}", server.pid, n, args.seconds, redis_url
                        )
                    )
                    for n in sizes
                ]
            finally:
                processes.stop(server)
    finally:
        processes.stop(worker)
        if embedded:
            embedded.stop()

    print(
        f"\nfan-out benchmark: one run ({sum(z['nodes'] for z in DOCUMENT['cluster']['zones'])} nodes, speed "
        f"{SPEED:g}x), loopback, {os.cpu_count()} cores"
    )
    print(
        f"{'server':8} {'viewers':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'frames/s':>9} {'CPU %':>6} "
        f"{'client CPU %':>12} {'cmd→frame p95 ms':>17} {'join retries':>12} {'subscriptions':>13}"
    )
    for server_name, rows in results.items():
        for r in rows:
            print(
                f"{server_name:8} {r['viewers']:>7} {r['p50']:>8.1f} {r['p95']:>8.1f} {r['p99']:>8.1f} "
                f"{r['fps']:>9.1f} {r['cpu']:>6.0f} {r['client_cpu']:>12.0f} {r['cmd_p95']:>17.1f} "
                f"{r['join_retries']:>12} {r['subscriptions']:>13}"
            )
    print("goals: p95 < 100 ms at 100 viewers, < 250 ms at 500; command-to-frame p95 < 200 ms")


if __name__ == "__main__":
    main()
