"""Node level (docs/websocket-protocol.md "Detail levels"): a node-level snapshot plus the
node-level frames after it equals the node-level snapshot taken later, and a node's details
plus the ``details`` of the frames after them equal its details taken later.

The client is the page's own store (static/js/store.js under node, tests/web/store_view.mjs), fed the
messages a real driver sent."""

from __future__ import annotations

import json

import pytest

from heartbeat_site.live.delivery import detail
from heartbeat_site.live.delivery.publisher import Publisher
from heartbeat_site.live.runstore import detail_asks, ownership, run_state
from simulation import Simulation, load_scenario

from .page_store import store_view
from .test_driver import drive_in_thread, run_factory, wait_for  # noqa: F401 (the in-process driver's runs)

WATCHED = "node-2"  # its kubelet stops at 45 s: pods NotReady, endpoints not ready, evictions


def outage_document(nodes: int = 120) -> dict:
    third = nodes // 3
    return {
        "name": "node-level",
        "seed": 3,
        "duration": "15m",
        "cluster": {
            "zones": [
                {"name": "zone-a", "nodes": third},
                {"name": "zone-b", "nodes": third},
                {"name": "zone-c", "nodes": nodes - 2 * third},
            ],
            "workloads": [{"name": "web", "replicas": 4 * nodes}, {"name": "agent", "kind": "DaemonSet"}],
            "services": [{"name": "web", "selector": {"app": "web"}}],
        },
        "faults": [
            {"at": "40s", "action": "zone-outage", "zone": "zone-b"},
            {"at": "45s", "action": "stop-kubelet", "node": "node-2"},
            {"at": "50s", "action": "stop-runtime", "node": "node-3"},
        ],
    }


def key_of(obj: dict) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta["name"]


def by_key(objects: list[dict]) -> list[dict]:
    return sorted(objects, key=key_of)


@pytest.fixture
def driven(run_factory, monkeypatch):  # noqa: F811
    """A node-level run (120 nodes through a zone outage) driven to 7 minutes by a real driver (a thread, real
    Redis and database) with a viewer that opened node-2 once it registered: every message the driver sent, with
    every snapshot it stored and the answer to the viewer's ask, in the order a viewer gets them."""
    sent: list[dict] = []
    monkeypatch.setattr(Publisher, "send", lambda self, message: sent.append(message))
    store_snapshot = ownership.Lease.store_snapshot

    def keep_snapshot(lease, text):
        sent.append({"type": "stored-snapshot", "text": text})
        return store_snapshot(lease, text)

    monkeypatch.setattr(ownership.Lease, "store_snapshot", keep_snapshot)
    run = run_factory(speed=100, document={**outage_document(), "duration": "7m"})
    thread, _, outcome = drive_in_thread(run.id)
    # asked once the nodes registered (about 8 s in), as a page asks for the node it shows
    wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) > 20, what="t > 20")
    reply = detail_asks.ask_detail(run.id, WATCHED)
    thread.join(120)
    assert outcome == ["finished"]
    answer = detail_asks.wait_answer(reply, timeout=5)
    assert answer is not None, "the driver did not answer the viewer's detail ask"
    return run, sent, json.loads(answer)


def page_messages(sent: list[dict], detail_answer: dict) -> tuple[list[dict], dict]:
    """A viewer that joined on the first stored snapshot: that snapshot, then every frame after it, with the
    node's details where the driver answered them (after the frames up to their last_seq); and the last stored
    snapshot, which the driver stored at the run's end."""
    snapshots = [json.loads(m["text"]) for m in sent if m["type"] == "stored-snapshot"]
    frames = [json.loads(m["text"]) for m in sent if m["type"] == "run.frame"]
    first, last = snapshots[0], snapshots[-1]
    frames = [f for f in frames if f["seq"][1] > first["last_seq"]]
    assert frames and frames[-1]["seq"][1] == last["last_seq"], "the frames do not reach the last snapshot"
    assert all(a["seq"][1] + 1 == b["seq"][0] for a, b in zip(frames, frames[1:], strict=False)), "seq gap"
    before = [f for f in frames if f["seq"][1] <= detail_answer["last_seq"]]
    after = frames[len(before):]
    return [{"type": "snapshot", **first}, *before, detail_answer, *after], last


