"""Large clusters benchmark: runs of 180, 1,000 and 5,000 nodes (3 zones, 10 pods per node: 9 web
replicas per node and a DaemonSet, one Service) through a zone-b outage at 10x, each on a stack
this bench starts for it (an embedded Redis, a Celery worker, Daphne or uvicorn), all on 127.0.0.1.

For each size, on one run:

1. joining: the websocket bytes and seconds until the snapshot is complete (its parts joined),
   for a plain client, and in headless Chromium the time from navigation to the first frame in
   which the cluster view has its nodes drawn (above 50 nodes the overview's cells, one per
   node; else the rows; for a page with a virtual list, its rows drawn after the snapshot's
   nodes are all in the page's store). Runs of 500+ nodes simulate their start-up first (the
   clock says ``preparing``); the bench joins once the run is live, at the end of the start-up
   (virtual t >= 20 s), for every size and version.
2. the bytes per second a plain viewer receives in the 30 s from the outage command (REST, with
   the control token);
3. at 1,000 nodes and more, the page's main-thread time per 100 ms interval (the server's frame
   interval; median, p95) over those 30 s, from a Chrome trace (bench/browser_bench.py's
   method), and its long tasks (> 50 ms) after opening;
4. at 5,000 nodes, fan-out: 100 plain viewers join, then frame latency (``sent_at`` to receipt,
   parts joined) p50 / p95 over 20 s, still during the outage; a viewer the server closes joins
   again after a back-off, as a page does, and its catch-up frames are not counted;
5. the speed the run keeps live: virtual seconds per wall second over the 30 s (clock messages
   say ``limited_from`` when the server lowered the speed), against the CLI's speed: the same
   scenario simulated in a process of its own (``Simulation.run_until`` in 1 s steps, as the
   driver's slices at 10x) over the same virtual interval, with the stack stopped;
6. a 3-node run on the same worker, started before the large one: the longest time its viewer got
   nothing, from the large run's creation to the outage (its start-up, its going live) and in the
   outage's 30 s. A run says something every second (a clock message when nothing happens).

The table ends with this machine's reference workload (bench/simulation_bench.py's), so figures
from different machines compare, and each row with the load average at its end (the machine's
cores are shared with whatever else runs).

``--code DIR`` serves another checkout (its heartbeat_site, static files and simulation; it uses
this checkout's .venv), to compare two versions in one run: ``git worktree add DIR <commit>``,
with .venv and node_modules linked into it; ``--server uvicorn`` for a version whose Daphne
cannot send a message over 1 MiB. Every wait is bounded; a size the code cannot do is reported
as such ("never live", "never painted").

    python bench/large_bench.py [--sizes 180,1000,5000] [--server daphne|uvicorn] [--code DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import websockets  # noqa: E402
from browser_bench import CHROMIUM_ARGS, frame_times  # noqa: E402
from fanout_bench import percentile  # noqa: E402
from simulation_bench import reference_ms  # noqa: E402

from heartbeat_site import processes  # noqa: E402
from heartbeat_site.embedded_redis import free_port, start_embedded  # noqa: E402
from heartbeat_site.live.delivery.frames import MAX_MESSAGE_BYTES  # noqa: E402
from simulation.clock import US  # noqa: E402
from simulation.simulation import STARTUP_DONE_AT  # noqa: E402
from tests.web.conftest import large_document, small_document  # noqa: E402
from tests.web.live import ORIGIN, http  # noqa: E402

SPEED = 10.0
OUTAGE = {"action": "zone-outage", "zone": "zone-b"}
LIVE_AT = STARTUP_DONE_AT / US  # virtual s: the start-up is over, a large run goes live
TRACED_FROM = 1000  # nodes: the page's main thread is traced from this size on
FANOUT_AT = 5000  # nodes: the fan-out is measured at this size
INTERVAL = 0.1  # s: the server's frame interval, the unit of "per frame"
SETTLE = 3.0  # s after the first paint before the outage: the page's opening is over
FANOUT_JOIN = 90.0  # s the fan-out's viewers may take to join
WARM_UP = 2.0  # s after a fan-out viewer's snapshot: its catch-up frames are not fan-out
RECONNECTS = 3  # times a fan-out viewer closed by the server joins again
SENT_AT = re.compile(r'"sent_at":(\d+)')
WORKER_FLAGS = {"lease lost": "lease lost", "speed lowered": "speed lowered", "speed raised": "speed raised",
                "failed": "driver failed", "live from": "went live"}

# Run in a process of its own, in the served checkout: the CLI's speed over the live interval.
CLI_PACE = """
import json, sys, time
from simulation import Simulation, load_scenario
document, t0, t1 = json.loads(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
sim = Simulation(load_scenario(document))
t = 0.0
while t < t0:
    t = min(t + 1.0, t0)
    sim.run_until(t)
sim.schedule_command(json.loads(sys.argv[4]), t0)
started, events = time.perf_counter(), 0
while t < t1:
    t = min(t + 1.0, t1)
    events += len(sim.run_until(t))
print(json.dumps({"wall": time.perf_counter() - started, "events": events}))
"""

# Installed in the page before its scripts: long tasks, and the first frame with the nodes drawn.
PAGE_INIT = """(() => {
    window.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); })
      .observe({type: 'longtask', buffered: true});
    const nodes = %d, limit = %d;
    const drawn = () => {
        const page = window.heartbeat;
        if (!page || page.store.count('nodes') !== nodes) return null;
        if (document.querySelector('#cluster .overview'))
            return document.querySelectorAll('#cluster .ov-cell[data-node]').length === nodes ? 'cells' : null;
        const rows = document.querySelectorAll('#cluster [data-node]').length;
        if (rows === nodes) return 'rows';
        return rows && page.frames.passes > 0 && page.frames.last > (page.snapshotAt ?? 0) ? 'list' : null;
    };
    const tick = () => {
        const how = drawn();
        if (how) requestAnimationFrame(() => { window.__paint = {ms: performance.now(), how}; });
        else if (performance.now() > limit) window.__paint = {ms: null, how: 'never'};
        else requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
})();"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


