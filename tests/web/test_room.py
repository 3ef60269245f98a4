"""The room's address (heartbeat_site/room.py), the key a class keeps, and the plain error pages."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import include, path

from heartbeat_site.env import local_secret
from heartbeat_site.room import (
    HostsWithPublicUrl,
    PublicUrlFile,
    RoomNotFound,
    RoomWatch,
    find_room,
    interface_addresses,
    room_url,
    write_public_url,
)


def test_a_room_named_by_address_interface_or_host_name():
    assert find_room("10.213.0.1") == "10.213.0.1"
    assert find_room("localhost") == "localhost"  # a host name the phones resolve is kept as it is
    for name, addresses in interface_addresses().items():
        assert find_room(name) == addresses[0]
    assert room_url("fe80::1", 8000) == "http://[fe80::1]:8000"


def test_a_room_that_is_nothing_says_what_it_may_be():
    with pytest.raises(RoomNotFound, match="ROOM=no-such-thing.invalid: not an interface of this machine"):
        find_room("no-such-thing.invalid")
    with pytest.raises(RoomNotFound, match="ROOM=lo: the interface has no IPv4 address"):
        find_room("lo")  # loopback is no room: phones cannot reach it


def test_the_allowed_hosts_follow_the_public_url_file(tmp_path):
    url_file = tmp_path / "public-url"
    hosts = HostsWithPublicUrl(["127.0.0.1"], PublicUrlFile(str(url_file)))
    assert list(hosts) == ["127.0.0.1"]
    write_public_url(url_file, "http://10.213.0.1:8000")
    assert list(hosts) == ["127.0.0.1", "10.213.0.1"]
    write_public_url(url_file, "http://10.213.0.5:8000")
    assert list(hosts) == ["127.0.0.1", "10.213.0.5"]


def test_the_watch_writes_a_new_url_only_when_it_changed(tmp_path):
    watch = RoomWatch("10.213.0.1", 8000, tmp_path / "public-url")
    assert watch.check() == "http://10.213.0.1:8000"
    assert watch.check() is None
    watch.spec = "no-such-thing.invalid"  # the network is gone: the last URL stays
    assert watch.check() is None and PublicUrlFile(str(watch.path)).url() == "http://10.213.0.1:8000"


def test_a_class_keeps_the_secret_key_it_made(tmp_path):
    key_file = tmp_path / "secret"
    key = local_secret(key_file)
    assert len(key) >= 50 and local_secret(key_file) == key
    assert key_file.stat().st_mode & 0o077 == 0  # its owner's alone


def broken(request):
    raise RuntimeError("a bug")


urlpatterns = [path("broken/", broken), path("", include("heartbeat_site.urls"))]


@pytest.mark.urls(__name__)
def test_an_error_without_debug_is_a_plain_page(settings):
    settings.DEBUG = False
    response = Client(raise_request_exception=False).get("/broken/", headers={"Accept-Language": "zh-hans"})
    page = response.content.decode()
    assert response.status_code == 500
    assert "出了点问题" in page and "RuntimeError" not in page and "a bug" not in page
