"""A large run's API traffic panel on a laptop: the per-zone lines (other kubelets' requests counted per zone,
not drawn) start where the panel's heading does, not against the panel's border."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .test_classroom import open_page, shot
from .test_lessons import LAPTOP

pytestmark = pytest.mark.live

SCENARIO = "zone-outage-large-zones"  # 180 nodes: sent at node level, so the page folds other kubelets per zone


def test_zone_traffic_lines_are_inset_like_the_heading(browser, stack, artifacts, offsite):
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": SCENARIO, "speed": 10})
    assert status == 201, run
    page = open_page(browser, run["viewer_url"], offsite, viewport=LAPTOP)
    line = page.locator("#panel-traffic .seq-zones > div").first
    expect(line).to_be_visible(timeout=60_000)
    panel = page.locator("#panel-traffic").bounding_box()
    heading = page.locator("#seq-title").evaluate(
        "h => { const r = document.createRange(); r.selectNodeContents(h); return r.getClientRects()[0].left; }")
    left = line.bounding_box()["x"]
    assert left - panel["x"] >= 8, (left, panel["x"])
    assert abs(left - heading) <= 2, (left, heading)
    shot(page, artifacts, "large-run-zone-traffic-lines")
    status, body = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "pause"},
                        token=run["control_token"])
    assert status == 202, body
    assert page.errors == []
