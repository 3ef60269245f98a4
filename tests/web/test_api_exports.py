"""``GET /api/runs/<id>/export/<name>``: every export is well-formed, names its file, and a drill's export keeps its
cause hidden until the reveal."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest
import yaml
from jsonschema import Draft202012Validator

from heartbeat_site.live.models import Run
from simulation.lessons import get_drill

from .conftest import post_json

DOCUMENT = {
    "name": "export-me",
    "title": {"en": "Export me"},
    "seed": 5,
    "duration": "5m",
    "cluster": {"nodes": 3, "workloads": [{"name": "web", "replicas": 3}]},
    "faults": [{"at": "30s", "action": "stop-kubelet", "node": "node-2"}],
}
PARTICIPANT = re.compile(r"^    participant [a-z_]+ as [A-Za-z0-9 ._/\-:=()+,'\[\]@>]+$")
ARROW = re.compile(r"^    [a-z_]+(->>|-x)[a-z_]+: [A-Za-z0-9 ._/\-:=()+,'\[\]@>]+$")
NOTE = re.compile(r"^    Note over [a-z_]+: [A-Za-z0-9 ._/\-:=()+,'\[\]@>]+$")


@pytest.fixture
def ended_run(api, dispatched):
    """A run whose viewers reached 120 s: the stop-kubelet fault at 30 s and node-2 going NotReady."""
    response = post_json(api, "/api/runs", {"document": DOCUMENT})
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    Run.objects.filter(pk=run_id).update(t_reached=120.0, last_seq=10**9, status="finished")
    return run_id


def export(api, run_id: str, name: str, query: str = ""):
    response = api.get(f"/api/runs/{run_id}/export/{name}{query}")
    assert response.status_code == 200, response.content
    # objects.yaml is named by its moment: a class downloads several of one run
    moment = f"-t{float(query.split('=')[1]):g}s" if name == "objects.yaml" and "t=" in query else ""
    filename = f"run-{run_id}-objects{moment}.yaml" if name == "objects.yaml" else f"run-{run_id}-{name}"
    assert response["Content-Disposition"] == f'attachment; filename="{filename}"'
    return response, response.content.decode("utf-8")


# audit.k8s.io/v1 Event as the API server's audit backends write it and decode it strictly (no unknown field):
# staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go, with authentication/v1 UserInfo and meta/v1 Status.
# Timestamps are meta/v1 MicroTime (RFC3339Micro: six fractional digits).
MICRO_TIME = {"type": "string", "pattern": r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}(Z|[+-]\d\d:\d\d)$"}
STRINGS = {"type": "array", "items": {"type": "string"}}
USER_INFO = {"type": "object", "additionalProperties": False, "properties": {
    "username": {"type": "string"}, "uid": {"type": "string"}, "groups": STRINGS,
    "extra": {"type": "object", "additionalProperties": STRINGS}}}
AUDIT_EVENT = {
    "type": "object",
    "additionalProperties": False,
    "required": ["kind", "apiVersion", "level", "auditID", "stage", "requestURI", "verb", "user"],
    "properties": {
        "kind": {"const": "Event"},
        "apiVersion": {"const": "audit.k8s.io/v1"},
        "level": {"enum": ["None", "Metadata", "Request", "RequestResponse"]},
        "auditID": {"type": "string", "format": "uuid", "minLength": 36},
        "stage": {"enum": ["RequestReceived", "ResponseStarted", "ResponseComplete", "Panic"]},
        "requestURI": {"type": "string", "pattern": "^/apis?/"},
        "verb": {"enum": ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]},
        "user": USER_INFO,
        "impersonatedUser": USER_INFO,
        "sourceIPs": STRINGS,
        "userAgent": {"type": "string"},
        "objectRef": {"type": "object", "additionalProperties": False, "properties": {
            key: {"type": "string"} for key in ("resource", "namespace", "name", "uid", "apiGroup", "apiVersion",
                                                "resourceVersion", "subresource")}},
        "responseStatus": {"type": "object", "additionalProperties": False, "properties": {
            "metadata": {"type": "object"}, "status": {"enum": ["Success", "Failure"]}, "message": {"type": "string"},
            "reason": {"type": "string"}, "details": {"type": "object"}, "code": {"type": "integer"}}},
        "requestObject": {"type": ["object", "null"]},
        "responseObject": {"type": ["object", "null"]},
        "requestReceivedTimestamp": MICRO_TIME,
        "stageTimestamp": MICRO_TIME,
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
    },
}


@pytest.mark.django_db
def test_audit_log_is_audit_k8s_io_v1_events(api, ended_run):
    response, text = export(api, ended_run, "audit.jsonl")
    assert response["Content-Type"].startswith("application/jsonl")
    records = [json.loads(line) for line in text.splitlines()]
    assert len(records) > 50
    validator = Draft202012Validator(AUDIT_EVENT, format_checker=Draft202012Validator.FORMAT_CHECKER)
    for record in records:
        errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(record)]
        assert not errors, (record["requestURI"], errors)
    assert len({r["auditID"] for r in records}) == len(records)
    assert all(r["requestReceivedTimestamp"] <= r["stageTimestamp"] for r in records)
    assert any(r["objectRef"]["resource"] == "leases" and r["verb"] == "update" for r in records)


@pytest.mark.django_db
def test_event_log_has_every_event_up_to_the_reached_time(api, ended_run):
    _, text = export(api, ended_run, "events.jsonl")
    events = [json.loads(line) for line in text.splitlines()]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert max(e["t"] for e in events) <= 120.0
    assert any(e["type"] == "fault" and e["action"] == "stop-kubelet" for e in events)


@pytest.mark.django_db
def test_summary_names_the_scenario_commands_and_transitions(api, ended_run):
    response, text = export(api, ended_run, "summary.md")
    assert response["Content-Type"].startswith("text/markdown")
    assert text.startswith("# Export me\n")
    assert "`export-me`" in text and "## Trainer's commands" in text
    assert "FAULT      stop-kubelet" in text
    assert re.search(r"node-2 +Ready True -> Unknown", text), text


@pytest.mark.django_db
def test_mermaid_sequence_diagram_follows_its_grammar(api, ended_run):
    response, text = export(api, ended_run, "sequence.mmd", "?from=20&to=100")
    assert response["Content-Type"].startswith("text/vnd.mermaid")
    lines = text.splitlines()
    assert lines[0] == "sequenceDiagram"
    for line in lines[1:]:
        assert PARTICIPANT.match(line) or ARROW.match(line) or NOTE.match(line), line
    assert any("PUT leases/node-2 200" in line for line in lines)
    assert any(line.startswith("    Note over nlc: ") and "nlc.mark-unknown" in line for line in lines)
    times = [float(m.group(1)) for m in (re.search(r": (\d+\.\d+)s ", line) for line in lines) if m]
    assert times and min(times) >= 20 and max(times) <= 100


@pytest.mark.django_db
def test_sequence_export_of_a_statefulset_run_draws_its_controllers(api, dispatched):
    """non-graceful-shutdown from the taint eviction of node-2's pods to the out-of-service taint (8 min) and after:
    the StatefulSet controller waiting for db-1's name, the trainer's taint, Pod GC's force delete and the
    attach/detach controller's immediate detach, each from its own lane."""
    response = post_json(api, "/api/runs", {"scenario": "non-graceful-shutdown"})
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    Run.objects.filter(pk=run_id).update(t_reached=600.0, last_seq=10**9, status="finished")
    _response, text = export(api, run_id, "sequence.mmd", "?from=400&to=520")
    lines = text.splitlines()
    for line in lines[1:]:
        assert PARTICIPANT.match(line) or ARROW.match(line) or NOTE.match(line), line
    participants = {line.split()[1] for line in lines if line.startswith("    participant ")}
    assert {"trainer", "podgc", "volumes", "statefulset"} <= participants, participants

    def drawn(start: str, text: str) -> bool:
        return any(line.startswith(f"    {start}") and text in line for line in lines)

    assert drawn("trainer->>kube_apiserver: ", "PATCH nodes/node-2")
    assert drawn("Note over podgc: ", "podgc.terminating-out-of-service")
    assert drawn("Note over volumes: ", "attachdetach.force-detach-out-of-service")
    assert drawn("Note over statefulset: ", "statefulset.wait-same-name")


