"""The scenario builder's endpoints: validation with each problem at its field, in the command line's words,
and the headless preview of a document's first minutes (heartbeat_site/live/runs/preview.py)."""

from __future__ import annotations

import pytest
import yaml

from simulation.cli import main as simulation_cli

from .conftest import post_json

pytestmark = pytest.mark.django_db

UNREACHABLE = "node.kubernetes.io/unreachable"


def built(**extra) -> dict:
    """What the builder makes: two zones, a Deployment with a 30 s unreachable toleration, two faults."""
    document = {
        "name": "two-zones-custom",
        "title": {"en": "Two zones", "zh": "两个可用区"},
        "duration": "15m",
        "cluster": {
            "zones": [{"name": "zone-a", "nodes": 2}, {"name": "zone-b", "nodes": 1}],
            "workloads": [
                {"name": "web", "replicas": 4},
                {"name": "cache", "replicas": 2, "tolerations": [
                    {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]},
            ],
            "services": [{"name": "web", "selector": {"app": "web"}}],
        },
        "faults": [{"at": "60s", "action": "stop-kubelet", "node": "node-2"},
                   {"at": "8m", "action": "zone-outage", "zone": "zone-b"}],
    }
    document.update(extra)
    return document


def cli_errors(tmp_path, capsys, document: dict) -> list[str]:
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(document), encoding="utf-8")
    assert simulation_cli(["validate", str(path)]) == 2
    return [line.strip() for line in capsys.readouterr().err.splitlines()[1:]]


def test_validation_names_each_bad_field_in_the_command_lines_words(api, tmp_path, capsys):
    document = built()
    toleration = document["cluster"]["workloads"][1]["tolerations"][0]
    toleration["effect"] = "NoSchedule"  # tolerationSeconds only goes with NoExecute
    document["cluster"]["zones"][1]["nodes"] = "two"
    document["faults"][0]["node"] = "node-9"
    response = post_json(api, "/api/scenarios/validate", {"document": document})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid-scenario"
    fields = {e["field"]: e["message"] for e in body["errors"]}
    assert set(fields) == {"cluster.zones[1].nodes", "cluster.workloads[1].tolerations[0].tolerationSeconds",
                           "faults[0].node"}
    assert fields["faults[0].node"] == "unknown node 'node-9' (nodes: node-1, node-2, node-3)"
    assert [f"{e['field']}: {e['message']}" for e in body["errors"]] == cli_errors(tmp_path, capsys, document)


def test_a_valid_document_comes_back_normalised_with_its_defaults(api):
    response = post_json(api, "/api/scenarios/validate", {"document": built()})
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is True and body["node_count"] == 3
    assert body["document"]["controllerManager"]["nodeMonitorGracePeriod"] == "50s"  # 1.33's default
    older = post_json(api, "/api/scenarios/validate", {"document": built(kubernetesVersion="1.31")}).json()
    assert older["document"]["controllerManager"]["nodeMonitorGracePeriod"] == "40s"


def test_preview_shows_the_key_transitions_at_their_virtual_times(api):
    response = post_json(api, "/api/scenarios/preview", {"document": built()})
    assert response.status_code == 200
    body = response.json()
    assert body["until"] == 600  # ten minutes of a 15-minute scenario
    rows = [(row["t"], row["kind"], row.get("node")) for row in body["transitions"]]
    assert rows[0] == (60.0, "fault", "node-2")  # the cluster's start-up is left out
    by_kind = {}
    for row in body["transitions"]:
        by_kind.setdefault((row["kind"], row.get("node")), []).append(row)
    unknown = by_kind["node-ready", "node-2"][0]
    assert (unknown["from"], unknown["to"], unknown["t"]) == ("True", "Unknown", 110.22)  # 60 s + 50 s grace
    not_ready = by_kind["pods-not-ready", "node-2"][0]
    assert not_ready["t"] == 110.22 and not_ready["count"] >= 1
    no_execute = [r for r in by_kind["taint-added", "node-2"] if r["effect"] == "NoExecute"][0]
    assert (no_execute["key"], no_execute["t"]) == (UNREACHABLE, 115.3)
    evictions = by_kind["pods-terminating", "node-2"]
    # the cache pods tolerate the taint 30 s, the web pods the default 300 s
    assert {round(r["t"] - no_execute["t"]) for r in evictions} <= {30, 300}
    assert all(r["component"] == "taint-eviction-controller" for r in evictions)
    assert (480.0, "fault", None) in rows  # the zone outage at 8m
    assert body["summary"]["nodes"]["total"] == 3
    assert body["summary"]["nodes"]["ready"].get("Unknown") == 2  # node-2, and node-3 of zone-b


def test_preview_stops_at_until_and_never_past_the_duration(api):
    short = post_json(api, "/api/scenarios/preview", {"document": built(), "until": "2m"}).json()
    assert short["until"] == 120
    assert max(row["t"] for row in short["transitions"]) < 120
    five = post_json(api, "/api/scenarios/preview", {"document": built(duration="5m", faults=[])}).json()
    assert five["until"] == 300 and five["transitions"] == []


@pytest.mark.parametrize(
    ("body", "code", "named"),
    [
        ({"document": built(faults=[{"at": "1m", "action": "explode", "node": "node-1"}])}, "invalid-scenario",
         "faults[0].action"),
        ({"document": built(), "until": "20m"}, "bad-until", "until"),
        ({"document": built(), "until": "soon"}, "bad-until", "until"),
        ({"document": built(cluster={"nodes": 51}, faults=[])}, "preview-too-large", "cluster"),
        ({"document": "name: x"}, "wrong-type", "document"),
        ({"document": built(), "speed": 2}, "unknown-field", "speed"),
    ],
)
def test_preview_refuses_bad_input_naming_the_field(api, body, code, named):
    response = post_json(api, "/api/scenarios/preview", body)
    assert response.status_code == 400
    error = response.json()
    assert error["error"] == code
    assert named in error["message"]
    if code in ("invalid-scenario", "preview-too-large"):
        assert named in [e["field"] for e in error["errors"]]


def test_preview_is_post_only(api):
    response = api.get("/api/scenarios/preview")
    assert response.status_code == 405
    assert response.json()["error"] == "method-not-allowed"
