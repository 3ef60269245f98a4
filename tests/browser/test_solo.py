"""Alone, at one's own pace: "Try alone" on the home page opens the learner's page of a lesson (or
a drill). It answers as a viewer would, checks each answer itself (the reveal, with its own
control token), sees no class tally, no nickname prompt and no "follow me"; at the end it shows
the score and keeps it in this browser, and the home page marks the lesson finished with it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from simulation.lessons import builtin_drills, builtin_lessons

from .test_classroom import open_page, shot
from .test_lessons import LAPTOP, LOCALES, fill_template, set_speed, strings
from .untranslated import COLLECT_JS, english_words

pytestmark = pytest.mark.live

# Next: a visible "Next step" (the question card's, or the lesson bar's once the card is folded).
NEXT = ".qc-next, .lb-next"


def shortest_lesson(kinds: str):
    """The lesson with the fewest questions, then steps: "plain", of number and choice questions
    only; "order", with an order question among them."""
    def fits(lesson) -> bool:
        asked = {step["question"]["kind"] for step in lesson.document["steps"] if step.get("question")}
        return "order" in asked if kinds == "order" else asked <= {"number", "choice"}

    # a lesson of one small run: the run page (a comparison lesson's page alone is test_compare_lesson's)
    lessons = [lesson for lesson in builtin_lessons() if fits(lesson) and lesson.comparison is None
               and lesson.scenario.node_count <= 10
               and all(step["question"].get("explain") for step in lesson.document["steps"] if step.get("question"))]
    return min(lessons, key=lambda lesson: (len(lesson.questions), len(lesson.document["steps"]), lesson.position))


def answer(page, question: dict, right: bool) -> None:
    """Answers the open card, rightly or not, as a learner does: a number typed and sent (a right one
    at the edge of its tolerance), a choice, or the events tapped in order (a wrong one backwards)."""
    card = page.locator(f'.question-card[data-question="{question["id"]}"]')
    if question["kind"] == "order":
        for item in question["answer"] if right else reversed(question["answer"]):
            card.locator(f'.qc-order-item[data-item="{item}"]').click()
        card.locator(".qc-order-send").click()
    elif question["kind"] == "number":
        value = question["answer"] + question.get("tolerance", 0) + (0 if right else 37)
        card.locator(".qc-number input").fill(str(value))
        card.locator(".qc-number button[type=submit]").click()
    else:
        wrong = next(c["id"] for c in question["choices"] if c["id"] != question["answer"])
        choice = question["answer"] if right else wrong
        card.locator(f'.qc-choice[data-value="{choice}"]').click()


def progress(page) -> str:
    return page.locator("#lesson-bar .lb-progress").inner_text()


@pytest.mark.parametrize("kinds", ["plain", "order"])
def test_a_lesson_alone_from_start_to_end(browser, stack, artifacts, offsite, kinds):
    lesson = shortest_lesson(kinds)
    steps = lesson.document["steps"]
    questions = [s["question"] for s in steps if s.get("question")]
    s = strings("en")
    page = open_page(browser, f"{stack.base}/", offsite, viewport=LAPTOP)
    card_on_home = page.locator(f'.lesson-card[data-lesson="{lesson.name}"]')
    expect(card_on_home.locator(".progress-badge")).to_be_hidden()  # never finished in this browser
    card_on_home.locator("[data-start=solo]").click()

    bar = page.locator("#lesson-bar")
    expect(bar.locator(".lb-title")).to_have_text(lesson.title["en"], timeout=20_000)
    expect(page.locator("body")).to_have_attribute("data-solo", "true")
    # the learner's page: clock controls, but nobody to lead and nobody else watching
    expect(page.locator("#control-bar")).to_be_visible()
    expect(page.locator(".follow-me")).to_be_hidden()
    expect(page.locator("#viewers")).to_be_hidden()
    # Checked at 1x and paused after each check, "Next" moves on (it runs the clock to the next step):
    # no step comes by itself between a check and the click.
    set_speed(page, "1")

    asked = 0
    for _ in range(2 * len(steps) + 2):
        what = page.locator(f'.question-card[data-state="open"], {NEXT}, .lb-score').locator("visible=true").first
        expect(what).to_be_visible(timeout=60_000)
        cls = what.get_attribute("class") or ""
        if "lb-score" in cls:
            break
        if "question-card" in cls:
            question = questions[asked]
            card = page.locator(f'.question-card[data-question="{question["id"]}"]')
            expect(card.locator(".qc-text")).to_have_text(question["text"]["en"])
            # asked as a viewer is: answer controls, no tally, no nickname, nothing to check yet
            expect(card.locator(".qc-answer")).to_be_visible()
            expect(card.locator(".qc-results")).to_be_hidden()
            expect(card.locator(".qc-nickname")).to_be_hidden()
            expect(card.locator(".qc-reveal-button")).to_be_hidden()
            right = asked < len(questions) - 1  # the last one wrong: the page must say so
            answer(page, question, right)
            expect(card.locator(".qc-status")).to_have_text(s["lesson.saved-solo"])
            check = card.locator(".qc-reveal-button")
            expect(check).to_have_text(s["lesson.check"])
            if asked == 0:
                shot(page, artifacts, f"solo-en-{kinds}-question")
                # a reload keeps the learner's page: solo, the answer given, "Check my answer"
                page.reload()
                expect(page.locator("body")).to_have_attribute("data-solo", "true", timeout=20_000)
                expect(check).to_be_visible(timeout=20_000)
                expect(card.locator(".qc-results")).to_be_hidden()
            check.click()
            expect(card).to_have_attribute("data-state", "revealed", timeout=15_000)
            page.locator("#btn-pause").click()
            expect(page.locator("body")).to_have_attribute("data-paused", "true", timeout=15_000)
            mine = card.locator(".qc-mine")
            expect(mine).to_have_class(re.compile("right" if right else "wrong"))
            expect(mine).to_contain_text(s["lesson.you-right" if right else "lesson.you-wrong"])
            expect(card.locator(".qc-explain")).to_have_text(question["explain"]["en"])
            expect(card.locator(".qc-evidence")).not_to_be_empty()
            expect(card.locator(".tally-row")).to_have_count(0)
            shot(page, artifacts, f"solo-en-{kinds}-checked-{question['id']}")
            asked += 1
            continue
        before = progress(page)
        what.click()
        expect(bar.locator(".lb-progress")).not_to_have_text(before, timeout=60_000)
    else:
        pytest.fail("the lesson never ended")

    assert asked == len(questions)
    expect(bar.locator(".lb-progress")).to_have_text(fill_template(s["lesson.step-of"], n=len(steps), of=len(steps)))
    score = bar.locator(".lb-score")
    expect(score).to_have_attribute("data-score", str(len(questions) - 1))
    expect(score).to_contain_text(fill_template(s["lesson.finished"], score=len(questions) - 1, of=len(questions)))
    shot(page, artifacts, f"solo-en-{kinds}-finished")
    kept = page.evaluate("JSON.parse(localStorage.getItem('heartbeat-lessons'))")[lesson.name]
    assert (kept["finished"], kept["score"], kept["of"]) == (True, len(questions) - 1, len(questions))
    # reloaded, the page counts the same score from the reveals the server recalls (a number's
    # tolerance with them) and the answers this browser kept
    page.reload()
    expect(score).to_have_attribute("data-score", str(len(questions) - 1), timeout=20_000)

    # Back on the lesson path: this lesson is marked finished, with its score; the others are not.
    score.locator(".lb-home").click()
    badge = page.locator(f'.lesson-card[data-lesson="{lesson.name}"] .progress-badge')
    expect(badge).to_be_visible(timeout=20_000)
    expect(badge).to_have_attribute("data-score", str(len(questions) - 1))
    expect(badge.locator(".progress-text")).to_have_text(
        fill_template(s["home.finished"], score=len(questions) - 1, of=len(questions)))
    expect(page.locator(".lesson-card .progress-badge").locator("visible=true")).to_have_count(1)
    badge.scroll_into_view_if_needed()
    shot(page, artifacts, f"solo-en-{kinds}-home-finished")
    assert page.errors == [] and page.console_errors == []
    assert offsite.offsite == []


def test_the_home_page_shows_finished_lessons_and_drills_in_chinese(browser, stack, artifacts, offsite):
    """What this browser kept, in the page's language: a lesson's best score and a drill's."""
    locale, code = LOCALES["zh"]
    s = strings(code)
    lesson, drill = builtin_lessons()[0], builtin_drills()[0]
    page = open_page(browser, f"{stack.base}/", offsite, viewport=LAPTOP, locale=locale)
    page.evaluate("""([lesson, drill]) => {
        const at = new Date().toISOString();
        localStorage.setItem('heartbeat-lessons', JSON.stringify({[lesson]: {finished: true, score: 2, of: 3, at}}));
        localStorage.setItem('heartbeat-drills', JSON.stringify({[drill]: {finished: true, score: 1, of: 1, at}}));
    }""", [lesson.name, drill.name])
    page.reload()
    for selector, score, of in ((f'.lesson-card[data-lesson="{lesson.name}"]', 2, 3),
                                (f'.drill-card[data-drill="{drill.name}"]', 1, 1)):
        badge = page.locator(f"{selector} .progress-badge")
        expect(badge).to_be_visible()
        expect(badge.locator(".progress-text")).to_have_text(fill_template(s["home.finished"], score=score, of=of))
    shot(page, artifacts, "solo-zh-home-finished")
    texts = page.evaluate(COLLECT_JS, ".lesson-path") + page.evaluate(COLLECT_JS, ".drill-list")
    assert [text for text in texts if english_words(text)] == []
    assert page.errors == []


