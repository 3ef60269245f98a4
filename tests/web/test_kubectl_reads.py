"""The real kubectl against a live run's Kubernetes API (``/k8s/runs/<id>``): discovery, Tables,
selectors, yaml/json/jsonpath and Status errors, the workloads (apps/v1) and events.k8s.io/v1 events,
on Daphne with a Celery worker and Redis."""

from __future__ import annotations

import asyncio
import json
import urllib.request
from datetime import UTC, datetime, timedelta

import pytest
import yaml

from heartbeat_site.k8sapi.tables import since
from heartbeat_site.live.runstore import run_state

from .conftest import small_document
from .kubectl import Kubectl, broken_run, command, lines, new_run, pause, read_until, statefulset_run
from .live import Viewer, is_ready_change, running_stack

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("live"), workers=("w1",)) as live:
        yield live


def ten_minutes() -> dict:
    """The 3-node document, long enough for node-2 to go Unknown (``kubectl.broken_run``)."""
    return {**small_document(), "duration": "10m"}


async def at_published_time(run: dict, kubectl: Kubectl, *args: str) -> tuple[str, float]:
    """kubectl's output and the run's virtual time it read (that of the last published events: a paused
    driver may still publish what it had simulated before the pause, so read until it stays put)."""
    for _ in range(10):
        before = run_state.read_state(run["id"])["t"]
        out = await kubectl.out(*args)
        if run_state.read_state(run["id"])["t"] == before:
            return out, float(before)
    raise AssertionError("the run's published time kept moving after the pause")


def age(created: str, t: float) -> str:
    """AGE at virtual time ``t`` of an object created at ``created`` (virtual zero: the default startTime)."""
    return since(created, datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=t))


