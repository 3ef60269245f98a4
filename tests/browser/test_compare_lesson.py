"""A comparison lesson in Chromium (docs/lessons.md "Comparison lessons"): the versions lesson on the comparison
page, 1.31 on side a and 1.33 on side b on one clock. The trainer's page has the lesson bar and the question
card; a viewer answers; both sides advance together to the next question; its reveal waits for side b's event
and names it, in English and Chinese, on a laptop and on a phone. "Viewers follow me" works on a comparison as on a
run."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from simulation.lessons import get_lesson
from tests.web.live import http

from .test_classroom import open_page, shot
from .test_compare import create
from .test_lessons import LOCALES, set_speed
from .test_phone import PHONE, fits_the_screen, open_on

pytestmark = pytest.mark.live

LAPTOP = (1366, 768)
SIDE_NODES = "window.heartbeat && window.heartbeat.sides.every((s) => s.store.count('nodes') === 3)"


def start(stack) -> dict:
    status, body = http("POST", f"{stack.base}/api/runs", {"lesson": "versions", "speed": 20})
    assert status == 201, body
    return body


def side_clocks(page) -> list[float]:
    return page.evaluate("window.heartbeat.sides.map((s) => s.clock.now())")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_versions_lesson_on_the_comparison_page(browser, stack, artifacts, offsite, lang):
    locale, _code = LOCALES[lang]
    lesson = get_lesson("versions")
    steps = lesson.document["steps"]
    body = start(stack)
    trainer = open_page(browser, body["control_url"], offsite, viewport=LAPTOP, locale=locale)
    viewer = open_page(browser, body["viewer_url"], offsite, viewport=LAPTOP, locale=locale)
    for page in (trainer, viewer):
        expect(page.locator("#lesson-bar .lb-title")).to_have_text(lesson.title[lang], timeout=20_000)
        expect(page.locator("#lesson-bar .lb-text")).to_have_text(steps[0]["text"][lang])
        card = page.locator('.question-card[data-question="notready-131"]')
        expect(card).to_be_visible(timeout=20_000)
        expect(card.locator(".qc-text")).to_have_text(steps[0]["question"]["text"][lang])
    expect(trainer.locator(".qc-reveal-button")).to_be_visible()
    # asked at once: both sides wait at the start for the reveal, and every page says so
    for page in (trainer, viewer):
        expect(page.locator("body")).to_have_attribute("data-paused", "true", timeout=15_000)
    expect(trainer.locator(".qc-answer")).to_be_hidden()  # the trainer tallies, the class answers
    viewer.locator(".qc-number input").fill("40")
    viewer.locator(".qc-number button[type=submit]").click()
    expect(trainer.locator(".qc-count")).to_have_attribute("data-answers", "1", timeout=15_000)
    shot(trainer, artifacts, f"compare-lesson-{lang}-question-trainer")
    trainer.locator(".qc-reveal-button").click()
    expect(viewer.locator('.question-card[data-question="notready-131"]')).to_have_attribute(
        "data-state", "revealed", timeout=15_000)
    expect(viewer.locator(".qc-mine")).to_have_class(re.compile("right"))
    # the evidence still to come, on side a, said in words
    expect(viewer.locator(".qc-evidence .evidence-what")).to_have_text(
        {"en": "side A: node-2 turns Ready=Unknown", "zh": "A 侧：node-2 变为 Ready=Unknown"}[lang])
    shot(viewer, artifacts, f"compare-lesson-{lang}-reveal-viewer")

    # both sides advance on the one clock to side a's NotReady, where the next question pauses them
    gap = trainer.locator('.question-card[data-question="notready-gap"]')
    expect(gap).to_be_visible(timeout=60_000)
    trainer.wait_for_function("window.heartbeat.sides.every((s) => s.clock.paused)")
    a, b = side_clocks(trainer)
    assert a == b and a > 100
    expect(trainer.locator("#lesson-bar .lb-text")).to_have_text(steps[1]["text"][lang])
    viewer.locator('.question-card[data-question="notready-gap"] .qc-number input').fill("10")
    viewer.locator(".qc-number button[type=submit]").click()
    expect(trainer.locator(".qc-count")).to_have_attribute("data-answers", "1", timeout=15_000)
    set_speed(trainer, "1")  # side b's NotReady comes 10 s after the reveal: the card is read before it
    trainer.locator(".qc-reveal-button").click()
    # the reveal waits for side b's NotReady, ten seconds on (not side a's, which came first), and takes it as
    # its evidence; the next step's question follows (side b's NoExecute taint)
    for page in (trainer, viewer):
        card = page.locator('.question-card[data-question="notready-gap"]')
        expect(card).to_have_attribute("data-state", "revealed", timeout=15_000)
        expect(card.locator(".qc-explain")).to_have_text(steps[1]["question"]["explain"][lang])
        expect(card.locator(".qc-evidence .evidence-what")).to_have_text(
            {"en": "side B: node-2 turns Ready=Unknown", "zh": "B 侧：node-2 变为 Ready=Unknown"}[lang])
    shot(viewer, artifacts, f"compare-lesson-{lang}-gap-reveal-viewer")
    for page in (trainer, viewer):
        page.wait_for_function("window.heartbeat.classroom.evidence.has('notready-gap')", timeout=60_000)
        evidence = page.evaluate("window.heartbeat.classroom.evidence.get('notready-gap')")
        assert (evidence["side"], evidence["node"], evidence["to"]) == ("b", "node-2", "Unknown")
        assert evidence["t"] == pytest.approx(110.2, abs=0.1)
        expect(page.locator('.question-card[data-question="who-deletes"]')).to_be_visible(timeout=60_000)
    shot(trainer, artifacts, f"compare-lesson-{lang}-next-question-trainer")
    phone = open_on(browser, body["viewer_url"], offsite, PHONE, lang=lang)
    phone.wait_for_function(SIDE_NODES)
    expect(phone.locator("#lesson-bar .lb-title")).to_have_text(lesson.title[lang], timeout=20_000)
    fits_the_screen(phone, PHONE)
    shot(phone, artifacts, f"compare-lesson-{lang}-phone")
    phone.locator(".question-card .qc-hide").click()  # the card folded away: the bar and the sides
    expect(phone.locator("#question-layer")).to_be_hidden()
    shot(phone, artifacts, f"compare-lesson-{lang}-phone-bar")
    # the step's text wraps within the screen, a Kubernetes source path it cites too
    assert phone.locator("#lesson-bar .lb-text").evaluate("(el) => el.scrollWidth <= el.clientWidth")
    # an evidence's "Why?" shows its node, on the side it happened on
    phone.evaluate("window.heartbeat.showEvidence({type: 'transition', kind: 'node-ready', node: 'node-2', side: 'b'})")
    expect(phone.locator("#side-b")).to_be_visible()
    expect(phone.locator("#side-a")).to_be_hidden()
    expect(phone.locator("#side-b .focus-name")).to_have_text("node-2")
    assert not phone.errors
    assert not trainer.errors and not viewer.errors


def test_the_versions_lesson_alone_and_with_a_class_from_the_home_page(browser, stack, artifacts, offsite):
    page = open_page(browser, f"{stack.base}/", offsite, viewport=LAPTOP)
    card = page.locator('.lesson-card[data-lesson="versions"]')
    expect(card.locator(".lesson-facts")).to_contain_text("two clusters side by side")
    # "Start with the class": the links are the comparison page's
    card.locator("[data-start=live]").click()
    expect(page.locator("#session-dialog")).to_be_visible(timeout=20_000)
    control = page.locator("#control-link").input_value()
    viewer = page.locator("#viewer-link").input_value()
    assert re.search(r"/compare/\w+/#control=", control) and re.search(r"/compare/\w+/$", viewer)
    page.keyboard.press("Escape")
    # "Try alone": the learner's comparison page, which answers and checks its own answers
    card.locator("[data-start=solo]").click()
    expect(page.locator("body")).to_have_attribute("data-solo", "true", timeout=20_000)
    assert "/compare/" in page.url
    expect(page.locator("#viewers")).to_be_hidden()
    question = page.locator('.question-card[data-question="notready-131"]')
    expect(question).to_be_visible(timeout=20_000)
    question.locator(".qc-number input").fill("41")
    question.locator(".qc-number button[type=submit]").click()
    check = question.locator(".qc-reveal-button")
    expect(check).to_be_visible(timeout=15_000)
    check.click()
    expect(question).to_have_attribute("data-state", "revealed", timeout=15_000)
    expect(question.locator(".qc-mine")).to_have_class(re.compile("right"))
    expect(question.locator(".tally-row")).to_have_count(0)
    # the run goes on to the next question, on both sides
    expect(page.locator('.question-card[data-question="notready-gap"]')).to_be_visible(timeout=60_000)
    shot(page, artifacts, "compare-lesson-en-solo")
    assert not page.errors


def test_viewers_of_a_comparison_follow_the_trainer(browser, stack, offsite):
    body = create(stack, speed=5)  # no fault: nothing moves a page's focus of its own accord
    trainer = open_page(browser, body["url"], offsite, viewport=LAPTOP)
    viewer = open_page(browser, body["viewer_url"], offsite, viewport=LAPTOP)
    for page in (trainer, viewer):
        page.wait_for_function(SIDE_NODES, timeout=30_000)
    node = '#side-{} .cluster [data-node="{}"]'
    focus = viewer.locator("#side-a .focus-name")
    trainer.locator(".share summary").click()  # "Viewers follow me" is in the Share menu, as on the run page
    trainer.locator("#follow-me").check()
    trainer.locator(".share summary").click()
    trainer.locator(node.format("a", "node-1")).first.click()
    expect(focus).to_have_text("node-1", timeout=15_000)
    expect(viewer.locator("#side-b .focus-name")).to_have_text("node-1")  # one focus for both sides
    viewer.locator(node.format("b", "node-3")).first.click()  # the viewer looks at a node of their own
    expect(focus).to_have_text("node-3")
    expect(viewer.locator("#follow-trainer")).to_be_visible()
    trainer.locator(node.format("b", "node-2")).first.click()
    viewer.wait_for_function("() => window.heartbeat.follow.last.node === 'node-2'", timeout=15_000)
    expect(focus).to_have_text("node-3")  # ...and the viewer's choice stands
    viewer.locator("#follow-trainer").click()
    expect(focus).to_have_text("node-2")
    # the Share menu's recipe link plays the comparison again
    trainer.locator(".share summary").click()
    trainer.locator("#take-recipe").click()
    expect(trainer.locator("#recipe-link")).to_have_value(re.compile(r"/r/\w+$"), timeout=15_000)
    trainer.keyboard.press("Escape")
    # a viewer who joins now starts on the trainer's node
    late = open_page(browser, body["viewer_url"], offsite, viewport=LAPTOP)
    expect(late.locator("#side-a .focus-name")).to_have_text("node-2", timeout=30_000)
    for page in (trainer, viewer, late):
        assert page.errors == [], page.errors


def test_a_page_that_joins_late_shows_what_a_page_that_watched_shows(browser, stack, offsite):
    body = start(stack)
    trainer = open_page(browser, body["control_url"], offsite, viewport=LAPTOP)
    expect(trainer.locator('.question-card[data-question="notready-131"]')).to_be_visible(timeout=20_000)
    # the first step turns to the API traffic (a "tab" action): here, both sides' sequence diagrams
    expect(trainer.locator("body")).to_have_attribute("data-part", "traffic")
    trainer.locator(".qc-reveal-button").click()
    expect(trainer.locator('.question-card[data-question="notready-gap"]')).to_be_visible(timeout=60_000)
    expect(trainer.locator("body")).to_have_attribute("data-part", "cluster")  # the second step: the clusters
    expect(trainer.locator("#side-a .cluster")).to_be_in_viewport()
    set_speed(trainer, "1")  # side b's NotReady comes 10 s after the reveal, the next step 5 s after it
    trainer.locator(".qc-reveal-button").click()
    trainer.wait_for_function("window.heartbeat.classroom.evidence.has('notready-gap')", timeout=30_000)
    status, answer = http("POST", f"{stack.base}/api/comparisons/{body['comparison']}/commands", {"action": "pause"},
                          body["control_token"])
    assert status == 202, answer
    trainer.locator(".question-card .qc-hide").click()
    watched = trainer.locator("#lesson-bar .lb-evidence .evidence-what")
    expect(watched).to_contain_text("node-2")
    expect(trainer.locator("#question-layer")).to_be_hidden()

    # a viewer opens now, after the reveal and its evidence: the same step, the answer folded away, the same
    # evidence (side B's event, found among the events before it came), the same part of the page
    late = open_page(browser, body["viewer_url"], offsite, viewport=LAPTOP)
    late.wait_for_function(SIDE_NODES, timeout=30_000)
    expect(late.locator("#lesson-bar .lb-progress")).to_have_text(trainer.locator("#lesson-bar .lb-progress")
                                                                   .inner_text())
    expect(late.locator("#lesson-bar .lb-evidence .evidence-what")).to_have_text(watched.inner_text(),
                                                                                  timeout=15_000)
    evidence = late.evaluate("window.heartbeat.classroom.evidence.get('notready-gap')")
    assert (evidence["side"], evidence["node"], evidence["to"]) == ("b", "node-2", "Unknown")
    expect(late.locator("body")).to_have_attribute("data-part", "cluster")
    late.locator("#lesson-bar .lb-show").click()
    expect(late.locator('.question-card[data-question="notready-gap"] .qc-evidence .evidence-what')).to_have_text(
        watched.inner_text())
    assert not trainer.errors and not late.errors
