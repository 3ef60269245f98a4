"""Helpers for the live tests: real Daphne and Celery worker processes, HTTP and websocket clients."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import websockets
from django.conf import settings

from heartbeat_site import processes
from heartbeat_site.embedded_redis import free_port
from heartbeat_site.live.redis_client import get_redis

ORIGIN = "http://127.0.0.1"


def database_url() -> str:
    """The test database as a DATABASE_URL the server processes can open. Read from the settings, which
    pytest-django pointed at the test database: in an event loop's context (Playwright's sync API runs one)
    Django's ``connection`` is a new one, which may still name the development database."""
    db = settings.DATABASES["default"]
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    user = db.get("USER") or "postgres"
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{user}{password}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


@dataclass
class LiveStack:
    """Daphne plus any number of Celery workers, all real processes on loopback."""

    logdir: Path
    env: dict[str, str]
    port: int = 0
    server: subprocess.Popen | None = None
    workers: dict[str, subprocess.Popen] = field(default_factory=dict)
    server_name: str = "daphne"  # the ASGI server: daphne or uvicorn (processes.start_asgi)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start_server(self) -> None:
        self.port = free_port()
        self.server = processes.start_asgi(self.server_name, self.port, self.env,
                                           log_path=self.logdir / f"{self.server_name}.log")
        processes.wait_http(f"{self.base}/api/openapi.json", self.server)

    def restart_server(self) -> None:
        """A new server process on the same port (after the old one died)."""
        self.server = processes.start_asgi(self.server_name, self.port, self.env,
                                           log_path=self.logdir / f"{self.server_name}-restarted.log")
        processes.wait_http(f"{self.base}/api/openapi.json", self.server)

    def start_worker(self, name: str, timeout: float = 30.0) -> subprocess.Popen:
        log_path = self.logdir / f"{name}.log"
        worker = processes.start_worker(self.env, concurrency=8, name=name, log_path=log_path)
        self.workers[name] = worker
        deadline = time.monotonic() + timeout
        while " ready." not in (log_path.read_text(errors="replace") if log_path.exists() else ""):
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"worker {name} did not become ready:\n{log_path.read_text(errors='replace')[-3000:]}"
                )
            time.sleep(0.1)
        return worker

    def kill_worker(self, name: str) -> None:
        worker = self.workers.pop(name)
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait()

    def terminate_worker(self, name: str, timeout: float = 60.0) -> int:
        """SIGTERM, as a service manager stops a worker (Celery's warm shutdown); its exit code."""
        worker = self.workers.pop(name)
        os.kill(worker.pid, signal.SIGTERM)
        return worker.wait(timeout)

    def stop(self) -> None:
        for worker in self.workers.values():
            processes.stop(worker, timeout=10)
        if self.server:
            processes.stop(self.server, timeout=10)

    def logs(self) -> str:
        return "\n".join(
            f"--- {p.name}\n{p.read_text(errors='replace')[-4000:]}" for p in sorted(self.logdir.glob("*.log"))
        )


def make_stack(logdir: Path, **extra_env: str) -> LiveStack:
    client = get_redis()
    client.delete("heartbeat", "hb:runs:active")  # stale tasks and runs of earlier test runs
    env = {
        "DATABASE_URL": database_url(),
        "REDIS_URL": os.environ["REDIS_URL"],
        "HEARTBEAT_LEASE_TTL": "1.5",
        "HEARTBEAT_IDLE_SECONDS": "60",
        "HEARTBEAT_MAX_RUNS": "100",
        "HEARTBEAT_MAX_RUNS_PER_CLIENT": "100",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        **extra_env,
    }
    return LiveStack(logdir=logdir, env=env)


@contextmanager
def running_stack(logdir: Path, workers: tuple[str, ...] = (), server: str = "daphne",
                  **extra_env: str) -> Iterator[LiveStack]:
    """Daphne, or uvicorn (``server``), and the named workers for the duration of a block; logs printed on
    failure."""
    live = make_stack(logdir, **extra_env)
    live.server_name = server
    try:
        live.start_server()
        for name in workers:
            live.start_worker(name)
        yield live
    except BaseException:
        print(live.logs())
        raise
    finally:
        live.stop()


