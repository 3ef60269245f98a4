"""An order question revealed before its events happen (lesson cause-and-effect's `comeback`):
each item's event is stored as soon as it happened, not only once all have. A page that joins
in between gets, in its lesson state, the times known so far and the matchers of the items still
to come, so it waits only for those (static/js/lesson.js)."""

from __future__ import annotations

import pytest

from heartbeat_site.live.classroom import questions
from heartbeat_site.live.models import Question

from .test_lesson_next import live_lesson

pytestmark = [pytest.mark.django_db]


def test_a_page_joining_between_the_events_of_a_revealed_order_gets_those_that_happened():
    live, driver = live_lesson("cause-and-effect")
    t = 0.0
    while live.open_question() is None or live.open_question().qid != "comeback":
        if live.open_question() is not None:
            live.reveal()
        t += 5
        driver.run_to(live, t)
    live.reveal()  # before its events: none has happened
    first = None
    while first is None:
        t += 0.01
        driver.run_to(live, t)
        stored = Question.objects.get(run=live.run, qid="comeback").happened
        first = next((item for item, ref in stored.items() if ref), None)
    assert first == "ready" and stored["pods-gone"] is None, stored  # only the first so far

    summary = next(r for r in questions.state_message(str(live.run.pk))["revealed"] if r["question"] == "comeback")
    items = {item["id"]: item for item in summary["items"]}
    assert items["ready"]["event"] == stored["ready"]
    assert items["pods-gone"]["event"] is None and items["pods-gone"]["match"]["kind"] == "pod-deleted"