# -- the stack --------------------------------------------------------------------------------


@dataclass
class Stack:
    code: Path
    server_name: str
    workdir: Path
    env: dict[str, str]
    port: int = 0
    server_pid: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self, name: str) -> str:
        path = self.workdir / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""


@asynccontextmanager
async def running_stack(code: Path, server: str, timeout: float) -> AsyncIterator[Stack]:
    """An embedded Redis (nobody else's queue or runs), a migrated SQLite database, a Celery
    worker and the ASGI server, all running ``code``; everything is stopped on the way out."""
    workdir = Path(tempfile.mkdtemp(prefix="heartbeat-large-bench-"))
    redis = start_embedded()
    env = {
        "REDIS_URL": redis.url,
        "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
        "HEARTBEAT_MAX_RUNS_PER_CLIENT": "100",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "LOG_LEVEL": "INFO",
    }
    stack = Stack(code, server, workdir, env)
    started: list = []
    served_from = processes.BASE_DIR
    processes.BASE_DIR = code  # the processes run in (and import from) the served checkout
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v", "0"], cwd=code, env={**os.environ, **env},
                       check=True, timeout=120)
        worker = processes.start_worker(env, concurrency=4, name="large-bench", log_path=workdir / "worker.log")
        started.append(worker)
        deadline = time.monotonic() + timeout
        while " ready." not in stack.log("worker"):
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not become ready:\n{stack.log('worker')[-3000:]}")
            await asyncio.sleep(0.2)
        stack.port = free_port()
        asgi = processes.start_asgi(server, stack.port, env, log_path=workdir / f"{server}.log")
        started.append(asgi)
        stack.server_pid = asgi.pid
        await asyncio.to_thread(processes.wait_http, f"{stack.base}/api/openapi.json", asgi, timeout)
        yield stack
    finally:
        processes.BASE_DIR = served_from
        for process in reversed(started):
            processes.stop(process)
        redis.stop()


# -- websocket viewers ------------------------------------------------------------------------


async def connect(url: str, timeout: float):
    # no keepalive pings (a browser sends none): a server busy sending would fail them
    return await websockets.connect(url, origin=ORIGIN, max_size=None, open_timeout=timeout, compression=None,
                                    ping_interval=None)


