"""The run page as a person sees it when it has little to show: a page opened on a paused run has no request
to draw, and its diagram says what will appear in it instead of showing bare lanes."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .test_classroom import open_page, shot, wait_for_cluster
from .test_late_joiner import wait_until_virtual
from .test_lessons import LAPTOP

pytestmark = pytest.mark.live


def test_a_page_opened_on_a_paused_run_explains_its_empty_diagram(browser, stack, artifacts, offsite):
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": "kubelet-crash", "speed": 50})
    assert status == 201, run
    wait_until_virtual(stack, run["id"], 30)
    status, body = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "pause"},
                        token=run["control_token"])
    assert status == 202, body
    page = open_page(browser, run["viewer_url"], offsite, viewport=LAPTOP)
    wait_for_cluster(page)
    assert page.evaluate("window.heartbeat.sequence.model.length") == 0  # nothing was sent since it opened
    expect(page.locator(".seq-waiting")).to_be_visible()
    shot(page, artifacts, "paused-run-empty-diagram")
    assert page.errors == []
