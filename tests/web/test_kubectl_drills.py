"""A drill's Kubernetes API before the reveal: the real kubectl reads what a viewer's page reads, and nothing
more of the hidden cause (docs/lessons.md, "Drill document"; ``classroom.viewer_event``, ``viewer_snapshot``).
On Daphne with a Celery worker and Redis."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from heartbeat_site.live.models import Run
from heartbeat_site.live.runstore import run_state
from simulation import Simulation, load_scenario
from simulation.lessons import get_drill
from simulation.lessons.drills import KUBELET_FLAGS

from .kubectl import Kubectl, command
from .live import Viewer, ahttp
from .page_store import store_view
from .test_kubectl_reads import stack  # noqa: F401 (the module's Daphne, worker and Redis)

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

RESOURCES = "nodes,pods,events,leases,endpointslices"
KINDS = {"Node": "nodes", "Pod": "pods", "Event": "events", "Lease": "leases", "EndpointSlice": "endpointslices"}


def key(obj: dict) -> tuple[str, str]:
    meta = obj["metadata"]
    return meta.get("namespace") or "", meta["name"]


def viewer_objects(viewer: Viewer, tmp_path) -> dict[str, dict]:
    """The objects the viewer's page holds: the page's own store (static/js/store.js) fed its snapshot and every
    event it was sent."""
    view = store_view([viewer.first_message, {"type": "frame", "events": viewer.events}], tmp_path)
    return {resource: {key(o): o for o in found} for resource, found in view["objects"].items()}


def words_naming(action: str) -> list[str]:
    """What would name a drill's cause: its action, an injected fault, the kubelets' own flags."""
    return [rf"\b{re.escape(action)}\b", r"\binjected\b", r"\bfault\b",
            *(rf'\b{flag}"?:' for flag in KUBELET_FLAGS if flag not in ("running", "pressure"))]


async def pause(base: str, run: dict, viewer: Viewer) -> None:
    await command(base, run, "pause")
    while not (await viewer.next_of_type("clock"))["clock"]["paused"]:
        pass


async def read_at_published_seq(run: dict, viewer: Viewer, kubectl: Kubectl) -> tuple[list[dict], str, list[dict]]:
    """kubectl's yaml, describe and json of the run, and the viewer holding every event they read: a paused
    driver may still publish what it had simulated before the pause, so read until the published seq stays put."""
    for _ in range(10):
        seq = int(run_state.read_state(run["id"])["last_seq"])
        await viewer.until_seq(seq)
        listed = yaml.safe_load(await kubectl.out("get", RESOURCES, "-A", "-o", "yaml"))["items"]
        described = await kubectl.out("describe", "nodes")
        as_json = json.loads(await kubectl.out("get", RESOURCES, "-A", "-o", "json"))["items"]
        if int(run_state.read_state(run["id"])["last_seq"]) == seq:
            return listed, described, as_json
    raise AssertionError("the run's published seq kept moving after the pause")


@pytest.mark.parametrize("name", ["back-on-its-own", "flapping-node", "silent-node"])
async def test_kubectl_reads_of_a_drill_name_nothing_a_viewer_is_not_shown(stack, tmp_path, name):  # noqa: F811
    drill = get_drill(name)
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"drill": name, "speed": 20})
    assert status == 201, run
    viewer = await Viewer.open(run["ws_url"], "diagnoser")
    # well after the fault (40 s to 50 s) and its first symptoms
    await viewer.until(lambda e: e["t"] > 120, timeout=60)
    await pause(stack.base, run, viewer)
    kubectl = Kubectl(f"{stack.base}/k8s/runs/{run['id']}", tmp_path)
    listed, described, as_json = await read_at_published_seq(run, viewer, kubectl)
    assert any(e["type"] == "hidden" for e in viewer.events), "the drill hid its cause from the viewer"

    seen = viewer_objects(viewer, tmp_path)
    for obj in as_json:  # every object the API serves is the one the viewer's page holds, field for field
        assert seen[KINDS[obj["kind"]]].get(key(obj)) == obj, (obj["kind"], key(obj))
    assert {key(o) for o in listed} == {key(o) for o in as_json}

    viewer_text = json.dumps(viewer.first_message) + json.dumps(viewer.events)
    kubectl_text = yaml.safe_dump(listed) + described
    # what names the cause in the run's own events, which the drill hid from the viewer: there is something to
    # hide, and kubectl says none of it
    row = await Run.objects.aget(pk=run["id"])
    unhidden = json.dumps([e.to_dict() for e in Simulation(load_scenario(row.document), seed=row.seed).run_until(
        viewer.events[-1]["t"])])
    words = words_naming(drill.fault["action"])
    hidden_words = {w for w in words if re.search(w, unhidden, re.IGNORECASE)
                    and not re.search(w, viewer_text, re.IGNORECASE)}
    assert hidden_words, "the run's events name no cause the viewer was not shown"
    named = {w for w in hidden_words if re.search(w, kubectl_text, re.IGNORECASE)}
    assert named == set(), f"kubectl names the hidden cause: {named}"
    await viewer.close()
