"""A node-level run's objects in the Kubernetes API follow its event log between requests
(heartbeat_site/k8sapi/cluster.py): its bounded log holds only seconds of a 5,000-node run, and a
learner's next `kubectl get` must not find it moved on and wait for the driver's whole state again.
A real driver (in a thread) and Redis."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from heartbeat_site.k8sapi import cluster, reads
from heartbeat_site.live.runstore import run_state

from .conftest import drive_in_thread
from .test_driver import run_factory, wait_for  # noqa: F401 (run_factory: a fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_a_node_level_runs_objects_follow_its_log_between_requests(run_factory, settings, monkeypatch):  # noqa: F811
    settings.HEARTBEAT = {**settings.HEARTBEAT, "NODE_LEVEL_NODES": 2}  # 3 nodes are a large run here
    monkeypatch.setattr(cluster, "FOLLOW_EVERY", 0.05)
    run = run_factory(speed=20, duration="10m")
    thread, stop, _ = drive_in_thread(run.id)
    try:
        wait_for(lambda: int(run_state.read_state(run.id).get("last_seq", 0)) > 20, what="the run's first events")
        objs = cluster.objects_of(run)  # one request: the driver's objects, then the log
        assert objs.node_level and objs.objects["nodes"]
        first = objs.last_seq
        def caught_up() -> bool:  # within a few dozen events of what the driver published, no request made
            return objs.last_seq > first + 20 and objs.last_seq >= int(run_state.read_state(run.id)["last_seq"]) - 50

        wait_for(caught_up,
                 what="the objects following the log with no request")
        monkeypatch.setattr(cluster, "FOLLOW_SECONDS", 0.0)  # no request for that long: it stops
        objs.follower.join(5)
        assert not objs.follower.is_alive()
    finally:
        stop.set()
        thread.join(10)
        cluster._RUNS.pop(run.id, None)


def test_a_list_is_one_state_while_the_log_is_followed(run_factory, settings, monkeypatch):  # noqa: F811
    """Every object of a list is at or before the resourceVersion the list names, as etcd's revision
    guarantees on a real server (a watch from it then misses nothing and repeats nothing), even
    while the follower applies the log: a list of 50,000 pods takes a third of a second to read."""
    settings.HEARTBEAT = {**settings.HEARTBEAT, "NODE_LEVEL_NODES": 2}
    monkeypatch.setattr(cluster, "FOLLOW_EVERY", 0.01)
    run = run_factory(speed=50, duration="10m")
    thread, stop, _ = drive_in_thread(run.id)
    url = f"/k8s/runs/{run.id}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
    client = Client()
    plain = reads.Selection.matches

    def slow_matches(self: reads.Selection, obj: dict) -> bool:  # a large list, read while the run goes on
        time.sleep(0.1)
        return plain(self, obj)

    try:
        wait_for(lambda: int(run_state.read_state(run.id).get("last_seq", 0)) > 20, what="the run's first events")
        assert client.get(url).status_code == 200  # the objects loaded, and followed from now on
        monkeypatch.setattr(reads.Selection, "matches", slow_matches)
        newest = []
        for _ in range(6):
            body = client.get(url).json()
            listed = int(body["metadata"]["resourceVersion"])
            newest.append(max(int(item["metadata"]["resourceVersion"]) for item in body["items"]) - listed)
        assert max(newest) <= 0, f"objects newer than their list by {newest} resource versions"
    finally:
        stop.set()
        thread.join(10)
        cluster._RUNS.pop(run.id, None)
