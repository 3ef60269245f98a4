"""The trainer's session report in the pages: after the last question's reveal the trainer's page
offers it (a row per question with the share right, a row per viewer, CSV and JSON to keep), and
opens it by itself when the run ends; a viewer's page never shows it nor asks the server for it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from simulation.lessons import get_lesson
from tests.web.live import http

from .test_lessons import open_class, shot, start, strings

pytestmark = pytest.mark.live

LESSON = "two-heartbeats"  # three questions, at t=20, 30 and 40 s
ANSWERS = {  # question -> (the right viewer's answer, the wrong one's)
    "lease-interval": ({"value": 10}, {"value": 60}),
    "next-write": ({"choice": "lease"}, {"choice": "pod"}),
    "report-interval": ({"value": 300}, {"value": 40}),
}


def give(page, answer: dict) -> None:
    if "value" in answer:
        page.locator(".qc-number input").fill(str(answer["value"]))
        page.locator(".qc-number button[type=submit]").click()
    else:
        page.locator(f'.qc-choice[data-value="{answer["choice"]}"]').click()


def test_the_trainer_gets_the_report_at_the_end_and_viewers_never_do(browser, stack, artifacts, offsite):
    s = strings("en")
    run = start(stack, {"lesson": LESSON})
    trainer, viewers = open_class(browser, stack, run, offsite, "en-US")
    right, wrong = viewers
    asked: list[str] = []
    for page in viewers:
        page.on("request", lambda request: asked.append(request.url))
    questions = [step["question"] for step in get_lesson(LESSON).document["steps"] if step.get("question")]
    assert [q["id"] for q in questions] == list(ANSWERS)

    for number, question in enumerate(questions):
        for page in (trainer, *viewers):
            expect(page.locator(f'.question-card[data-question="{question["id"]}"]')).to_be_visible(timeout=30_000)
        if number == 0:
            right.locator(".qc-nick input").fill("小明")
            right.locator(".qc-nick button[type=submit]").click()
        for page, answer in zip(viewers, ANSWERS[question["id"]], strict=True):
            give(page, answer)
            expect(page.locator(".qc-status")).to_have_text(s["lesson.saved"])
        expect(trainer.locator(".qc-count")).to_have_attribute("data-answers", "2", timeout=15_000)
        expect(trainer.locator(".lb-report")).to_be_hidden()  # not before the last reveal
        trainer.locator(".qc-reveal-button").click()
        expect(trainer.locator(f'.question-card[data-question="{question["id"]}"]')).to_have_attribute(
            "data-state", "revealed", timeout=15_000)

    # the last question revealed: the trainer's lesson bar offers the report
    trainer.locator(".lb-report").click()
    card = trainer.locator(".report-card")
    expect(card).to_be_visible(timeout=15_000)
    rows = card.locator(".report-questions tbody tr")
    expect(rows).to_have_count(3)
    for i, question in enumerate(questions):
        row = rows.nth(i)
        expect(row).to_have_attribute("data-question", question["id"])
        expect(row.locator(".report-text")).to_have_text(question["text"]["en"])
        expect(row.locator("td").nth(2)).to_have_text("2")
        expect(row.locator(".report-share")).to_have_text("50%")
    people = card.locator(".report-viewers tbody tr")
    expect(people).to_have_count(2)
    expect(people.filter(has_text="小明")).to_contain_text("3 of 3 right")
    expect(people.filter(has_text="anonymous")).to_contain_text("0 of 3 right")
    shot(trainer, artifacts, "lesson-report-trainer")
    with trainer.expect_download() as download:
        card.locator('.report-download[data-format="csv"]').click()
    assert download.value.suggested_filename == f"run-{run['id']}-report.csv"
    text = open(download.value.path(), encoding="utf-8-sig").read()  # noqa: SIM115 (a test reads it once)
    assert text.splitlines()[0].startswith("question,question_id,") and "小明" in text and len(text.splitlines()) == 7

    # folded away, it comes back by itself when the lesson ends
    card.locator(".qc-hide").click()
    expect(card).to_be_hidden()
    status, body = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "stop"},
                        token=run["control_token"])
    assert status == 202, body
    expect(trainer.locator(".report-card .report-questions tbody tr")).to_have_count(3, timeout=20_000)
    for page in viewers:
        expect(page.locator("body")).to_have_attribute("data-run-status", "finished", timeout=20_000)
        expect(page.locator(".report-card, .lb-report")).to_have_count(0)
    assert not [url for url in asked if re.search(r"/report\b", url)], "a viewer's page asked for the report"
    for page in (trainer, *viewers):
        assert page.errors == [], page.errors
    assert offsite.offsite == []
