"""Which node a page shows first: the one the scenario breaks, then the one each fault is about,
until the viewer picks one themselves (then faults elsewhere leave their choice alone)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.live import http

pytestmark = pytest.mark.live


# Faults on the timeline: markers a few seconds apart share a pixel and count them (data-count).
FAULTS_SHOWN = """() => [...document.querySelectorAll('.timeline-svg .tl-fault')]
    .reduce((n, mark) => n + Number(mark.dataset.count ?? 1), 0)"""


def command(stack, run: dict, body: dict) -> None:
    status, answer = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", body, token=run["control_token"])
    assert status == 202, answer


def test_the_page_follows_the_faults_until_the_viewer_picks_a_node(browser, stack, offsite):
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": "network-partition", "speed": 5})
    assert status == 201, run
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    offsite.watch(context)
    page = context.new_page()
    page.goto(run["viewer_url"])
    focus = page.locator("#focus-name")
    # network-partition cuts node-3 off: its lanes, not node-2's, are what the class should watch
    expect(focus).to_have_text("node-3", timeout=30_000)
    # ...from the start, and again when the cut happens (60 s in): wait for it, or it would take
    # the focus back from the trainer's command below
    expect(page.locator(".timeline-svg .tl-fault")).to_have_count(1, timeout=30_000)

    command(stack, run, {"action": "stop-kubelet", "node": "node-1"})  # the trainer breaks another node
    expect(focus).to_have_text("node-1", timeout=30_000)

    # the viewer looks at a node of their own: a click on one of its pods picks the node too
    page.locator('#cluster [data-node="node-2"] [data-pod]').first.click()
    expect(focus).to_have_text("node-2")
    faults = page.evaluate(FAULTS_SHOWN)
    command(stack, run, {"action": "stop-runtime", "node": "node-3"})
    page.wait_for_function(f"({FAULTS_SHOWN})() > {faults}", timeout=30_000)  # the fault arrived...
    expect(focus).to_have_text("node-2")  # ...and the viewer's choice stands
    assert not offsite.offsite
    context.close()
