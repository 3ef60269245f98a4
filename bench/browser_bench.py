"""Browser rendering benchmark of the live run page.

A 100-node run (10 pods per node, two zones, kubelet faults on the way) is computed with the
simulation library, then replayed into the real run page at 10 frames per second, so only the
browser's work is measured: the page, its scripts and styles are served by the site itself
(Django runserver, DEBUG static files).

The frames reach the page over a real websocket (a small server in this process; the page's
WebSocket is pointed at it by an init script), as they do in a classroom. `--transport
playwright` replays them through Playwright's websocket routing instead, as the first version
of this benchmark did: that routing runs on the page's main thread too and costs about 1.3 ms
per message there (measured with no-op messages), which is the harness's work, not the page's.

Prints the main-thread time per frame (median, p95; Chrome's TaskDuration per 100 ms frame
interval: the wall time of the page's main-thread tasks) and long tasks (> 50 ms,
PerformanceObserver), both for the replay and, separately, for opening the page (from a Chrome
trace, with each task's thread time in brackets: on a small machine where the site, the harness
and Chromium's processes share two cores, much of a long opening task is waiting).

How the time per frame is read (`--measure`): `trace` (the default) records a Chrome trace of
top-level tasks and adds up, per frame interval, the wall time of the tasks the page's main thread
ran; the trace is written by Chrome off that thread. `metrics` asks CDP Performance.getMetrics for
TaskDuration after every frame, as the first versions did: each call is a task on the page's main
thread (~0.4-0.6 ms a frame measured here), the harness's work counted as the page's. Both count
wall time: TaskDuration, `threadTicks` or not, matched the tasks' wall time in a trace here (14.3
vs 13.6 ms a frame), not their thread time (8.1 ms), so a busy machine (CPU time taken by other
processes) makes the figure larger.

Memory is measured as what the page retains: every `--sample-every` seconds (30) the bench forces
a full garbage collection (CDP HeapProfiler.collectGarbage, twice: the second one collects what the
first one's weak callbacks released), then reads the JS heap in use (Runtime.getHeapUsage) and
the DOM node count (Performance.getMetrics `Nodes`: every live node, attached or detached, so a
leak of detached nodes shows there; `elements` is what the document holds). The series is
printed, with the time from which it stays within 2 % of its end value ("flat from"). The frame
intervals with a forced collection are left out of the per-frame figures.

"Start" is the page after it loaded and drew the run's first snapshot (the cluster view is in
the DOM and the page's frame pass ran), before the first frame: from there the sequence diagram's
window fills (about 40 rows in the first seconds) and the page's event history grows until it
reaches its bound.

    python bench/browser_bench.py [--seconds 300] [--fps 10] [--nodes 100] [--transport socket|playwright]
                                  [--sample-every 30] [--measure trace|metrics]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from simulation import Simulation, load_scenario  # noqa: E402

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def scenario(nodes: int, duration: float) -> dict:
    half = nodes // 2
    return {
        "name": "browser-bench",
        "duration": f"{max(int(duration) + 60, 600)}s",
        "cluster": {
            "zones": [{"name": "zone-a", "nodes": half}, {"name": "zone-b", "nodes": nodes - half}],
            "workloads": [{"name": "web", "replicas": nodes * 9}, {"name": "agent", "kind": "DaemonSet"}],
            "services": [{"name": "web", "selector": {"app": "web"}}],
        },
        "faults": [
            {"at": "30s", "action": "stop-kubelet", "node": "node-2"},
            {"at": "60s", "action": "partition", "node": "node-7"},
            {"at": "90s", "action": "stop-runtime", "node": "node-60"},
        ],
    }


def frames(nodes: int, seconds: float, fps: float) -> tuple[dict, list[dict]]:
    """Snapshot at t=20 s (cluster settled), then one frame per 1/fps of virtual time (speed 1)."""
    sim = Simulation(load_scenario(scenario(nodes, seconds)))
    sim.run_until(20.0)
    snapshot = sim.snapshot()
    clock = {"t": 20.0, "speed": 1, "paused": False}
    first = {"type": "snapshot", "snapshot": snapshot, "clock": clock, "last_seq": snapshot["last_seq"],
             "run": {"status": "running"}}
    out = []
    t = 20.0
    for _ in range(int(seconds * fps)):
        t = round(t + 1 / fps, 6)
        events = [e.to_dict() for e in sim.run_until(t)]
        msg = {"type": "frame", "events": events, "clock": {"t": t, "speed": 1, "paused": False}, "sent_at": 0}
        if events:
            msg["seq"] = [events[0]["seq"], events[-1]["seq"]]
            out.append(msg)
        else:
            out.append({"type": "clock", "clock": msg["clock"], "last_seq": sim_last(out, snapshot)})
    return first, out


def sim_last(out: list[dict], snapshot: dict) -> int:
    for msg in reversed(out):
        if msg["type"] == "frame":
            return msg["seq"][1]
    return snapshot["last_seq"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve() -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "DJANGO_DEBUG": "1", "DJANGO_SETTINGS_MODULE": "heartbeat_site.settings"}
    proc = subprocess.Popen([sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(f"{base}/static/js/run-page.js", timeout=2).read()
            return proc, base
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.kill()
                raise RuntimeError("the page server did not start") from None
            time.sleep(0.2)


class SocketReplay:
    """A websocket server in a background thread: sends the snapshot to each client that
    connects, then whatever `send` is given, without waiting for it to be written."""

    def __init__(self, snapshot: str):
        import websockets.asyncio.server as ws_server

        self.snapshot = snapshot
        self.clients = []
        self.loop = asyncio.new_event_loop()
        self.port = free_port()
        ready = threading.Event()

        async def handler(ws):
            self.clients.append(ws)
            await ws.send(self.snapshot)
            await ws.wait_closed()

        async def main():
            self.stopped = asyncio.Event()
            async with ws_server.serve(handler, "127.0.0.1", self.port, max_size=None, compression=None):
                ready.set()
                await self.stopped.wait()

        self.thread = threading.Thread(target=lambda: self.loop.run_until_complete(main()), daemon=True)
        self.thread.start()
        ready.wait(10)

    def install(self, page) -> None:
        # The page builds its websocket URL from location.host: point run websockets here.
        page.add_init_script(f"""(() => {{
            const Native = window.WebSocket;
            window.WebSocket = class extends Native {{
                constructor(url, protocols) {{
                    super(String(url).replace(/^ws:\\/\\/[^/]+\\/ws\\/runs\\//, "ws://127.0.0.1:{self.port}/ws/runs/"),
                          protocols);
                }}
            }};
        }})();""")

    def connected(self) -> bool:
        return bool(self.clients)

    def send(self, text: str) -> None:
        ws = self.clients[-1]
        self.loop.call_soon_threadsafe(lambda: asyncio.ensure_future(ws.send(text)))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.stopped.set)
        self.thread.join(10)


class PlaywrightReplay:
    """Playwright's websocket routing (its messages are delivered by script in the page)."""

    def __init__(self, snapshot: str):
        self.snapshot = snapshot
        self.sockets = []

    def install(self, page) -> None:
        def on_socket(ws):
            self.sockets.append(ws)
            ws.send(self.snapshot)

        page.route_web_socket("**/ws/runs/**", on_socket)

    def connected(self) -> bool:
        return bool(self.sockets)

    def send(self, text: str) -> None:
        self.sockets[-1].send(text)

    def close(self) -> None:
        pass


def metrics(cdp) -> dict:
    return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}


