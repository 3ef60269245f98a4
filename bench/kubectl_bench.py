"""The real kubectl against a run's Kubernetes API (docs/kubectl.md), on a stack this bench starts (an
embedded Redis, a Celery worker, Daphne), all on 127.0.0.1:

1. watchers: 100 ``kubectl get nodes -w`` on one live run (100 nodes, 3 zones, 10x); once every
   one has printed its list, a zone-b outage, and the Daphne process's CPU (100 % = one core) over
   the 30 s that follow, while the watchers print the nodes going NotReady;
2. a large list: ``kubectl get pods -A`` on a live 5,000-node run (50,000 pods), the wall time
   of the first one (the server process has never been asked about the run: it must get its
   objects) and the median of three repeated ones; then kubectl's own share: the same command
   against a static server that answers with the very bytes of the run's Table (kubectl decodes
   each row's object metadata three times and prints 50,000 rows: no server can answer faster);
3. volumes: ``kubectl get pvc,pv,volumeattachments -A`` on a live 1,000-node run whose StatefulSet has a
   volume per node (1,000 claims, volumes and attachments, created in parallel): the median of three
   lists once the process follows the run, and ``kubectl get volumeattachments -w`` printing the list.

The table ends with this machine's reference workload (bench/simulation_bench.py's) and the load
average, so figures from different machines compare. ``--code DIR`` serves another checkout (as
in bench/large_bench.py).

    python bench/kubectl_bench.py [--watchers 100] [--watch-nodes 100] [--list-nodes 5000] [--volume-nodes 1000]
                                  [--code DIR]

``--watchers 0``, ``--list-nodes 0``, ``--volume-nodes 0`` leave that part out.
"""

from __future__ import annotations

import argparse
import asyncio
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
from large_bench import LIVE_AT, Stack, create_run, load, running_stack  # noqa: E402
from simulation_bench import reference_ms  # noqa: E402

from tests.web.conftest import large_document  # noqa: E402
from tests.web.live import http  # noqa: E402

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
OUTAGE = {"action": "zone-outage", "zone": "zone-b"}
WATCH_SECONDS = 30.0
REPEATS = 3


def kubectl(stack: Stack, run: dict, home: Path, *args: str) -> list[str]:
    return [KUBECTL, f"--server={stack.base}/k8s/runs/{run['id']}", f"--cache-dir={home / 'cache'}", *args]


def kubectl_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(home / "none")}


async def until_live(stack: Stack, run: dict, timeout: float) -> None:
    """Until the run's clock is past its start-up (a large run prepares first: docs/architecture.md §10.3)."""
    deadline = time.monotonic() + timeout
    while True:
        _, body = await asyncio.to_thread(http, "GET", f"{stack.base}/api/runs/{run['id']}")
        clock = body.get("clock") or {}
        if not clock.get("preparing") and float(clock.get("t") or 0) >= LIVE_AT:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run['id']} not live within {timeout} s: {clock}")
        await asyncio.sleep(1)


async def command(stack: Stack, run: dict, body: dict) -> None:
    status, answer = await asyncio.to_thread(http, "POST", f"{stack.base}/api/runs/{run['id']}/commands", body,
                                             run["control_token"])
    if status != 202 and not (body["action"] == "stop" and answer.get("error") == "run-ended"):
        raise RuntimeError(f"{body}: {status} {answer}")


def hour_long(nodes: int, name: str) -> dict:
    """bench/large_bench.py's cluster, long enough to outlast the measurements at 10x."""
    return {**large_document(nodes, name), "duration": "1h"}


class Watcher:
    """One ``kubectl get nodes -w``: its lines counted, the NotReady ones apart."""

    def __init__(self, process: asyncio.subprocess.Process, nodes: int) -> None:
        self.process = process
        self.nodes = nodes
        self.lines = 0
        self.not_ready = 0
        self.listed = asyncio.Event()

    async def read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            self.lines += 1
            if self.lines == self.nodes + 1:  # the header and the list: watch events follow
                self.listed.set()
            elif self.lines > self.nodes + 1:
                self.not_ready += b" NotReady " in line

    def stop(self) -> None:
        if self.process.returncode is None:
            self.process.kill()


async def measure_watchers(stack: Stack, watchers: int, nodes: int, timeout: float) -> dict:
    run = await create_run(stack, hour_long(nodes, f"kubectl-watch-{nodes}"), timeout)
    await until_live(stack, run, timeout)
    home = Path(tempfile.mkdtemp(prefix="heartbeat-kubectl-bench-"))
    started: list[Watcher] = []
    readers = []
    try:
        for _ in range(watchers):
            process = await asyncio.create_subprocess_exec(
                *kubectl(stack, run, home, "get", "nodes", "-w"), stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, env=kubectl_env(home))
            watcher = Watcher(process, nodes)
            started.append(watcher)
            readers.append(asyncio.create_task(watcher.read()))
        await asyncio.wait_for(asyncio.gather(*(w.listed.wait() for w in started)), timeout)
        server = psutil.Process(stack.server_pid)
        server.cpu_percent(None)
        await command(stack, run, OUTAGE)
        await asyncio.sleep(WATCH_SECONDS)
        cpu = server.cpu_percent(None)
    finally:
        for watcher in started:
            watcher.stop()
        await asyncio.gather(*readers, return_exceptions=True)
        shutil.rmtree(home, ignore_errors=True)
    await command(stack, run, {"action": "stop"})
    seeing = sum(1 for w in started if w.not_ready)
    return {"watchers": watchers, "nodes": nodes, "cpu": cpu, "seeing": seeing,
            "lines": statistics.median(w.lines - nodes - 1 for w in started)}


