"""A lesson and a drill in the pages: a trainer's control page and two viewers' pages at 1366x768,
in English and in Chinese. The question reaches every page, the viewers answer (one right, one
wrong), only the trainer sees the tally until the reveal, the reveal shows everyone the answer,
the explanation and the evidence, and a drill names its cause on no page before the reveal."""

from __future__ import annotations

import re

import pytest
from django.utils import translation
from playwright.sync_api import expect

from heartbeat_site.pages.strings import ui_strings
from simulation.lessons import builtin_drills, builtin_lessons, get_drill, get_lesson
from tests.web.live import http

from .test_classroom import open_page, shot, wait_for_cluster
from .test_late_joiner import wait_until_virtual

pytestmark = pytest.mark.live

LESSON = "kubelet-crash-walkthrough"  # first question at once: seconds to NotReady (50 +- 5)
LAPTOP = (1366, 768)
LOCALES = {"en": ("en-US", "en"), "zh": ("zh-CN", "zh-hans")}


def strings(lang: str) -> dict[str, str]:
    with translation.override(lang):
        return ui_strings()


def start(stack, body: dict) -> dict:
    status, run = http("POST", f"{stack.base}/api/runs", {**body, "speed": 20})
    assert status == 201, run
    return run


def open_class(browser, stack, run: dict, offsite, locale: str):
    """The trainer's page and two viewers' pages, each in a browser of its own (own viewer id)."""
    base = f"{stack.base}/runs/{run['id']}/"
    trainer = open_page(browser, f"{base}#control={run['control_token']}", offsite, viewport=LAPTOP, locale=locale)
    viewers = [open_page(browser, base, offsite, viewport=LAPTOP, locale=locale) for _ in range(2)]
    for page in (trainer, *viewers):
        expect(page.locator("#conn-state")).to_have_attribute("data-state", re.compile("live|resynced"), timeout=30_000)
    return trainer, viewers


def reveal_and_pause(trainer, question: str) -> None:
    """The trainer slows the run to 1x, reveals, pauses, and sets 20x again: the reveal lets the run
    go on, and at 20x the next step (its question replacing the card) would come within seconds of
    wall time, sooner than a pause clicked on a busy machine."""
    set_speed(trainer, "1")
    trainer.locator(".qc-reveal-button").click()
    expect(trainer.locator(f'.question-card[data-question="{question}"]')).to_have_attribute(
        "data-state", "revealed", timeout=15_000
    )
    trainer.locator("#btn-pause").click()
    expect(trainer.locator("body")).to_have_attribute("data-paused", "true", timeout=15_000)
    set_speed(trainer, "20")


def set_speed(trainer, speed: str) -> None:
    trainer.locator("#speed").select_option(speed)
    expect(trainer.locator("#clock-speed")).to_have_text(f"{speed}×", timeout=15_000)