def http(method: str, url: str, body: object | None = None, token: str | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def ahttp(method: str, url: str, body: object | None = None, token: str | None = None) -> tuple[int, dict]:
    return await asyncio.to_thread(http, method, url, body, token)


class Viewer:
    """A websocket viewer that checks every frame continues the last one (no gap, no duplicate)."""

    def __init__(self, ws, name: str) -> None:
        self.ws = ws
        self.name = name
        self.events: list[dict] = []
        self.last_seq: int | None = None
        self.first_message: dict | None = None
        self.status: dict | None = None
        self.viewers: int | None = None
        self.received_at: list[float] = []
        self.largest = 0  # bytes of the largest websocket message received
        self.split_messages = 0
        self.summarised = 0  # frames that left routine events out
        self.comparison: dict | None = None  # a comparison's strip of differences, its updates merged in
        self.base = ""  # the server's http(s) address (Viewer.open)
        self.comparison_message: dict | None = None  # the last one as it came
        self.comparison_fetches = 0  # times the strip was fetched whole (an update that did not follow on)

    @classmethod
    async def open(cls, ws_url: str, name: str, after: int | None = None) -> Viewer:
        url = ws_url if after is None else f"{ws_url}?after={after}"
        # no keepalive pings of the client's own: a test that waits on a subprocess (kubectl) on a loaded machine
        # would otherwise close the connection itself ("keepalive ping timeout") while nothing was wrong
        ws = await websockets.connect(url, origin=ORIGIN, max_size=None, open_timeout=10, ping_interval=None)
        viewer = cls(ws, name)
        scheme, _, rest = ws_url.partition("://")
        viewer.base = f"{'https' if scheme == 'wss' else 'http'}://{rest.split('/', 1)[0]}"
        viewer.first_message = await viewer.next()
        return viewer

    async def next(self, timeout: float = 20.0) -> dict:
        """The next message, put together from its parts when the server split it."""
        deadline = time.monotonic() + timeout
        parts: list[str] = []
        while True:
            text = await asyncio.wait_for(self.ws.recv(), max(0.001, deadline - time.monotonic()))
            self.largest = max(self.largest, len(text.encode()))
            message = json.loads(text)
            if message["type"] != "part":
                break
            assert message["part"] == len(parts), f"{self.name}: part {message['part']} after {len(parts)}"
            parts.append(message["data"])
            if len(parts) == message["parts"]:
                message = json.loads("".join(parts))
                self.split_messages += 1
                break
        kind = message["type"]
        if kind == "snapshot":
            self.last_seq = message["last_seq"]
        elif kind == "resumed":
            self.last_seq = message["after"]
        elif kind == "frame":
            first, last = message["seq"]
            assert first == self.last_seq + 1, f"{self.name}: frame {first}..{last} after seq {self.last_seq}"
            seqs = [event["seq"] for event in message["events"]]
            if message.get("summarised") or message.get("detail") == "nodes":  # events left out, counted in "omitted"
                assert seqs == sorted(set(seqs)) and all(first <= seq <= last for seq in seqs), (
                    f"{self.name}: seqs out of {first}..{last}"
                )
                self.summarised += 1
            else:
                assert seqs == list(range(first, last + 1)), f"{self.name}: seqs {seqs[:5]}.. not {first}..{last}"
            self.events.extend(message["events"])
            self.received_at.append(time.monotonic())
            self.last_seq = last
        elif kind == "status":
            self.status = message
        elif kind == "presence":
            self.viewers = message["viewers"]
        elif kind == "comparison":
            await self._take_comparison(message)
        return message

    async def _take_comparison(self, message: dict) -> None:
        self.comparison_message = message
        """As the page does (docs/websocket-protocol.md "Comparisons"): every row, or the rows that changed
        since the message the viewer has, merged by name; one that does not follow on fetches the strip whole."""
        if "since" in message and (self.comparison or {}).get("v") != message["since"]:
            status, body = await asyncio.to_thread(http, "GET", f"{self.base}/api/comparisons/{message['comparison']}")
            assert status == 200, body
            self.comparison_fetches += 1
            message = body["comparison"]
        elif "since" in message:
            rows = {row["id"]: row for row in self.comparison["rows"]}
            rows.update({row["id"]: row for row in message["rows"]})
            message = {**message, "rows": sorted(rows.values(), key=lambda row: min(
                t for t in (row["a"], row["b"]) if t is not None))}
        self.comparison = message

    async def until(self, predicate, timeout: float = 30.0) -> dict:
        """Read until an event matching ``predicate`` arrives; return it."""
        deadline = time.monotonic() + timeout
        checked = 0
        while True:
            for event in self.events[checked:]:
                if predicate(event):
                    return event
            checked = len(self.events)
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{self.name}: no matching event within {timeout} s (last seq {self.last_seq})"
            await self.next(remaining)

    async def next_of_type(self, kind: str, timeout: float = 20.0) -> dict:
        """Read on (frames are checked and kept as usual) until a message of type ``kind``."""
        return await self.next_of_type_in((kind,), timeout)

    async def next_of_type_in(self, kinds: tuple[str, ...], timeout: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{self.name}: no {' or '.join(kinds)} message within {timeout} s"
            message = await self.next(remaining)
            if message["type"] in kinds:
                return message

    async def until_seq(self, seq: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while (self.last_seq or 0) < seq:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{self.name}: seq {seq} not reached within {timeout} s (at {self.last_seq})"
            await self.next(remaining)

    async def until_status(self, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while self.status is None:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"{self.name}: run did not end within {timeout} s (at seq {self.last_seq})"
            await self.next(remaining)
        return self.status

    async def close(self) -> None:
        await self.ws.close()


def events_hash(events: list[dict]) -> str:
    return hashlib.sha256(json.dumps(events, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def is_fault(action: str, node: str):
    return lambda e: e["type"] == "fault" and e.get("action") == action and e.get("node") == node


def is_ready_change(node: str, to: str):
    return lambda e: (
        e["type"] == "transition" and e.get("kind") == "node-ready" and e.get("node") == node and e.get("to") == to
    )


def is_taint_added(node: str, key: str, effect: str | None = None):
    return lambda e: (
        e["type"] == "transition"
        and e.get("kind") == "taint-added"
        and e.get("node") == node
        and e.get("key") == key
        and (effect is None or e.get("effect") == effect)
    )


def is_lease_write_by(node: str):
    return lambda e: e["type"] == "write" and e.get("resource") == "leases" and e.get("user") == f"system:node:{node}"


class ResilientViewer(Viewer):
    """A viewer that reconnects as the pages do when its socket closes (``?after=<last seq>``,
    backing off) and records how each reconnect resumed: "resumed" (exactly what was missed
    followed) or "snapshot" (the server could not fill the gap: the stream has a hole)."""

    def __init__(self, ws, name: str, ws_url: str) -> None:
        super().__init__(ws, name)
        self.ws_url = ws_url
        self.resumes: list[str] = []

    @classmethod
    async def open(cls, ws_url: str, name: str, after: int | None = None) -> ResilientViewer:
        ws = await websockets.connect(ws_url, origin=ORIGIN, max_size=None, open_timeout=10, ping_interval=None)
        viewer = cls(ws, name, ws_url)
        viewer.first_message = await Viewer.next(viewer)
        return viewer

    async def next(self, timeout: float = 20.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                return await super().next(max(0.001, deadline - time.monotonic()))
            except websockets.ConnectionClosed:
                await self._reconnect(deadline)

    async def _reconnect(self, deadline: float) -> None:
        delay = 0.2
        while True:
            assert time.monotonic() < deadline, f"{self.name}: could not reconnect"
            await asyncio.sleep(delay)
            delay = min(2 * delay, 1.0)
            try:
                self.ws = await websockets.connect(
                    f"{self.ws_url}?after={self.last_seq}", origin=ORIGIN, max_size=None, open_timeout=5,
                    ping_interval=None,
                )
                before = self.last_seq
                first = await Viewer.next(self, max(0.001, deadline - time.monotonic()))
            except (OSError, websockets.InvalidHandshake, websockets.ConnectionClosed, TimeoutError):
                continue
            if first["type"] == "error":  # the live service is not back yet: it closes again
                continue
            self.resumes.append("resumed" if first["type"] == "resumed" and first["after"] == before else first["type"])
            return
