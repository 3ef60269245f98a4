"""Browser tests: Debian's Chromium driven by Playwright against a real stack (Daphne, a Celery
worker, Redis), started once per session with the back-end's helpers (tests/web/live.py)."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.web.live import http, running_stack

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Debian's chromium (no `playwright install`), headless, no sandbox, nothing phoning home.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}

pytestmark = pytest.mark.live


@pytest.fixture(scope="session")
def browser_type_launch_args():
    """pytest-playwright's launch arguments: never download a browser, use the system one."""
    return {"executable_path": CHROMIUM, "headless": True, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS


@pytest.fixture(autouse=True)
def contexts_closed(request):
    """Every browser context a test opened, closed at its end: a page left open goes on drawing its
    live run (a 5,000-node one takes a core) while the next tests wait for theirs."""
    yield
    browser = request.node.funcargs.get("browser")
    if browser is not None:
        for context in list(browser.contexts):
            context.close()


@pytest.fixture(scope="module")
def stack(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock(), running_stack(tmp_path_factory.mktemp("browser-stack"), ("browser-w1",),
                                                    HEARTBEAT_IDLE_SECONDS="300") as live:
        yield live


class OffsiteGuard:
    """Records every request a page makes that does not go to this machine."""

    def __init__(self) -> None:
        self.offsite: list[str] = []

    def watch(self, context) -> None:
        context.on("request", lambda request: self.check(request.url))
        context.on("page", lambda page: page.on("websocket", lambda ws: self.check(ws.url)))

    def check(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            return
        if parts.hostname not in LOCAL_HOSTS:
            self.offsite.append(url)


@pytest.fixture
def offsite():
    return OffsiteGuard()


def classroom_document(name: str = "browser-classroom") -> dict:
    """Three nodes in two zones, six web pods with the default 300 s tolerations, a DaemonSet."""
    return {
        "name": name,
        "title": {"en": "Browser classroom", "zh": "浏览器课堂"},
        "duration": "20m",
        "cluster": {
            "zones": [{"name": "zone-a", "nodes": 2}, {"name": "zone-b", "nodes": 1}],
            "workloads": [{"name": "web", "replicas": 6}, {"name": "agent", "kind": "DaemonSet"}],
            "services": [{"name": "web", "selector": {"app": "web"}}],
        },
    }


def create_run(stack, speed: float = 20, document: dict | None = None) -> dict:
    status, body = http("POST", f"{stack.base}/api/runs",
                        {"document": document or classroom_document(), "speed": speed})
    assert status == 201, body
    return body