def fill_template(text: str, **params) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m.group(1), m.group(0))), text)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lesson_question_answered_tallied_and_revealed(browser, stack, artifacts, offsite, lang):
    locale, code = LOCALES[lang]
    s = strings(code)
    lesson = get_lesson(LESSON)
    steps = lesson.document["steps"]
    first = steps[0]["question"]
    run = start(stack, {"lesson": LESSON})
    trainer, (right, wrong) = open_class(browser, stack, run, offsite, locale)
    pages = (trainer, right, wrong)

    # The first step and its question, on every page. (It is asked at T+0, before the cluster's
    # nodes have registered: the run is paused on an empty cluster until the reveal.)
    for page in pages:
        bar = page.locator("#lesson-bar")
        expect(bar.locator(".lb-title")).to_have_text(lesson.title[lang])
        expect(bar.locator(".lb-progress")).to_have_text(fill_template(s["lesson.step-of"], n=1, of=len(steps)))
        expect(bar.locator(".lb-text")).to_have_text(steps[0]["text"][lang])
        card = page.locator('.question-card[data-question="notready-when"]')
        expect(card).to_be_visible(timeout=20_000)
        expect(card.locator(".qc-text")).to_have_text(first["text"][lang])
        expect(page.locator("#focus-name")).to_have_text("node-2")  # the step's focus action
    # Viewers answer; the trainer has no answer controls, only the tally and the reveal.
    expect(trainer.locator(".qc-answer")).to_be_hidden()
    expect(right.locator(".qc-number .qc-unit")).to_have_text("s")
    shot(wrong, artifacts, f"lesson-{lang}-question-viewer")
    for page, value in ((right, 50), (wrong, 90)):
        page.locator(".qc-number input").fill(str(value))
        page.locator(".qc-number button[type=submit]").click()
        expect(page.locator(".qc-status")).to_have_text(s["lesson.saved"])
        expect(page.locator(".qc-status")).not_to_have_class(re.compile("bad"))
    expect(trainer.locator(".qc-count")).to_have_attribute("data-answers", "2", timeout=15_000)
    expect(trainer.locator(".qc-count")).to_have_text(fill_template(s["lesson.answered"], n=2))
    rows = trainer.locator(".qc-results .tally-row")
    expect(rows).to_have_count(2)  # two ranges: 50 and 90 are far apart
    assert sum(int(c) for c in rows.evaluate_all("rs => rs.map(r => r.dataset.count)")) == 2
    for page in (right, wrong):  # no group-think: the class sees no tally before the reveal
        expect(page.locator(".qc-results .tally-row")).to_have_count(0)
        expect(page.locator(".qc-results")).to_have_text(s["lesson.hidden-until-reveal"])
    shot(trainer, artifacts, f"lesson-{lang}-tally-trainer")
    # Pages reloaded mid-question restore it from the lesson state: the viewer's own answer (kept
    # by the browser), the trainer's tally.
    for page in (wrong, trainer):
        page.reload()
    expect(wrong.locator('.question-card[data-question="notready-when"] .qc-number input')).to_have_value(
        "90", timeout=20_000
    )
    expect(trainer.locator(".qc-count")).to_have_attribute("data-answers", "2", timeout=20_000)
    expect(trainer.locator("#lesson-bar .lb-progress")).to_have_text(
        fill_template(s["lesson.step-of"], n=1, of=len(steps))
    )

    # The reveal: everyone sees the answer, the distribution, the explanation; each viewer their own.
    reveal_and_pause(trainer, "notready-when")
    for page in pages:
        card = page.locator('.question-card[data-question="notready-when"]')
        expect(card).to_have_attribute("data-state", "revealed", timeout=15_000)
        expect(card.locator(".qc-correct strong")).to_have_text("50 s")
        expect(card.locator(".qc-explain")).to_have_text(first["explain"][lang])
        expect(card.locator(".tally-row")).to_have_count(2)
        expect(card.locator(".tally-row.correct")).to_have_count(1)
        # it waits for node-2 turning Unknown, said in words
        expect(card.locator(".qc-evidence .evidence-what")).to_have_text(
            {"en": "node-2 turns Ready=Unknown", "zh": "node-2 变为 Ready=Unknown"}[lang])
    expect(right.locator(".qc-mine")).to_have_class(re.compile("right"))
    expect(wrong.locator(".qc-mine")).to_have_class(re.compile("wrong"))
    expect(wrong.locator(".tally-row.mine:not(.correct)")).to_have_count(1)
    shot(right, artifacts, f"lesson-{lang}-reveal-viewer")
    shot(trainer, artifacts, f"lesson-{lang}-reveal-trainer")

    # An answer that comes after the reveal is refused, and the page says so.
    wrong.evaluate("window.heartbeat.classroom.answer({value: 50})")
    expect(wrong.locator(".qc-status")).to_have_text(s["lesson.error.question-closed"])
    expect(wrong.locator(".qc-status")).to_have_class(re.compile("bad"))

    # The trainer moves on: the next step's text on every page, then its question (a choice).
    trainer.locator(".qc-next").click()
    second = steps[1]["question"]
    for page in pages:
        expect(page.locator("#lesson-bar .lb-text")).to_have_text(steps[1]["text"][lang], timeout=15_000)
        expect(page.locator("#lesson-bar .lb-progress")).to_have_text(
            fill_template(s["lesson.step-of"], n=2, of=len(steps))
        )
        expect(page.locator(f'.question-card[data-question="{second["id"]}"]')).to_be_visible(timeout=15_000)
    right.locator('.qc-choice[data-value="not-ready"]').click()
    wrong.locator('.qc-choice[data-value="removed"]').click()
    for page in (right, wrong):
        expect(page.locator(".qc-status")).to_have_text(s["lesson.saved"])
    expect(wrong.locator('.qc-choice[data-value="removed"]')).to_have_attribute("aria-pressed", "true")
    expect(trainer.locator(".qc-count")).to_have_attribute("data-answers", "2", timeout=15_000)
    expect(trainer.locator('.tally-row[data-key="not-ready"]')).to_have_attribute("data-count", "1")
    shot(trainer, artifacts, f"lesson-{lang}-choice-tally-trainer")
    reveal_and_pause(trainer, second["id"])
    for page in pages:
        card = page.locator(f'.question-card[data-question="{second["id"]}"]')
        expect(card.locator('.tally-row.correct[data-key="not-ready"]')).to_be_visible(timeout=15_000)
        expect(card.locator(".qc-explain")).to_have_text(second["explain"][lang])
    shot(wrong, artifacts, f"lesson-{lang}-choice-reveal-viewer")
    # On at 2x, then 0.5x from 100 s (before node-2's Unknown pass, about 110 s): the step it starts
    # asks its question 5 s later, 10 s of wall time for the pause below on a busy machine.
    set_speed(trainer, "2")
    trainer.locator("#btn-resume").click()
    for page in pages:
        wait_for_cluster(page)
    wait_until_virtual(stack, run["id"], 100)
    set_speed(trainer, "0.5")
    # The evidence (node-2's endpoints turning not ready, ~50 s after the crash at 60 s) has not
    # happened at the reveal: each page waits for a frame event that fits the matcher. It comes in
    # the monitor pass that turns node-2 Unknown, which starts the next step: the card folds away
    # and the bar, which tells only the step at hand, does not carry the past question's evidence;
    # "Show the answer" brings its card back, with the evidence and its "why". (Paused once the
    # step started.)
    expect(trainer.locator("#lesson-bar .lb-text")).to_have_text(steps[2]["text"][lang], timeout=60_000)
    trainer.locator("#btn-pause").click()
    expect(trainer.locator("body")).to_have_attribute("data-paused", "true", timeout=15_000)
    for page in pages:
        expect(page.locator("#lesson-bar .lb-text")).to_have_text(steps[2]["text"][lang], timeout=15_000)
        expect(page.locator("#lesson-bar .lb-evidence")).to_be_hidden()
        page.locator("#lesson-bar .lb-show").click()
        why = page.locator(f'.question-card[data-question="{second["id"]}"] .qc-evidence .evidence-why')
        expect(why).to_have_count(1, timeout=60_000)
        expect(page.locator(".qc-evidence .evidence-what")).to_contain_text(re.compile(r"web-.*T\+01:5\d"))
    shot(wrong, artifacts, f"lesson-{lang}-evidence-viewer")
    right.locator(".qc-evidence .evidence-why").click()
    expect(right.locator(".question-layer")).to_be_hidden()
    expect(right.locator('[data-tab="why"]')).to_have_attribute("aria-selected", "true")
    expect(right.locator("#why .why")).to_contain_text("node-2")
    shot(right, artifacts, f"lesson-{lang}-evidence-why-viewer")
    for page in pages:
        assert page.errors == [], page.errors
    assert offsite.offsite == []


