"""The faults a classroom meets, with real processes: Redis killed with SIGKILL and started
again empty, the ASGI server killed and restarted, the database's connections cut.

Each time the run reaches its end, two viewers' streams have no gap (every reconnect resumed
exactly where the viewer was) and are, event for event, the undisturbed run of the same
scenario, seed and commands; a command sent during a Redis outage gets 503 and leaves nothing
behind, and one accepted before it is applied once.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection

from heartbeat_site.embedded_redis import EmbeddedRedis, start_embedded

from .conftest import small_document
from .live import ResilientViewer, ahttp, database_url, events_hash, is_fault, running_stack
from .test_live_takeover import undisturbed_events

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

OUTAGE_SECONDS = 5.0  # how long the fault lasts (part of the scenario, not a measured time)


@contextmanager
def own_redis() -> Iterator[EmbeddedRedis]:
    """A redis-server of our own on a spare port, without persistence: a restart is empty."""
    server = start_embedded()
    try:
        yield server
    finally:
        server.stop()


def document() -> dict:
    return {**small_document(name="fault-drill"), "duration": "4m"}


async def start_run(stack, speed: float = 10) -> tuple[dict, list[ResilientViewer]]:
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"document": document(), "speed": speed})
    assert status == 201, run
    viewers = [await ResilientViewer.open(run["ws_url"], name) for name in ("viewer A", "viewer B")]
    return run, viewers


async def finish_and_compare(stack, run: dict, viewers: list[ResilientViewer], *, reconnect: bool = True) -> None:
    """Both viewers read to the run's end; their streams are gap-free and the undisturbed run's.
    With ``reconnect``, the fault closed their sockets and every reconnect resumed exactly."""
    for viewer in viewers:
        ended = await viewer.until_status(timeout=120)
        assert ended["status"] == "finished", ended
    status, listed = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}/commands")
    faults = [c for c in listed["commands"] if c["kind"] == "fault"]
    status, body = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}")
    reference = await asyncio.to_thread(undisturbed_events, document(), run["run"]["seed"], faults, body["duration"])
    for viewer in viewers:
        assert set(viewer.resumes) == ({"resumed"} if reconnect else set()), (
            f"{viewer.name}: reconnects {viewer.resumes}")
        assert [e["seq"] for e in viewer.events] == list(range(1, len(viewer.events) + 1)), f"{viewer.name}: a gap"
        assert events_hash(viewer.events) == events_hash(reference), f"{viewer.name}: not the undisturbed run"
        await viewer.close()


async def test_a_redis_restart_loses_no_run_no_viewer_and_no_command(django_db_setup, tmp_path):
    with (own_redis() as server,
          running_stack(tmp_path, ("worker",), REDIS_URL=server.url, HEARTBEAT_LEASE_TTL="2") as stack):
        run, viewers = await start_run(stack)
        commands = f"{stack.base}/api/runs/{run['id']}/commands"
        await viewers[0].until(lambda e: e["t"] > 30, timeout=30)
        status, before = await ahttp("POST", commands, {"action": "stop-kubelet", "node": "node-2"},
                                     token=run["control_token"])
        assert (status, before["status"]) == (202, "applied"), before
        await viewers[0].until(is_fault("stop-kubelet", "node-2"))

        await asyncio.to_thread(server.kill)
        status, headers, during = await asyncio.to_thread(post_for_headers, commands,
                                                          {"action": "stop-kubelet", "node": "node-3"},
                                                          run["control_token"])
        assert (status, during["error"], headers.get("Retry-After")) == (503, "redis-unavailable", "5"), during
        assert "Redis" in during["message"] and "nothing was changed" in during["message"]
        status, ready = await ahttp("GET", f"{stack.base}/readyz")
        assert status == 503 and not ready["checks"]["redis"]["ok"] and ready["checks"]["database"]["ok"], ready
        await asyncio.sleep(OUTAGE_SECONDS)
        await asyncio.to_thread(server.restart)  # empty: no log, no lease, no state

        await finish_and_compare(stack, run, viewers)
        status, listed = await ahttp("GET", commands)
        assert [(c["action"], c["command"].get("node"), c["status"])
                for c in listed["commands"]] == [("stop-kubelet", "node-2", "applied")]
        assert listed["commands"][0]["at"] == pytest.approx(before["at"])
        status, body = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}")
        assert body["status"] == "finished", body


def post_for_headers(url: str, body: dict, token: str) -> tuple[int, dict, dict]:
    """POST ``body``; (status, headers, JSON body), for the headers of an error answer."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), json.loads(error.read())


async def test_a_restarted_asgi_server_loses_no_viewer(django_db_setup, tmp_path):
    with running_stack(tmp_path, ("worker",)) as stack:
        run, viewers = await start_run(stack)
        await viewers[0].until(lambda e: e["t"] > 30, timeout=30)
        await asyncio.to_thread(os.kill, stack.server.pid, signal.SIGKILL)
        await asyncio.to_thread(stack.server.wait)
        await asyncio.sleep(OUTAGE_SECONDS / 5)
        await asyncio.to_thread(stack.restart_server)  # same port: the pages' URL
        await finish_and_compare(stack, run, viewers)


@pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"),
                    reason="PostgreSQL only: pg_terminate_backend")
async def test_cut_database_connections_lose_no_run_and_no_command(django_db_setup, tmp_path):
    with running_stack(tmp_path, ("worker",),
                       DATABASE_URL=f"{database_url()}?application_name={STACK_APPLICATION}") as stack:
        run, viewers = await start_run(stack)
        commands = f"{stack.base}/api/runs/{run['id']}/commands"
        await viewers[0].until(lambda e: e["t"] > 30, timeout=30)
        await asyncio.to_thread(terminate_other_connections)
        status, body = await ahttp("POST", commands, {"action": "stop-kubelet", "node": "node-2"},
                                   token=run["control_token"])
        if status == 503:  # the web process met its cut connection first: nothing was kept, retry
            assert body["error"] == "database-unavailable", body
            status, body = await ahttp("POST", commands, {"action": "stop-kubelet", "node": "node-2"},
                                       token=run["control_token"])
        assert (status, body["status"]) == (202, "applied"), body
        await asyncio.to_thread(terminate_other_connections)
        await finish_and_compare(stack, run, viewers, reconnect=False)
        status, listed = await ahttp("GET", commands)
        assert [(c["action"], c["status"]) for c in listed["commands"]] == [("stop-kubelet", "applied")]


STACK_APPLICATION = "heartbeat-stack"  # how the stack's connections name themselves to PostgreSQL


def terminate_other_connections() -> int:
    """Cut every connection the site's processes hold (the web server's and the worker's): those to this test's
    database, not another pytest worker's stacks on the same server."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s"
                       " AND datname = current_database()", [STACK_APPLICATION])
        cut = len(cursor.fetchall())
    assert cut > 0, "no connection of the stack to cut"
    return cut