class Parts:
    """Joins ``part`` messages (docs/websocket-protocol.md); other messages pass through."""

    def __init__(self) -> None:
        self.data: list[str] = []
        self.joined = 0

    def take(self, text: str) -> str | None:
        if not text.startswith('{"type":"part"'):
            return text
        part = json.loads(text)
        self.data.append(part["data"])
        if len(self.data) < part["parts"]:
            return None
        whole, self.data = "".join(self.data), []
        self.joined += 1
        return whole


def closed_by(exc: Exception) -> str:
    """What ended a connection: the server's close code, or no close frame at all (1006)."""
    if not isinstance(exc, websockets.exceptions.ConnectionClosed):
        return type(exc).__name__
    return f"closed {exc.rcvd.code}" if exc.rcvd else "dropped (1006, no close frame)"


class Watcher:
    """A plain viewer kept open for the whole run: every byte it gets, the run's clock."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self.parts = Parts()
        self.received: list[tuple[float, int]] = []  # (monotonic, bytes) of every websocket message
        self.largest = 0
        self.clocks: list[tuple[float, dict]] = []  # (monotonic, clock) of every message with one
        self.live = asyncio.Event()
        self.status: dict | None = None
        self.lost: str | None = None  # why the connection ended, when it did
        self.task = asyncio.create_task(self.read())

    async def read(self) -> None:
        try:
            await self.follow()
        except websockets.exceptions.ConnectionClosed as exc:
            self.lost = closed_by(exc)

    async def follow(self) -> None:
        async for text in self.ws:
            size = len(text.encode())
            now = time.monotonic()
            self.received.append((now, size))
            self.largest = max(self.largest, size)
            whole = self.parts.take(text)
            if whole is None:
                continue
            message = json.loads(whole)
            clock = message.get("clock")
            if clock:
                self.clocks.append((now, clock))
                if not clock.get("preparing") and clock["t"] >= LIVE_AT - 1e-3:
                    self.live.set()
            if message["type"] == "status":
                self.status = message

    def longest_silence(self, begin: float, end: float) -> float:
        """The longest time between two messages (or the bounds) between two monotonic times, in s."""
        times = [begin, *(at for at, _ in self.received if begin <= at <= end), end]
        return max(later - earlier for earlier, later in zip(times, times[1:], strict=False))

    def last_clock(self) -> dict:
        return self.clocks[-1][1] if self.clocks else {}

    def window(self, begin: float, end: float) -> dict:
        """Bytes, pace and speeds seen between two monotonic times."""
        got = sum(size for at, size in self.received if begin <= at <= end)
        clocks = [(at, clock) for at, clock in self.clocks if begin <= at <= end and not clock.get("paused")]
        pace = None
        if len(clocks) >= 2 and clocks[-1][0] - clocks[0][0] > 1:
            (a, first), (b, last) = clocks[0], clocks[-1]
            pace = (last["t"] - first["t"]) / (b - a)
        return {
            "bytes_per_s": got / (end - begin),
            "pace": pace,
            "t0": clocks[0][1]["t"] if clocks else None,
            "t1": clocks[-1][1]["t"] if clocks else None,
            "speeds": sorted({clock["speed"] for _, clock in clocks}),
            "limited_from": sorted({clock["limited_from"] for _, clock in clocks if "limited_from" in clock}),
        }

    async def close(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)
        await self.ws.close()


async def join(url: str, timeout: float) -> dict:
    """A new viewer's bytes and seconds until its snapshot is complete."""
    started = time.monotonic()
    size = largest = 0
    parts = Parts()
    async with await connect(url, timeout) as ws:
        while True:
            text = await asyncio.wait_for(ws.recv(), max(0.01, started + timeout - time.monotonic()))
            size += len(text.encode())
            largest = max(largest, len(text.encode()))
            whole = parts.take(text)
            if whole is not None and whole.startswith('{"type":"snapshot"'):
                return {"bytes": size, "seconds": time.monotonic() - started, "parts": parts.joined, "largest": largest}


