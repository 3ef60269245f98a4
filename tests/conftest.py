"""Shared pytest set-up. Redis is made real by the ``-p heartbeat_site.testing.pytest_redis``
plugin (pyproject addopts) before Django settings are read; web fixtures live in tests/web."""
