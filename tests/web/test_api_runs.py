"""Creating and reading runs; caps; what the run row keeps."""

import pytest

from heartbeat_site.live.models import Run, RunStatus
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runs.tokens import hash_token
from heartbeat_site.live.runstore import activity
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


def test_links_use_the_public_url_behind_a_proxy(api, dispatched, settings):
    """Behind a TLS proxy the server sees http://internal:8000; HEARTBEAT_PUBLIC_URL is what the class opens."""
    settings.HEARTBEAT = {**settings.HEARTBEAT, "PUBLIC_URL": "https://class.example.org/"}
    body = post_json(api, "/api/runs", {"scenario": builtin_scenarios()[0].name}).json()
    run_id = body["id"]
    assert body["viewer_url"] == f"https://class.example.org/runs/{run_id}/"
    assert body["ws_url"] == f"wss://class.example.org/ws/runs/{run_id}/"
    assert body["control_url"].startswith(f"https://class.example.org/runs/{run_id}/#control=")


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


@pytest.fixture
def no_live_worker():
    """No worker seen (entries of workers other tests started and killed are dropped)."""
    get_redis().delete(activity.WORKERS)


@pytest.fixture
def one_live_worker(no_live_worker):
    activity.worker_seen("api-test-worker")
    yield
    activity.worker_gone("api-test-worker")


def test_workers_full_is_503_naming_the_capacity(api, new_run, settings, one_live_worker):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "NODES_PER_WORKER": 5}
    new_run()  # 3 nodes
    response = post_json(api, "/api/runs", {"document": small_document(nodes=3)}, REMOTE_ADDR="10.9.9.8")
    assert response.status_code == 503
    body = response.json()
    assert body["error"] == "workers-full"
    assert (
        "3 nodes of live runs" in body["message"]
        and "capacity of 5 nodes" in body["message"]
        and "1 worker" in body["message"]
    )
    assert post_json(api, "/api/runs", {"document": small_document(nodes=2)}, REMOTE_ADDR="10.9.9.7").status_code == 201


def test_runs_wait_for_a_worker_when_none_is_seen(api, new_run, settings, no_live_worker):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "NODES_PER_WORKER": 1}
    new_run()  # 3 nodes over the capacity of one worker, but no worker has reported yet


def test_a_lowered_max_nodes_takes_effect(api, dispatched, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "MAX_NODES": 2}
    response = post_json(api, "/api/runs", {"document": small_document(nodes=3)})
    assert response.status_code == 400
    assert response.json()["error"] == "cluster-too-large" and "limit is 2" in response.json()["message"]
