"""The official Python client (``kubernetes`` from PyPI) against a live run's Kubernetes API: the same reads
as kubectl's, through the client's own models and its watch, on Daphne with a Celery worker and Redis."""

from __future__ import annotations

import asyncio

import pytest
from kubernetes import client, watch

from .conftest import small_document
from .kubectl import command, new_run, statefulset_run
from .live import Viewer
from .test_kubectl_reads import stack  # noqa: F401 (the module's Daphne, worker and Redis)

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def api_client(base: str, run: dict) -> client.ApiClient:
    configuration = client.Configuration()
    configuration.host = f"{base}/k8s/runs/{run['id']}"
    return client.ApiClient(configuration)


def node_ready(node: client.V1Node) -> str:
    return next(c.status for c in node.status.conditions if c.type == "Ready")


def watch_until_not_ready(api: client.ApiClient, node: str, resource_version: str) -> list[tuple[str, str, str]]:
    """Node watch events (type, name, Ready) from ``resource_version`` until ``node`` is not Ready."""
    seen = []
    for event in watch.Watch().stream(client.CoreV1Api(api).list_node, resource_version=resource_version,
                                      timeout_seconds=60):
        obj = event["object"]
        seen.append((event["type"], obj.metadata.name, node_ready(obj)))
        if obj.metadata.name == node and node_ready(obj) != "True":
            break
    return seen


async def test_python_client_lists_reads_and_watches_a_run(stack, tmp_path):  # noqa: F811
    run = await new_run(stack.base, {**small_document(), "duration": "10m"}, speed=20)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)  # the pods are created at 15 s
    api = api_client(stack.base, run)
    core = client.CoreV1Api(api)

    nodes = await asyncio.to_thread(core.list_node)
    assert [n.metadata.name for n in nodes.items] == ["node-1", "node-2", "node-3"]
    assert {node_ready(n) for n in nodes.items} == {"True"}

    lease = await asyncio.to_thread(client.CoordinationV1Api(api).read_namespaced_lease, "node-2", "kube-node-lease")
    assert lease.spec.holder_identity == "node-2"
    assert lease.spec.lease_duration_seconds == 40
    assert lease.spec.renew_time is not None  # parsed into a datetime by the client's model

    on_node_2 = await asyncio.to_thread(core.list_pod_for_all_namespaces, field_selector="spec.nodeName=node-2")
    assert on_node_2.items and {p.spec.node_name for p in on_node_2.items} == {"node-2"}
    every = await asyncio.to_thread(core.list_pod_for_all_namespaces)
    assert sorted(p.metadata.name for p in on_node_2.items) == sorted(
        p.metadata.name for p in every.items if p.spec.node_name == "node-2")

    watching = asyncio.create_task(asyncio.to_thread(watch_until_not_ready, api, "node-2",
                                                     nodes.metadata.resource_version))
    await command(stack.base, run, "stop-kubelet", node="node-2")
    seen = await asyncio.wait_for(watching, 60)
    assert seen[-1] == ("MODIFIED", "node-2", "Unknown")  # the node lifecycle controller's verdict
    await viewer.close()
    api.close()


async def test_python_client_reads_a_statefulset_and_its_storage(stack, tmp_path):  # noqa: F811
    """The client's models refuse an object without a field the API requires: these are whole."""
    run, _kubectl, viewer = await statefulset_run(stack.base, tmp_path, until=130)
    await viewer.close()
    api = api_client(stack.base, run)
    core, storage = client.CoreV1Api(api), client.StorageV1Api(api)

    sets = await asyncio.to_thread(client.AppsV1Api(api).list_namespaced_stateful_set, "default")
    assert [(s.metadata.name, s.spec.replicas) for s in sets.items] == [("db", 3)]
    assert [t.metadata.name for t in sets.items[0].spec.volume_claim_templates] == ["data"]
    claims = await asyncio.to_thread(core.list_namespaced_persistent_volume_claim, "default")
    assert sorted(c.metadata.name for c in claims.items) == ["data-db-0", "data-db-1", "data-db-2"]
    volumes = await asyncio.to_thread(core.list_persistent_volume)
    assert sorted(v.spec.claim_ref.name for v in volumes.items) == ["data-db-0", "data-db-1", "data-db-2"]
    attachments = await asyncio.to_thread(storage.list_volume_attachment)
    bound = {c.spec.volume_name for c in claims.items}
    assert {a.spec.source.persistent_volume_name for a in attachments.items} == bound
    one = await asyncio.to_thread(storage.read_volume_attachment, attachments.items[0].metadata.name)
    assert one.spec.node_name == attachments.items[0].spec.node_name
    api.close()
