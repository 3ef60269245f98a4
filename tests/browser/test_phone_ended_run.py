"""A run stopped by the trainer, on a phone: the top bar says how it ended, and nothing in it is cut to a stub
(the connection's "live" pill was squeezed to "l…" beside the sentence, the clock lost its last digits)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .conftest import create_run
from .test_classroom import shot
from .test_phone import PHONE, live, open_on

pytestmark = pytest.mark.live

CUT = "els => els.filter(e => e.offsetWidth > 0 && e.scrollWidth > e.clientWidth).map(e => e.className || e.id)"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_ended_runs_phone_top_bar_cuts_nothing(browser, stack, artifacts, offsite, lang):
    run = create_run(stack, speed=20)
    page = open_on(browser, run["viewer_url"], offsite, PHONE, lang=lang)
    live(page)
    status, body = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "stop"},
                        token=run["control_token"])
    assert status == 202, body
    expect(page.locator("#run-end")).to_be_visible(timeout=20_000)
    expect(page.locator("#conn-state")).to_be_hidden()
    assert page.locator(".clockbar > *").evaluate_all(CUT) == []
    clock, room = page.locator("#clock-time").evaluate(
        "el => [el.getBoundingClientRect().width, el.parentElement.getBoundingClientRect().width]")
    assert clock <= room + 0.5, (clock, room)  # the clock's last digit is not cut off
    shot(page, artifacts, f"phone-ended-run-{lang}")
    assert page.errors == []
