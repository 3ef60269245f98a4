"""Browser tests: Debian's Chromium driven by Playwright against a real stack (Daphne, a Celery
worker, Redis), started once per session with the back-end's helpers (tests/web/live.py).

The tests talk to the stack as a browser does, never through the ORM. Playwright's sync API keeps an event
loop running in this thread, where Django refuses an ORM call (SynchronousOnlyOperation): the test database is
created before the browser starts (``database_first``), and emptied after each test in a thread of its own
(``database_emptied``), not by a ``django_db`` mark's flush, which would run on the loop. The servers run as in
production, Django's async-safety check on."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command
from django.db import connections

from tests.web.live import http, running_stack

ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Debian's chromium (no `playwright install`), headless, no sandbox, nothing phoning home.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}

pytestmark = pytest.mark.live


def pytest_collection_modifyitems(config, items):
    """A ``django_db`` mark here would flush the database on Playwright's loop (see above): refused by name."""
    marked = sorted({item.nodeid.split("::")[0] for item in items
                     if "tests/browser/" in item.nodeid and item.get_closest_marker("django_db")})
    if marked:
        raise pytest.UsageError(f"browser tests take no django_db mark (conftest.py empties the database after "
                                f"each test): {', '.join(marked)}")


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_blocker, django_db_modify_db_settings):
    """The test database the stacks' processes use. pytest-django's own sets up only the databases that tests
    marked ``django_db`` ask for, and these tests take no such mark."""
    from django.test.utils import setup_databases, teardown_databases

    with django_db_blocker.unblock():
        config = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    yield
    with django_db_blocker.unblock():
        teardown_databases(config, verbosity=0)


@pytest.fixture(scope="session", autouse=True)
def database_first(django_db_setup):
    """The test database created before Playwright's event loop runs, and dropped after it stopped (autouse
    fixtures of a scope are set up before the others)."""


@pytest.fixture(autouse=True)
def database_emptied(django_db_blocker):
    """After each test the database is emptied as a ``django_db(transaction=True)`` test's is: the runs it
    started end (a driver whose run is gone stops) and the next test begins with nothing of the last."""
    yield

    def flush() -> None:
        with django_db_blocker.unblock():
            call_command("flush", interactive=False, verbosity=0)
        connections.close_all()

    with ThreadPoolExecutor(1) as pool:  # no event loop runs in that thread
        pool.submit(flush).result()


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
