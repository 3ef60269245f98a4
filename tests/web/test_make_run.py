"""`make run` as a whole: the entry point it runs (`manage.py runstack --port`, after the `db` target's migrate and
load_builtins) on a free port serves the home page and a run's websocket frames, and Ctrl-C stops everything it
started. Its own database file and Redis (REDIS_URL, as `make run` takes a configured one)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from heartbeat_site.embedded_redis import free_port, start_embedded

from .live import Viewer, ahttp

pytestmark = [pytest.mark.live, pytest.mark.asyncio]

ROOT = Path(__file__).resolve().parents[2]


def manage(*args: str, env: dict[str, str], timeout: float = 120) -> None:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr


async def test_make_run_serves_the_site_and_a_runs_frames_and_stops_on_ctrl_c(tmp_path):
    redis_server = start_embedded()
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "DATABASE_"))}
    env.update({"DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "REDIS_URL": redis_server.url,
                "PORT": str(port)})
    log = tmp_path / "runstack.log"
    stack = None
    children: list[psutil.Process] = []
    try:
        manage("migrate", "--no-input", "-v", "0", env=env)  # make db
        manage("load_builtins", env=env)
        with log.open("wb") as out:
            stack = subprocess.Popen([sys.executable, "manage.py", "runstack", "--port", str(port)], cwd=ROOT,
                                     env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while "is serving on" not in log.read_text(errors="replace"):
            assert stack.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            await asyncio.sleep(0.2)
        children = psutil.Process(stack.pid).children(recursive=True)
        assert len(children) >= 2  # the worker and the server

        status, scenarios = await ahttp("GET", f"{base}/api/scenarios")
        assert status == 200 and scenarios["scenarios"], scenarios
        page = await asyncio.to_thread(lambda: urllib.request.urlopen(f"{base}/", timeout=30).read().decode())
        assert scenarios["scenarios"][0]["name"] in page  # the home page lists the built-ins
        while True:  # 503 until the server sees the worker
            status, run = await ahttp("POST", f"{base}/api/runs", {"scenario": "kubelet-crash", "speed": 20})
            if status != 503 or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        assert status == 201, run
        viewer = await Viewer.open(run["ws_url"], "viewer")
        assert viewer.first_message["type"] == "snapshot"
        await viewer.until(lambda e: e["t"] > 10, timeout=60)  # frames, their seqs checked
        await viewer.close()

        stack.send_signal(signal.SIGINT)  # Ctrl-C
        assert stack.wait(timeout=40) == 0, log.read_text(errors="replace")
        assert "stopping..." in log.read_text(errors="replace")
        gone, alive = psutil.wait_procs(children, timeout=10)
        assert alive == [], alive
    finally:
        if stack is not None and stack.poll() is None:
            stack.kill()
            stack.wait()
        for process in children:
            if process.is_running():  # what a failed stop left behind
                process.kill()
        redis_server.stop()
