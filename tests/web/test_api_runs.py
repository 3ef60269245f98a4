"""Creating and reading runs; caps; what the run row keeps."""

import pytest

from heartbeat_site.live.models import Run, RunStatus
from heartbeat_site.live.tokens import hash_token
from simulation import builtin_scenarios

from .conftest import post_json, small_document

pytestmark = [pytest.mark.django_db, pytest.mark.persistence]


def test_create_from_builtin_returns_links_and_token(api, dispatched):
    name = builtin_scenarios()[0].name
    response = post_json(api, "/api/runs", {"scenario": name, "speed": 10})
    assert response.status_code == 201, response.content
    body = response.json()
    run_id, token = body["id"], body["control_token"]
    assert body["viewer_url"] == f"http://testserver/runs/{run_id}/"
    assert body["ws_url"] == f"ws://testserver/ws/runs/{run_id}/"
    assert body["control_url"] == f"http://testserver/runs/{run_id}/#control={token}"
    assert token not in body["viewer_url"] and token not in body["ws_url"]
    assert dispatched == [run_id]
    run = Run.objects.get(pk=run_id)
    assert run.speed == 10
    assert run.status == RunStatus.PENDING
    assert run.control_token_hash == hash_token(token) and token not in run.control_token_hash
    assert run.document == builtin_scenarios()[0].document
    assert run.seed == builtin_scenarios()[0].seed


def test_run_ids_are_short_and_unguessable(new_run):
    ids = {new_run()[1] for _ in range(3)}
    assert len(ids) == 3
    assert all(len(i) == 12 and i.isalnum() for i in ids)


def test_create_from_document_with_overrides(new_run):
    body, run_id, _ = new_run(seed=99, paused=True, speed=0.5)
    run = Run.objects.get(pk=run_id)
    assert (run.seed, run.paused, run.speed, run.node_count) == (99, True, 0.5, 3)
    assert body["run"]["clock"] == {"t": 0.0, "speed": 0.5, "paused": True}


def test_get_run(api, new_run):
    _, run_id, token = new_run()
    body = api.get(f"/api/runs/{run_id}").json()
    assert body["id"] == run_id
    assert body["status"] == "pending"
    assert body["clock"] == {"t": 0.0, "speed": 1.0, "paused": False}
    assert body["last_seq"] == 0
    assert "control_token" not in body and token not in str(body)


def test_unknown_run_is_404(api):
    response = api.get("/api/runs/doesnotexist")
    assert response.status_code == 404
    assert response.json() == {"error": "unknown-run", "message": "no run with id 'doesnotexist'"}


def test_unknown_builtin_name(api, dispatched):
    response = post_json(api, "/api/runs", {"scenario": "kubelet-crahs"})
    assert response.status_code == 404
    assert "kubelet-crahs" in response.json()["message"]


def test_speed_out_of_range(api, dispatched, document):
    response = post_json(api, "/api/runs", {"document": document, "speed": 500})
    assert response.status_code == 400
    assert response.json()["message"] == "speed: must be between 0.1 and 100, got 500"


def test_both_scenario_and_document(api, dispatched, document):
    response = post_json(api, "/api/runs", {"document": document, "scenario": "x"})
    assert response.status_code == 400
    assert "exactly one" in response.json()["message"]


def test_per_client_cap(api, new_run, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "MAX_RUNS_PER_CLIENT": 2}
    new_run()
    new_run()
    response = post_json(api, "/api/runs", {"document": small_document()})
    assert response.status_code == 429
    assert "limit 2" in response.json()["message"]


def test_global_cap(api, new_run, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "MAX_RUNS": 1}
    new_run()
    response = post_json(api, "/api/runs", {"document": small_document()}, REMOTE_ADDR="10.9.9.9")
    assert response.status_code == 503
    assert response.json()["error"] == "too-many-runs"


def test_ended_runs_do_not_count_against_caps(api, new_run, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "MAX_RUNS_PER_CLIENT": 1}
    _, run_id, _ = new_run()
    Run.objects.filter(pk=run_id).update(status=RunStatus.FINISHED)
    new_run()
