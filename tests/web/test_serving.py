"""How the service is served, as README.md ("Configuration", "Production") and docs/architecture.md say: on
uvicorn as on Daphne, with Celery on a broker of its own, `/readyz` waiting for a worker, and in production behind
an HTTPS proxy (redirect to HTTPS, `X-Forwarded-Proto` trusted, WhiteNoise serving hashed static files whose
modules import each other through the page's import map). Real processes on loopback."""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import redis

from heartbeat_site import processes
from heartbeat_site.embedded_redis import free_port, start_embedded

from .conftest import small_document
from .live import Viewer, ahttp, make_stack, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
HTTPS = {"X-Forwarded-Proto": "https"}  # what the HTTPS proxy in front of the service adds


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """One request, redirects not followed: (status, headers, body)."""
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def post_run(base: str, headers: dict[str, str]) -> tuple[int, dict]:
    request = urllib.request.Request(f"{base}/api/runs", method="POST", headers={
        "Content-Type": "application/json", **headers}, data=json.dumps({"document": small_document(),
                                                                          "speed": 20}).encode())
    try:
        with urllib.request.build_opener(NoRedirect).open(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


async def a_run_is_driven(base: str, **headers: str) -> Viewer:
    """A 3-node run created through the API whose viewer gets the snapshot and frames up to t > 10 s."""
    deadline = time.monotonic() + 60
    while True:  # 503 until the server sees the worker
        status, run = await asyncio.to_thread(post_run, base, headers)
        if status != 503 or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.5)
    assert status == 201, (status, run)
    # behind a proxy that terminates TLS the run's URLs say wss://; the proxy hands the socket on as ws://
    viewer = await Viewer.open(re.sub(r"^wss://", "ws://", run["ws_url"]), "viewer")
    assert viewer.first_message["type"] == "snapshot"
    await viewer.until(lambda e: e["t"] > 10, timeout=60)
    viewer.run = run
    return viewer


async def test_uvicorn_serves_the_pages_the_api_and_a_runs_frames(django_db_setup, tmp_path):
    with running_stack(tmp_path, ("worker",), server="uvicorn") as stack:
        assert "uvicorn" in " ".join(stack.server.args)
        status, _, body = get(f"{stack.base}/")
        assert status == 200 and b"<html" in body
        viewer = await a_run_is_driven(stack.base)
        assert len({e["seq"] for e in viewer.events}) == len(viewer.events) > 10  # gap-free: checked per frame
        await viewer.close()


async def test_readyz_is_ready_only_once_a_worker_reported(django_db_setup, tmp_path):
    with running_stack(tmp_path, ()) as stack:
        status, body = await ahttp("GET", f"{stack.base}/readyz")
        assert status == 503 and body["checks"]["redis"]["ok"] and body["checks"]["database"]["ok"], body
        assert not body["checks"]["workers"]["ok"] and "worker" in body["checks"]["workers"]["error"], body
        stack.start_worker("late")
        deadline = time.monotonic() + 30
        while (answer := await ahttp("GET", f"{stack.base}/readyz"))[0] != 200:
            assert time.monotonic() < deadline, answer
            await asyncio.sleep(0.5)
        assert answer[1]["status"] == "ready" and answer[1]["checks"]["workers"]["ok"]


async def test_celery_takes_its_tasks_from_a_broker_of_its_own(django_db_setup, tmp_path):
    """CELERY_BROKER_URL another Redis than REDIS_URL: the run's task goes through it, and the run is driven."""
    broker = start_embedded()
    try:
        with running_stack(tmp_path, ("worker",), CELERY_BROKER_URL=broker.url) as stack:
            viewer = await a_run_is_driven(stack.base)
            await viewer.close()
        keys = redis.Redis.from_url(broker.url).keys("*")
        assert any(key.startswith(b"_kombu.binding.") for key in keys), keys  # Celery's queues live there
    finally:
        broker.stop()


PRODUCTION = {
    "HEARTBEAT_PRODUCTION": "1",
    "DJANGO_SECRET_KEY": "k3y-" + "x9Qz!r7Lm#2vWp@5tB&8nY" * 3,
    "DJANGO_ALLOWED_HOSTS": "127.0.0.1",
}


async def test_production_behind_an_https_proxy(django_db_setup, tmp_path):
    static_root = tmp_path / "static"
    env = {**PRODUCTION, "HEARTBEAT_STATIC_ROOT": str(static_root)}
    done = subprocess.run([sys.executable, "manage.py", "collectstatic", "--no-input", "-v", "0"], cwd=ROOT,
                          env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    stack = make_stack(tmp_path, **env)
    try:
        # running_stack's wait for the server would follow the redirect to HTTPS, which nothing serves here
        stack.port = free_port()
        stack.server = processes.start_asgi("daphne", stack.port, stack.env, log_path=tmp_path / "daphne.log")
        deadline = time.monotonic() + 30
        while True:
            try:
                get(f"{stack.base}/healthz", **HTTPS)
                break
            except OSError:
                assert stack.server.poll() is None and time.monotonic() < deadline, stack.logs()
                time.sleep(0.2)
        stack.start_worker("worker")
        # plain HTTP (no proxy said https): redirected to HTTPS, nothing served
        status, headers, _ = get(f"{stack.base}/")
        assert status == 301 and headers["Location"] == f"https://127.0.0.1:{stack.port}/", (status, headers)
        # through the proxy: served, with HSTS
        status, headers, body = get(f"{stack.base}/", **HTTPS)
        assert status == 200 and "max-age=" in headers.get("Strict-Transport-Security", ""), headers
        status, _, _ = get(f"{stack.base}/api/openapi.json")
        assert status == 301  # the API too
        viewer = await a_run_is_driven(stack.base, **HTTPS)  # the API and the websocket answer through the proxy
        assert viewer.run["ws_url"].startswith("wss://") and viewer.run["viewer_url"].startswith("https://")
        await viewer.close()
        status, headers, body = get(f"{stack.base}/runs/{viewer.run['id']}/", **HTTPS)
        assert status == 200, body[:300]
        page = body.decode()
        imports = json.loads(re.search(r'<script type="importmap">(.*?)</script>', page).group(1))["imports"]
        assert "#js/run-page.js" in imports and len(imports) > 10
        # every module is served by WhiteNoise under its hashed name, for good; and every module it imports (by its
        # bare specifier, "#js/store.js") is in the import map, so the browser never asks for an unhashed module
        for specifier, hashed in imports.items():
            unhashed = "/static/" + specifier.removeprefix("#")
            assert re.fullmatch(re.escape(unhashed[:-3]) + r"\.[0-9a-f]{12}\.js", hashed), (specifier, hashed)
            status, headers, body = get(f"{stack.base}{hashed}", **HTTPS, **{"Accept-Encoding": "gzip"})
            assert status == 200, hashed
            assert "immutable" in headers["Cache-Control"] and "max-age=315360000" in headers["Cache-Control"]
            text = (gzip.decompress(body) if headers.get("Content-Encoding") == "gzip" else body).decode()
            for name in re.findall(r'''(?:^|[\s;}])(?:import|export)\b[^"';]*?\bfrom\s*["']([^"']+)["']''', text,
                                   re.MULTILINE):
                assert name in imports, f"{specifier} imports {name}: not in the page's import map"
    except BaseException:
        print(stack.logs())
        raise
    finally:
        stack.stop()