@pytest.mark.django_db
def test_sequence_svg_is_xml_for_the_chosen_node(api, ended_run):
    response, text = export(api, ended_run, "sequence.svg", "?node=node-3&to=60")
    assert response["Content-Type"].startswith("image/svg+xml")
    root = ET.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    labels = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert any("leases/node-3" in label for label in labels)
    assert not any("leases/node-2" in label for label in labels)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "code", "fragment"),
    [
        ("export/report.pdf", "unknown-export", "no export named 'report.pdf'"),
        ("export/sequence.mmd?from=abc", "bad-query", "?from= must be a virtual time"),
        ("export/sequence.mmd?to=-1", "bad-query", "?to= must be a virtual time"),
        ("export/sequence.svg?from=90&to=10", "bad-window", "?from= (90) is after ?to= (10)"),
        ("export/sequence.svg?node=node-9", "unknown-node", "no node named 'node-9'"),
        ("export/objects.yaml?t=121", "not-reached", "reached only t=120"),
        ("export/objects.yaml?t=soon", "bad-query", "?t= must be a number"),
    ],
)
def test_bad_requests_name_the_problem(api, ended_run, path, code, fragment):
    response = api.get(f"/api/runs/{ended_run}/{path}")
    assert response.status_code == 400
    assert response.json()["error"] == code and fragment in response.json()["message"]


