"""A large answer of a run's Kubernetes API is gzipped for a client that accepts it, as the real API server
does (heartbeat_site/k8sapi/views.py): a 5,000-node run's pods are 29 MB of JSON, a tenth of that compressed."""

from __future__ import annotations

import gzip
import json

import pytest
from django.test import Client

from heartbeat_site.k8sapi import cluster
from heartbeat_site.live.runstore import run_state

from .conftest import small_document
from .test_driver import drive_in_thread, run_factory, wait_for  # noqa: F401 (run_factory: a fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_an_answer_over_128_kib_is_gzipped_when_the_client_accepts_it(run_factory):  # noqa: F811
    run = run_factory(document={**small_document(nodes=100), "duration": "3m"})
    thread, stop, _ = drive_in_thread(run.id)
    try:
        wait_for(lambda: float(run_state.read_state(run.id).get("t", 0)) >= 20, timeout=60, what="the run at 20 s")
    finally:
        stop.set()
        thread.join(10)
    client = Client()
    nodes = f"/k8s/runs/{run.id}/api/v1/nodes"  # 100 Nodes: about 200 KB
    try:
        plain = client.get(nodes)
        zipped = client.get(nodes, HTTP_ACCEPT_ENCODING="gzip, deflate")
        refused = client.get(nodes, HTTP_ACCEPT_ENCODING="gzip;q=0, identity")
        one = client.get(f"{nodes}/node-7", HTTP_ACCEPT_ENCODING="gzip")
    finally:
        cluster._RUNS.pop(run.id, None)
    assert plain.status_code == zipped.status_code == refused.status_code == one.status_code == 200
    assert len(plain.content) > 128 * 1024 and "Content-Encoding" not in plain
    assert zipped["Content-Encoding"] == "gzip" and "Accept-Encoding" in zipped["Vary"].split(", ")
    assert len(zipped.content) < len(plain.content) / 5
    assert json.loads(gzip.decompress(zipped.content)) == json.loads(plain.content)
    assert "Content-Encoding" not in refused and "Content-Encoding" not in one  # q=0; a small answer
    assert json.loads(one.content)["metadata"]["name"] == "node-7"