def test_a_drill_hides_its_cause_until_the_reveal(browser, stack, artifacts, offsite):
    drill = get_drill("silent-node")
    action, node = drill.fault["action"], drill.fault["node"]  # stop-kubelet on node-3
    s = strings("en")
    run = start(stack, {"drill": drill.name})
    trainer, (viewer, other) = open_class(browser, stack, run, offsite, "en-US")

    bar = viewer.locator('#lesson-bar[data-kind="drill"]')
    expect(bar.locator(".lb-kind")).to_have_text(s["lesson.drill"])
    expect(bar.locator(".lb-title")).to_have_text(drill.title["en"])
    expect(bar.locator(".lb-text")).to_have_text(drill.document["brief"]["en"])
    card = viewer.locator('.question-card[data-kind="diagnosis"]')
    expect(card).to_be_visible()
    expect(card.locator('.qc-choice[data-field="choice"]')).to_have_count(len(drill.document["choices"]))
    expect(card.locator('.qc-choice[data-field="node"]')).to_have_count(len(drill.document["nodes"]))
    # Well after the fault (45 s) and its symptom (Unknown at ~95 s), nothing on the page names it.
    expect(viewer.locator(f'#cluster [data-node="{node}"] [data-role=kubectl-status]')).to_have_text(
        "NotReady", timeout=60_000
    )
    trainer.locator("#btn-pause").click()  # the class thinks (at 20x the run would end in 36 s)
    expect(trainer.locator("body")).to_have_attribute("data-paused", "true", timeout=15_000)
    for tab in ("flows", "kubectl", "why", "diagrams"):
        viewer.locator(f'[data-tab="{tab}"]').click()
        assert action not in viewer.evaluate("document.body.innerText"), tab
    cause = next(i for i, c in enumerate(drill.document["choices"]) if c["id"] == action)
    card.locator(f'.qc-choice[data-value="cause-{cause + 1}"]').click()
    expect(card.locator(".qc-status")).to_have_text(s["lesson.need-node"])
    card.locator(f'.qc-choice[data-value="{node}"]').click()
    expect(card.locator(".qc-status")).to_have_text(s["lesson.saved"])
    assert action not in viewer.evaluate("document.body.innerText")
    shot(viewer, artifacts, "drill-en-diagnosis-viewer")
    expect(trainer.locator(".qc-count")).to_have_attribute("data-answers", "1", timeout=15_000)
    shot(trainer, artifacts, "drill-en-tally-trainer")

    trainer.locator(".qc-reveal-button").click()
    expect(card).to_have_attribute("data-state", "revealed", timeout=15_000)
    correct = card.locator(".qc-correct")
    expect(correct).to_contain_text(drill.document["choices"][cause]["text"]["en"])
    expect(correct.locator("code").first).to_have_text(action)
    expect(correct).to_contain_text(node)
    expect(card.locator(".qc-mine")).to_have_class(re.compile("right"))
    expect(card.locator(".qc-explain")).to_have_text(drill.document["explanation"]["en"])
    shot(viewer, artifacts, "drill-en-reveal-viewer")
    card.locator(".qc-evidence .evidence-why").click()
    expect(viewer.locator("#why .why")).to_contain_text(node)
    for page in (trainer, viewer):
        assert page.errors == [], page.errors
    assert offsite.offsite == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_home_page_leads_with_the_lesson_path(browser, stack, artifacts, offsite, lang):
    locale, code = LOCALES[lang]
    page = open_page(browser, f"{stack.base}/", offsite, viewport=LAPTOP, locale=locale)
    lessons, drills = builtin_lessons(), builtin_drills()
    cards = page.locator(".lesson-card")
    expect(cards).to_have_count(len(lessons))
    assert cards.evaluate_all("cs => cs.map(c => c.dataset.lesson)") == [lesson.name for lesson in lessons]
    crash = page.locator(f'.lesson-card[data-lesson="{LESSON}"]')
    expect(crash.locator('[data-field="title"]')).to_have_text(get_lesson(LESSON).title[lang])
    expect(crash.locator(".lesson-facts")).to_contain_text("5")
    expect(page.locator(".drill-card")).to_have_count(len(drills))
    for drill in drills:  # the brief, never the cause
        card = page.locator(f'.drill-card[data-drill="{drill.name}"]')
        expect(card.locator('[data-field="brief"]')).to_have_text(" ".join(drill.document["brief"][lang].split()))
    assert drills[0].fault["action"] not in page.locator(".drill-list").inner_text()
    # lessons first, then drills, then the free scenarios
    tops = page.evaluate("""() => ['.lesson-path', '.drill-list', '.catalogue']
        .map(s => document.querySelector(s).getBoundingClientRect().top)""")
    assert tops == sorted(tops), tops
    assert page.locator(".lesson-card").first.bounding_box()["y"] < 768
    shot(page, artifacts, f"home-lessons-{lang}-1366")
    page.locator(".drill-list").scroll_into_view_if_needed()
    shot(page, artifacts, f"home-drills-{lang}-1366")
    if lang == "zh":
        return
    # "Start with the class": the control and viewer links, as for a scenario; the control page
    # opens on the lesson.
    crash.locator("[data-start=live]").click()
    expect(page.locator("#session-dialog")).to_be_visible(timeout=20_000)
    control = page.locator("#control-link").input_value()
    viewer = page.locator("#viewer-link").input_value()
    assert "#control=" in control and "control" not in viewer
    page.locator("#open-control").click()
    expect(page.locator("#lesson-bar .lb-title")).to_have_text(get_lesson(LESSON).title["en"], timeout=20_000)
    expect(page.locator(".qc-reveal-button")).to_be_visible()
    # "Try alone" on a drill opens the learner's page of its own run (tests/browser/test_solo.py).
    page.goto(f"{stack.base}/")
    page.locator(f'.drill-card[data-drill="{drills[0].name}"] [data-start=solo]').click()
    expect(page.locator('#lesson-bar[data-kind="drill"] .lb-title')).to_have_text(drills[0].title["en"], timeout=20_000)
    assert page.errors == [] and page.console_errors == []
    assert offsite.offsite == []
