"""Fixtures for the web tests: an API client with CSRF enforced, small scenario documents,
and runs created without dispatching a real driver (the live tests start real workers)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.test import Client


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed test that had a live stack as a fixture reports the stack's logs (a ``with running_stack``
    block prints them itself): what the server and workers said is most of what a CI failure can tell."""
    report = yield
    if report.failed and call.when == "call":
        from .live import LiveStack

        for value in getattr(item, "funcargs", {}).values():
            if isinstance(value, LiveStack):
                report.sections.append(("live stack logs", value.logs()))
    return report


@pytest.fixture
def api(settings_with_fast_acks) -> Client:
    """A test client that enforces CSRF, so passing tests prove the API needs no token."""
    return Client(enforce_csrf_checks=True)


@pytest.fixture
def settings_with_fast_acks(settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "COMMAND_ACK_SECONDS": 0.05}
    return settings


@pytest.fixture
def replays_here(settings):
    """Replays in the test's own process (heartbeat_site/live/lookback/replay_process.py), for tests that count or
    inspect what a replay does with monkeypatch or the seek cache."""
    settings.HEARTBEAT = {**settings.HEARTBEAT, "REPLAY_PROCESS": False}


@pytest.fixture
def dispatched(monkeypatch) -> list[str]:
    """Record runs the API would hand to Celery instead of dispatching them."""
    started: list[str] = []
    monkeypatch.setattr("heartbeat_site.live.api.runs.start_driver", lambda run: started.append(run.id))
    return started


def small_document(name: str = "classroom-small", nodes: int = 3) -> dict:
    return {
        "name": name,
        "title": {"en": "Three nodes", "zh": "三个节点"},
        "seed": 11,
        "duration": "5m",
        "cluster": {
            "nodes": nodes,
            "workloads": [{"name": "web", "replicas": 3}],
            "services": [{"name": "web", "selector": {"app": "web"}}],
        },
    }


def large_document(nodes: int, name: str) -> dict:
    """``nodes`` nodes in three zones, 10 web pods per node, a Service and a DaemonSet."""
    third = nodes // 3
    zones = [{"name": "zone-a", "nodes": nodes - 2 * third}, {"name": "zone-b", "nodes": third},
             {"name": "zone-c", "nodes": third}]
    return {
        "name": name,
        "title": {"en": f"{nodes:,} nodes", "zh": f"{nodes} 个节点"},
        "seed": 5,
        "duration": "15m",
        "cluster": {
            "zones": zones,
            "workloads": [{"name": "web", "replicas": 9 * nodes}, {"name": "agent", "kind": "DaemonSet"}],
            "services": [{"name": "web", "selector": {"app": "web"}}],
        },
    }


def reached_run(reached: float, status: str, fault: dict, at: float):
    """A three-node run that reached ``reached`` virtual seconds (its duration), ``fault`` applied at ``at``."""
    from heartbeat_site.live.models import Command, CommandKind, CommandStatus, Run
    from heartbeat_site.live.runs.tokens import hash_token
    from simulation import load_scenario

    scenario = load_scenario({**small_document(), "duration": f"{reached:g}s"})
    run = Run.objects.create(
        scenario_name=scenario.name, document=scenario.document, seed=scenario.seed, version=str(scenario.version),
        node_count=scenario.node_count, duration=scenario.duration, t_reached=reached, status=status,
        control_token_hash=hash_token("t"),
    )
    Command.objects.create(run=run, seq=1, kind=CommandKind.FAULT, action=fault["action"], payload=fault,
                           status=CommandStatus.APPLIED, at=at)
    return run


@pytest.fixture
def document() -> dict:
    return small_document()


def post_json(client: Client, url: str, body: object, **headers: str):
    return client.post(url, data=json.dumps(body), content_type="application/json", **headers)


@pytest.fixture
def new_run(api, dispatched, document):
    """Create a run through the API; returns (response body, run id, control token)."""

    def create(**overrides):
        response = post_json(api, "/api/runs", {"document": document, **overrides})
        assert response.status_code == 201, response.content
        body = response.json()
        return body, body["id"], body["control_token"]

    return create


def bearer(token: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {token}"}


__all__ = ["bearer", "drive_in_thread", "post_json", "settings", "small_document"]


DRIVERS: list[tuple[threading.Thread, threading.Event]] = []  # every driver thread a test started


def drive_in_thread(run_id: str) -> tuple[threading.Thread, threading.Event, list[str]]:
    """A run's driver in a thread of this process, as a worker runs it; stopped at the test's end at the latest."""
    from heartbeat_site.live.driving.driver import RunDriver  # imported once Django is set up

    stop, outcome = threading.Event(), []
    thread = threading.Thread(target=lambda: outcome.append(RunDriver(run_id, stop=stop).drive()), daemon=True)
    thread.start()
    DRIVERS.append((thread, stop))
    return thread, stop, outcome


@pytest.fixture(autouse=True)
def drivers_end_with_their_test() -> Iterator[None]:
    """Stop and join every driver thread the test started, before its database goes. One left running (an
    assertion failed before its stop, a join timed out on a loaded machine) went on writing into the next
    tests' Redis and database, and failed there touching a database it may no longer use."""
    yield
    started = list(DRIVERS)
    DRIVERS.clear()
    for _, stop in started:
        stop.set()
    for thread, _ in started:
        thread.join(60)
    assert not [thread for thread, _ in started if thread.is_alive()], "a driver thread did not stop"
