"""A repeated Table list reprints only the objects that changed (heartbeat_site/k8sapi/tables.py, ``RowCache``):
what kubectl prints must still be what a fresh print of the same objects gives, ages included, while a run
crashes a kubelet, marks pods not ready, evicts and replaces them. A real driver (in a thread) and Redis."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from django.test import Client

from heartbeat_site.k8sapi import cluster, tables
from heartbeat_site.live import runstore

from .test_driver import drive_in_thread, run_factory, wait_for  # noqa: F401 (run_factory: a fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
KUBELET_CRASH = Path(__file__).resolve().parents[2] / "simulation" / "builtin" / "kubelet-crash.yaml"
LISTS = [  # (path under the run's API, resource, includeObject)
    ("api/v1/pods", "pods", "Metadata"),
    ("api/v1/pods", "pods", "Object"),
    ("api/v1/nodes", "nodes", "Metadata"),
    ("api/v1/events", "events", "Metadata"),
    ("apis/coordination.k8s.io/v1/leases", "leases", "Metadata"),
    ("apis/discovery.k8s.io/v1/endpointslices", "endpointslices", "Metadata"),
    ("apis/apps/v1/deployments", "deployments", "Metadata"),
]


def test_repeated_tables_print_what_a_fresh_print_gives(run_factory):  # noqa: F811
    run = run_factory(document=KUBELET_CRASH.read_text())
    thread, stop, _ = drive_in_thread(run.id)
    client = Client()
    seen: set[str] = set()
    try:
        for until in (30, 120, 200, 430, 500):  # before the crash, NotReady, tainted, evicted, replaced
            wait_for(lambda t=until: float(runstore.read_state(run.id).get("t", 0)) >= t, timeout=30,
                     what=f"the run at {until} s")
            for path, resource, include in LISTS:
                response = client.get(f"/k8s/runs/{run.id}/{path}?includeObject={include}", HTTP_ACCEPT=TABLE)
                assert response.status_code == 200, response.content
                served = orjson.loads(response.content)
                objs = cluster._RUNS[run.id]  # as the request left them: a run this small has no follower
                store = objs.objects[resource]
                fresh = tables.table(resource, [store[key] for key in objs.sorted_keys(resource)], objs.now,
                                     served["metadata"], include=include)
                assert served == orjson.loads(orjson.dumps(fresh)), f"{path} {include} at {objs.t} s"
                seen.update(row["cells"][2] for row in served["rows"] if resource == "pods")
    finally:
        stop.set()
        thread.join(10)
        cluster._RUNS.pop(run.id, None)
    assert {"Running", "Terminating"} <= seen  # the lists did see pods change
