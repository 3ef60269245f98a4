"""A node-level run's Kubernetes API (a run larger than ``HEARTBEAT_NODE_LEVEL_NODES``, lowered to 2 here so
that 3 nodes are one): its stored snapshot has no pods, so the API asks the run's driver for its objects
(``detail.cluster_objects``) instead of rebuilding the run in the web process (docs/kubectl.md, "Where the
objects come from"). On Daphne with a Celery worker and Redis."""

from __future__ import annotations

import json

import pytest

from .conftest import small_document
from .kubectl import Kubectl, new_run
from .live import Viewer, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("live"), workers=("w1",), HEARTBEAT_NODE_LEVEL_NODES="2") as live:
        yield live


async def test_a_node_level_run_is_served_from_its_drivers_objects(stack, tmp_path):
    run = await new_run(stack.base, {**small_document(), "duration": "10m"}, speed=20)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    assert viewer.first_message["snapshot"].get("detail") == "nodes"  # a node-level run: no pods in it
    await viewer.until(lambda e: e["t"] > 20)  # the pods are created at 15 s
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)

    pods = json.loads(await kubectl.out("get", "pods", "-A", "-o", "json"))["items"]
    assert len(pods) >= 3 and {p["metadata"]["labels"].get("app") for p in pods} >= {"web"}
    assert {p["spec"]["nodeName"] for p in pods if p["metadata"]["labels"].get("app") == "web"} <= {
        "node-1", "node-2", "node-3"}
    log = (stack.logdir / "daphne.log").read_text()
    assert f"run {run['id']}: the API's objects from its driver" in log
    assert f"run {run['id']}: the API's objects rebuilt" not in log
    await viewer.close()
