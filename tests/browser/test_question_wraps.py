"""A question card on a phone: a taint key longer than the screen is wide (lesson 13's choices
name node.kubernetes.io/unschedulable:NoSchedule) wraps inside the card instead of running off it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .test_classroom import shot
from .test_phone import PHONE, fits_the_screen, live, open_on

pytestmark = pytest.mark.live

LESSON = "terminated-vs-cordon"
QUESTION = "cordon-taint"  # its choices are taint keys of 40-odd characters


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_long_taint_key_wraps_inside_the_question_card(browser, stack, artifacts, offsite, lang):
    status, run = http("POST", f"{stack.base}/api/runs", {"lesson": LESSON, "speed": 100})
    assert status == 201, run
    phone = open_on(browser, f"{stack.base}/runs/{run['id']}/", offsite, PHONE, lang=lang)
    live(phone)
    card = phone.locator(f'.question-card[data-question="{QUESTION}"]')  # the lesson's first question, at 60 s
    expect(card).to_be_visible(timeout=90_000)
    fits_the_screen(phone, PHONE)
    for part in card.locator(".qc-text, .qc-choice, button").all():
        overflow = part.evaluate("el => el.scrollWidth - el.clientWidth")
        assert overflow <= 0, (part.evaluate("el => el.outerHTML"), overflow)
    shot(phone, artifacts, f"phone-long-taint-key-{lang}")
