"""A recipe link's page (/r/<id>) for a session where the trainer sent no command: its card's head names the
scenario and the seed with nothing stray between them, and "none" is said as a sentence, not as a list's
item number 1,
right under its heading; the seed is named in the page's language."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .conftest import create_run
from .test_classroom import open_page, shot
from .test_lessons import LAPTOP, LOCALES

pytestmark = pytest.mark.live

SEED = {"en": "seed", "zh": "随机种子"}
# the card's head: the text a person reads in it, outside its two labels
STRAY_TEXT = "h => [...h.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent.trim()).join('')"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_recipe_without_commands_says_none_in_a_sentence(browser, stack, artifacts, offsite, lang):
    run = create_run(stack)
    status, recipe = http("POST", f"{stack.base}/api/runs/{run['id']}/recipe", {}, token=run["control_token"])
    assert status in (200, 201), recipe
    page = open_page(browser, recipe["url"], offsite, viewport=LAPTOP, locale=LOCALES[lang][0])
    head = page.locator(".scenario-card.recipe > header")
    expect(head.locator(".recipe-seed")).to_have_text(f"{SEED[lang]} {recipe['seed']}")  # in the page's language
    assert head.evaluate(STRAY_TEXT) == ""
    commands = page.locator(".recipe-commands")
    expect(commands).to_have_count(1)
    expect(commands.locator("li")).to_have_count(0)
    assert commands.evaluate("el => el.tagName") == "P"
    heading = page.locator(".scenario-card.recipe h2").bounding_box()
    gap = commands.bounding_box()["y"] - (heading["y"] + heading["height"])
    assert gap <= 16, gap  # the sentence sits under its heading, not a blank line away
    shot(page, artifacts, f"recipe-without-commands-{lang}")
    assert page.errors == []
