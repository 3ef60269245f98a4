"""An observation of a real Kubernetes API (docs/observe.md), on Daphne with a Celery worker and Redis: the stand-in
cluster is a simulated run's own API (``/k8s/runs/<id>``), which the official Python client lists and watches as
it would a real one. A kubelet stopped in the simulated run shows on the observation's stream as it does on the
run's: node-2 Ready=Unknown, its taints, its pods' evictions."""

from __future__ import annotations

import asyncio
import json
import secrets
import time

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore import viewer_presence

from .conftest import small_document
from .kubectl import command, new_run
from .live import Viewer, ahttp, is_ready_change, is_taint_added, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("live"), workers=("w1",), HEARTBEAT_OBSERVE="1",
                       HEARTBEAT_OBSERVE_HOSTS="127.0.0.1") as live:
        yield live


class RecordingViewer(Viewer):
    """A viewer that keeps every message's text as it came (for the credential check)."""

    texts: list[str]

    async def next(self, timeout: float = 20.0) -> dict:
        message = await super().next(timeout)
        self.texts = getattr(self, "texts", [])
        self.texts.append(json.dumps(message))
        return message


def is_eviction(node: str):
    return lambda e: e["type"] == "transition" and e.get("kind") == "pod-terminating" and e.get("node") == node


def is_inferred_lease_renewal(node: str):
    return lambda e: (e["type"] == "write" and e.get("resource") == "leases" and e.get("component") == "kubelet-lease"
                      and e.get("node") == node and e.get("inferred"))


async def test_an_observed_cluster_shows_a_stopped_kubelet_and_keeps_its_token_to_itself(stack):
    stand_in = await new_run(stack.base, {**small_document(), "duration": "15m"}, speed=50)
    run_viewer = await Viewer.open(stand_in["ws_url"], "stand-in")  # keeps the stand-in driven
    token = f"observe-{secrets.token_hex(16)}"  # the stand-in's reads accept any bearer token
    status, observation = await ahttp("POST", f"{stack.base}/api/observations",
                                      {"server": f"{stack.base}/k8s/runs/{stand_in['id']}", "token": token})
    assert status == 201, observation
    assert token not in json.dumps(observation)
    viewer = await RecordingViewer.open(observation["ws_url"], "observer")

    # the observer lists, then watches: node-2's Lease renewals arrive as the kubelet's, their actor inferred
    await viewer.until(is_inferred_lease_renewal("node-2"))
    stopped = await command(stack.base, stand_in, "stop-kubelet", node="node-2")
    unknown = await viewer.until(is_ready_change("node-2", "Unknown"), timeout=60)
    assert unknown["component"] == "node-lifecycle-controller"
    await viewer.until(is_taint_added("node-2", "node.kubernetes.io/unreachable", "NoSchedule"), timeout=30)
    await viewer.until(is_taint_added("node-2", "node.kubernetes.io/unreachable", "NoExecute"), timeout=30)
    eviction = await viewer.until(is_eviction("node-2"), timeout=60)  # tolerationSeconds 300: 6 s at 50x
    writes = [e for e in viewer.events if e["type"] == "write" and e["resource"] == "pods"
              and e.get("name") == eviction["pod"] and e["verb"] == "delete"]
    assert writes and writes[0]["component"] == "taint-eviction-controller"
    assert stopped["status"] == "applied"

    status, body = await ahttp("GET", f"{stack.base}/api/runs/{observation['id']}")
    assert (status, body["kind"], body["status"]) == (200, "observation", "running")
    assert body["summary"]["nodes"]["total"] == 3

    # a viewer cannot end it, nor command it; the trainer's token stops it
    url = f"{stack.base}/api/runs/{observation['id']}/commands"
    assert (await ahttp("POST", url, {"action": "stop"}))[0] == 401
    assert (await ahttp("POST", url, {"action": "stop"}, token="not-the-token"))[0] == 403
    refused = await ahttp("POST", url, {"action": "stop-kubelet", "node": "node-1"},
                          token=observation["control_token"])
    assert refused[0] == 400 and "only" in refused[1]["message"]
    status, stop = await ahttp("POST", url, {"action": "stop"}, token=observation["control_token"])
    assert (status, stop["status"]) == (202, "applied"), stop
    ended = await viewer.until_status()
    assert (ended["status"], ended["reason"]) == ("finished", "stopped by the trainer")
    await viewer.close()
    await run_viewer.close()

    # the token, in clear, is nowhere: logs, Redis keys and values, database rows, messages to pages
    assert token not in "".join(p.read_text(errors="replace") for p in stack.logdir.glob("*.log"))
    assert token not in redis_dump()
    rows = await sync_to_async(database_dump)()
    assert observation["id"] in rows  # the dump reads the database the stack writes
    assert token not in rows
    assert token not in "".join(viewer.texts)


