"""The OpenAPI document matches the routes; production settings pass `check --deploy`."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import get_resolver

from heartbeat_site.live.api.openapi import DOCUMENT

ROOT = Path(__file__).resolve().parents[2]


def api_routes() -> set[str]:
    """Every route under /api/: the REST API's, and each run's kubeconfig (routed by heartbeat_site/k8sapi/urls.py)."""
    patterns = [("/api/", pattern) for pattern in get_resolver("heartbeat_site.live.api.urls").url_patterns]
    patterns += [("/", pattern) for pattern in get_resolver("heartbeat_site.k8sapi.urls").url_patterns
                 if pattern.pattern.regex.pattern.startswith("^api/")]
    routes = set()
    for prefix, pattern in patterns:
        regex = pattern.pattern.regex.pattern.strip("^$").replace("/?", "").replace("\\.", ".")
        regex = re.sub(r"\(\?P<(run|comparison)_id>[^)]*\)", "{id}", regex)
        regex = re.sub(r"\(\?P<name>[^)]*\)", "{name}", regex)
        routes.add(prefix + regex)
    return routes


def test_every_route_is_documented_and_every_path_exists():
    assert api_routes() == set(DOCUMENT["paths"])


def test_served_document_is_openapi_3(client):
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    document = response.json()
    assert document["openapi"].startswith("3.")
    refs = re.findall(r'"\$ref": "#/components/(\w+)/(\w+)"', response.content.decode().replace('":"', '": "'))
    for section, name in refs:
        assert name in document["components"][section], f"dangling $ref {section}/{name}"
    post = document["paths"]["/api/runs/{id}/commands"]["post"]
    assert {"202", "401", "403"} <= set(post["responses"])


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "HEARTBEAT_"))}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


PRODUCTION = {
    "HEARTBEAT_PRODUCTION": "1",
    "DJANGO_SECRET_KEY": "k3y-" + "x9Qz!r7Lm#2vWp@5tB&8nY" * 3,
    "DJANGO_ALLOWED_HOSTS": "heartbeat.example.org",
}


def test_production_settings_pass_check_deploy_without_warnings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DJANGO_SECRET_KEY": ""}, "DJANGO_SECRET_KEY"),
        ({"DJANGO_ALLOWED_HOSTS": ""}, "DJANGO_ALLOWED_HOSTS"),
        ({"HEARTBEAT_MAX_RUNS": "lots"}, "HEARTBEAT_MAX_RUNS='lots' is not a whole number"),
        ({"HEARTBEAT_PRODUCTION": "perhaps"}, "HEARTBEAT_PRODUCTION='perhaps' is not a boolean"),
        ({"HEARTBEAT_COMMAND_ACK_SECONDS": "90"}, "HEARTBEAT_COMMAND_ACK_SECONDS=90.0 must be <= 30.0"),
        ({"HEARTBEAT_CLASSROOM": "1"}, "HEARTBEAT_CLASSROOM=1 (a class from one laptop) cannot be combined"),
    ],
)
def test_bad_configuration_stops_start_up_naming_the_variable(env, message):
    result = manage("check", **{**PRODUCTION, **env})
    assert result.returncode != 0
    assert message in result.stderr
