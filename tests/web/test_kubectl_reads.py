"""The real kubectl against a live run's Kubernetes API (``/k8s/runs/<id>``): discovery, Tables,
selectors, yaml/json/jsonpath and Status errors, on Daphne with a Celery worker and Redis."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
import yaml

from heartbeat_site.k8sapi.tables import since
from heartbeat_site.live import runstore

from .conftest import small_document
from .kubectl import Kubectl, command, lines, new_run
from .live import Viewer, is_ready_change, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("live"), workers=("w1",)) as live:
        yield live


async def broken_run(stack, tmp_path) -> tuple[dict, Kubectl]:
    """A 3-node run whose node-2 kubelet was stopped, paused once node-2 went Unknown."""
    run = await new_run(stack.base, {**small_document(), "duration": "10m"}, speed=50)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)
    await command(stack.base, run, "stop-kubelet", node="node-2")
    await viewer.until(is_ready_change("node-2", "Unknown"))
    await command(stack.base, run, "pause")
    while not (await viewer.next_of_type("clock"))["clock"]["paused"]:
        pass
    await viewer.close()
    return run, Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)


async def at_published_time(run: dict, kubectl: Kubectl, *args: str) -> tuple[str, float]:
    """kubectl's output and the run's virtual time it read (that of the last published events: a paused
    driver may still publish what it had simulated before the pause, so read until it stays put)."""
    for _ in range(10):
        before = runstore.read_state(run["id"])["t"]
        out = await kubectl.out(*args)
        if runstore.read_state(run["id"])["t"] == before:
            return out, float(before)
    raise AssertionError("the run's published time kept moving after the pause")


def age(created: str, t: float) -> str:
    """AGE at virtual time ``t`` of an object created at ``created`` (virtual zero: the default startTime)."""
    return since(created, datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=t))


async def test_get_nodes_tables_and_objects(stack, tmp_path):
    run, kubectl = await broken_run(stack, tmp_path)
    out, t = await at_published_time(run, kubectl, "get", "nodes")
    nodes = json.loads(await kubectl.out("get", "nodes", "-o", "json"))["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["node-1", "node-2", "node-3"]
    version = nodes[0]["status"]["nodeInfo"]["kubeletVersion"]
    ages = [age(n["metadata"]["creationTimestamp"], t) for n in nodes]

    width = max(len(a) for a in ages)
    expected = ["NAME     STATUS     ROLES    " + "AGE".ljust(width + 3) + "VERSION"]
    for name, status, node_age in zip(("node-1", "node-2", "node-3"), ("Ready", "NotReady", "Ready"), ages,
                                      strict=True):
        expected.append(f"{name}   {status.ljust(8)}   <none>   {node_age.ljust(width + 3)}{version}")
    assert lines(out) == expected

    wide_out, t = await at_published_time(run, kubectl, "get", "nodes", "-o", "wide")
    wide = lines(wide_out)
    assert wide[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE",
                               "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    address = nodes[1]["status"]["addresses"][0]["address"]
    assert wide[2].split() == ["node-2", "NotReady", "<none>", age(nodes[1]["metadata"]["creationTimestamp"], t),
                               version, address, "<none>", "<unknown>", "<unknown>", "containerd://1.7.24"]

    lease = yaml.safe_load(await kubectl.out("get", "lease", "-n", "kube-node-lease", "node-2", "-o", "yaml"))
    assert lease["spec"]["holderIdentity"] == "node-2"
    assert lease["spec"]["renewTime"] < "2026-01-01T00:01:00"  # its kubelet stopped at t > 20 s, before 60 s

    names = await kubectl.out("get", "nodes", "-o", "jsonpath={.items[*].metadata.name}")
    assert names == "node-1 node-2 node-3"
    ready = await kubectl.out("get", "node", "node-2", "-o",
                              'jsonpath={.status.conditions[?(@.type=="Ready")].status}')
    assert ready == "Unknown"

    described = await kubectl.out("describe", "node", "node-2")
    sections = [line.split(":")[0] for line in lines(described) if line and not line.startswith(" ")]
    assert sections[:8] == ["Name", "Roles", "Labels", "Annotations", "CreationTimestamp", "Taints",
                            "Unschedulable", "Lease"]
    assert "  HolderIdentity:  node-2" in lines(described)
    assert "node.kubernetes.io/unreachable:NoSchedule" in described
    ready_row = next(line for line in lines(described) if line.startswith("  Ready "))
    assert ready_row.split()[1] == "Unknown" and "NodeStatusUnknown" in ready_row
    assert "Non-terminated Pods:" in described and "Events:" in described

    missing = await kubectl.arun("get", "node", "node-9", check=False)
    assert missing.returncode == 1
    assert missing.stderr.strip() == 'Error from server (NotFound): nodes "node-9" not found'


async def test_pods_events_and_endpointslices(stack, tmp_path):
    run, kubectl = await broken_run(stack, tmp_path)
    pods = json.loads(await kubectl.out("get", "pods", "-A", "-o", "json"))["items"]
    on_node_2 = [p for p in pods if p["spec"].get("nodeName") == "node-2"]
    assert on_node_2

    wide = lines(await kubectl.out("get", "pods", "-A", "-o", "wide", "--field-selector", "spec.nodeName=node-2"))
    assert wide[0].split() == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED",
                               "NODE", "READINESS", "GATES"]
    assert [row.split()[1] for row in wide[1:]] == sorted(p["metadata"]["name"] for p in on_node_2)
    for row in wide[1:]:
        cells = row.split()
        # as on a real cluster: the controller set the pods' Ready condition False, but their container
        # statuses are the dead kubelet's last report, which READY and STATUS print
        assert cells[2:5] == ["1/1", "Running", "0"]
        assert cells[7:] == ["node-2", "<none>", "<none>"]

    conditions = await kubectl.out("get", "pods", "-A", "--field-selector", "spec.nodeName=node-2", "-o",
                                   'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}')
    assert conditions.split() == ["False"] * len(on_node_2)

    labelled = await kubectl.out("get", "pods", "-l", "app=web", "-o", "name")
    assert sorted(lines(labelled)) == sorted(f"pod/{p['metadata']['name']}" for p in pods
                                             if p["metadata"].get("labels", {}).get("app") == "web")

    events = lines(await kubectl.out("get", "events", "-A"))
    assert events[0].split() == ["NAMESPACE", "LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any(" NodeNotReady " in row and " node/node-2 " in row for row in events[1:]), events

    slices = yaml.safe_load(await kubectl.out("get", "endpointslices", "-A", "-o", "yaml"))["items"]
    endpoints = [e for s in slices for e in s["endpoints"] if e["nodeName"] == "node-2"]
    assert endpoints and all(e["conditions"] == {"ready": False, "serving": False, "terminating": False}
                             for e in endpoints)

    forbidden = await kubectl.arun("get", "pods", "--field-selector", "spec.hostname=x", check=False)
    assert "field label not supported: spec.hostname" in forbidden.stderr
