"""Replays in a process of their own (heartbeat_site/live/lookback/replay_process.py): the web process answers seeks,
replayed event pages and exports with what its replay process computed, the same as a replay in the web
process; a replay process that dies is replaced, and one whose web process died ends."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import psutil
import pytest

from heartbeat_site.k8sapi import cluster
from heartbeat_site.live.lookback import replay_process, replay_process_start, seek
from heartbeat_site.live.models import Run, RunStatus
from simulation import Simulation, load_scenario
from tests.web.conftest import reached_run

pytestmark = [pytest.mark.django_db]

FAULT = {"action": "stop-kubelet", "node": "node-2"}


@pytest.fixture(autouse=True)
def replays_sent_away(settings):
    """Every replay to the replay process, short ones included (``HEARTBEAT_REPLAY_PROCESS_FROM``)."""
    settings.HEARTBEAT = {**settings.HEARTBEAT, "REPLAY_PROCESS_FROM": 0}


@pytest.fixture
def ended_run():
    """A 3-node run that reached 150 s, its kubelet on node-2 stopped at 30 s (running: its exports are
    built at each request, not kept)."""
    run = reached_run(150.0, RunStatus.RUNNING, FAULT, 30.0)
    yield run
    seek.forget(run.id)
    replay_process.call(seek.forget, run.id, work=math.inf)


def answers(client, run: Run) -> dict[str, bytes]:
    """What the API answers from replays: a seek, an export, a page of events Redis never had."""
    urls = {
        "seek": f"/api/runs/{run.id}/snapshot?t=100",
        "export": f"/api/runs/{run.id}/export/events.jsonl",
        "page": f"/api/runs/{run.id}/events?after=40&limit=50&types=transition",
    }
    responses = {name: client.get(url) for name, url in urls.items()}
    assert all(response.status_code == 200 for response in responses.values()), responses
    return {name: response.content for name, response in responses.items()}


def test_replays_happen_in_a_process_of_their_own_and_answer_as_the_web_process_would(client, ended_run, settings):
    in_child = answers(client, ended_run)
    assert replay_process.child_pid() != os.getpid()
    # the child keeps what the seek parked; this process replayed nothing
    assert replay_process.call(seek.parked_times, ended_run.id, work=math.inf) and not seek.parked_times(ended_run.id)

    settings.HEARTBEAT = {**settings.HEARTBEAT, "REPLAY_PROCESS": False}
    assert answers(client, ended_run) == in_child
    assert seek.parked_times(ended_run.id)


def test_a_short_replay_stays_in_the_requests_thread(client, ended_run, settings):
    """3 nodes for 100 virtual seconds: 300 node-seconds, under the default 3,000."""
    settings.HEARTBEAT = {**settings.HEARTBEAT, "REPLAY_PROCESS_FROM": 3_000}
    assert client.get(f"/api/runs/{ended_run.id}/snapshot?t=100").status_code == 200
    assert 100.0 in seek.parked_times(ended_run.id)
    assert client.get(f"/api/runs/{ended_run.id}/snapshot?t=150").status_code == 200  # 450
    settings.HEARTBEAT = {**settings.HEARTBEAT, "REPLAY_PROCESS_FROM": 400}
    assert client.get(f"/api/runs/{ended_run.id}/snapshot?t=140").status_code == 200  # 420: sent away
    assert 140.0 in replay_process.call(seek.parked_times, ended_run.id, work=math.inf)
    assert 140.0 not in seek.parked_times(ended_run.id)


def test_a_replay_process_that_died_is_replaced(client, ended_run):
    first = answers(client, ended_run)
    child = psutil.Process(replay_process.child_pid())  # before the kill: the parent may reap it at once
    dead = child.pid
    child.kill()
    child.wait(10)
    assert answers(client, ended_run) == first
    assert replay_process.child_pid() not in (dead, os.getpid())


def test_the_replay_process_ends_with_its_web_process(tmp_path):
    """A web process killed outright (SIGKILL: no exit handlers) leaves no replay process behind."""
    program = (
        "import django, os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'heartbeat_site.settings');"
        " django.setup(); from heartbeat_site.live.lookback import replay_process;"
        " print(replay_process.child_pid(), flush=True);"
        " sys.stdin.read()"
    )
    web = subprocess.Popen([sys.executable, "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           text=True, env={**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path}/unused.sqlite3"})
    try:
        child = psutil.Process(int(web.stdout.readline()))
        assert child.ppid() == web.pid
        web.kill()
        web.wait(10)
        deadline = time.monotonic() + 10 * replay_process_start.PARENT_CHECK_SECONDS
        while child.is_running() and child.status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the replay process outlived its web process"
            time.sleep(0.1)
    finally:
        web.kill()


@pytest.mark.django_db(transaction=True)  # the API reads the run on threads of its own
def test_the_kubernetes_api_of_a_run_nobody_has_objects_of_replays_it(client, ended_run):
    """A run past its Redis retention and without a driver: its API's objects are replayed (here in the replay
    process), node-2's Lease last renewed before its kubelet stopped at 30 s, as the simulation has it."""
    try:
        response = client.get(f"/k8s/runs/{ended_run.id}/apis/coordination.k8s.io/v1/namespaces/kube-node-lease"
                              "/leases/node-2")
        assert response.status_code == 200, response.content
    finally:
        cluster._RUNS.pop(ended_run.id, None)
    sim = Simulation(load_scenario(ended_run.document), seed=ended_run.seed)
    sim.schedule_command(FAULT, 30.0)
    sim.run_until(150.0)
    lease = next(o for o in sim.snapshot()["objects"]["leases"] if o["metadata"]["name"] == "node-2")
    served = response.json()
    assert served["spec"]["renewTime"] == lease["spec"]["renewTime"] < "2026-01-01T00:00:30"
    assert 150.0 in replay_process.call(seek.parked_times, ended_run.id, work=math.inf)
