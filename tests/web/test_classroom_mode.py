"""``make classroom``: a class hosted from one laptop, joined by phones on the room's network.

The classroom command runs as a real process (Redis, a Celery worker, Daphne on every address); a phone is a
network namespace this test makes, joined to the laptop by a veth pair (tests/web/classroom.py). The trainer
works from ``127.0.0.1``, as on the laptop itself; the phone reaches only the room's address.
"""

from __future__ import annotations

import gzip
import json
import re
import urllib.error
import urllib.request

import pytest

from .classroom import start_run
from .test_api_qr import decoded, drawn_modules

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

DEBUG_PAGE = ("Django", "URLconf", "DEBUG = True", "Traceback", "settings file")


def get(url: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=20) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_a_phone_joins_from_the_qr_code_and_from_the_printed_url(classroom, phone):
    room = f"http://{phone.laptop_address()}:{classroom.port}"
    printed = classroom.wait_printed(1)
    assert printed == f"{room}/"
    assert classroom.terminal_qr(1) == [printed]

    run = start_run(classroom)
    status, _, svg = get(f"{classroom.local}/api/runs/{run['id']}/qr.svg")
    assert status == 200
    [scanned] = decoded(drawn_modules(svg))
    assert scanned == run["viewer_url"] == f"{room}/runs/{run['id']}/"
    assert run["control_url"].startswith(f"{room}/runs/") and run["ws_url"].startswith(f"ws://{room[7:]}/")

    # the phone's namespace reaches its /30 and nothing else
    assert phone.routes().split() == [f"10.213.{phone.subnet}.0/30", "dev", "phone0", "proto", "kernel", "scope",
                                      "link", "src", phone.phone_address()]
    seen = json.loads(phone.run(scanned))
    assert (seen["status"], seen["origin"]) == (200, room)
    assert seen["messages"][0] == "snapshot" and seen["messages"].count("frame") == 3
    home = json.loads(phone.run(printed))
    assert (home["status"], home["origin"]) == (200, room)


def test_the_links_follow_the_laptop_to_another_network(classroom, phone):
    phone.join(1)
    phone.leave(0)  # the laptop left the first network: its old address is gone
    try:
        moved = f"http://{phone.laptop_address(1)}:{classroom.port}/"
        assert classroom.wait_printed(2) == moved
        assert f"The laptop's address changed. The room now joins at {moved}" in classroom.output()  # it says so
        assert classroom.terminal_qr(2) == [moved]
        run = start_run(classroom)
        assert run["viewer_url"] == f"{moved}runs/{run['id']}/"
        seen = json.loads(phone.run(run["viewer_url"]))
        assert (seen["status"], seen["origin"]) == (200, moved.rstrip("/"))
        assert seen["messages"].count("frame") == 3
        old = f"{phone.laptop_address(0)}:{classroom.port}"
        status, _, _ = get(f"{classroom.local}/", Host=old)
        assert status == 400  # the old address is no longer an allowed host
    finally:
        phone.join(0)
        phone.leave(1)
        classroom.wait_printed(3)


def test_an_unknown_page_shows_the_sites_page_not_a_debug_page(classroom):
    status, headers, body = get(f"{classroom.local}/no-such-page/", **{"Accept-Language": "zh-hans"})
    page = body.decode()
    assert status == 404 and headers["Content-Type"].startswith("text/html")
    assert not [word for word in DEBUG_PAGE if word in page]
    assert "页面不存在" in page and 'href="/"' in page


def test_static_files_come_compressed_and_cached_for_good(classroom):
    run = start_run(classroom)
    status, headers, body = get(f"{classroom.local}/runs/{run['id']}/", **{"Accept-Encoding": "gzip"})
    assert status == 200 and headers.get("Content-Encoding") == "gzip"  # the page itself too
    page = gzip.decompress(body).decode()
    imports = json.loads(re.search(r'<script type="importmap">(.*?)</script>', page).group(1))["imports"]
    assert "#js/api.js" in imports  # a module the run page imports, resolved to its hashed file
    scripts = re.findall(r'<script[^>]* src="(/static/[^"]+)"', page)
    styles = re.findall(r'<link rel="stylesheet" href="(/static/[^"]+)"', page)
    assert scripts and styles
    for path in [*scripts, *styles, *imports.values()]:
        assert re.search(r"\.[0-9a-f]{12}\.(js|css)$", path), path
        status, headers, body = get(f"{classroom.local}{path}", **{"Accept-Encoding": "gzip"})
        assert status == 200, path
        assert headers.get("Content-Encoding") == "gzip", path
        assert "immutable" in headers["Cache-Control"] and "max-age=315360000" in headers["Cache-Control"], path
        assert gzip.decompress(body)
