"""``POST /api/audit-replays`` (docs/observe.md): a run's own audit log export, replayed as a real cluster's, shows
the run's key transitions; lines that are not audit events or not about node health are counted, not fatal; a
file that is no audit log is a clear 400."""

from __future__ import annotations

import json

import pytest
import yaml

from heartbeat_site.live.models import Run
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore import event_log, run_state, snapshot_and_frames

from .conftest import reached_run

pytestmark = pytest.mark.django_db

# What a learner watches for in a node failure (the kinds of docs/simulation-api.md, "Events")
KEY_KINDS = ("node-ready", "taint-added", "taint-removed", "pod-ready", "pod-terminating", "pod-deleted", "endpoint")


def key_transitions(events: list[dict]) -> list[tuple]:
    """In order, without times (a replay's start where the log starts; a pod-terminating's ``to`` is a time)."""
    return [(e["kind"], e["node"], e["key"], e["effect"],
             None if e["kind"] == "pod-terminating" else json.dumps(e["to"], sort_keys=True), e["pod"])
            for e in events if e["type"] == "transition" and e["kind"] in KEY_KINDS]


def replay(api, body: bytes):
    return api.post("/api/audit-replays", body, content_type="application/jsonl")


def all_events(api, run_id: str) -> list[dict]:
    response = api.get(f"/api/runs/{run_id}/events?limit=5000")
    assert response.status_code == 200, response.content
    assert not response.json()["has_more"]
    return response.json()["events"]


@pytest.fixture
def broken_run(dispatched, replays_here):
    """Three nodes, node-2's kubelet stopped at 20 s, read up to 400 s: Unknown, taints, evictions."""
    return reached_run(400, "finished", {"action": "stop-kubelet", "node": "node-2"}, 20)


def test_a_runs_own_audit_log_replays_its_key_transitions(api, broken_run):
    exported = api.get(f"/api/runs/{broken_run.id}/export/audit.jsonl")
    assert exported.status_code == 200
    lines = exported.content.splitlines()
    foreign = [b"not json at all", json.dumps({"kind": "Event", "apiVersion": "v1", "reason": "Pulled"}).encode(),
               json.dumps([1, 2]).encode()]
    response = replay(api, b"\n".join([foreign[0], *lines[:5], foreign[1], *lines[5:], foreign[2]]) + b"\n")
    assert response.status_code == 201, response.content
    body = response.json()
    # the trainer's Service, a write of another resource, is counted too
    assert body["skipped_by_reason"] == {"malformed": 1, "not-audit-events": 2, "other-resources": 1}
    assert body["skipped"] == 4
    assert body["url"].endswith(f"/runs/{body['id']}/")

    replayed = all_events(api, body["id"])
    assert len(replayed) == body["events"]
    simulated = [json.loads(line) for line in api.get(f"/api/runs/{broken_run.id}/export/events.jsonl").content
                 .splitlines()]
    assert key_transitions(replayed) == key_transitions(simulated)
    # node-2 went Unknown, was tainted, its pods evicted: each by the component the record names
    unknown = next(e for e in replayed if e["type"] == "transition" and e["kind"] == "node-ready"
                   and e["node"] == "node-2" and e["to"] == "Unknown")
    assert unknown["component"] == "node-lifecycle-controller"
    evictions = [e for e in replayed if e["type"] == "write" and e["resource"] == "pods" and e["verb"] == "delete"
                 and e["node"] == "node-2"]
    assert evictions and {e["component"] for e in evictions} == {"taint-eviction-controller"}
    assert not any(e.get("inferred") for e in replayed)  # an audit record says who wrote

    run = Run.objects.get(pk=body["id"])
    assert (run.kind, run.status) == ("audit-replay", "finished")
    detail = api.get(f"/api/runs/{run.id}").json()
    assert (detail["kind"], detail["status"]) == ("audit-replay", "finished")
    snapshot = snapshot_and_frames.read_snapshot(run.id)
    assert snapshot["snapshot"]["objects"]["nodes"] == []  # the page draws it all as it joins


def test_a_replay_exports_its_log_and_its_audit_log_replays_again_the_same(api, broken_run):
    body = replay(api, api.get(f"/api/runs/{broken_run.id}/export/audit.jsonl").content).json()
    replayed = all_events(api, body["id"])
    exported = api.get(f"/api/runs/{body['id']}/export/events.jsonl")
    assert [json.loads(line) for line in exported.content.splitlines()] == replayed
    again = replay(api, api.get(f"/api/runs/{body['id']}/export/audit.jsonl").content).json()
    assert key_transitions(all_events(api, again["id"])) == key_transitions(replayed)
    summary = api.get(f"/api/runs/{body['id']}/export/summary.md").content.decode()
    assert "node-2     Ready True -> Unknown  [node-lifecycle-controller]" in summary
    objects = yaml.safe_load(api.get(f"/api/runs/{body['id']}/export/objects.yaml").content)
    assert ready_of({"objects": {"nodes": [o for o in objects["items"] if o["kind"] == "Node"]}}, "node-2") == "Unknown"
    assert "node-2" in api.get(f"/api/runs/{body['id']}/export/sequence.mmd").content.decode()


