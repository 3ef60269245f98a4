"""Property-based tests of the REST API against its own OpenAPI document (schemathesis).

Every operation of ``GET /api/openapi.json`` gets requests generated from the document, valid ones and invalid
ones, sent to the Django application through WSGI; a bounded number per operation keeps it to well under a minute.
What must hold for each (the schema says what the server does, docs/architecture.md §6.1):

- no 5xx;
- every status code, content type, header and JSON body the server answers is one the document declares;
- a request the document accepts is not refused with 400, unless the operation's ``x-400-beyond-schema`` names
  the error code: what depends on the run (its nodes, its clock) or on one field against another, which a schema
  cannot say.

The run operations work on a fixture run (a finished 3-node run of 60 virtual seconds) so that they are exercised
beyond their 404; the control token of that run goes with every request, so commands and recipes are accepted.
``POST /api/runs`` stores runs without starting a driver (the ``dispatched`` fixture), and a command nobody's
driver dates answers ``202 pending`` after the short acknowledgement wait.

Every check of schemathesis runs, among them ``negative_data_rejection`` (a request the document refuses gets a
4xx) and ``missing_required_header`` (no bearer token: 401); ``positive_data_acceptance`` alone is replaced by
``valid_requests_accepted`` just below, which also lets pass the 400s the operation documents as beyond its schema.
"""

from __future__ import annotations

import orjson
import pytest
import schemathesis
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from heartbeat_site.live.api.openapi import DOCUMENT
from heartbeat_site.live.models import Run, RunStatus
from heartbeat_site.live.runs.tokens import hash_token
from simulation import load_scenario
from tests.web.conftest import small_document

APP = WSGIHandler()
schema = schemathesis.openapi.from_wsgi("/api/openapi.json", APP)
TOKEN = "fuzz-control-token"
EXAMPLES = 20  # per operation and phase; the whole file takes about 30 s on a 2-core machine


@pytest.fixture
def fuzz_run(dispatched, settings):
    """A finished run the run operations work on; no caps in the way of the generated POST /api/runs."""
    settings.HEARTBEAT = {**settings.HEARTBEAT, "COMMAND_ACK_SECONDS": 0.01, "MAX_RUNS": 10**6,
                          "MAX_RUNS_PER_CLIENT": 10**6}
    # Django's test client keeps the test's database connection across requests; a WSGI call closes it at
    # the end of each request (request_finished), which would close the test's transaction.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    scenario = load_scenario({**small_document(), "duration": "60s"})
    yield Run.objects.create(
        scenario_name=scenario.name, document=scenario.document, seed=scenario.seed, version=str(scenario.version),
        node_count=scenario.node_count, duration=scenario.duration, t_reached=60.0, status=RunStatus.FINISHED,
        control_token_hash=hash_token(TOKEN),
    )
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def documented_400(case, response) -> bool:
    """Whether a 400 carries an error code the operation's ``x-400-beyond-schema`` lists."""
    operation = DOCUMENT["paths"][case.operation.path][case.operation.method.lower()]
    try:
        code = orjson.loads(response.content).get("error")
    except orjson.JSONDecodeError:
        return False
    return response.status_code == 400 and code in operation.get("x-400-beyond-schema", {})


def valid_requests_accepted(ctx, response, case):
    """schemathesis's positive_data_acceptance, but for the 400s the document says a schema cannot foresee."""
    if documented_400(case, response):
        return None
    return positive_data_acceptance(ctx, response, case)


@pytest.mark.django_db
@schema.parametrize()
@settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
def test_the_api_does_what_its_openapi_document_says(case, fuzz_run):
    if "id" in (case.path_parameters or {}):
        case.path_parameters["id"] = fuzz_run.id
    # identity: schemathesis's WSGI client asks for gzip but does not decode it; compression has its own tests
    # (tests/web/test_classroom_mode.py, test_k8s_gzip.py).
    case.call_and_validate(
        headers={"Authorization": f"Bearer {TOKEN}", "Accept-Encoding": "identity"},
        excluded_checks=[positive_data_acceptance],
        additional_checks=[valid_requests_accepted],
    )
