"""The myth-against-fact page: every myth and interview question in both languages, and "See it"
starting a private run of the right lesson or scenario."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from heartbeat_site.live.classroom.questions import find_lesson
from simulation.lessons.myths import builtin_myths
from tests.web.live import http

from .test_classroom import HAN, cjk_glyphs, open_page, shot
from .untranslated import COLLECT_JS, english_words

pytestmark = pytest.mark.live

PHONE = (390, 844)
LAPTOP = (1366, 768)


def texts_of(page, selector: str, field: str) -> list[str]:
    return page.locator(f'{selector} [data-field="{field}"]').all_inner_texts()


@pytest.mark.parametrize(("locale", "lang"), [("en-US", "en"), ("zh-CN", "zh")])
def test_the_page_lists_every_myth_and_question_in_the_language(browser, stack, artifacts, offsite, locale, lang):
    book = builtin_myths()
    page = open_page(browser, f"{stack.base}/myths/", offsite, viewport=LAPTOP, locale=locale)
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans" if lang == "zh" else "en")
    cards = page.locator("li[data-myth]")
    expect(cards).to_have_count(len(book.myths))
    assert cards.count() >= 10
    assert texts_of(page, "li[data-myth]", "claim") == [m.myth[lang] for m in book.myths]
    assert texts_of(page, "li[data-myth]", "fact") == [m.fact[lang] for m in book.myths]
    expect(page.locator("li[data-question]")).to_have_count(len(book.questions))
    assert texts_of(page, "li[data-question]", "question") == [q.question[lang] for q in book.questions]
    assert texts_of(page, "li[data-question]", "claim") == [q.usual[lang] for q in book.questions]
    assert texts_of(page, "li[data-question]", "fact") == [q.answer[lang] for q in book.questions]
    # every card: its Kubernetes files as plain text (no link off the site) and one "See it"
    for entry in (*book.myths, *book.questions):
        card = page.locator(f"#{entry.id}")
        assert [c.replace("\n", "") for c in card.locator(".sources code").all_inner_texts()] == list(entry.sources)
        expect(card.locator(".sources a")).to_have_count(0)
        expect(card.locator("button[data-see]")).to_have_attribute("data-name", entry.see.lesson or entry.see.scenario)
    # the header links the page, marked as the current one
    expect(page.locator('.topnav a[aria-current="page"]')).to_have_attribute("href", "/myths/")
    if lang == "zh":
        texts = page.evaluate(COLLECT_JS)
        assert [t for t in texts if english_words(t)] == []
        expect(page.locator("h1")).to_have_text("误解与事实")
        for selector in ("h1", "li[data-myth] .claim-text", "button[data-see]"):
            text = page.locator(selector).first.inner_text()
            cjk, fonts = cjk_glyphs(page, selector)
            assert cjk >= len(HAN.findall(text)) > 0, (selector, text, fonts)
    shot(page, artifacts, f"myths-{lang}-1366")
    assert page.errors == [] and page.console_errors == []
    assert offsite.offsite == []


def test_one_column_on_a_phone(browser, stack, artifacts, offsite):
    page = open_page(browser, f"{stack.base}/myths/", offsite, viewport=PHONE, locale="zh-CN")
    card = page.locator("li[data-myth]").first
    myth, fact, button = card.locator(".claim.myth"), card.locator(".claim.fact"), card.locator("button[data-see]")
    assert myth.bounding_box()["y"] + myth.bounding_box()["height"] <= fact.bounding_box()["y"]
    assert fact.bounding_box()["width"] > 300 and button.bounding_box()["width"] > 300
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE[0]
    shot(page, artifacts, "myths-zh-390")
    assert page.errors == []


def opened(stack, page, page_kind: str = "runs") -> dict:
    """What the control page `page` shows (its token in the fragment), as the API answers it: a run (``runs``)
    or a comparison (``compare``)."""
    page.wait_for_url(re.compile(rf"/{page_kind}/[^/]+/#control=.+"), timeout=30_000)
    opened_id = re.search(rf"/{page_kind}/([^/]+)/", page.url).group(1)
    api = "runs" if page_kind == "runs" else "comparisons"
    status, body = http("GET", f"{stack.base}/api/{api}/{opened_id}")
    assert status == 200, body
    return body


def test_see_it_opens_a_comparison_lessons_comparison_page(browser, stack, offsite):
    """The versions lesson compares 1.31 with 1.33: its myths open both sides on one clock."""
    myth = next(m for m in builtin_myths().myths if m.see.kind == "lesson" and find_lesson(m.see.lesson).comparison)
    page = open_page(browser, f"{stack.base}/myths/", offsite, viewport=LAPTOP)
    page.locator(f"#{myth.id} button[data-see]").click()
    comparison = opened(stack, page, "compare")
    assert comparison["runs"][0]["lesson"] == myth.see.lesson  # side a's driver teaches both (docs/lessons.md)
    expect(page.locator("#side-b")).to_be_visible(timeout=30_000)
    assert comparison["scenario"] == myth.see.scenario
    assert page.errors == []


def test_see_it_opens_a_run_of_the_lesson_or_the_scenario(browser, stack, offsite):
    book = builtin_myths()
    lesson_myth = next(m for m in book.myths if m.see.kind == "lesson" and not find_lesson(m.see.lesson).comparison)
    scenario_myth = next(m for m in book.myths if m.see.kind == "scenario")

    page = open_page(browser, f"{stack.base}/myths/", offsite, viewport=LAPTOP)
    page.locator(f"#{lesson_myth.id} button[data-see]").click()
    run = opened(stack, page)
    assert run["lesson"] == lesson_myth.see.lesson
    assert run["scenario"] == lesson_myth.see.scenario
    expect(page.locator("#conn-state")).to_have_attribute("data-state", re.compile("live|resynced"), timeout=30_000)

    page.go_back()
    button = page.locator(f"#{scenario_myth.id} button[data-see]")
    expect(button).to_be_enabled()
    speed = float(button.get_attribute("data-speed"))
    button.click()
    run = opened(stack, page)
    assert run["lesson"] is None
    assert run["scenario"] == scenario_myth.see.scenario
    assert run["clock"]["speed"] == speed > 1
    assert page.errors == []
    assert offsite.offsite == []
