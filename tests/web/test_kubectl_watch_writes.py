"""The real kubectl watching a live run (``get nodes -w``) and writing to it with the control token
(``cordon``, ``uncordon``, ``delete node``, ``taint`` and ``delete pod --force``) or without it (403 Forbidden);
writes the simulation has no command for are refused saying what it supports."""

from __future__ import annotations

import asyncio
import json
import subprocess
import urllib.request

import pytest
import websockets
import yaml

from .conftest import small_document
from .kubectl import KUBECTL, Kubectl, command, lines, new_run, read_until, statefulset_run
from .live import Viewer, ahttp, is_fault, running_stack

OUT_OF_SERVICE = "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute"
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
    assert "the simulation deletes a single pod only by force" in pods.stderr

    back = await trainer.arun("uncordon", "node-1")
    assert back.stdout.strip() == "node/node-1 uncordoned"
    await viewer.until(is_fault("uncordon", "node-1"))
    await viewer.close()


async def test_writes_are_refused_without_the_token_and_bad_ones_say_why(stack, tmp_path):
    run = await new_run(stack.base, {**small_document(), "duration": "10m"}, speed=10)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)  # the pods are created at 15 s
    await viewer.close()
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)
    trainer = Kubectl(control_server(stack, run, run["control_token"]), tmp_path)
    pod = (await kubectl.out("get", "pods", "-o", "name")).split()[0].removeprefix("pod/")

    taint = await kubectl.arun("taint", "nodes", "node-2", OUT_OF_SERVICE, check=False)
    assert taint.returncode == 1
    assert taint.stderr.strip() == (
        'Error from server (Forbidden): nodes "node-2" is forbidden: User "system:anonymous" cannot patch resource '
        '"nodes" in API group "" at the cluster scope: this run\'s API is read-only without its control token '
        "(docs/kubectl.md)")
    force = await kubectl.arun("delete", "pod", pod, "--grace-period=0", "--force", check=False)
    assert force.returncode == 1
    assert (f'Error from server (Forbidden): pods "{pod}" is forbidden: User "system:anonymous" cannot delete '
            'resource "pods" in API group "" in the namespace "default"') in force.stderr
    assert (await kubectl.out("get", "pod", pod, "-o", "name")).strip() == f"pod/{pod}"  # still there
    node = json.loads(await kubectl.out("get", "node", "node-2", "-o", "json"))
    assert "node.kubernetes.io/out-of-service" not in [t["key"] for t in node["spec"].get("taints") or ()]

    other = await trainer.arun("taint", "nodes", "node-2", "dedicated=db:NoSchedule", check=False)
    assert other.returncode == 1
    assert 'The Node "node-2" is invalid: spec.taints: the dedicated taint cannot be added; only adding or ' \
           "removing the node.kubernetes.io/out-of-service taint is supported (kubectl taint nodes node-2 " \
           "node.kubernetes.io/out-of-service=nodeshutdown:NoExecute)" in other.stderr
    label = await trainer.arun("label", "node", "node-2", "disk=ssd", check=False)
    assert label.returncode == 1
    assert 'The Node "node-2" is invalid: metadata.labels: the simulation can change only spec.unschedulable' \
        in label.stderr
    graceful = await trainer.arun("delete", "pod", pod, "--wait=false", check=False)
    assert graceful.returncode == 1
    assert f"a graceful delete of pods/{pod} (no gracePeriodSeconds): the simulation deletes a single pod only " \
           "by force (kubectl delete pod NAME --grace-period=0 --force" in graceful.stderr
    unforced = await trainer.arun("delete", "pod", pod, "--grace-period=0", "--wait=false", check=False)
    assert "(gracePeriodSeconds 1, what kubectl sends for --grace-period=0 without --force)" in unforced.stderr
    missing = await trainer.arun("delete", "pod", "db-9", "--grace-period=0", "--force", check=False)
    assert missing.returncode == 1
    assert missing.stderr.strip().splitlines()[-1] == 'Error from server (NotFound): pods "db-9" not found'


async def stuck_pod(kubectl: Kubectl) -> tuple[dict, str, str]:
    """The StatefulSet's pod on node-2 (evicted, Terminating), its volume, and that volume's attachment."""
    pods = json.loads(await kubectl.out("get", "pods", "-l", "app=db", "-o", "json"))["items"]
    pod = next(p for p in pods if p["spec"].get("nodeName") == "node-2")
    assert pod["metadata"].get("deletionTimestamp")
    claim = next(v["persistentVolumeClaim"]["claimName"] for v in pod["spec"]["volumes"])
    volume = json.loads(await kubectl.out("get", "pvc", claim, "-o", "json"))["spec"]["volumeName"]
    attachments = json.loads(await kubectl.out("get", "volumeattachments", "-o", "json"))["items"]
    attachment = next(a["metadata"]["name"] for a in attachments
                      if a["spec"]["source"]["persistentVolumeName"] == volume)
    return pod, volume, attachment


