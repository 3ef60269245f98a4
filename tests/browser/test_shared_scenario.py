"""A trainer's own scenario as a link: saved from one browser, listed on its home page, opened in another
browser (/s/<id>), started there; the trainer ends the run and the viewer's page says so, its clock stopped."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import classroom_document
from .test_classroom import open_page, shot, wait_for_cluster

pytestmark = pytest.mark.live


def test_a_saved_scenario_link_opens_starts_and_the_trainer_ends_the_run(browser, stack, artifacts, offsite):
    author = open_page(browser, f"{stack.base}/", offsite)
    document = {**classroom_document("my-own-drill"), "title": {"en": "My own drill", "zh": "我的练习"}}
    saved = author.evaluate("async (doc) => (await import('/static/js/api.js')).saveScenario(doc)", document)
    assert saved["url"].endswith(f"/s/{saved['id']}")
    author.reload()
    mine = author.locator("#my-scenarios")
    expect(mine).to_be_visible()
    expect(mine.locator(f'a[href="/s/{saved["id"]}"]')).to_have_text("My own drill")
    shot(author, artifacts, "home-your-scenarios")

    # another browser context (nothing in its storage) opens the link and starts a private run
    trainer = open_page(browser, saved["url"], offsite)
    expect(trainer.locator("h1")).to_have_text("My own drill")
    expect(trainer.locator(".facts")).to_contain_text("3 nodes, 2 zones")
    shot(trainer, artifacts, "shared-scenario-page")
    trainer.locator(f'[data-start=private][data-shared="{saved["id"]}"]').click()
    trainer.wait_for_url(re.compile(r"/runs/\w+/"), timeout=20_000)
    wait_for_cluster(trainer)
    expect(trainer.locator("#scenario-title")).to_have_text("My own drill")
    run_url = trainer.url.split("#")[0]
    viewer = open_page(browser, run_url, offsite)
    wait_for_cluster(viewer)
    expect(viewer.locator("#btn-end")).to_have_count(0)  # a viewer has no control bar at all

    trainer.on("dialog", lambda dialog: dialog.accept())
    trainer.locator("#btn-end").click()
    for page in (trainer, viewer):
        expect(page.locator("#run-end")).to_have_text("Ended: stopped by the trainer", timeout=20_000)
        expect(page.locator("#clock-state")).to_be_hidden()
    expect(trainer.locator("#btn-pause")).to_be_disabled()
    clock = viewer.locator("#clock-time").inner_text()
    viewer.wait_for_timeout(1500)  # the clock of an ended run stands still: it reads the same a moment later
    assert viewer.locator("#clock-time").inner_text() == clock
    shot(viewer, artifacts, "run-ended-by-trainer-viewer")
    for page in (author, trainer, viewer):
        assert page.errors == [] and page.console_errors == [], (page.errors, page.console_errors)
    assert offsite.offsite == []