@pytest.mark.django_db(transaction=True)
def test_the_pages_store_fed_a_drivers_snapshot_and_frames_holds_its_later_snapshot(driven, tmp_path):
    """The real store.js, fed what a real driver sent of a node-level run from its first snapshot on, holds
    what the driver's snapshot at the run's end says: trimmed Nodes and Leases, Services, pod counts per node,
    the recent Events about Nodes; and for the node a viewer opened, its full objects as they are at the end."""
    run, sent, detail_answer = driven
    messages, last = page_messages(sent, detail_answer)
    assert detail_answer["type"] == "detail" and detail_answer["node"] == WATCHED
    assert any(WATCHED in f.get("details", {}) for f in messages if f["type"] == "frame"), "no details sent"
    view = store_view(messages, tmp_path)
    expected = last["snapshot"]
    assert view["lastSeq"] == last["last_seq"] and view["detailNode"] == WATCHED

    held_nodes = {n["metadata"]["name"]: n for n in view["objects"]["nodes"]}
    trimmed = {n["metadata"]["name"]: n for n in expected["objects"]["nodes"]}
    assert held_nodes.keys() == trimmed.keys() and len(trimmed) == 120
    assert {name: n for name, n in held_nodes.items() if name != WATCHED} == {
        name: n for name, n in trimmed.items() if name != WATCHED}
    others = [lease for lease in view["objects"]["leases"] if lease["metadata"]["name"] != WATCHED]
    assert by_key(others) == by_key([lease for lease in expected["objects"]["leases"]
                                     if lease["metadata"]["name"] != WATCHED])
    assert by_key(view["objects"]["services"]) == by_key(expected["objects"]["services"])
    assert view["podCounts"] == {name: expected["podCounts"][name] for name in trimmed}
    # the snapshot's Events about Nodes (those among the run's 300 latest Events): the store holds each of them
    # as it is, and no later one
    rv = lambda e: int(e["metadata"]["resourceVersion"])  # noqa: E731
    recent = sorted(expected["objects"]["events"], key=rv)
    assert recent, "the snapshot has no Events about Nodes"
    held_events = sorted((e for e in view["objects"]["events"]
                          if e["involvedObject"]["kind"] == "Node" and rv(e) >= rv(recent[0])), key=rv)
    assert held_events == recent

    # the opened node, as the Python side gives its details at the run's end
    sim = Simulation(load_scenario(run.document), seed=run.seed)
    sim.run_until(run.duration)
    full = detail.node_detail(sim, WATCHED)
    assert held_nodes[WATCHED] == full["nodes"][0]
    assert [lease for lease in view["objects"]["leases"] if lease["metadata"]["name"] == WATCHED] == full["leases"]
    assert by_key(view["objects"]["pods"]) == by_key(full["pods"]) and len(full["pods"]) > 3
    held_slices = {key_of(s): s for s in view["objects"]["endpointslices"]}
    assert full["endpointslices"] and all(held_slices[key_of(s)] == s for s in full["endpointslices"])

    # what was compared went through the outage: zone-b's pods lost readiness, node-2 went Unknown
    not_ready = sum(c["notReady"] + c["terminating"] for c in view["podCounts"].values())
    assert not_ready > 100
    ready = next(c for c in held_nodes[WATCHED]["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "Unknown"


def test_node_level_snapshot_has_no_pods_and_counts_them():
    sim = Simulation(load_scenario(outage_document()))
    sim.run_until(30)
    snapshot = detail.node_snapshot(sim)
    assert snapshot["detail"] == "nodes"
    assert snapshot["objects"]["pods"] == [] and snapshot["objects"]["endpointslices"] == []
    assert len(snapshot["objects"]["nodes"]) == 120
    total = sum(c["total"] for c in snapshot["podCounts"].values())
    assert total == len(sim.snapshot()["objects"]["pods"]) > 480
    node = snapshot["objects"]["nodes"][0]
    assert set(node["status"]) == {"conditions"} and "capacity" not in json.dumps(node)


def test_detail_of_an_unknown_node_is_none():
    sim = Simulation(load_scenario(outage_document()))
    assert detail.node_detail(sim, "node-999") is None


@pytest.mark.parametrize(("nodes", "level"), [(100, False), (101, True)])
def test_runs_over_the_threshold_are_node_level(nodes, level):
    assert detail.is_node_level(nodes) is level


def test_failed_kubelet_requests_are_counted_per_node_except_for_watched_nodes():
    """In a zone outage every silent kubelet retries its Lease: at node level those failures are
    counts per node (the zone traffic line adds them up); an opened node keeps its own."""
    sim = Simulation(load_scenario(outage_document()))
    sim.run_until(30)
    watched = "node-50"  # in zone-b (nodes 41-80)
    raw = [e.to_dict() for e in sim.run_until(120)]
    failures = [e for e in raw if e["type"] == "request-failed" and e["component"].startswith("kubelet")]
    frame = json.loads(json.dumps(detail.node_frame(raw, {}, sim, [watched], 0)))
    counted = frame["failed"]
    assert sum(counted.values()) == len([e for e in failures if e["node"] != watched]) > 40 * 3
    assert watched not in counted and len(counted) == 39  # zone-b's other nodes
    kept = [e for e in frame["events"] if e["type"] == "request-failed"]
    assert kept and {e["node"] for e in kept} == {watched}
    assert frame["omitted"]["request-failed"] == sum(counted.values())


def test_a_trimmed_node_keeps_ready_and_only_the_pressure_conditions_that_are_true():
    sim = Simulation(load_scenario(outage_document()))
    sim.run_until(130)  # zone-b's nodes are Unknown: all four conditions went Unknown
    nodes = {n["metadata"]["name"]: n for n in detail.node_snapshot(sim)["objects"]["nodes"]}
    assert [(c["type"], c["status"]) for c in nodes["node-50"]["status"]["conditions"]] == [("Ready", "Unknown")]
    full = next(n for n in sim.snapshot()["objects"]["nodes"] if n["metadata"]["name"] == "node-50")
    assert sum(c["status"] == "Unknown" for c in full["status"]["conditions"]) == 4
