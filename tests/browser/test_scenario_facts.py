"""The home page's scenario cards on a 1366 px laptop: a card too narrow for its three facts puts Length on a
second row right under the first, as a table's next row, not a blank line away from it."""

from __future__ import annotations

import pytest

from .test_classroom import open_page, shot
from .test_lessons import LAPTOP

pytestmark = pytest.mark.live

# For each card whose facts wrap: the gap between the first row's bottom and the wrapped fact's top.
WRAPPED_GAPS = """cards => cards.flatMap(card => {
  const facts = [...card.querySelectorAll('.facts > div')].map(f => f.getBoundingClientRect());
  const first = facts[0];
  return facts.filter(f => f.top > first.bottom - 1).slice(0, 1).map(f => f.top - first.bottom);
})"""


def test_wrapped_scenario_facts_sit_under_the_first_row(browser, stack, artifacts, offsite):
    page = open_page(browser, f"{stack.base}/", offsite, viewport=LAPTOP)
    gaps = page.locator(".catalogue .scenario-card").evaluate_all(WRAPPED_GAPS)
    assert gaps, "no card's facts wrap at 1366 px: this test no longer looks at anything"
    assert max(gaps) <= 8, gaps
    page.locator(".catalogue").scroll_into_view_if_needed()
    shot(page, artifacts, "home-scenario-facts-1366")
