"""Scenario endpoints: list, get, validate, save."""

import pytest

from heartbeat_site.live.runs.saved_scenarios import load_builtins
from simulation import builtin_scenarios

from .conftest import post_json, small_document

pytestmark = [pytest.mark.django_db, pytest.mark.persistence]


def test_builtins_are_loaded_and_listed(api):
    names = load_builtins()
    assert names == [s.name for s in builtin_scenarios()]
    listed = api.get("/api/scenarios").json()["scenarios"]
    assert [s["name"] for s in listed] == names
    assert all({"name", "title", "builtin", "node_count"} <= set(s) for s in listed)
    assert all(s["builtin"] for s in listed)


def test_load_builtins_is_idempotent(api):
    load_builtins()
    load_builtins()
    assert len(api.get("/api/scenarios").json()["scenarios"]) == len(builtin_scenarios())


def test_get_builtin_document_even_before_loading(api):
    name = builtin_scenarios()[0].name
    response = api.get(f"/api/scenarios/{name}")
    assert response.status_code == 200
    assert response.json()["name"] == name


def test_unknown_scenario_is_404_json(api):
    response = api.get("/api/scenarios/no-such-thing")
    assert response.status_code == 404
    assert response.json()["error"] == "unknown-scenario"
    assert "no-such-thing" in response.json()["message"]


def test_validate_returns_normalised_document(api, document):
    response = post_json(api, "/api/scenarios/validate", {"document": document})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["valid"] is True
    assert body["node_count"] == 3
    assert body["document"]["name"] == "classroom-small"


def test_validate_names_the_bad_field(api, document):
    document["cluster"]["nodes"] = "three"
    response = post_json(api, "/api/scenarios/validate", document)
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid-scenario"
    assert any(e["field"].startswith("cluster") for e in body["errors"]), body
    assert "cluster" in body["message"]


def test_unknown_field_rejected(api, document):
    document["colour"] = "blue"
    response = post_json(api, "/api/scenarios/validate", document)
    assert response.status_code == 400
    assert "colour" in response.json()["message"]


def test_save_custom_scenario_then_get_it(api):
    response = post_json(api, "/api/scenarios", {"document": small_document("my-class")})
    assert response.status_code == 201, response.content
    assert api.get("/api/scenarios/my-class").json()["name"] == "my-class"
    assert post_json(api, "/api/scenarios", {"document": small_document("my-class")}).status_code == 200
    listed = {s["name"]: s for s in api.get("/api/scenarios").json()["scenarios"]}
    assert listed["my-class"]["builtin"] is False


def test_cannot_overwrite_a_builtin(api):
    name = builtin_scenarios()[0].name
    response = post_json(api, "/api/scenarios", {"document": small_document(name)})
    assert response.status_code == 409
    assert "built-in" in response.json()["message"]
