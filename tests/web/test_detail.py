"""Node level (docs/websocket-protocol.md "Detail levels"): a node-level snapshot plus the
node-level frames after it equals the node-level snapshot taken later, and a node's details
plus the ``details`` of the frames after them equal its details taken later.

The applier below does what a client does with these messages (static/js/store.js)."""

from __future__ import annotations

import json

import pytest

from heartbeat_site.live import detail
from simulation import Simulation, load_scenario

SLICE = 0.7  # virtual seconds per frame: several renewals, status syncs and pod changes each


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


class NodeLevelView:
    """A viewer's copy: objects by resource and key, pod counts, as the page keeps them."""

    def __init__(self, snapshot: dict) -> None:
        self.objects = {r: {key_of(o): o for o in objs} for r, objs in snapshot["objects"].items()}
        self.pod_counts = dict(snapshot["podCounts"])

    def apply_write(self, event: dict) -> None:
        if event["type"] != "write" or event.get("object") is None or event["code"] >= 400:
            return
        objects = self.objects.setdefault(event["resource"], {})
        if event.get("removed"):
            objects.pop(key_of(event["object"]), None)
        else:
            objects[key_of(event["object"])] = event["object"]

    def apply_frame(self, frame: dict) -> None:
        for event in frame["events"]:
            self.apply_write(event)
        for node, renew_time in frame.get("renewals", {}).items():
            lease = self.objects["leases"][("kube-node-lease", node)]
            self.objects["leases"][("kube-node-lease", node)] = {
                **lease,
                "spec": {**lease["spec"], "renewTime": renew_time},
            }
        self.pod_counts.update(frame.get("podCounts", {}))

    def node_events(self) -> list[dict]:
        """The recent core/v1 Events about nodes, as a snapshot lists them."""
        events = sorted(self.objects["events"].values(), key=lambda e: int(e["metadata"]["resourceVersion"]))
        return events[-detail.RECENT_NODE_EVENTS :]


def comparable(snapshot: dict) -> dict:
    objects = snapshot["objects"]
    return {
        "nodes": sorted(objects["nodes"], key=key_of),
        "leases": sorted(objects["leases"], key=key_of),
        "services": sorted(objects["services"], key=key_of),
        "podCounts": snapshot["podCounts"],
    }


def view_comparable(view: NodeLevelView) -> dict:
    return {
        "nodes": sorted(view.objects["nodes"].values(), key=key_of),
        "leases": sorted(view.objects["leases"].values(), key=key_of),
        "services": sorted(view.objects["services"].values(), key=key_of),
        "podCounts": view.pod_counts,
    }


def frames_until(sim: Simulation, until: float, watched: list[str]) -> list[dict]:
    out = []
    while sim.now < until:
        events = [e.to_dict() for e in sim.run_until(min(until, sim.now + SLICE))]
        if events:
            # through JSON, as a viewer receives it (no shared dicts between frames)
            out.append(json.loads(json.dumps(detail.node_frame(events, {}, sim, watched, 0))))
    return out


def test_snapshot_plus_frames_equals_later_snapshot_through_an_outage():
    sim = Simulation(load_scenario(outage_document()))
    sim.run_until(30)
    view = NodeLevelView(detail.node_snapshot(sim))
    checked = 0
    for checkpoint in (60, 130, 200, 400):
        for frame in frames_until(sim, checkpoint, []):
            assert not any(e.get("resource") == "pods" for e in frame["events"]), "pods sent at node level"
            view.apply_frame(frame)
        later = detail.node_snapshot(sim)
        assert view_comparable(view) == comparable(later), f"diverged by t={checkpoint}"
        assert [e["metadata"]["name"] for e in view.node_events()] == [
            e["metadata"]["name"] for e in later["objects"]["events"]
        ]
        checked += 1
    # the outage really happened in what was compared: zone-b's nodes lost their pods' readiness
    not_ready = sum(c["notReady"] + c["terminating"] for c in view.pod_counts.values())
    assert not_ready > 100 and checked == 4


def test_node_details_plus_frame_details_equal_later_details():
    sim = Simulation(load_scenario(outage_document()))
    sim.run_until(30)
    node = "node-2"  # its kubelet stops at 45 s: pods NotReady, endpoints not ready, evictions
    view = NodeLevelView({"objects": detail.node_detail(sim, node), "podCounts": {}})
    applied = 0
    for frame in frames_until(sim, 420, [node]):
        for event in frame.get("details", {}).get(node, []):
            view.apply_write(event)
            applied += 1
    later = detail.node_detail(sim, node)
    for resource in ("nodes", "leases", "pods"):
        assert sorted(view.objects[resource].values(), key=key_of) == later[resource], resource
    held = view.objects["endpointslices"]
    for endpoint_slice in later["endpointslices"]:
        assert held[key_of(endpoint_slice)] == endpoint_slice
    ready = next(c for c in later["nodes"][0]["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "Unknown" and applied > 20


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