@dataclass
class FanOut:
    """N plain viewers: their join times, then frame latency (``sent_at`` to receipt of the
    last part) while measuring."""

    total: int
    timeout: float
    joins: list[float] = field(default_factory=list)  # s from connecting to the snapshot complete
    measuring: bool = False
    latencies: list[float] = field(default_factory=list)
    frames: int = 0
    retries: int = 0
    reconnects: int = 0
    errors: list[str] = field(default_factory=list)
    all_joined: asyncio.Event = field(default_factory=asyncio.Event)

    async def connect(self, url: str):
        """Join like a page does: retry a refused handshake with a growing back-off."""
        for attempt in range(4):
            try:
                return await connect(url, self.timeout)
            except (OSError, TimeoutError, websockets.exceptions.InvalidMessage, websockets.exceptions.InvalidStatus):
                self.retries += 1
                await asyncio.sleep(0.5 * 2**attempt)
        return await connect(url, self.timeout)

    async def viewer(self, url: str) -> None:
        """One viewer; closed by the server (a 4503 "reconnect", a lost connection), it joins
        again after a back-off as a page does, at most RECONNECTS times."""
        first = True
        for attempt in range(RECONNECTS + 1):
            try:
                await self.watch(url, first)
                return
            except (OSError, TimeoutError, websockets.exceptions.WebSocketException) as exc:
                self.errors.append(closed_by(exc))
                first = False
                if attempt < RECONNECTS:
                    self.reconnects += 1
                    await asyncio.sleep(1.0 * 2**attempt)

    async def watch(self, url: str, first: bool) -> None:
        parts = Parts()
        started = time.monotonic()
        caught_up = float("inf")  # frames before this are the catch-up after a snapshot
        async with await self.connect(url) as ws:
            async for text in ws:
                received = time.time() * 1000
                whole = parts.take(text)
                if whole is None:
                    continue
                if whole.startswith('{"type":"snapshot"'):
                    caught_up = time.monotonic() + WARM_UP
                    if first:
                        first = False
                        self.joins.append(time.monotonic() - started)
                        if len(self.joins) == self.total:
                            self.all_joined.set()
                elif self.measuring and whole.startswith('{"type":"frame"') and time.monotonic() >= caught_up:
                    # the frame's own sent_at is its last (node level: podCounts, renewals follow it)
                    self.latencies.append(received - int(SENT_AT.match(whole, whole.rindex('"sent_at":')).group(1)))
                    self.frames += 1


async def fan_out(url: str, viewers: int, seconds: float, server_pid: int, timeout: float) -> dict:
    """``viewers`` join over a few seconds; once they all have their snapshot (or ``timeout``
    passed: then those that have), frame latency over ``seconds``."""
    fan = FanOut(viewers, timeout)
    server, client = psutil.Process(server_pid), psutil.Process()
    server.cpu_percent(None)
    client.cpu_percent(None)
    tasks = []
    for _ in range(viewers):
        tasks.append(asyncio.create_task(fan.viewer(url)))
        await asyncio.sleep(0.05)  # a class joins over a few seconds
    with suppress(TimeoutError):
        await asyncio.wait_for(fan.all_joined.wait(), timeout)
    joined = len(fan.joins)
    result: dict = {"joined": joined, "total": viewers, "join_p50": percentile(fan.joins, 50),
                    "join_max": max(fan.joins, default=0), "join_server_cpu": server.cpu_percent(None),
                    "join_client_cpu": client.cpu_percent(None)}
    if joined:
        await asyncio.sleep(WARM_UP)
        server.cpu_percent(None)
        client.cpu_percent(None)
        fan.measuring = True
        await asyncio.sleep(seconds)
        fan.measuring = False
        result.update(p50=percentile(fan.latencies, 50), p95=percentile(fan.latencies, 95),
                      fps=fan.frames / viewers / seconds, frames=fan.frames,
                      server_cpu=server.cpu_percent(None), client_cpu=client.cpu_percent(None))
    result.update(retries=fan.retries, reconnects=fan.reconnects, errors=sorted(set(fan.errors)),
                  failed=len(fan.errors))
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return result


# -- the page ---------------------------------------------------------------------------------