async def test_out_of_service_taint_frees_the_stuck_pod_and_detaches_its_volume(stack, tmp_path):
    run, kubectl, viewer = await statefulset_run(stack.base, tmp_path, until=430)
    pod, volume, attachment = await stuck_pod(kubectl)
    name = pod["metadata"]["name"]
    trainer = Kubectl(control_server(stack, run, run["control_token"]), tmp_path)

    watching = await kubectl.start("get", "volumeattachments", "--output-watch-events", "-w")
    try:
        listed = await read_until(watching, lambda line: line.split()[1:2] == [attachment])
        assert listed[0].split() == ["EVENT", "NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
        assert listed[-1].split()[3:6] == [volume, "node-2", "true"]
        done = await trainer.arun("taint", "nodes", "node-2", OUT_OF_SERVICE)
        assert done.stdout.strip() == "node/node-2 tainted"
        tainted = await viewer.until(is_fault("taint-out-of-service", "node-2"))
        assert tainted["component"] == "trainer"
        # the attach/detach controller detaches at once from a node with the taint: the attachment goes
        gone = await read_until(watching, lambda line: line.split()[:2] == ["DELETED", attachment], timeout=60)
        assert all(line.split()[1] != attachment or line.split()[0] != "ADDED" for line in gone)
    finally:
        watching.kill()
        await watching.wait()
    taints = await kubectl.out("get", "node", "node-2", "-o", "jsonpath={.spec.taints[*].key}")
    assert "node.kubernetes.io/out-of-service" in taints.split()

    # Pod GC deleted the stuck pod; the StatefulSet controller made it again elsewhere, where it runs
    waited = await kubectl.arun("wait", "--for=condition=Ready", f"pod/{name}", "--timeout=60s", timeout=90)
    assert waited.stdout.strip() == f"pod/{name} condition met"
    again = json.loads(await kubectl.out("get", "pod", name, "-o", "json"))
    assert again["metadata"]["uid"] != pod["metadata"]["uid"]
    assert again["spec"]["nodeName"] != "node-2"
    attachments = json.loads(await kubectl.out("get", "volumeattachments", "-o", "json"))["items"]
    assert [(a["spec"]["nodeName"], a["status"]["attached"]) for a in attachments
            if a["spec"]["source"]["persistentVolumeName"] == volume] == [(again["spec"]["nodeName"], True)]
    await viewer.close()


async def test_force_delete_lets_the_replacement_in_but_not_its_volume(stack, tmp_path):
    run, kubectl, viewer = await statefulset_run(stack.base, tmp_path, until=430)
    pod, volume, attachment = await stuck_pod(kubectl)
    name = pod["metadata"]["name"]
    trainer = Kubectl(control_server(stack, run, run["control_token"]), tmp_path)

    done = await trainer.arun("delete", "pod", name, "--grace-period=0", "--force")
    assert done.stdout.strip() == f'pod "{name}" force deleted'
    assert "Immediate deletion does not wait for confirmation" in done.stderr  # kubectl's own warning
    await viewer.until(lambda e: e["type"] == "fault" and e.get("action") == "force-delete-pod")
    # the replacement is created at once, and waits: the volume is still attached to node-2
    multi_attach = await viewer.until(lambda e: e["type"] == "write" and e.get("resource") == "events"
                                      and (e.get("object") or {}).get("reason") == "FailedAttachVolume")
    assert multi_attach["object"]["message"].startswith(f'Multi-Attach error for volume "{volume}"')
    await viewer.close()
    again = json.loads(await kubectl.out("get", "pod", name, "-o", "json"))
    assert again["metadata"]["uid"] != pod["metadata"]["uid"]
    assert again["spec"]["nodeName"] != "node-2"
    row = (await kubectl.out("get", "pod", name, "--no-headers")).split()
    assert row[:3] == [name, "0/1", "ContainerCreating"]  # what kubectl get pods shows of the wait
    events = lines(await kubectl.out("get", "events", "--field-selector",
                                     f"involvedObject.name={name},reason=FailedAttachVolume"))
    assert len(events) >= 2 and "Multi-Attach error" in events[1]
    still = await kubectl.out("get", "volumeattachment", attachment, "-o", "jsonpath={.spec.nodeName} "
                              "{.status.attached}")
    assert still == "node-2 true"  # until the attach/detach controller's force detach, 6 minutes on


async def test_a_force_delete_is_answered_once_reads_show_it(stack, tmp_path):
    """As from the API server, a read right after the DELETE's answer never shows the deleted pod again:
    ``kubectl delete`` reads the uid next and then watches from a list, so a stale read left it waiting for a
    deletion its list had already passed."""
    run = await new_run(stack.base, {**small_document(), "duration": "10m"}, speed=10)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)  # the pods are created at 15 s
    await viewer.close()
    api = f"{stack.base}/k8s/runs/{run['id']}/api/v1/namespaces/default/pods"
    status, listed = await ahttp("GET", api)
    pod = listed["items"][0]
    name = pod["metadata"]["name"]
    status, deleted = await ahttp("DELETE", f"{api}/{name}", {"gracePeriodSeconds": 0}, token=run["control_token"])
    assert status == 200 and deleted["metadata"]["uid"] == pod["metadata"]["uid"]
    status, now = await ahttp("GET", f"{api}/{name}")
    assert status == 404 or now["metadata"]["uid"] != pod["metadata"]["uid"], now


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
