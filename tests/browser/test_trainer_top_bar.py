"""A trainer's top bar on a 1366 px laptop, in English: the controls take a second line, and the run's title
stays readable instead of being squeezed to "Kubelet cr…"."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .test_classroom import open_page, shot, wait_for_cluster
from .test_lessons import LAPTOP

pytestmark = pytest.mark.live

CUT = "el => el.scrollWidth > el.clientWidth"


def test_a_trainers_laptop_top_bar_shows_a_short_title_whole(browser, stack, artifacts, offsite):
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": "kubelet-crash", "speed": 20})
    assert status == 201, run
    page = open_page(browser, run["control_url"], offsite, viewport=LAPTOP)
    wait_for_cluster(page)
    title = page.locator("#scenario-title")
    expect(title).to_have_text("Kubelet crash")
    expect(page.locator("#control-bar")).to_be_visible()
    assert not title.evaluate(CUT), title.evaluate("el => [el.scrollWidth, el.clientWidth]")
    bar = page.locator(".topbar").bounding_box()
    assert bar["height"] <= 90, bar  # two lines at most
    language = page.locator(".topbar .lang-switch").bounding_box()
    assert language["x"] + language["width"] <= LAPTOP[0], language  # the theme and language stay in the window
    shot(page, artifacts, "trainer-top-bar-1366")
    assert page.errors == []