@pytest.mark.django_db
def test_a_drill_export_does_not_name_its_cause_before_the_reveal(api, dispatched):
    drill = get_drill("silent-node")
    run_id = post_json(api, "/api/runs", {"drill": drill.name}).json()["id"]
    Run.objects.filter(pk=run_id).update(t_reached=240.0, last_seq=10**9)
    for name in ("summary.md", "events.jsonl", "audit.jsonl", "sequence.mmd"):
        _, text = export(api, run_id, name)
        assert drill.fault["action"] not in text, name
    Run.objects.filter(pk=run_id).update(revealed=True)
    _, text = export(api, run_id, "summary.md")
    assert drill.fault["action"] in text


def ready_status(listing: dict, node: str) -> str:
    item = next(i for i in listing["items"] if i["kind"] == "Node" and i["metadata"]["name"] == node)
    return next(c["status"] for c in item["status"]["conditions"] if c["type"] == "Ready")


@pytest.mark.django_db
def test_objects_yaml_is_the_cluster_at_t_as_kubectl_lists_it(api, ended_run, tmp_path):
    response, text = export(api, ended_run, "objects.yaml", "?t=120")
    assert response["Content-Type"].startswith("application/yaml")
    listing = yaml.safe_load(text)
    assert (listing["apiVersion"], listing["kind"]) == ("v1", "List")
    assert all(item["apiVersion"] and item["kind"] for item in listing["items"])
    assert ready_status(listing, "node-2") == "Unknown"  # its kubelet stopped at 30 s, the grace period is 50 s
    assert ready_status(yaml.safe_load(export(api, ended_run, "objects.yaml", "?t=20")[1]), "node-2") == "True"

    # The real kubectl reads the file on its own (--local: no server): every item, by its kind and name.
    path = tmp_path / "objects.yaml"
    path.write_text(text)
    kubectl = shutil.which("kubectl") or "/usr/bin/kubectl"
    done = subprocess.run([kubectl, "annotate", "--local", "-f", str(path), "-o", "name", "checked=yes"],
                          capture_output=True, text=True, timeout=60,
                          env={"HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "none")})
    assert done.returncode == 0, done.stderr
    names = done.stdout.split()
    assert {"node/node-1", "node/node-2", "node/node-3", "lease.coordination.k8s.io/node-2"} <= set(names)
    pods = [f"pod/{i['metadata']['name']}" for i in listing["items"] if i["kind"] == "Pod"]
    assert len(pods) == 3 and set(pods) <= set(names)
    assert len(names) == len(listing["items"])


@pytest.mark.django_db
def test_an_ended_runs_export_stays_as_it_was_a_live_runs_follows_the_run(api, ended_run, replays_here):
    """What a class downloads: an ended run's file, the same at every download; a live run's, up to where its
    viewers are at each download. (That an ended run's is built once, not per download, is a cost: the file is
    the same either way.)"""
    first = export(api, ended_run, "events.jsonl")[1]
    assert export(api, ended_run, "events.jsonl")[1] == first
    assert export(api, ended_run, "summary.md")[1] == export(api, ended_run, "summary.md")[1]

    Run.objects.filter(pk=ended_run).update(status="running", t_reached=60.0)
    at_60 = [json.loads(line) for line in export(api, ended_run, "events.jsonl")[1].splitlines()]
    Run.objects.filter(pk=ended_run).update(t_reached=90.0)
    at_90 = [json.loads(line) for line in export(api, ended_run, "events.jsonl")[1].splitlines()]
    assert at_60 and max(e["t"] for e in at_60) <= 60.0 < max(e["t"] for e in at_90) <= 90.0
    assert at_90[:len(at_60)] == at_60
