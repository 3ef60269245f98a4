"""``make classroom`` in real browsers: the trainer's page on the laptop and a phone's Chromium in a network
namespace of its own (tests/web/classroom.py), which reaches nothing but the room's address. The pages run from
hashed, compressed static files, their modules through the page's import map."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from tests.web.classroom import start_run

from .conftest import CHROMIUM, CHROMIUM_ARGS
from .test_classroom import wait_for_cluster

pytestmark = pytest.mark.live

PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True, "device_scale_factor": 3}
HASHED = re.compile(r"/static/.+\.[0-9a-f]{12}\.(js|css|woff2|svg)$")


@pytest.fixture
def phone_browser(playwright, phone, tmp_path):
    """Chromium started inside the phone's namespace (Playwright talks to it over a pipe, not the network)."""
    launcher = tmp_path / "chromium-on-the-phone"
    launcher.write_text(f'#!/bin/sh\nexec ip netns exec {phone.namespace} {CHROMIUM} "$@"\n')
    launcher.chmod(0o755)
    browser = playwright.chromium.launch(executable_path=str(launcher), args=CHROMIUM_ARGS)
    yield browser
    browser.close()


def watched(page) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {"requests": [], "errors": []}
    page.on("request", lambda request: seen["requests"].append(request.url))
    page.on("pageerror", lambda error: seen["errors"].append(str(error)))
    page.on("console", lambda m: seen["errors"].append(m.text) if m.type == "error" else None)
    return seen


def test_the_trainer_shares_the_room_link_and_a_phone_follows_the_run(browser, phone_browser, classroom, phone):
    room_host = f"{phone.laptop_address()}:{classroom.port}"
    run = start_run(classroom, speed=5)
    trainer = browser.new_context().new_page()
    trainer_seen = watched(trainer)
    # the trainer's own browser on the laptop opens the control link with 127.0.0.1, as `make classroom` prints
    trainer.goto(f"{classroom.local}/runs/{run['id']}/#control={run['control_token']}")
    wait_for_cluster(trainer)
    trainer.locator(".share summary").click()
    expect(trainer.locator("#share-viewer")).to_have_value(run["viewer_url"])
    trainer.locator("#show-qr").click()
    expect(trainer.locator("#qr-link")).to_have_text(run["viewer_url"])
    assert urlsplit(run["viewer_url"]).netloc == room_host

    viewer = phone_browser.new_context(**PHONE).new_page()
    phone_seen = watched(viewer)
    viewer.goto(run["viewer_url"])
    expect(viewer.locator("#conn-state")).to_have_attribute("data-state", re.compile("live|resynced"), timeout=30_000)
    viewer.wait_for_function("() => window.heartbeat?.store.count('nodes') === 3 && window.heartbeat.frames.passes > 0")

    for seen in (trainer_seen, phone_seen):
        assert seen["errors"] == []
        statics = [url for url in seen["requests"] if "/static/" in url]
        # every module (and the JSON worker's script, resolved through the page's import map) from its hashed file
        assert statics and [url for url in statics if not HASHED.search(urlsplit(url).path)] == []
    assert {urlsplit(url).netloc for url in phone_seen["requests"]} == {room_host}
