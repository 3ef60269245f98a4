"""A class waiting on a run's Kubernetes API holds up no page: the API's synchronous work runs on threads
of its own (``heartbeat_site/k8sapi/cluster.py``, ``API_THREADS``), not on the event loop's default
executor, which the websocket consumers read Redis with (docs/kubectl.md, "Where the objects come from").

In-process: the ASGI application, the real Redis, a stand-in driver."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from channels.testing import HttpCommunicator

from heartbeat_site.asgi import application
from heartbeat_site.k8sapi import views
from heartbeat_site.k8sapi.status import K8sError

from .test_consumer import FakeDriver, connect, receive, run_id  # noqa: F401 (run_id: a fixture)

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

HOST = (b"host", b"127.0.0.1:8000")
WAITING = 40  # more than the default executor's threads on any machine (min(32, cores + 4))


async def test_requests_waiting_for_a_runs_objects_hold_up_no_viewer(run_id, monkeypatch):  # noqa: F811
    released = threading.Event()
    entered: list[str] = []

    def objects_of(run):  # a large run's objects on their way from its driver: seconds
        entered.append(run.id)
        released.wait(30)
        raise K8sError(503, "the run's objects are on their way")

    monkeypatch.setattr(views, "objects_of", objects_of)
    requests = [HttpCommunicator(application, "GET", f"/k8s/runs/{run_id}/api/v1/pods", headers=[HOST])
                for _ in range(WAITING)]
    answers = [asyncio.ensure_future(request.get_response(timeout=60)) for request in requests]
    try:
        deadline = time.monotonic() + 10
        while len(entered) < 6:  # the threads that serve them are all busy waiting
            assert time.monotonic() < deadline, f"only {len(entered)} requests reached the objects"
            await asyncio.sleep(0.01)

        driver = FakeDriver(run_id)
        driver.snapshot(0)
        driver.log(1, 3)
        viewer, connected = await connect(f"/ws/runs/{run_id}/")
        assert connected
        assert (await receive(viewer, timeout=10))["type"] == "snapshot"  # not queued behind the API's waits
        await viewer.disconnect()
    finally:
        released.set()
        done = await asyncio.gather(*answers, return_exceptions=True)
    assert [answer["status"] for answer in done] == [503] * WAITING