async def open_page(browser, url: str, nodes: int, timeout: float):
    """A fresh context (nothing cached) and the run page; resolves at its first paint of the nodes."""
    context = await browser.new_context(viewport={"width": 1920, "height": 1080})
    await context.add_init_script(PAGE_INIT % (nodes, int(timeout * 1000)))
    page = await context.new_page()
    sockets: list[str] = []
    page.on("websocket", lambda ws: sockets.append(ws.url))
    await page.goto(url, wait_until="commit", timeout=timeout * 1000)
    await page.wait_for_function("window.__paint", timeout=(timeout + 10) * 1000, polling=100)
    paint = await page.evaluate("window.__paint")
    return context, page, paint, sockets


async def trace_window(browser, page, seconds: float, keep: Path | None = None) -> dict:
    """browser_bench's method: the wall time of the page's main-thread tasks per interval; and of the
    long tasks (wall time, what the Long Tasks API judges) those whose own thread time is over 50 ms
    too (the rest of a long task's wall time, the thread waited for a core: 2 cores are shared here)."""
    text = await browser.stop_tracing()
    if keep is not None:
        keep.write_bytes(text)
    trace = json.loads(text)
    per_frame, _ = frame_times(trace, int(seconds / INTERVAL), INTERVAL)
    per_frame.sort()
    long_tasks = await page.evaluate("window.__long")
    traced = page_long_tasks(trace)
    return {"median": statistics.median(per_frame), "p95": per_frame[int(0.95 * (len(per_frame) - 1))],
            "long": len(long_tasks), "longest": max(long_tasks, default=0),
            "long_own": sum(own > 50 for _, own in traced), "longest_own": max((own for _, own in traced), default=0)}


def page_long_tasks(trace: dict) -> list[tuple[float, float]]:
    """(wall ms, thread ms) of the main-thread tasks over 50 ms after the 'bench:replay' mark."""
    events = trace["traceEvents"]
    start = next(e for e in events if e["name"] == "bench:replay")
    return [(e["dur"] / 1000, e.get("tdur", 0) / 1000) for e in events
            if e.get("ph") == "X" and e["name"] == "ThreadControllerImpl::RunTask" and e["pid"] == start["pid"]
            and e["tid"] == start["tid"] and e["ts"] >= start["ts"] and e["dur"] > 50_000]


# -- one size ---------------------------------------------------------------------------------