def ready_of(snapshot: dict, node: str) -> str | None:
    found = next(n for n in snapshot["objects"]["nodes"] if n["metadata"]["name"] == node)
    return next(c["status"] for c in found["status"]["conditions"] if c["type"] == "Ready")


def test_look_back_rebuilds_the_replayed_cluster_at_any_time(api, broken_run):
    body = replay(api, api.get(f"/api/runs/{broken_run.id}/export/audit.jsonl").content).json()
    replayed = all_events(api, body["id"])
    unknown = next(e for e in replayed if e["type"] == "transition" and e["kind"] == "node-ready"
                   and e["node"] == "node-2" and e["to"] == "Unknown")
    url = f"/api/runs/{body['id']}/snapshot"
    before, after = (api.get(f"{url}?t={t}").json() for t in (unknown["t"] - 0.001, unknown["t"] + 0.001))
    assert (ready_of(before["snapshot"], "node-2"), ready_of(after["snapshot"], "node-2")) == ("True", "Unknown")
    assert before["last_seq"] < unknown["seq"] <= after["last_seq"]  # the page reads the events after it
    assert after["clock"] == {"t": round(unknown["t"] + 0.001, 6), "speed": 1.0, "paused": True}
    end = api.get(url).json()["snapshot"]
    evicted = [p for p in end["objects"]["pods"] if p["spec"].get("nodeName") == "node-2"]
    assert evicted and all(p["metadata"].get("deletionTimestamp") for p in evicted)


def test_metadata_level_records_still_draw_who_wrote_what(api, broken_run):
    exported = api.get(f"/api/runs/{broken_run.id}/export/audit.jsonl").content.splitlines()
    lines = []
    for line in exported:
        record = json.loads(line)
        record.update(level="Metadata", requestObject=None)
        record.pop("responseObject")
        lines.append(json.dumps(record).encode())
    response = replay(api, b"\n".join(lines))
    assert response.status_code == 201, response.content
    replayed = all_events(api, response.json()["id"])
    renewals = [e for e in replayed if e["resource"] == "leases" and e["node"] == "node-2"]
    assert renewals and {e["component"] for e in renewals} == {"kubelet-lease"}
    assert not [e for e in replayed if e["type"] == "transition"]


@pytest.mark.parametrize(("body", "error"), [
    (b"name,ready\nnode-1,True\n", "not-an-audit-log"),
    (b'{"kind": "Pod", "apiVersion": "v1"}\n', "not-an-audit-log"),
    (b"", "not-an-audit-log"),
    (json.dumps({"kind": "Event", "apiVersion": "audit.k8s.io/v1", "stage": "ResponseComplete", "verb": "get",
                 "objectRef": {"resource": "nodes", "name": "node-1"}}).encode(), "nothing-to-replay"),
])
def test_a_file_that_is_no_audit_log_is_a_clear_400(api, body, error):
    response = replay(api, body)
    assert (response.status_code, response.json()["error"]) == (400, error)
    assert "audit" in response.json()["message"]
    assert not Run.objects.filter(kind="audit-replay").exists()


def test_a_replay_outlives_redis_forgetting_it(api, broken_run):
    """Past Redis's retention (or after Redis was emptied) a replayed audit log is published again from the copy
    the database keeps: its events, look-back and exports are what they were."""
    body = replay(api, api.get(f"/api/runs/{broken_run.id}/export/audit.jsonl").content).json()
    replayed = all_events(api, body["id"])
    summary = api.get(f"/api/runs/{body['id']}/export/summary.md").content
    client = get_redis()
    for key in client.keys(f"hb:run:{{{body['id']}}}:*"):
        client.delete(key)
    assert run_state.read_state(body["id"]) == {}

    assert all_events(api, body["id"]) == replayed
    assert api.get(f"/api/runs/{body['id']}/export/summary.md").content == summary
    end = api.get(f"/api/runs/{body['id']}/snapshot").json()
    assert ready_of(end["snapshot"], "node-2") == "Unknown"
    assert snapshot_and_frames.read_snapshot(body["id"])["snapshot"]["objects"]["nodes"] == []  # the start, again
    assert client.ttl(event_log.log_key(body["id"])) > 0  # kept for the retention once more
