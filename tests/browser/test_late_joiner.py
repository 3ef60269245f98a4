"""A trainee who opens the viewer link after the trainer broke the node still sees what happened:
the page reads the run's earlier faults and transitions back for its timeline."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .conftest import classroom_document, create_run

pytestmark = pytest.mark.live


def wait_until_virtual(stack, run_id: str, t: float, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while True:
        status, body = http("GET", f"{stack.base}/api/runs/{run_id}")
        assert status == 200, body
        if body["clock"]["t"] >= t:
            return
        assert time.monotonic() < deadline, f"the run did not reach t={t} (at {body['clock']['t']})"
        time.sleep(0.2)  # polling the API clock: there is no event to await from outside the run


def test_viewer_opened_after_the_fault_sees_it_on_the_timeline(browser, stack, offsite):
    document = classroom_document("late-joiner")
    document["faults"] = [{"at": "20s", "action": "stop-kubelet", "node": "node-2"}]
    run = create_run(stack, speed=50, document=document)
    wait_until_virtual(stack, run["id"], 90)  # past the fault and the Unknown write (~+50 s)
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    offsite.watch(context)
    page = context.new_page()
    page.goto(f"{stack.base}/runs/{run['id']}/")
    expect(page.locator(".timeline-svg .tl-fault")).to_have_count(1, timeout=30_000)
    expect(page.locator(".timeline-svg .tl-node.bad").first).to_be_visible(timeout=30_000)
    assert not offsite.offsite
