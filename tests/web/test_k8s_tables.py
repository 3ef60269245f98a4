"""A repeated Table list reprints only the objects that changed (heartbeat_site/k8sapi/tables.py, ``RowCache``):
what the real kubectl prints from a server that has been listing a run all along must be what it prints from a
server started fresh at that moment, ages included, while the run crashes a kubelet, marks pods not ready,
evicts and replaces them. On Daphne (two of them) with a Celery worker and Redis."""

from __future__ import annotations

import pytest

from heartbeat_site import processes
from heartbeat_site.embedded_redis import free_port
from heartbeat_site.live.runstore import run_state

from .kubectl import Kubectl, command
from .live import Viewer, ahttp
from .test_kubectl_reads import stack  # noqa: F401 (the module's Daphne, worker and Redis)

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

LISTS = [
    ("get", "pods", "-A", "-o", "wide"),
    ("get", "pods", "-A", "--show-labels"),
    ("get", "nodes", "-o", "wide"),
    ("get", "events", "-A"),
    ("get", "leases", "-A"),
    ("get", "endpointslices", "-A"),
    ("get", "deployments", "-A", "-o", "wide"),
]


async def texts(kubectl: Kubectl) -> dict[tuple[str, ...], str]:
    return {args: await kubectl.out(*args) for args in LISTS}


async def paused_texts(run: dict, viewer: Viewer, kubectl: Kubectl) -> dict[tuple[str, ...], str]:
    """The lists at the paused run's published seq (a paused driver may still publish what it had simulated
    before the pause: read until the seq stays put)."""
    await command(viewer.base, run, "pause")
    while not (await viewer.next_of_type("clock"))["clock"]["paused"]:
        pass
    for _ in range(10):
        seq = run_state.read_state(run["id"])["last_seq"]
        found = await texts(kubectl)
        if run_state.read_state(run["id"])["last_seq"] == seq:
            return found
    raise AssertionError("the run's published seq kept moving after the pause")


async def test_a_server_that_listed_all_along_prints_what_a_fresh_one_prints(stack, tmp_path):  # noqa: F811
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"scenario": "kubelet-crash", "speed": 20})
    assert status == 201, run
    viewer = await Viewer.open(run["ws_url"], "viewer")
    viewer.base = stack.base
    warm = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path / "warm")
    statuses: set[str] = set()
    for until in (30, 120, 200, 430, 500):  # before the crash, NotReady, tainted, evicted, replaced
        while float(run_state.read_state(run["id"]).get("t", 0)) < until:  # the warm server lists as the run goes
            await texts(warm)
        listed = await paused_texts(run, viewer, warm)
        port = free_port()
        fresh = processes.start_asgi("daphne", port, stack.env, log_path=tmp_path / f"fresh-{until}.log")
        try:
            processes.wait_http(f"http://127.0.0.1:{port}/api/openapi.json", fresh)
            cold = Kubectl(f"http://127.0.0.1:{port}/k8s/runs/{run['id']}", tmp_path / f"cold-{until}")
            assert await texts(cold) == listed, f"at {until} s"
        finally:
            processes.stop(fresh, timeout=10)
        pods = listed[("get", "pods", "-A", "-o", "wide")].splitlines()[1:]
        statuses.update(row.split()[3] for row in pods)
        await command(stack.base, run, "resume")
    assert {"Running", "Terminating"} <= statuses  # the lists did see pods change
    await viewer.close()
