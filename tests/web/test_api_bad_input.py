"""Bad input of every kind is a 4xx JSON answer naming the problem, never a 500."""

import pytest

from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Run, RunKind
from heartbeat_site.live.runs import commands

from .conftest import bearer, post_json, small_document

pytestmark = [pytest.mark.django_db, pytest.mark.persistence]


def assert_json_error(response, status, *fragments):
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body = response.json()
    assert set(body) >= {"error", "message"}
    for fragment in fragments:
        assert fragment in body["message"], body
    return body


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"{not json", "malformed JSON"),
        (b"", "needs a JSON object body"),
        (b"[1, 2]", "must be a JSON object, got an array"),
        (b'"text"', "got a string"),
        (b"\xff\xfe", "UTF-8"),
        (b"[" * 100_000 + b"]" * 100_000, "JSON"),
    ],
)
def test_malformed_bodies(api, dispatched, raw, fragment):
    response = api.post("/api/runs", data=raw, content_type="application/json")
    assert_json_error(response, 400, fragment)


def test_oversized_body(api, dispatched, settings):
    blob = "x" * (settings.HEARTBEAT_MAX_BODY_BYTES + 10)
    response = post_json(api, "/api/runs", {"document": small_document(), "pad": blob})
    assert_json_error(response, 413, "limit")


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"scenario": 42}, "scenario: must be a string, got a number"),
        ({"scenario": None}, "scenario: must not be null"),
        ({"document": {"name": "x"}, "speed": 0}, "speed: must be between 0.1 and 100, got 0"),
        ({"document": "kubelet-crash"}, "document: must be a JSON object"),
        ({"document": {"name": "x"}, "speed": "fast"}, "speed: must be a number, got a string"),
        ({"document": {"name": "x"}, "speed": True}, "speed: must be a number, got a boolean"),
        ({"document": {"name": "x"}, "seed": 1.5}, "seed: must be a whole number"),
        ({"document": {"name": "x"}, "paused": "yes"}, "paused: must be true or false"),
        ({"document": {"name": "x"}, "colour": 1}, "unknown field(s) colour"),
        ({}, "exactly one"),
    ],
)
def test_wrong_types_on_create(api, dispatched, body, fragment):
    assert_json_error(post_json(api, "/api/runs", body), 400, fragment)


@pytest.mark.parametrize(
    "shape", [{"nodes": 10**9}, {"zones": [{"name": "a", "nodes": 4000}, {"name": "b", "nodes": 1001}]}]
)
def test_huge_clusters_refused(api, dispatched, shape):
    document = small_document()
    document["cluster"] = shape
    body = assert_json_error(post_json(api, "/api/runs", {"document": document}), 400, "limit is 5000")
    assert body["error"] == "cluster-too-large"
    assert dispatched == []


def test_largest_allowed_cluster_is_accepted(api, dispatched):
    document = small_document(nodes=5000)
    document["cluster"]["workloads"] = []
    document["cluster"]["services"] = []
    response = post_json(api, "/api/scenarios/validate", {"document": document})
    assert response.status_code == 200, response.content


def test_wrong_method_is_json_405(api):
    response = api.delete("/api/scenarios")
    body = assert_json_error(response, 405, "DELETE is not allowed")
    assert response["Allow"] == "GET, POST"
    assert body["allowed"] == ["GET", "POST"]


def test_unknown_api_path_is_json_404(api):
    assert_json_error(api.get("/api/nothing/here"), 404, "/api/nothing/here")


def test_bad_query_parameters(api, new_run):
    _, run_id, _ = new_run()
    assert_json_error(api.get(f"/api/runs/{run_id}/events?after=-3"), 400, "?after= must be a whole number")
    assert_json_error(api.get(f"/api/runs/{run_id}/events?after=abc"), 400, "'abc'")
    assert_json_error(api.get(f"/api/runs/{run_id}/events?after=%C2%B2"), 400, "?after= must be a whole number")
    assert_json_error(
        api.get(f"/api/runs/{run_id}/events?types=fault,gossip"), 400, "?types= takes a comma-separated list"
    )
    assert_json_error(api.get(f"/api/runs/{run_id}/audit?limit=0"), 400, "?limit= must be between 1 and 5000")


@pytest.mark.parametrize(
    ("command", "fragment"),
    [
        ({}, '"action"'),
        ({"action": 7}, '"action"'),
        ({"action": "explode"}, "unknown action 'explode'"),
        ({"action": "stop-kubelet", "node": "node-99"}, "node-99"),
        ({"action": "stop-kubelet"}, "node"),
        ({"action": "speed"}, "value"),
        ({"action": "speed", "value": 0}, "between 0.1 and 100"),
        ({"action": "speed", "value": "10"}, "must be a number"),
        ({"action": "pause", "extra": 1}, "unknown field(s) extra"),
        ({"action": "stop", "extra": 1}, "stop command: unknown field(s) extra; allowed: action"),
    ],
)
def test_bad_commands(api, new_run, command, fragment):
    _, run_id, token = new_run()
    response = post_json(api, f"/api/runs/{run_id}/commands", command, **bearer(token))
    assert_json_error(response, 400, fragment)
    with pytest.raises(ApiError) as intake:  # what the Kubernetes API's writes hand in: read by the same model
        commands.submit(Run.objects.get(pk=run_id), command)
    assert (intake.value.status, intake.value.code, intake.value.message) == (400, *map(response.json().get,
                                                                                       ("error", "message")))


def test_a_real_clusters_run_takes_a_well_formed_stop_alone(api, new_run):
    _, run_id, token = new_run()
    Run.objects.filter(pk=run_id).update(kind=RunKind.OBSERVATION)
    for command, code in (({"action": "pause"}, "not-simulated"), ({"action": "stop", "now": True}, "unknown-field")):
        response = post_json(api, f"/api/runs/{run_id}/commands", command, **bearer(token))
        assert (response.status_code, response.json()["error"]) == (400, code)


def test_command_on_unknown_run(api):
    assert_json_error(post_json(api, "/api/runs/nope/commands", {"action": "pause"}, **bearer("x")), 404, "nope")


@pytest.mark.parametrize(
    ("patch", "field", "words"),
    [
        ({"startTime": "2026-01-01T00:00:00+99:00"}, "startTime", "the time zone offset +99:00 is out of range"),
        ({"faults": [{"at": None, "action": "restart-controller-manager"}]}, "faults[0].at", "is required"),
        ({"faults": {}}, "faults", "must be a list"),
    ],
)
def test_a_bad_document_is_answered_in_words_naming_its_field(api, patch, field, words):
    body = assert_json_error(post_json(api, "/api/scenarios/validate", {**small_document(), **patch}), 400, words)
    assert {"field": field, "message": body["errors"][0]["message"]} in body["errors"]
    assert words in body["errors"][0]["message"]
    assert "timedelta" not in body["message"] and "datetime" not in body["message"]