def test_a_drill_alone_checks_the_diagnosis_in_chinese(browser, stack, artifacts, offsite):
    drill = builtin_drills()[0]
    node = drill.fault["node"]
    locale, code = LOCALES["zh"]
    s = strings(code)
    page = open_page(browser, f"{stack.base}/", offsite, viewport=LAPTOP, locale=locale)
    page.locator(f'.drill-card[data-drill="{drill.name}"] [data-start=solo]').click()
    card = page.locator('.question-card[data-kind="diagnosis"]')
    expect(card).to_be_visible(timeout=20_000)
    expect(card.locator(".qc-results")).to_be_hidden()
    cause = next(i for i, c in enumerate(drill.document["choices"]) if c["id"] == drill.answer)
    card.locator(f'.qc-choice[data-value="cause-{cause + 1}"]').click()
    card.locator(f'.qc-choice[data-value="{node}"]').click()
    expect(card.locator(".qc-status")).to_have_text(s["lesson.saved-solo"])
    card.locator(".qc-reveal-button").click()
    expect(card).to_have_attribute("data-state", "revealed", timeout=15_000)
    expect(card.locator(".qc-mine")).to_have_class(re.compile("right"))
    score = page.locator("#lesson-bar .lb-score")
    expect(score).to_contain_text(fill_template(s["lesson.finished-drill"], score=1, of=1))
    shot(page, artifacts, "solo-zh-drill-checked")
    texts = page.evaluate(COLLECT_JS, "#lesson-bar") + page.evaluate(COLLECT_JS, "#question-layer")
    assert [text for text in texts if english_words(text)] == []
    page.goto(f"{stack.base}/")
    expect(page.locator(f'.drill-card[data-drill="{drill.name}"] .progress-badge')).to_be_visible()
    assert page.errors == []