async def test_get_nodes_tables_and_objects(stack, tmp_path):
    run, kubectl = await broken_run(stack.base, ten_minutes(), tmp_path)
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
    info = nodes[1]["status"]["nodeInfo"]
    assert wide[2].split() == ["node-2", "NotReady", "<none>", age(nodes[1]["metadata"]["creationTimestamp"], t),
                               version, address, "<none>", *info["osImage"].split(), info["kernelVersion"],
                               "containerd://1.7.24"]
    assert info["osImage"] and info["kernelVersion"]

    lease = yaml.safe_load(await kubectl.out("get", "lease", "-n", "kube-node-lease", "node-2", "-o", "yaml"))
    assert lease["spec"]["holderIdentity"] == "node-2"
    renewed = datetime.fromisoformat(lease["spec"]["renewTime"])
    assert renewed <= datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=run["stopped_at"])  # none since the stop

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
    run, kubectl = await broken_run(stack.base, ten_minutes(), tmp_path)
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
    # set-based selectors (docs/kubectl.md): in, notin, exists, does not exist, and terms that must all hold
    nodes = json.loads(await kubectl.out("get", "nodes", "-o", "json"))["items"]
    labels = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in nodes}
    host = "kubernetes.io/hostname"
    assert len(labels) == 3 and all(found.get(host) == name for name, found in labels.items())
    for selector, wanted in [
        (f"{host} in (node-1,node-3)", {"node-1", "node-3"}),
        (f"{host} notin (node-2)", {"node-1", "node-3"}),
        (f"{host} notin (node-9)", {"node-1", "node-2", "node-3"}),
        (host, {"node-1", "node-2", "node-3"}),
        (f"!{host}", set()),
        ("!no-such-label", {"node-1", "node-2", "node-3"}),
        (f"{host} in (node-1,node-2),{host}!=node-1", {"node-2"}),
        (f"{host} in (node-1), {host} notin (node-1)", set()),
    ]:
        listed = (await kubectl.out("get", "nodes", "-l", selector, "-o", "name")).split()
        assert sorted(listed) == sorted(f"node/{name}" for name in wanted), selector

    events = lines(await kubectl.out("get", "events", "-A"))
    assert events[0].split() == ["NAMESPACE", "LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any(" NodeNotReady " in row and " node/node-2 " in row for row in events[1:]), events

    slices = yaml.safe_load(await kubectl.out("get", "endpointslices", "-A", "-o", "yaml"))["items"]
    endpoints = [e for s in slices for e in s["endpoints"] if e["nodeName"] == "node-2"]
    assert endpoints and all(e["conditions"] == {"ready": False, "serving": False, "terminating": False}
                             for e in endpoints)

    forbidden = await kubectl.arun("get", "pods", "--field-selector", "spec.hostname=x", check=False)
    assert "field label not supported: spec.hostname" in forbidden.stderr


def workload_document() -> dict:
    document = small_document("workloads")
    document["duration"] = "10m"
    document["cluster"]["workloads"] = [{"name": "web", "replicas": 6}, {"name": "agent", "kind": "DaemonSet"}]
    return document


def ready(pod: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or ())


async def test_deployments_replicasets_daemonsets_count_their_pods(stack, tmp_path):
    run = await new_run(stack.base, workload_document(), speed=20)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)  # the workloads are applied at 15 s
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)

    watching = await kubectl.start("get", "deployment", "web", "-w")
    try:
        first = await read_until(watching, lambda line: line.startswith("web "))
        assert first[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
        assert first[1].split()[1:4] == ["6/6", "6", "6"]
        await command(stack.base, run, "stop-kubelet", node="node-2")
        # the node lifecycle controller marks node-2's pods not ready: the Deployment's READY drops
        dropped = await read_until(watching, lambda line: line.split()[1] != "6/6", timeout=60)
        assert dropped[-1].split()[0] == "web"
    finally:
        watching.kill()
        await watching.wait()
    await viewer.until(is_ready_change("node-2", "Unknown"))
    await pause(stack.base, run, viewer)

    pods = json.loads(await kubectl.out("get", "pods", "-o", "json"))["items"]
    web = [p for p in pods if p["metadata"]["labels"]["app"] == "web"]
    agent = [p for p in pods if p["metadata"]["labels"]["app"] == "agent"]
    web_ready, agent_ready = sum(map(ready, web)), sum(map(ready, agent))
    assert len(web) == 6 and len(agent) == 3 and web_ready < 6  # node-2's pods are no longer ready
    replicaset = web[0]["metadata"]["ownerReferences"][0]["name"]

    out = lines(await kubectl.out("get", "deploy,rs,ds", "-A"))
    blank = [i for i, line in enumerate(out) if not line]
    deployments, replicasets, daemonsets = out[:blank[0]], out[blank[0] + 1:blank[1]], out[blank[1] + 1:]
    assert deployments[0].split() == ["NAMESPACE", "NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    assert deployments[1].split()[:5] == ["default", "deployment.apps/web", f"{web_ready}/6", "6", str(web_ready)]
    assert replicasets[0].split() == ["NAMESPACE", "NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert replicasets[1].split()[:5] == ["default", f"replicaset.apps/{replicaset}", "6", "6", str(web_ready)]
    assert daemonsets[0].split() == ["NAMESPACE", "NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE",
                                     "NODE", "SELECTOR", "AGE"]
    assert daemonsets[1].split()[:8] == ["default", "daemonset.apps/agent", "3", "3", str(agent_ready), "3",
                                         str(agent_ready), "<none>"]

    rs = json.loads(await kubectl.out("get", "rs", replicaset, "-o", "json"))
    assert rs["metadata"]["uid"] == web[0]["metadata"]["ownerReferences"][0]["uid"]  # the pods' owner itself
    assert rs["metadata"]["ownerReferences"][0]["name"] == "web"
    assert rs["spec"]["selector"] == {"matchLabels": {"app": "web"}}
    ds = json.loads(await kubectl.out("get", "ds", "agent", "-o", "json"))
    assert ds["metadata"]["uid"] == agent[0]["metadata"]["ownerReferences"][0]["uid"]

    wide = lines(await kubectl.out("get", "deploy", "-o", "wide"))
    assert wide[0].split()[5:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1].split()[5:] == ["web", "registry.example/web:1.0", "app=web"]

    all_kinds = {line.split()[0].split("/")[0] for line in lines(await kubectl.out("get", "all", "--no-headers"))
                 if line}
    assert all_kinds == {"pod", "service", "daemonset.apps", "deployment.apps", "replicaset.apps"}


async def test_events_in_the_events_k8s_io_v1_shape(stack, tmp_path):
    _run, kubectl = await broken_run(stack.base, workload_document(), tmp_path)

    table = lines(await kubectl.out("get", "events.v1.events.k8s.io", "-A"))
    assert table[0].split() == ["NAMESPACE", "LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert any(" NodeNotReady " in row and " node/node-2 " in row for row in table[1:]), table

    legacy_events = json.loads(await kubectl.out("get", "events", "-A", "-o", "json"))["items"]
    core = {e["metadata"]["name"]: e for e in legacy_events}
    new = json.loads(await kubectl.out("get", "events.v1.events.k8s.io", "-A", "-o", "json"))["items"]
    assert {e["metadata"]["name"] for e in new} == set(core)
    for event in new:
        legacy = core[event["metadata"]["name"]]
        assert event["apiVersion"] == "events.k8s.io/v1"
        assert event["regarding"] == legacy["involvedObject"]
        assert event["note"] == legacy["message"]
        assert event["reportingController"] == legacy["source"]["component"]
        assert event["deprecatedCount"] == legacy["count"]
        assert event["eventTime"].startswith(legacy["firstTimestamp"].removesuffix("Z"))
    not_ready = [e for e in new if e["reason"] == "NodeNotReady" and e["regarding"]["name"] == "node-2"]
    assert not_ready and not_ready[0]["reportingController"] == "node-controller"


def by_name(items: list[dict]) -> dict[str, dict]:
    return {item["metadata"]["name"]: item for item in items}


async def test_a_statefulset_its_claims_volumes_and_attachments(stack, tmp_path):
    """statefulset-node-lost past the taint eviction (~410 s): the pod on node-2 is Terminating, its volume still
    attached there, as kubectl shows them."""
    run, kubectl, viewer = await statefulset_run(stack.base, tmp_path, until=430)
    await pause(stack.base, run, viewer)

    out, t = await at_published_time(run, kubectl, "get", "statefulsets")
    sts = json.loads(await kubectl.out("get", "sts", "db", "-o", "json"))
    assert (sts["apiVersion"], sts["kind"], sts["spec"]["replicas"]) == ("apps/v1", "StatefulSet", 3)
    ready = f"{sts['status'].get('readyReplicas', 0)}/3"
    assert [line.split() for line in lines(out)] == [["NAME", "READY", "AGE"],
                                                     ["db", ready, age(sts["metadata"]["creationTimestamp"], t)]]
    wide = lines(await kubectl.out("get", "sts", "-o", "wide"))
    assert wide[0].split() == ["NAME", "READY", "AGE", "CONTAINERS", "IMAGES"]
    assert wide[1].split()[3:] == ["db", "registry.example/db:1.0"]

    pods = by_name(json.loads(await kubectl.out("get", "pods", "-l", "app=db", "-o", "json"))["items"])
    stuck = next(name for name, pod in pods.items() if pod["spec"].get("nodeName") == "node-2")
    assert pods[stuck]["metadata"].get("deletionTimestamp")  # evicted, but its kubelet cannot confirm

    claims = by_name(json.loads(await kubectl.out("get", "pvc", "-o", "json"))["items"])
    assert sorted(claims) == ["data-db-0", "data-db-1", "data-db-2"]
    volumes = by_name(json.loads(await kubectl.out("get", "pv", "-o", "json"))["items"])
    attachments = json.loads(await kubectl.out("get", "volumeattachments", "-o", "json"))["items"]

    table = lines(await kubectl.out("get", "pvc"))
    assert table[0].split() == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                                "VOLUMEATTRIBUTESCLASS", "AGE"]
    for row in table[1:]:
        name, status, volume, capacity, modes, storage_class, attributes_class, _ = row.split()
        claim = claims[name]
        assert (status, volume, capacity, modes) == ("Bound", claim["spec"]["volumeName"], "1Gi", "RWO")
        assert (storage_class, attributes_class) == (claim["spec"]["storageClassName"], "<unset>")
    assert lines(await kubectl.out("get", "pvc", "-o", "wide"))[0].split()[-1] == "VOLUMEMODE"

    table = lines(await kubectl.out("get", "pv"))
    assert table[0].split() == ["NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM",
                                "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
    assert sorted(row.split()[5] for row in table[1:]) == ["default/data-db-0", "default/data-db-1",
                                                           "default/data-db-2"]
    for row in table[1:]:
        cells = row.split()  # REASON is empty
        assert cells[1:5] == ["1Gi", "RWO", volumes[cells[0]]["spec"]["persistentVolumeReclaimPolicy"], "Bound"]
        assert claims[cells[5].split("/")[1]]["spec"]["volumeName"] == cells[0]

    table = lines(await kubectl.out("get", "volumeattachments"))
    assert table[0].split() == ["NAME", "ATTACHER", "PV", "NODE", "ATTACHED", "AGE"]
    rows = {row.split()[0]: row.split() for row in table[1:]}
    assert sorted(rows) == sorted(a["metadata"]["name"] for a in attachments)
    stuck_volume = claims[f"data-{stuck}"]["spec"]["volumeName"]
    on_node_2 = [cells for cells in rows.values() if cells[2] == stuck_volume]
    assert [cells[3:5] for cells in on_node_2] == [["node-2", "true"]]  # still attached to the dead node
    assert all(cells[1] == attachments[0]["spec"]["attacher"] for cells in rows.values())

    claim = yaml.safe_load(await kubectl.out("get", "pvc", f"data-{stuck}", "-o", "yaml"))
    assert (claim["kind"], claim["status"]["phase"]) == ("PersistentVolumeClaim", "Bound")
    volume = yaml.safe_load(await kubectl.out("get", "pv", stuck_volume, "-o", "yaml"))
    assert volume["spec"]["claimRef"]["name"] == f"data-{stuck}"
    node_of = await kubectl.out("get", "volumeattachment", on_node_2[0][0], "-o", "jsonpath={.spec.nodeName}")
    assert node_of == "node-2"
    attached = await kubectl.out("get", "node", "node-2", "-o", "jsonpath={.status.volumesAttached[*].name}")
    assert volume["spec"]["csi"]["volumeHandle"] in attached

    described = await kubectl.out("describe", "pvc", f"data-{stuck}")
    assert f"Used By:       {stuck}" in described and f"Volume:        {stuck_volume}" in described
    described = await kubectl.out("describe", "sts", "db")
    assert "Replicas:           3 desired | 3 total" in described

    kinds = {line.split()[0].split("/")[0] for line in lines(await kubectl.out("get", "all", "--no-headers")) if line}
    assert "statefulset.apps" in kinds and "persistentvolumeclaim" not in kinds
    by_field = await kubectl.out("get", "pvc", "--field-selector", f"metadata.name=data-{stuck}", "-o", "name")
    assert by_field.split() == [f"persistentvolumeclaim/data-{stuck}"]
    missing = await kubectl.arun("get", "pv", "pvc-nope", check=False)
    assert missing.stderr.strip() == 'Error from server (NotFound): persistentvolumes "pvc-nope" not found'

    # the objects export holds them as kubectl -o yaml prints them
    url = f"{stack.base}/api/runs/{run['id']}/export/objects.yaml"
    text = await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=60).read().decode())
    exported = [(item["kind"], item["metadata"]["name"]) for item in yaml.safe_load(text)["items"]]
    assert ("StatefulSet", "db") in exported and ("PersistentVolumeClaim", f"data-{stuck}") in exported
    assert ("PersistentVolume", stuck_volume) in exported and ("VolumeAttachment", on_node_2[0][0]) in exported
