"""An order question on phones: the trainer's page (a laptop) and three viewers' phones (390x844)
on lesson 14. The viewers tap the events in three different orders (one taps an event again to
take it out, one uses the keyboard, one reads the page in Chinese); the trainer sees how many put
each event at each place; the reveal shows everyone the run's order with its virtual times, and
each viewer whether theirs was right. A second order question, asked before its events happen,
fills in each event's time on the page as the run shows it. Screenshots of a phone at the question and at the reveal go
to tests/artifacts/."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

from simulation.lessons import get_lesson, shown_order
from tests.web.live import http

from .test_classroom import open_page, shot
from .test_phone import PHONE, TOUCH_TARGET, fits_the_screen, live, open_on

pytestmark = pytest.mark.live

LESSON = "cause-and-effect"
RIGHT = ["unknown", "endpoints", "noexecute", "deleted"]  # the run's order (tests/simulation checks it)
SWAPPED = ["endpoints", "unknown", "noexecute", "deleted"]
COMEBACK = ["ready", "noschedule-gone", "pods-gone"]  # after the kubelet's return at 600 s


def command(stack, run: dict, body: dict) -> None:
    status, reply = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", body, token=run["control_token"])
    assert status == 202, reply


def tap_in(card, order: list[str]) -> None:
    items = card.locator(".qc-order-item").count()
    for place, item in enumerate(order, start=1):
        card.locator(f'.qc-order-item[data-item="{item}"]').tap()
        expect(card.locator(f'.qc-order-item[data-item="{item}"] .qc-order-n')).to_have_text(str(place))
        # a screen reader hears it too: the card's status region says which event went where
        text = card.locator(f'.qc-order-item[data-item="{item}"] .qc-order-text').inner_text()
        expect(card.locator('.qc-order-told[role="status"]')).to_have_text(f"{text}: placed {place} of {items}")


def without_answer(socket) -> None:
    """A websocket as a hand-written lesson's would be: its order questions have no `answer`, so a
    reveal before their events has no order yet (the server's messages, that field taken out)."""
    server = socket.connect_to_server()
    socket.on_message(server.send)

    def forward(message) -> None:
        if isinstance(message, str) and message.startswith(('{"type":"lesson"', '{"type":"reveal"')):
            msg = json.loads(message)
            for reveal in [msg, *msg.get("revealed", [])]:
                if reveal.get("kind") == "order" and not all(item["event"] for item in reveal.get("items", [])):
                    reveal["correct"] = None
            message = json.dumps(msg, separators=(",", ":"))
        socket.send(message)

    server.on_message(forward)


def test_three_phones_put_the_chain_in_order_and_see_the_runs_order(browser, stack, artifacts, offsite):
    status, run = http("POST", f"{stack.base}/api/runs", {"lesson": LESSON, "speed": 100})
    assert status == 201, run
    base = f"{stack.base}/runs/{run['id']}/"
    trainer = open_page(browser, f"{base}#control={run['control_token']}", offsite, viewport=(1366, 768))
    right, swapped, reverse = (open_on(browser, base, offsite, PHONE, lang=lang) for lang in ("en", "en", "zh"))
    phones = (right, swapped, reverse)
    for page in (trainer, *phones):
        live(page)
    # the first question (who writes Ready) comes at t=60 s: revealed at once, the run goes on to the chain
    expect(right.locator('.question-card[data-question="who-writes"]')).to_be_visible(timeout=60_000)
    command(stack, run, {"action": "reveal"})
    cards = [page.locator('.question-card[data-question="chain"]') for page in phones]
    for card in cards:
        expect(card).to_have_attribute("data-state", "open", timeout=60_000)
    # the bar tells only the open question's step: the first question's evidence is past
    for page in (trainer, *phones):
        expect(page.locator("#lesson-bar .lb-evidence")).to_be_hidden()
        page.locator('.question-card[data-question="chain"] .qc-hide').click()
        expect(page.locator("#lesson-bar .lb-evidence")).to_be_hidden()
        page.locator("#lesson-bar .lb-show").click()

    # the events in a fixed order that is not the run's, each a finger-sized button
    question = next(s["question"] for s in get_lesson(LESSON).document["steps"] if s["id"] == "evicted")
    listed = cards[0].locator(".qc-order-item").evaluate_all("els => els.map(e => e.dataset.item)")
    assert listed == shown_order(question) and listed != RIGHT
    for target in cards[0].locator("button:visible").all():
        assert target.bounding_box()["height"] >= TOUCH_TARGET, target.evaluate("el => el.outerHTML")
    fits_the_screen(right, PHONE)
    shot(right, artifacts, "phone-order-question")

    # one viewer: a first try, an event taken out again (the later ones move up), then the right order
    card = cards[0]
    tap_in(card, ["unknown", "noexecute"])
    card.locator('.qc-order-item[data-item="unknown"]').tap()
    expect(card.locator('.qc-order-item[data-item="noexecute"] .qc-order-n')).to_have_text("1")
    expect(card.locator(".qc-order-told")).to_have_text(re.compile(r": taken out; the events after it moved up"))
    expect(card.locator('.qc-order-item[data-item="unknown"]')).to_have_attribute("aria-pressed", "false")
    card.locator(".qc-order-send").tap(force=True)  # (aria-disabled) not every event has its place: said so
    expect(card.locator(".qc-status.bad")).to_have_text(re.compile("3"))
    card.locator(".qc-order-clear").tap()
    tap_in(card, RIGHT)
    shot(right, artifacts, "phone-order-tapped")
    card.locator(".qc-order-send").tap()
    # another taps a different order; the third (in Chinese) uses the keyboard
    tap_in(cards[1], SWAPPED)
    cards[1].locator(".qc-order-send").tap()
    for item in RIGHT[::-1]:
        cards[2].locator(f'.qc-order-item[data-item="{item}"]').focus()
        reverse.keyboard.press("Enter")
    expect(cards[2].locator('.qc-order-item[data-item="deleted"] .qc-order-n')).to_have_text("1")
    expect(cards[2].locator(".qc-order-told")).to_have_text(re.compile("排在第 4 位（共 4 位）$"))
    cards[2].locator(".qc-order-send").focus()
    reverse.keyboard.press("Enter")
    for card in cards:
        expect(card.locator(".qc-order-send.saved")).to_be_visible(timeout=15_000)

    # the trainer's tally: per event, how many put it at each place
    tally = trainer.locator('.question-card[data-question="chain"] .order-tally')
    expect(trainer.locator('.question-card[data-question="chain"] .qc-count')).to_have_attribute(
        "data-answers", "3", timeout=15_000)
    unknown = tally.locator('tr[data-item="unknown"] td')
    expect(unknown).to_have_text(["1", "1", "0", "1"])
    expect(tally.locator('tr[data-item="deleted"] td')).to_have_text(["1", "0", "0", "2"])
    shot(trainer, artifacts, "order-trainer-tally")

    # the reveal at 1x, then a pause: the next question must not take the card away meanwhile
    command(stack, run, {"action": "speed", "value": 1})
    command(stack, run, {"action": "reveal"})
    command(stack, run, {"action": "pause"})
    for page, card, ok in zip(phones, cards, (True, False, False), strict=True):
        expect(card).to_have_attribute("data-state", "revealed", timeout=15_000)
        steps = card.locator(".qc-correct .qc-order-step")
        expect(steps).to_have_count(4)
        assert steps.evaluate_all("els => els.map(e => e.dataset.item)") == RIGHT
        times = card.locator(".qc-correct .qc-order-t").all_inner_texts()
        assert all(t.startswith("T+") for t in times), times
        expect(card.locator(".qc-mine")).to_have_class(re.compile("right" if ok else "wrong"))
        fits_the_screen(page, PHONE)
    expect(cards[1].locator(".qc-mine .out-of-place")).to_have_count(2)  # the two swapped
    expect(trainer.locator('.question-card[data-question="chain"] .qc-order-right')).to_have_attribute(
        "data-right", "1", timeout=15_000)
    shot(swapped, artifacts, "phone-order-reveal")
    shot(reverse, artifacts, "phone-order-reveal-zh")

    # a prediction: asked when node-2's kubelet starts again, revealed before its events happen;
    # each event's time fills in on the page as the run shows it
    command(stack, run, {"action": "speed", "value": 100})
    command(stack, run, {"action": "resume"})
    card = right.locator('.question-card[data-question="comeback"]')
    expect(card).to_have_attribute("data-state", "open", timeout=60_000)
    tap_in(card, COMEBACK)
    card.locator(".qc-order-send").tap()
    expect(card.locator(".qc-order-send.saved")).to_be_visible(timeout=15_000)
    command(stack, run, {"action": "speed", "value": 1})
    command(stack, run, {"action": "reveal"})
    command(stack, run, {"action": "pause"})  # before the pods go, 1.5 s after the kubelet's return
    expect(card).to_have_attribute("data-state", "revealed", timeout=15_000)
    # a page that joins now, as in a hand-written lesson with no `answer`: the order is not known
    # yet, and is said so; the page watches for the events it did not see
    late = open_on(browser, base, offsite, PHONE, sockets={re.compile(r"/ws/runs/"): without_answer})
    live(late)
    late.locator("#lesson-bar .lb-show").tap()
    late_card = late.locator('.question-card[data-question="comeback"]')
    expect(late_card).to_have_attribute("data-state", "revealed")
    expect(late_card.locator(".qc-order-pending")).to_have_text(re.compile("has not shown this order yet"))
    # what happened before it joined is in order; what is still to come is listed, unnumbered
    unplaced = late_card.locator(".qc-correct .qc-order-unplaced .qc-order-step")
    expect(unplaced.last).to_have_attribute("data-item", "pods-gone")
    expect(late_card.locator(".qc-correct .qc-order-step")).to_have_count(3)
    fits_the_screen(late, PHONE)
    shot(late, artifacts, "phone-order-not-shown-yet")
    laptop = browser.new_context(viewport={"width": 1366, "height": 768})
    offsite.watch(laptop)
    laptop.route_web_socket(re.compile(r"/ws/runs/"), without_answer)
    late_laptop = laptop.new_page()
    late_laptop.goto(base)
    live(late_laptop)
    late_laptop.locator("#lesson-bar .lb-show").click()
    expect(late_laptop.locator(".qc-order-pending")).to_be_visible()
    shot(late_laptop, artifacts, "order-not-shown-yet")
    command(stack, run, {"action": "resume"})
    expect(card.locator(".qc-mine")).to_have_class(re.compile("right"))
    expect(card.locator(".qc-correct .qc-order-t")).to_have_text([re.compile(r"^T\+10:0[01]")] * 3, timeout=30_000)
    late_steps = late_card.locator(".qc-correct .qc-order-step")
    expect(late_card.locator(".qc-correct .qc-order-t")).to_have_text([re.compile(r"^T\+10:0[01]")] * 3, timeout=30_000)
    assert late_steps.evaluate_all("els => els.map(e => e.dataset.item)") == COMEBACK
    expect(late_card.locator(".qc-order-pending")).to_have_count(0)
    expect(late_laptop.locator(".qc-correct .qc-order-t")).to_have_text([re.compile(r"^T\+10:0[01]")] * 3)
    command(stack, run, {"action": "pause"})
    shot(right, artifacts, "phone-order-prediction")
    shot(late, artifacts, "phone-order-shown-late")
    shot(late_laptop, artifacts, "order-shown-late")
    for page in (trainer, *phones, late):
        assert page.errors == [], page.errors
