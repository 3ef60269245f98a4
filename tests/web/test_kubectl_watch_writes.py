"""The real kubectl watching a live run (``get nodes -w``) and writing to it with the control token
(``cordon``, ``uncordon``) or without it (403 Forbidden)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.request

import pytest
import websockets
import yaml

from .conftest import small_document
from .kubectl import KUBECTL, Kubectl, command, new_run, read_until
from .live import Viewer, ahttp, is_fault, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("live"), workers=("w1",)) as live:
        yield live


async def test_get_nodes_watch_prints_node_2_going_not_ready(stack, tmp_path):
    run = await new_run(stack.base, {**small_document(), "duration": "10m"}, speed=20)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 15)
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)
    watching = await kubectl.start("get", "nodes", "-w")
    try:
        first = await read_until(watching, lambda line: line.startswith("node-3 "))
        assert first[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
        assert [line.split()[:3] for line in first[1:]] == [[f"node-{i}", "Ready", "<none>"] for i in (1, 2, 3)]
        await command(stack.base, run, "stop-kubelet", node="node-2")
        changed = await read_until(watching, lambda line: line.split()[:2] == ["node-2", "NotReady"])
        # every line after the list is one watch event of a node, printed without a header again
        assert all(line.split()[0] in ("node-1", "node-2", "node-3") for line in changed)
    finally:
        watching.kill()
        await watching.wait()
    await viewer.close()


def control_server(stack, run: dict, token: str) -> str:
    return f"http://control:{token}@{stack.base.removeprefix('http://')}/k8s/runs/{run['id']}"


async def test_cordon_needs_the_control_token(stack, tmp_path):
    run = await new_run(stack.base, {**small_document(), "duration": "10m"}, speed=10)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)  # the pods are created at 15 s
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)

    refused = await kubectl.arun("cordon", "node-1", check=False)
    assert "cordoned" not in refused.stdout
    assert refused.stderr.strip() == (
        'error: unable to cordon node "node-1": nodes "node-1" is forbidden: User "system:anonymous" '
        'cannot patch resource "nodes" in API group "" at the cluster scope: this run\'s API is read-only without '
        'its control token '
        "(docs/kubectl.md)")
    # kubectl sends --token over TLS only: over HTTP the token goes in the server URL
    wrong = await Kubectl(control_server(stack, run, "not-the-token"), tmp_path).arun("cordon", "node-1", check=False)
    assert "the token is not this run's control token" in wrong.stderr

    trainer = Kubectl(control_server(stack, run, run["control_token"]), tmp_path)
    done = await trainer.arun("cordon", "node-1")
    assert done.stdout.strip() == "node/node-1 cordoned"
    cordon = await viewer.until(is_fault("cordon", "node-1"))  # the page shows it like any other command
    assert cordon["component"] == "trainer"
    await viewer.until(lambda e: e["type"] == "write" and e.get("name") == "node-1"
                       and (e.get("object") or {}).get("spec", {}).get("unschedulable"))
    status = (await kubectl.out("get", "node", "node-1", "--no-headers")).split()[1]
    assert status == "Ready,SchedulingDisabled"

    pod = (await kubectl.out("get", "pods", "-o", "name")).split()[0]
    pods = await trainer.arun("delete", pod, check=False)
    assert "the simulation has no command to delete or evict a single pod" in pods.stderr

    back = await trainer.arun("uncordon", "node-1")
    assert back.stdout.strip() == "node/node-1 uncordoned"
    await viewer.until(is_fault("uncordon", "node-1"))
    await viewer.close()


async def test_delete_node_with_the_control_token(stack, tmp_path):
    run = await new_run(stack.base, {**small_document(), "duration": "10m"}, speed=10)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)

    refused = await kubectl.arun("delete", "node", "node-3", check=False)
    assert 'nodes "node-3" is forbidden' in refused.stderr
    done = await Kubectl(control_server(stack, run, run["control_token"]), tmp_path).arun("delete", "node", "node-3")
    assert done.stdout.strip() == 'node "node-3" deleted'
    deleted = await viewer.until(is_fault("delete-node", "node-3"))
    assert deleted["component"] == "trainer"
    await viewer.until(lambda e: e["type"] == "write" and e.get("resource") == "nodes" and e.get("name") == "node-3"
                       and e.get("removed"))
    await viewer.close()

    assert (await kubectl.out("get", "nodes", "-o", "name")).split() == ["node/node-1", "node/node-2"]
    status, state = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}/snapshot")  # what the page shows
    assert status == 200
    assert [n["metadata"]["name"] for n in state["snapshot"]["objects"]["nodes"]] == ["node-1", "node-2"]


async def test_a_websocket_without_origin_may_watch_a_foreign_one_may_not(stack):
    run = await new_run(stack.base, small_document(), speed=10)
    async with websockets.connect(run["ws_url"], open_timeout=10, max_size=None) as ws:  # no Origin header
        assert json.loads(await asyncio.wait_for(ws.recv(), 10))["type"] == "snapshot"
    async with websockets.connect(run["ws_url"], origin="http://evil.example", open_timeout=10) as ws:
        refused = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert refused["error"] == "origin-not-allowed"
        assert refused["message"].startswith("Origin 'http://evil.example' is not an allowed host of this site")
        with pytest.raises(websockets.ConnectionClosed) as closed:
            await asyncio.wait_for(ws.recv(), 10)
        assert closed.value.rcvd.code == 4403


async def test_kubeconfig_of_a_run_works_with_kubectl(stack, tmp_path):
    run = await new_run(stack.base, small_document(), speed=10)
    status, _ = await ahttp("GET", f"{stack.base}/api/runs/{run['id']}")
    assert status == 200
    with urllib.request.urlopen(f"{stack.base}/api/runs/{run['id']}/kubeconfig", timeout=10) as response:
        text = response.read().decode()
    config = yaml.safe_load(text)
    assert config["clusters"][0]["cluster"]["server"] == f"{stack.base}/k8s/runs/{run['id']}"
    assert run["control_token"] not in text  # read-only: a viewer may have it
    (tmp_path / "config").write_text(text)
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)
    done = subprocess.run([KUBECTL, f"--kubeconfig={tmp_path / 'config'}", f"--cache-dir={tmp_path / 'cache'}",
                           "config", "view", "--minify", "-o", "jsonpath={.contexts[0].context.namespace}"],
                          capture_output=True, text=True, env=kubectl.env(), timeout=30)
    assert done.stdout == "default"