async def timed_list(stack: Stack, run: dict, home: Path) -> tuple[float, int]:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(*kubectl(stack, run, home, "get", "pods", "-A"),
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                   env=kubectl_env(home))
    out, err = await process.communicate()
    took = time.perf_counter() - started
    if process.returncode != 0:
        raise RuntimeError(f"kubectl get pods -A: {err.decode()[-2000:]}")
    return took, out.count(b"\n") - 1


# What kubectl get asks a list for (k8s.io/kubectl/pkg/cmd/get/get.go, transformRequests)
TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io"
# The legacy discovery of the static server: only pods
STATIC_DISCOVERY = {
    "/api": {"kind": "APIVersions", "versions": ["v1"],
             "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]},
    "/apis": {"kind": "APIGroupList", "apiVersion": "v1", "groups": []},
    "/api/v1": {"kind": "APIResourceList", "groupVersion": "v1", "resources": [
        {"name": "pods", "singularName": "pod", "namespaced": True, "kind": "Pod", "verbs": ["get", "list", "watch"],
         "shortNames": ["po"]}]},
}


@contextmanager
def static_server(table: bytes, encoding: str) -> Iterator[str]:
    """A server that answers discovery and ``/api/v1/pods`` with ``table`` (its ``Content-Encoding``:
    ``encoding``), and does nothing else."""
    bodies = {path: json.dumps(body).encode() for path, body in STATIC_DISCOVERY.items()} | {"/api/v1/pods": table}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # http.server calls it by this name
            path = self.path.split("?")[0]
            body = bodies.get(path)
            self.send_response(200 if body is not None else 404)
            body = body if body is not None else b'{"kind":"Status","code":404}'
            self.send_header("Content-Type", "application/json")
            if path == "/api/v1/pods" and encoding:
                self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def pods_table(stack: Stack, run: dict) -> tuple[bytes, str]:
    """The run's pods Table as kubectl gets it (gzipped, as kubectl accepts), and its Content-Encoding."""
    request = urllib.request.Request(f"{stack.base}/k8s/runs/{run['id']}/api/v1/pods?limit=500",
                                     headers={"Accept": TABLE_ACCEPT, "Accept-Encoding": "gzip"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read(), response.headers.get("Content-Encoding", "")


async def kubectl_alone(table: bytes, encoding: str, home: Path) -> float:
    """The median wall time of ``kubectl get pods -A`` against ``static_server(table, encoding)``."""
    with static_server(table, encoding) as base:
        took = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            process = await asyncio.create_subprocess_exec(
                KUBECTL, f"--server={base}", f"--cache-dir={home / 'static-cache'}", "get", "pods", "-A",
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, env=kubectl_env(home))
            _, err = await process.communicate()
            took.append(time.perf_counter() - started)
            if process.returncode != 0:
                raise RuntimeError(f"kubectl against the static server: {err.decode()[-2000:]}")
    return statistics.median(took)


async def measure_list(stack: Stack, nodes: int, timeout: float) -> dict:
    run = await create_run(stack, hour_long(nodes, f"kubectl-list-{nodes}"), timeout)
    await until_live(stack, run, timeout)
    home = Path(tempfile.mkdtemp(prefix="heartbeat-kubectl-bench-"))
    try:
        await asyncio.to_thread(subprocess.run, kubectl(stack, run, home, "api-resources"),
                                capture_output=True, env=kubectl_env(home), timeout=60)  # discovery, cached
        first, pods = await timed_list(stack, run, home)
        repeated = [(await timed_list(stack, run, home))[0] for _ in range(REPEATS)]
        table, encoding = await asyncio.to_thread(pods_table, stack, run)
        alone = await kubectl_alone(table, encoding, home)
        sent = len(table)
        if encoding == "gzip":
            table = gzip.decompress(table)
    finally:
        shutil.rmtree(home, ignore_errors=True)
    await command(stack, run, {"action": "stop"})
    return {"nodes": nodes, "pods": pods, "first": first, "repeated": statistics.median(repeated),
            "table_mb": len(table) / 1e6, "sent_mb": sent / 1e6, "kubectl_alone": alone}


VOLUME_LIST = ("get", "pvc,pv,volumeattachments", "-A", "--no-headers")


def with_volumes(nodes: int, name: str) -> dict:
    """``hour_long``'s cluster and a StatefulSet with one replica, and so one volume, per node."""
    document = hour_long(nodes, name)
    document["cluster"]["workloads"].append({"name": "db", "kind": "StatefulSet", "replicas": nodes,
                                             "podManagementPolicy": "Parallel",
                                             "volumeClaimTemplates": [{"name": "data", "storage": "1Gi"}]})
    return document


async def measure_volumes(stack: Stack, nodes: int, timeout: float) -> dict:
    run = await create_run(stack, with_volumes(nodes, f"kubectl-volumes-{nodes}"), timeout)
    await until_live(stack, run, timeout)
    home = Path(tempfile.mkdtemp(prefix="heartbeat-kubectl-bench-"))
    try:
        deadline = time.monotonic() + timeout
        while True:  # until every replica's volume is attached somewhere
            done = await asyncio.to_thread(subprocess.run, kubectl(stack, run, home, *VOLUME_LIST),
                                           capture_output=True, env=kubectl_env(home), timeout=120)
            attached = sum(1 for line in done.stdout.decode().splitlines() if line.split()[-2:-1] == ["true"])
            if attached >= nodes:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{attached} of {nodes} volumes attached within {timeout} s")
            await asyncio.sleep(2)
        took = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            done = await asyncio.to_thread(subprocess.run, kubectl(stack, run, home, *VOLUME_LIST),
                                           capture_output=True, env=kubectl_env(home), timeout=120)
            took.append(time.perf_counter() - started)
        rows = done.stdout.count(b"\n")
        started = time.perf_counter()
        watching = await asyncio.create_subprocess_exec(
            *kubectl(stack, run, home, "get", "volumeattachments", "-w"), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=kubectl_env(home))
        assert watching.stdout is not None
        for _ in range(nodes + 1):  # the header and one line per attachment
            await asyncio.wait_for(watching.stdout.readline(), timeout)
        watch_listed = time.perf_counter() - started
        watching.kill()
        await watching.wait()
    finally:
        shutil.rmtree(home, ignore_errors=True)
    await command(stack, run, {"action": "stop"})
    return {"nodes": nodes, "rows": rows, "repeated": statistics.median(took), "watch_listed": watch_listed}


async def measure(args, code: Path) -> tuple[dict | None, dict | None, dict | None]:
    async with running_stack(code, "daphne", args.timeout) as stack:
        watch = listed = volumes = None
        if args.watchers:
            watch = await measure_watchers(stack, args.watchers, args.watch_nodes, args.timeout)
            print(f"watchers: {watch}  (load {load()})", flush=True)
        if args.list_nodes:
            listed = await measure_list(stack, args.list_nodes, args.timeout)
            print(f"list: {listed}  (load {load()})", flush=True)
        if args.volume_nodes:
            volumes = await measure_volumes(stack, args.volume_nodes, args.timeout)
            print(f"volumes: {volumes}  (load {load()})", flush=True)
    return watch, listed, volumes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--watchers", type=int, default=100, help="0: only the large list")
    parser.add_argument("--watch-nodes", type=int, default=100)
    parser.add_argument("--list-nodes", type=int, default=5000, help="0: no large list")
    parser.add_argument("--volume-nodes", type=int, default=1000, help="0: no volumes")
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout to serve (default: this one)")
    parser.add_argument("--timeout", type=float, default=300.0)
    args = parser.parse_args()
    watch, listed, volumes = asyncio.run(measure(args, args.code.resolve()))
    print()
    print("| figure | value |")
    print("|---|---|")
    if watch is not None:
        print(f"| {watch['watchers']} × `kubectl get nodes -w`, {watch['nodes']}-node run at 10x, zone-b outage: "
              f"Daphne CPU % over {WATCH_SECONDS:.0f} s | {watch['cpu']:.0f} |")
        print(f"| watchers that printed nodes going NotReady | {watch['seeing']} of {watch['watchers']} "
              f"(median {watch['lines']:.0f} lines each) |")
    if listed is not None:
        print(f"| `kubectl get pods -A`, {listed['nodes']:,}-node run ({listed['pods']:,} pods): first, s | "
              f"{listed['first']:.2f} |")
        print(f"| the same, repeated (median of {REPEATS}), s | {listed['repeated']:.2f} |")
        print(f"| kubectl alone: the same Table ({listed['table_mb']:.1f} MB, {listed['sent_mb']:.1f} MB sent) "
              f"from a static server, s | {listed['kubectl_alone']:.2f} |")
        print(f"| the server's share of a repeated list, s | {listed['repeated'] - listed['kubectl_alone']:.2f} |")
    if volumes is not None:
        print(f"| `kubectl get pvc,pv,volumeattachments -A`, {volumes['nodes']:,}-node run, a volume per node "
              f"({volumes['rows']:,} rows): repeated (median of {REPEATS}), s | {volumes['repeated']:.2f} |")
        print(f"| `kubectl get volumeattachments -w` on it: its list printed, s | {volumes['watch_listed']:.2f} |")
    print()
    print(f"Reference workload: {reference_ms():.0f} ms; load average {load()}")


if __name__ == "__main__":
    main()