async def create_run(stack: Stack, document: dict, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        status, run = await asyncio.to_thread(http, "POST", f"{stack.base}/api/runs",
                                              {"document": document, "speed": SPEED})
        if status == 201:
            return run
        if status != 503 or time.monotonic() > deadline:  # 503: the worker is not seen yet
            raise RuntimeError(f"POST /api/runs: {status} {run}")
        await asyncio.sleep(1)


async def measure_size(stack: Stack, browser, nodes: int, args) -> dict:
    document = large_document(nodes, f"large-{nodes}")
    document["duration"] = "1h"  # the bench's windows must not reach the end of the run
    row: dict = {"nodes": nodes, "document": document, "notes": []}
    server_log = len(stack.log(stack.server_name))
    # a 3-node run on the same worker throughout: how long the large one keeps it waiting
    small = await create_run(stack, {**small_document(), "duration": "3h"}, args.timeout)
    neighbour = Watcher(await connect(small["ws_url"], args.timeout))
    created = time.monotonic()
    run = await create_run(stack, document, args.timeout)
    row["run_id"] = run["id"]
    watcher = Watcher(await connect(run["ws_url"], args.timeout))
    try:
        try:
            await asyncio.wait_for(watcher.live.wait(), args.live_timeout)
        except TimeoutError:
            clock = watcher.last_clock()
            row["failed"] = (f"not live within {args.live_timeout:g} s (clock t={clock.get('t', 0):.1f} s"
                                 f"{', preparing' if clock.get('preparing') else ''})")
            return row
        row["live_after"] = time.monotonic() - created

        try:
            row["join"] = await join(run["ws_url"], args.timeout)
        except TimeoutError:
            row["join"] = None
        context = page = None
        if browser is not None:
            try:
                context, page, row["paint"], sockets = await open_page(browser, run["viewer_url"], nodes, args.timeout)
            except Exception as exc:  # a page that never loads is a result
                row["paint"] = {"ms": None, "how": f"failed: {type(exc).__name__}"}
                sockets = []
        traced = page is not None and nodes >= TRACED_FROM and row["paint"]["ms"] is not None
        if traced:
            await asyncio.sleep(SETTLE)
            await page.evaluate("window.__long.splice(0)")
            # devtools.timeline: tasks carry their thread time ("own"), and what each did (--trace-dir)
            await browser.start_tracing(page=page, categories=["toplevel", "blink.user_timing", "devtools.timeline",
                                                               "disabled-by-default-devtools.timeline"])
            await page.evaluate("performance.mark('bench:replay')")

        begin = time.monotonic()
        status, body = await asyncio.to_thread(http, "POST", f"{stack.base}/api/runs/{run['id']}/commands", OUTAGE,
                                               run["control_token"])
        if status != 202:
            row["notes"].append(f"outage command answered {status} {body}")
        row["outage_at"] = body.get("at")
        await asyncio.sleep(max(0.0, begin + args.window - time.monotonic()))
        end = time.monotonic()
        row["window"] = watcher.window(begin, end)
        row["neighbour"] = (neighbour.longest_silence(created, begin), neighbour.longest_silence(begin, end))
        if traced:
            keep = Path(args.trace_dir) / f"large-{nodes}.json" if args.trace_dir else None
            row["trace"] = await trace_window(browser, page, args.window, keep)
        if page is not None:
            row["page_sockets"] = len(sockets)
            await context.close()

        if nodes >= FANOUT_AT and args.fanout:
            row["fanout"] = await fan_out(run["ws_url"], args.fanout, args.fanout_seconds, stack.server_pid,
                                          FANOUT_JOIN)
        row["largest"] = watcher.largest
        row["parted"] = watcher.parts.joined
        if watcher.lost:
            row["notes"].append(f"{nodes:,} nodes: the plain viewer's connection ended: {watcher.lost}")
        if watcher.status:
            row["notes"].append(f"the run ended: {watcher.status.get('status')} ({watcher.status.get('reason')})")
    finally:
        await watcher.close()
        await neighbour.close()
        _, state = await asyncio.to_thread(http, "GET", f"{stack.base}/api/runs/{run['id']}")
        row["status"] = state.get("status", "?")
        row["load"] = load()
        run_lines = [line for line in stack.log("worker").splitlines() if run["id"] in line]
        row["worker"] = {flag: sum(needle in line for line in run_lines) for needle, flag in WORKER_FLAGS.items()}
        errors = [line for line in stack.log(stack.server_name)[server_log:].splitlines()
                  if "ERROR" in line or "WARNING" in line]
        row["server_errors"] = sorted({re.sub(r"^[\d-]+ [\d:,]+ ", "", line)[:110]
                                       for line in errors if "Not Found" not in line})
        row["server_error_lines"] = len(errors)
    return row


def cli_pace(code: Path, row: dict, timeout: float) -> dict | None:
    """The served checkout's simulation alone over the run's measured interval (or, for a run
    that never went live, over what the window would have covered: 30 s at 10x from t=20 s)."""
    window = row.get("window") or {}
    t0 = row.get("outage_at") or LIVE_AT
    t1 = window.get("t1") or t0 + 30 * SPEED
    if t1 <= t0:
        return None
    args = [sys.executable, "-c", CLI_PACE, json.dumps(row["document"]), str(t0), str(t1), json.dumps(OUTAGE)]
    try:
        out = subprocess.run(args, cwd=code, capture_output=True, text=True, timeout=timeout, check=True)
    except (subprocess.SubprocessError, OSError) as exc:
        return {"error": f"{type(exc).__name__}"}
    result = json.loads(out.stdout.strip().splitlines()[-1])
    return {"pace": (t1 - t0) / result["wall"], "events": result["events"], "t0": t0, "t1": t1}


# -- the table --------------------------------------------------------------------------------


def mib(n: float) -> str:
    return f"{n / 2**20:.2f}"


def cells(row: dict) -> list[str]:
    nodes = f"{row['nodes']:,}"
    if "failed" in row:
        cli = row.get("cli") or {}
        return [nodes, row["failed"], "-", "-", "-", "-", "-", "-", "-",
                f"{cli['pace']:.1f}x" if "pace" in cli else "-", "-", row["load"]]
    join = row.get("join")
    paint = row.get("paint")
    if paint is None:
        paint_text = "-"
    elif paint["ms"] is None:
        paint_text = f"never ({paint['how']})"
    else:
        paint_text = f"{paint['ms'] / 1000:.2f} ({paint['how']})"
    window = row["window"]
    trace = row.get("trace")
    fan = row.get("fanout")
    if fan is None:
        fan_text = "-"
    elif "p50" not in fan:
        fan_text = f"none joined in {FANOUT_JOIN:g} s"
    elif not fan["frames"]:
        fan_text = f"no frame ({fan['joined']} joined, {fan['reconnects']} rejoins)"
    else:
        fan_text = f"{fan['p50']:.0f} / {fan['p95']:.0f}" + (
            "" if fan["joined"] == fan["total"] else f" ({fan['joined']} joined)")
    kept = "-" if window["pace"] is None else f"{window['pace']:.1f}x"
    lowered = [s for s in window["speeds"] if s < SPEED]
    if window["limited_from"] or lowered:
        kept += f" (lowered to {min(window['speeds']):g}x)"
    cli = row.get("cli") or {}
    return [
        nodes,
        f"{row['live_after']:.0f}",
        "-" if join is None else f"{mib(join['bytes'])} / {join['seconds']:.2f}",
        paint_text,
        f"{window['bytes_per_s'] / 1024:.0f}",
        "-" if trace is None else f"{trace['median']:.1f} / {trace['p95']:.1f}",
        "-" if trace is None else (f"{trace['long']} (max {trace['longest']:.0f}); own > 50: {trace['long_own']}"
                                   f" (max {trace['longest_own']:.0f})" if trace["long"] else "0"),
        fan_text,
        kept,
        f"{cli['pace']:.1f}x" if "pace" in cli else cli.get("error", "-"),
        "{:.1f} / {:.1f}".format(*row["neighbour"]),
        row["load"],
    ]


HEAD = ["nodes", "live after s", "join MiB / s (ws)", "first paint s", "KiB/s per viewer",
        "main thread ms/frame median / p95", "long tasks > 50 ms (wall; own thread time)",
        f"{FANOUT_AT:,}: 100 viewers p50 / p95 ms",
        "kept live (x real time)", "CLI x real time", "3-node run beside: longest silence s (start-up / outage)",
        "load 1/5/15 min"]


def notes(row: dict) -> list[str]:
    out = list(row["notes"])
    n = f"{row['nodes']:,} nodes"
    if "largest" in row:
        over = row["largest"] > MAX_MESSAGE_BYTES
        out.append(f"{n}: largest websocket message {row['largest']:,} bytes{' (over 1 MiB)' if over else ''}; "
                   f"{row['parted']} message(s) came in parts; the joiner's largest {row['join']['largest']:,} bytes"
                   if row.get("join") else f"{n}: largest websocket message {row['largest']:,} bytes")
    if row.get("page_sockets", 1) > 1:
        out.append(f"{n}: the page opened {row['page_sockets']} websockets (it reconnected)")
    window = row.get("window")
    if window and window["t0"] is not None:
        out.append(f"{n}: window t={window['t0']:.0f}..{window['t1']:.0f} s virtual; speeds seen {window['speeds']}"
                   + (f", limited_from {window['limited_from']}" if window["limited_from"] else ""))
    fan = row.get("fanout")
    if fan:
        out.append(f"{n}: fan-out: {fan['joined']} of {fan['total']} viewers had their snapshot within "
                   f"{FANOUT_JOIN:g} s (join p50 {fan['join_p50']:.1f} s, slowest {fan['join_max']:.1f} s; "
                   f"meanwhile server CPU {fan['join_server_cpu']:.0f} %, "
                   f"client CPU {fan['join_client_cpu']:.0f} %), {fan['retries']} handshake retries, "
                   f"{fan['failed']} connections lost {fan['errors']}, {fan['reconnects']} rejoins")
    if fan and "p50" in fan:
        out.append(f"{n}: fan-out {fan['fps']:.1f} frames/s per viewer, server CPU {fan['server_cpu']:.0f} % "
                   f"(100 % = one core), client CPU {fan['client_cpu']:.0f} %")
    flags = {flag: count for flag, count in row.get("worker", {}).items() if count}
    if row.get("server_errors"):
        out.append(f"{n}: {row['server_error_lines']} error/warning lines in the server's log, e.g. "
                   + "; ".join(row["server_errors"][:4]))
    seen = ", ".join(f"{flag} x{count}" for flag, count in flags.items()) or "nothing about the run"
    out.append(f"{n}: worker log: {seen}; the run was {row.get('status', '?')} when the bench left")
    return out


def print_table(title: str, rows: list[dict], reference: float, loads: tuple[str, str]) -> None:
    print(f"\n### large clusters: {title}\n")
    print(f"speed {SPEED:g}x, zone-b outage; reference workload {reference:.0f} ms "
          f"(bench/simulation_bench.py, best of 5); {os.cpu_count()} cores, "
          f"load average (uptime) {loads[0]} at the start, {loads[1]} at the end\n")
    print("| " + " | ".join(HEAD) + " |")
    print("|" + "---|" * len(HEAD))
    for row in rows:
        print("| " + " | ".join(cells(row)) + " |")
    print()
    for row in rows:
        for line in notes(row):
            print(f"- {line}")


# -- main -------------------------------------------------------------------------------------


async def measure(args, code: Path) -> list[dict]:
    from playwright.async_api import async_playwright

    rows = []
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                          args=CHROMIUM_ARGS)
        try:
            for nodes in args.sizes:
                print(f"{nodes:,} nodes (load {load()})...", flush=True)
                try:
                    # a stack per size: nothing left of the last size's run (a driver that never
                    # went live keeps its worker busy), and logs that are this size's alone
                    async with running_stack(code, args.server, args.timeout) as stack:
                        print(f"  stack: {args.server} on {stack.base}, logs in {stack.workdir}", flush=True)
                        row = await measure_size(stack, browser, nodes, args)
                except Exception as exc:  # one size's failure is that size's result
                    row = {"nodes": nodes, "document": large_document(nodes, f"large-{nodes}"), "notes": [],
                           "failed": f"failed: {type(exc).__name__}: {str(exc)[:120]}", "load": load()}
                rows.append(row)
                print(f"  {' | '.join(cells(row))}", flush=True)
        finally:
            await browser.close()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="180,1000,5000", type=lambda s: [int(n) for n in s.split(",")])
    parser.add_argument("--server", default="daphne", choices=["daphne", "uvicorn"])
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to serve (default: this one)")
    parser.add_argument("--label", help="what the table calls the code (default: the checkout's commit)")
    parser.add_argument("--window", type=float, default=30.0, help="seconds measured from the outage command")
    parser.add_argument("--fanout", type=int, default=100, help=f"viewers of the {FANOUT_AT:,}-node run (0: none)")
    parser.add_argument("--fanout-seconds", type=float, default=20.0)
    parser.add_argument("--live-timeout", type=float, default=150.0, help="seconds a run may take to go live")
    parser.add_argument("--timeout", type=float, default=120.0, help="bound of every other wait")
    parser.add_argument("--trace-dir", help="keep the page's Chrome traces here, with what each task did")
    args = parser.parse_args()
    code = args.code.resolve()
    git = ["git", "-C", str(code)]
    commit = subprocess.run([*git, "log", "-1", "--format=%h"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                             text=True).stdout.strip()
    label = args.label or f"code at {commit}" + (" with uncommitted changes" if changed else "")
    reference = reference_ms()
    start_load = load()
    print(f"large clusters bench: {label} ({code}), {args.server}; load average {start_load}; "
          f"reference workload {reference:.0f} ms", flush=True)
    rows = asyncio.run(measure(args, code))
    for row in rows:  # with the stack stopped, so the CLI has the machine to itself
        if row["nodes"] >= TRACED_FROM:
            row["cli"] = cli_pace(code, row, 600)
    print_table(f"{label}, served by {args.server}", rows, reference, (start_load, load()))


if __name__ == "__main__":
    main()
