"""Shared pytest set-up. Redis is made real by the ``-p tests.pytest_redis``
plugin (pyproject addopts) before Django settings are read; web fixtures live in tests/web."""

import os

import pytest

# Django's check that no ORM call runs on an event loop stays on, in the tests and in the servers they start
# (heartbeat_site/processes.py passes the environment on): a test that needed it off would hide such a call.
os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


@pytest.fixture(scope="module")
def phone():
    """A phone on the room's network: a network namespace of the test's own (tests/web/classroom.py)."""
    from tests.web.classroom import phone_on_room_network

    with phone_on_room_network() as made:
        yield made


@pytest.fixture(scope="module")
def classroom(django_db_setup, django_db_blocker, phone, tmp_path_factory):
    """``make classroom``'s command serving the room that ``phone`` is on."""
    from tests.web.classroom import classroom_serving

    with django_db_blocker.unblock(), classroom_serving(phone, tmp_path_factory.mktemp("classroom")) as room:
        yield room
