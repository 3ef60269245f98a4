"""A node-level run's Kubernetes API (a run larger than ``HEARTBEAT_NODE_LEVEL_NODES``, lowered to 2 here so
that 3 nodes are one): its stored snapshot has no pods, so the API asks the run's driver for its objects
(``detail.cluster_objects``) instead of rebuilding the run in the web process (docs/kubectl.md, "Where the
objects come from"). On Daphne with a Celery worker and Redis."""

from __future__ import annotations

import json

import pytest

from heartbeat_site.live.models import Run
from heartbeat_site.live.runstore import run_state
from simulation import Simulation, load_scenario

from .conftest import small_document
from .kubectl import Kubectl, new_run, pause
from .live import Viewer, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("live"), workers=("w1",), HEARTBEAT_NODE_LEVEL_NODES="2") as live:
        yield live


async def test_a_node_level_run_is_served_from_its_drivers_objects(stack, tmp_path):
    """kubectl reads a node-level run's pods, which no viewer's snapshot holds, as the run's simulation has them at
    the paused run's time. (What asking the driver instead of rebuilding the run in the web process saves is
    bench/kubectl_bench.py's figure.)"""
    run = await new_run(stack.base, {**small_document(), "duration": "10m"}, speed=20)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    assert viewer.first_message["snapshot"].get("detail") == "nodes"  # a node-level run: no pods in it
    await viewer.until(lambda e: e["t"] > 20)  # the pods are created at 15 s
    await pause(stack.base, run, viewer)
    t = float(run_state.read_state(run["id"])["t"])
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)

    pods = json.loads(await kubectl.out("get", "pods", "-A", "-o", "json"))["items"]
    row = await Run.objects.aget(pk=run["id"])
    sim = Simulation(load_scenario(row.document), seed=row.seed)
    sim.run_until(t)
    expected = sim.snapshot()["objects"]["pods"]

    def summary(found: list[dict]) -> list[tuple]:
        return sorted((p["metadata"]["name"], p["metadata"]["resourceVersion"], p["spec"].get("nodeName"),
                       p["status"].get("phase")) for p in found)

    assert len(pods) >= 3 and {p["metadata"]["labels"].get("app") for p in pods} >= {"web"}
    assert summary(pods) == summary(expected)
