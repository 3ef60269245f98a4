"""GET /api/scenarios/schema.json, and the OpenAPI document's scenario bodies agree with what the server does."""

from __future__ import annotations

import pytest
from jsonschema import Draft202012Validator

from heartbeat_site.live.api.openapi import DOCUMENT

from .conftest import post_json, small_document

pytestmark = [pytest.mark.django_db, pytest.mark.persistence]


def _body_schema(path: str) -> Draft202012Validator:
    """The request body schema of a POST in the OpenAPI document, its references resolved there."""
    body = DOCUMENT["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return Draft202012Validator({**body, "components": DOCUMENT["components"]})


def _documents() -> list[dict]:
    bad_toleration = small_document()
    bad_toleration["cluster"]["workloads"][0]["tolerations"] = [{"operator": "Equal", "effect": "NoExecute"}]
    zones_and_nodes = small_document()
    zones_and_nodes["cluster"]["zones"] = [{"name": "zone-a", "nodes": 2}]
    with_faults = small_document()
    with_faults["faults"] = [
        {"at": "60s", "action": "stop-kubelet", "node": "node-2", "for": "2m"},
        {"at": 90, "action": "slow-apiserver", "latency": "2s"},
        {"at": "2m", "action": "create-node", "name": "node-9", "zone": "zone-x", "kubelet": False},
    ]
    return [
        small_document(),
        with_faults,
        {"name": "bare"},
        {},
        {"name": "Not A Slug"},
        {**small_document(), "seed": "seven"},
        {**small_document(), "colour": "blue"},
        {**small_document(), "kubernetesVersion": "1.26"},
        {**small_document(), "duration": "soon"},
        {**small_document(), "faults": [{"at": "1m", "action": ["stop-kubelet"], "node": "node-1"}]},
        {**small_document(), "faults": [{"at": "1m", "action": "cordon", "node": "node-1", "latency": "1s"}]},
        bad_toleration,
        zones_and_nodes,
    ]


def test_the_schema_is_served_and_is_the_openapi_documents(api):
    response = api.get("/api/scenarios/schema.json")
    assert response.status_code == 200
    schema = response.json()
    Draft202012Validator.check_schema(schema)
    assert schema["required"] == ["name"]
    assert set(schema["properties"]) == set(DOCUMENT["components"]["schemas"]["Scenario"]["properties"])
    for path in ("/api/scenarios", "/api/runs"):
        ref = DOCUMENT["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        body = DOCUMENT["components"]["schemas"][ref.rsplit("/", 1)[-1]]
        assert body["properties"]["document"] == {"$ref": "#/components/schemas/Scenario"}


@pytest.mark.parametrize("document", _documents(), ids=lambda d: str(d.get("name", "no-name")))
def test_schema_and_server_agree_on_a_document(api, document):
    served = Draft202012Validator(api.get("/api/scenarios/schema.json").json())
    valid = served.is_valid(document)
    assert _body_schema("/api/scenarios/validate").is_valid(document) is valid
    assert _body_schema("/api/scenarios/validate").is_valid({"document": document}) is valid
    response = post_json(api, "/api/scenarios/validate", {"document": document})
    assert response.status_code == (200 if valid else 400), (response.json(), list(served.iter_errors(document)))


def test_an_empty_document_is_refused_by_the_openapi_document_and_the_server(api, dispatched):
    assert not _body_schema("/api/runs").is_valid({"document": {}})
    assert not _body_schema("/api/scenarios").is_valid({"document": {}})
    assert post_json(api, "/api/runs", {"document": {}}).status_code == 400
    assert post_json(api, "/api/scenarios", {"document": {}}).status_code == 400
    assert dispatched == []