def retained(cdp, page, t: float, marked: bool = False) -> dict:
    """What the page keeps after a full garbage collection: JS heap (MB) and DOM nodes. `marked`:
    the sampling is marked in the page's trace (its frame intervals are left out)."""
    if marked:
        page.evaluate("performance.mark('bench:gc')")
    cdp.send("HeapProfiler.collectGarbage")
    cdp.send("HeapProfiler.collectGarbage")
    heap = cdp.send("Runtime.getHeapUsage")["usedSize"] / 2**20
    sample = {"t": round(t), "heap_mb": round(heap, 2), "dom_nodes": int(metrics(cdp)["Nodes"]),
              "elements": page.evaluate("document.getElementsByTagName('*').length")}
    if marked:
        page.evaluate("performance.mark('bench:gc-end')")
    return sample


def frame_times(trace: dict, frames: int, interval: float, *,
                thread_time: bool = False) -> tuple[list[float], set[int]]:
    """Per frame interval from the 'bench:replay' mark, the wall time (ms) of the top-level tasks
    the page's main thread started in it (what TaskDuration adds up), and the intervals that
    overlap a forced garbage collection ('bench:gc' to 'bench:gc-end').

    ``thread_time``: the tasks' thread time instead (recorded with the devtools.timeline category):
    the page's own work, without the time its thread waited for a core that other processes held."""
    events = trace["traceEvents"]
    start = next(e for e in events if e["name"] == "bench:replay")
    pid, tid, origin, step = start["pid"], start["tid"], start["ts"], interval * 1e6
    per_frame = [0.0] * frames
    for e in events:
        if e.get("ph") == "X" and e["name"] == "ThreadControllerImpl::RunTask" and e["pid"] == pid and e["tid"] == tid:
            i = int((e["ts"] - origin) // step)
            if 0 <= i < frames:
                per_frame[i] += (e.get("tdur", e["dur"]) if thread_time else e["dur"]) / 1000
    marks = sorted((e["ts"], e["name"]) for e in events
                   if e["pid"] == pid and e["name"] in ("bench:gc", "bench:gc-end"))
    sampled = set()
    for (begin, _), (end, _) in zip(marks[::2], marks[1::2], strict=True):
        sampled.update(range(int((begin - origin) // step), int((end - origin) // step) + 1))
    return per_frame, sampled


def long_tasks_in(trace: dict, mark: str) -> list[tuple[float, float]]:
    """The top-level tasks over 50 ms the page's main thread (the one that made `mark`) ran up to
    that mark: (wall ms, thread ms). Wall time is what the Long Tasks API judges; thread time is
    the page's own work in it, the rest the thread waited (another process on the CPU, a
    synchronous call to the browser process such as a font lookup)."""
    events = trace["traceEvents"]
    end = next(e for e in events if e["name"] == mark)
    return [(e["dur"] / 1000, e.get("tdur", 0) / 1000) for e in events
            if e.get("ph") == "X" and e["name"] == "ThreadControllerImpl::RunTask" and e["pid"] == end["pid"]
            and e["tid"] == end["tid"] and e["ts"] <= end["ts"] and e["dur"] > 50_000]


def flat_from(series: list[dict], key: str, tolerance: float = 0.02) -> int | None:
    """The first sample time from which `key` stays within `tolerance` of its end value (None
    when only the last sample does: still moving at the end)."""
    end = series[-1][key]
    for i, sample in enumerate(series[:-1]):
        if all(abs(s[key] - end) <= tolerance * end for s in series[i:]):
            return sample["t"]
    return None


# Resolves when the page has drawn the snapshot: the cluster view holds node elements and the
# page's frame pass ran after the snapshot arrived (then two animation frames, painted).
SNAPSHOT_DRAWN = """() => new Promise((resolve) => {
    const check = () => {
        const page = window.heartbeat;
        if (page && page.store.count('nodes') > 0 && document.querySelector('#cluster [data-node]')
            && page.frames.passes > 0 && page.frames.last > (page.snapshotAt ?? 0)) {
            requestAnimationFrame(() => requestAnimationFrame(() => resolve(performance.now())));
        } else setTimeout(check, 20);
    };
    check();
})"""

# Opens the Diagrams tab and resolves with the milliseconds until every static diagram is drawn.
DIAGRAMS_OPEN = """() => new Promise((resolve) => {
    const t0 = performance.now();
    document.querySelector('[data-tab="diagrams"]').click();
    // a run without volumes leaves their diagram undrawn (static-diagrams.js renderStatic)
    const volumes = document.body.dataset.volumes === 'true';
    const want = [...document.querySelectorAll('#static-diagrams pre.mermaid-src')]
        .filter((pre) => volumes || !pre.hasAttribute('data-volumes')).length;
    const check = () => document.querySelectorAll('#static-diagrams .mermaid-figure').length >= want
        ? requestAnimationFrame(() => resolve(performance.now() - t0)) : setTimeout(check, 5);
    check();
})"""


def recorded_stream(nodes: int, seconds: float, fps: float) -> tuple[dict, list[str], int]:
    """The snapshot, the frames' texts a page will be fed and their number of events, simulated
    beforehand (and said so)."""
    t0 = time.monotonic()
    snapshot, stream = frames(nodes, seconds, fps)
    events = sum(len(m.get("events", [])) for m in stream)
    print(f"simulated {nodes} nodes for {seconds:.0f} s: {events} events in {len(stream)} frames "
          f"({time.monotonic() - t0:.1f} s)", flush=True)
    return snapshot, [json.dumps(msg) for msg in stream], events


def run(args) -> dict:
    from playwright.sync_api import sync_playwright

    snapshot, messages, events = recorded_stream(args.nodes, args.seconds, args.fps)
    server, base = serve()
    replay = (SocketReplay if args.transport == "socket" else PlaywrightReplay)(json.dumps(snapshot))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
                                        args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1920, "height": 1080})
            replay.install(page)
            page.add_init_script("""
                window.__long = [];
                new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__long.push(e.duration); })
                  .observe({type: 'longtask', buffered: true});
            """)
            browser.start_tracing(page=page, categories=["toplevel", "blink.user_timing"])
            page.goto(f"{base}/runs/bench/#control=bench-token")
            page.wait_for_function("window.heartbeat && window.heartbeat.store.list('nodes').length > 0",
                                   timeout=60_000)
            page.evaluate(SNAPSHOT_DRAWN)
            page.evaluate("performance.mark('bench:opened')")
            open_tasks = long_tasks_in(json.loads(browser.stop_tracing()), "bench:opened")
            page.evaluate("window.__long.splice(0)")
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable", {"timeMetricsFormat": "threadTicks"})
            series = [retained(cdp, page, 0)]
            print(f"  start    heap {series[0]['heap_mb']:5.2f} MB  DOM nodes {series[0]['dom_nodes']}", flush=True)
            page.evaluate("window.__long = []")
            traced = args.measure == "trace"
            per_frame = []
            sampled = set()  # frame intervals that include a forced garbage collection
            every = max(1, round(args.sample_every * args.fps))
            interval = 1 / args.fps
            if traced:
                browser.start_tracing(page=page, categories=["toplevel", "blink.user_timing"])
                page.evaluate("performance.mark('bench:replay')")
            begin = metrics(cdp)
            last = begin["TaskDuration"]
            next_at = time.monotonic()
            for i, msg in enumerate(messages, 1):
                replay.send(msg)
                next_at += interval
                page.wait_for_timeout(max(0, (next_at - time.monotonic()) * 1000))
                if not traced:
                    now = metrics(cdp)["TaskDuration"]
                    per_frame.append((now - last) * 1000)
                    last = now
                if i % every == 0 or i == len(messages):
                    sample = retained(cdp, page, i / args.fps, marked=traced)
                    series.append(sample)
                    print(f"  {sample['t']:4d} s   heap {sample['heap_mb']:5.2f} MB  DOM nodes {sample['dom_nodes']}",
                          flush=True)
                    if not traced:
                        sampled.add(len(per_frame))  # the next interval holds the collection
                        last = metrics(cdp)["TaskDuration"]
            end = metrics(cdp)
            if traced:
                per_frame, sampled = frame_times(json.loads(browser.stop_tracing()), len(messages), interval)
            # Where the main thread's time went (ms per frame): script, style, layout, the rest (paint...).
            split = {k: round((end[k] - begin[k]) * 1000 / max(1, len(per_frame)), 2)
                     for k in ("ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "TaskDuration")}
            long_tasks = page.evaluate("window.__long")
            rows = page.evaluate("window.heartbeat.sequence.model.length")
            drawn = page.evaluate("window.heartbeat.sequence.drawnCount()")
            kept = page.evaluate("window.heartbeat.history.length")
            diagrams_ms = page.evaluate(DIAGRAMS_OPEN)
            browser.close()
    finally:
        replay.close()
        server.terminate()
        server.wait(10)
    timed = sorted(ms for i, ms in enumerate(per_frame) if i not in sampled)
    return {
        "nodes": args.nodes, "seconds": args.seconds, "fps": args.fps, "transport": args.transport,
        "measure": args.measure, "frames": len(per_frame), "events": events,
        "main_thread_ms_median": round(statistics.median(timed), 2),
        "main_thread_ms_p95": round(timed[int(0.95 * (len(timed) - 1))], 2),
        "main_thread_ms_max": round(timed[-1], 2),
        "long_tasks": len(long_tasks), "longest_task_ms": round(max(long_tasks, default=0), 1),
        "open_long_tasks_ms": [f"{wall:.0f} ({thread:.0f})" for wall, thread in open_tasks],
        "dom_nodes_start": series[0]["dom_nodes"], "dom_nodes_end": series[-1]["dom_nodes"],
        "js_heap_mb_start": series[0]["heap_mb"], "js_heap_mb_end": series[-1]["heap_mb"],
        "dom_flat_from_s": flat_from(series, "dom_nodes"), "heap_flat_from_s": flat_from(series, "heap_mb"),
        "ms_per_frame_script": split["ScriptDuration"], "ms_per_frame_style": split["RecalcStyleDuration"],
        "ms_per_frame_layout": split["LayoutDuration"], "ms_per_frame_task_total": split["TaskDuration"],
        "sequence_rows_kept": rows, "sequence_rows_drawn": drawn, "events_kept": kept,
        "diagrams_tab_open_ms": round(diagrams_ms),
        "series": series,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=300, help="wall (= virtual) seconds to replay")
    parser.add_argument("--fps", type=float, default=10)
    parser.add_argument("--nodes", type=int, default=100)
    parser.add_argument("--sample-every", type=float, default=30, help="seconds between retained-memory samples")
    parser.add_argument("--transport", choices=["socket", "playwright"], default="socket",
                        help="how frames reach the page: a real websocket, or Playwright's routing")
    parser.add_argument("--measure", choices=["trace", "metrics"], default="trace",
                        help="time per frame from a trace of the page's tasks, or from a CDP getMetrics call per frame")
    args = parser.parse_args()
    result = run(args)
    print("browser rendering bench (goal: median < 8 ms per frame, no task > 50 ms, DOM and heap flat)")
    series = result.pop("series")
    for key, value in result.items():
        print(f"  {key:24} {value}")
    print("  retained after GC:   t (s)  JS heap (MB)  DOM nodes  elements")
    for sample in series:
        print(f"  {'':19} {sample['t']:5d}  {sample['heap_mb']:12.2f}  {sample['dom_nodes']:9d}  "
              f"{sample['elements']:8d}")


if __name__ == "__main__":
    main()