def redis_dump() -> str:
    """Every key of the test Redis and its value (binary ones, a checkpoint's, as bytes)."""
    client = get_redis(binary=True)
    out = []
    for key in client.scan_iter(count=1000):
        kind = client.type(key).decode()
        value: object
        if kind == "string":
            value = client.get(key)
        elif kind == "hash":
            value = client.hgetall(key)
        elif kind == "list":
            value = client.lrange(key, 0, -1)
        elif kind == "set":
            value = client.smembers(key)
        elif kind == "zset":
            value = client.zrange(key, 0, -1)
        else:
            value = ""
        out.append(f"{key!r} {value!r}")
    return "\n".join(out)


def database_dump() -> str:
    """Every row of every table of the test database, on SQLite or PostgreSQL."""
    rows = []
    with connection.cursor() as cursor:
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
            rows.extend(str(row) for row in cursor.fetchall())
    return "\n".join(rows)


def open_watches(run_id: str) -> int:
    """The watches a run's Kubernetes API serves now: each counts as a viewer (heartbeat_site/k8sapi/watch.py)."""
    return sum(1 for viewer in get_redis().zrange(viewer_presence.viewers_key(run_id), 0, -1)
               if viewer.startswith("kubectl-"))


async def until_true(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not await asyncio.to_thread(condition):
        assert time.monotonic() < deadline, f"not within {timeout:g} s: {what}"
        await asyncio.sleep(0.1)


async def test_a_stopped_observation_ends_its_watches_at_once(stack):
    """A watch waits for the server's next line; of a quiet cluster the stand-in sends one every 10 s (a bookmark),
    and it ends a watch after its timeoutSeconds (45 s). Ended, the observation closes its watches itself: the
    server sees them go and the worker says its watching threads have ended."""
    stand_in = await new_run(stack.base, {**small_document(), "duration": "15m"}, speed=5)
    run_viewer = await Viewer.open(stand_in["ws_url"], "stand-in")
    status, observation = await ahttp("POST", f"{stack.base}/api/observations",
                                      {"server": f"{stack.base}/k8s/runs/{stand_in['id']}", "token": "t-1"})
    assert status == 201, observation
    viewer = await Viewer.open(observation["ws_url"], "observer")
    await viewer.until(is_inferred_lease_renewal("node-2"))
    await until_true(lambda: open_watches(stand_in["id"]) == 5, 30, "the five resources watched")
    await command(stack.base, stand_in, "pause")  # a quiet cluster: its watches hear nothing but a bookmark

    status, stop = await ahttp("POST", f"{stack.base}/api/runs/{observation['id']}/commands", {"action": "stop"},
                               token=observation["control_token"])
    assert (status, stop["status"]) == (202, "applied"), stop
    assert (await viewer.until_status())["status"] == "finished"
    closed = f"observation {observation['id']}: watches closed"
    await until_true(lambda: closed in (stack.logdir / "w1.log").read_text(errors="replace"), 3, closed)
    # the stand-in ends a watch whose client went at its next write: its next bookmark, not its timeout
    await until_true(lambda: open_watches(stand_in["id"]) == 0, 15, "the stand-in serves no watch")
    await viewer.close()
    await run_viewer.close()


async def test_an_observation_whose_worker_died_ends_for_its_credentials_died_with_it(stack):
    """Run last in this module: it replaces the stack's worker."""
    stand_in = await new_run(stack.base, {**small_document(), "duration": "15m"}, speed=5)
    status, observation = await ahttp("POST", f"{stack.base}/api/observations",
                                      {"server": f"{stack.base}/k8s/runs/{stand_in['id']}", "token": "t-0"})
    assert status == 201, observation
    viewer = await Viewer.open(observation["ws_url"], "observer")
    await viewer.until(is_inferred_lease_renewal("node-2"))
    stack.kill_worker("w1")
    stack.start_worker("w2")  # its watchdog takes the runs over: the observation has nothing to watch with
    ended = await viewer.until_status(timeout=60)
    assert ended["status"] == "failed"
    assert "credentials lived only in its memory" in ended["reason"]
    status, body = await ahttp("GET", f"{stack.base}/api/runs/{observation['id']}")
    assert (body["status"], body["end_reason"]) == ("failed", ended["reason"])
    await viewer.close()
