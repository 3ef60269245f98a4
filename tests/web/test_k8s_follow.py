"""A node-level run's objects in the Kubernetes API follow its event log between requests
(heartbeat_site/k8sapi/cluster.py): its bounded log holds only seconds of a 5,000-node run, and a
learner's next `kubectl get` must not find it moved on and wait for the driver's whole state again.
A real driver (in a thread) and Redis."""

from __future__ import annotations

import pytest

from heartbeat_site.k8sapi import cluster
from heartbeat_site.live import runstore

from .test_driver import drive_in_thread, run_factory, wait_for  # noqa: F401 (run_factory: a fixture)

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_a_node_level_runs_objects_follow_its_log_between_requests(run_factory, settings, monkeypatch):  # noqa: F811
    settings.HEARTBEAT = {**settings.HEARTBEAT, "NODE_LEVEL_NODES": 2}  # 3 nodes are a large run here
    monkeypatch.setattr(cluster, "FOLLOW_EVERY", 0.05)
    run = run_factory(speed=20, duration="10m")
    thread, stop, _ = drive_in_thread(run.id)
    try:
        wait_for(lambda: int(runstore.read_state(run.id).get("last_seq", 0)) > 20, what="the run's first events")
        objs = cluster.objects_of(run)  # one request: the driver's objects, then the log
        assert objs.node_level and objs.objects["nodes"]
        first = objs.last_seq
        def caught_up() -> bool:  # within a few dozen events of what the driver published, no request made
            return objs.last_seq > first + 20 and objs.last_seq >= int(runstore.read_state(run.id)["last_seq"]) - 50

        wait_for(caught_up,
                 what="the objects following the log with no request")
        monkeypatch.setattr(cluster, "FOLLOW_SECONDS", 0.0)  # no request for that long: it stops
        objs.follower.join(5)
        assert not objs.follower.is_alive()
    finally:
        stop.set()
        thread.join(10)
        cluster._RUNS.pop(run.id, None)
