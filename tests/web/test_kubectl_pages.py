"""Paged lists (``limit`` and ``continue``) of a live run's Kubernetes API: the continue pages of a list are
read at the resourceVersion of its first page, as on a real API server, while the run goes on; an unknown
token is 410 Expired; a Table is answered whole. On Daphne with a Celery worker and Redis."""

from __future__ import annotations

import base64
import json
import urllib.error
import urllib.request

import pytest

from .conftest import small_document
from .kubectl import Kubectl, command, new_run
from .live import Viewer
from .test_kubectl_reads import stack  # noqa: F401 (the module's Daphne, worker and Redis)

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def get(url: str, accept: str = "application/json") -> tuple[int, dict]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


async def live_run(base: str) -> tuple[dict, Viewer, str]:
    """A run at 20x past 20 s (its pods exist), a viewer following it, and its pods' URL."""
    run = await new_run(base, {**small_document(), "duration": "10m"}, speed=20)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)
    return run, viewer, f"{base}/k8s/runs/{run['id']}/api/v1/pods"


def rv(obj: dict) -> int:
    return int(obj["metadata"]["resourceVersion"])


async def test_continue_pages_are_read_at_the_first_pages_resource_version(stack):  # noqa: F811
    run, viewer, pods_url = await live_run(stack.base)
    status, first = get(f"{pods_url}?limit=2")
    assert status == 200 and len(first["items"]) == 2, first
    at = first["metadata"]["resourceVersion"]
    # the run goes on: node-2's kubelet stops, and the node lifecycle controller marks its pods not ready
    await command(stack.base, run, "stop-kubelet", node="node-2")
    await viewer.until(lambda e: e["type"] == "write" and e.get("resource") == "pods" and e.get("object")
                       and rv(e["object"]) > int(at), timeout=60)
    items, token = list(first["items"]), first["metadata"]["continue"]
    while token:
        status, page = get(f"{pods_url}?limit=2&continue={token}")
        assert status == 200, page
        assert page["metadata"]["resourceVersion"] == at
        items.extend(page["items"])
        token = page["metadata"].get("continue")
    assert all(rv(pod) <= int(at) for pod in items)
    names = [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in items]
    assert names == sorted(set(names))

    _status, whole = get(pods_url)  # the latest state: a pod written since the first page differs from its page
    assert [(p["metadata"]["namespace"], p["metadata"]["name"]) for p in whole["items"]] == names
    assert int(whole["metadata"]["resourceVersion"]) > int(at)
    await viewer.close()


async def test_kubectl_reads_every_page_and_a_table_comes_whole(stack, tmp_path):  # noqa: F811
    run, viewer, pods_url = await live_run(stack.base)
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)
    paged = json.loads(await kubectl.out("get", "pods", "-A", "--chunk-size=2", "-o", "json"))["items"]
    _status, whole = get(pods_url)
    assert [p["metadata"]["name"] for p in paged] == [p["metadata"]["name"] for p in whole["items"]]
    assert len(paged) > 2  # more than one page
    printed = (await kubectl.out("get", "pods", "-A", "--chunk-size=2", "--no-headers")).split("\n")
    assert sorted(line.split()[1] for line in printed if line) == sorted(p["metadata"]["name"] for p in paged)

    status, table = get(f"{pods_url}?limit=2", accept=TABLE)
    assert status == 200 and table["kind"] == "Table"
    assert len(table["rows"]) == len(paged) and "continue" not in table["metadata"]
    await viewer.close()


async def test_an_unknown_continue_token_is_expired_and_a_bad_one_refused(stack):  # noqa: F811
    run, viewer, pods_url = await live_run(stack.base)
    status, first = get(f"{pods_url}?limit=2")
    assert status == 200
    stale = base64.urlsafe_b64encode(json.dumps({"rv": 1, "after": ["default", "a"]}).encode()).decode()
    status, expired = get(f"{pods_url}?limit=2&continue={stale}")
    assert (status, expired["reason"], expired["code"]) == (410, "Expired", 410)
    assert expired["message"].startswith("The provided continue parameter is too old")

    status, refused = get(f"{pods_url}?limit=2&continue=not-a-token")
    assert (status, refused["reason"]) == (400, "BadRequest")
    assert "continue" in refused["message"]
    await viewer.close()


async def test_sort_by_reads_the_whole_objects_of_a_table(stack, tmp_path):  # noqa: F811
    run, viewer, pods_url = await live_run(stack.base)
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)
    pods = json.loads(await kubectl.out("get", "pods", "-A", "-o", "json"))["items"]
    by_ip = sorted(pods, key=lambda p: tuple(int(part) for part in p["status"]["podIP"].split(".")))
    printed = (await kubectl.out("get", "pods", "-A", "--sort-by=.status.podIP", "--no-headers")).split("\n")
    assert [line.split()[1] for line in printed if line] == [p["metadata"]["name"] for p in by_ip]

    status, table = get(f"{pods_url}?includeObject=None", accept=TABLE)
    assert status == 200 and all("object" not in row for row in table["rows"])
    status, refused = get(f"{pods_url}?includeObject=Everything", accept=TABLE)
    assert (status, refused["reason"]) == (400, "BadRequest") and "includeObject" in refused["message"]
    await viewer.close()
