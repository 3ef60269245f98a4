""""Viewers follow me": while the trainer's toggle is on, a viewer's page shows the trainer's node until the viewer
picks one of their own; "Follow the trainer" brings it back."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import create_run
from .test_classroom import open_page, wait_for_cluster

pytestmark = [pytest.mark.live, pytest.mark.django_db(transaction=True)]

NODE = '#cluster [data-node="{}"]'


def test_viewers_follow_the_trainer_until_they_pick_a_node(browser, stack, offsite):
    run = create_run(stack, speed=5)  # no fault: nothing moves a page's focus of its own accord
    trainer = open_page(browser, run["control_url"], offsite)
    viewer = open_page(browser, run["viewer_url"], offsite)
    wait_for_cluster(trainer)
    wait_for_cluster(viewer)
    focus = viewer.locator("#focus-name")

    trainer.locator("#follow-me").check()
    trainer.locator(NODE.format("node-1")).first.click()
    expect(focus).to_have_text("node-1", timeout=15_000)
    trainer.locator(NODE.format("node-2")).first.click()
    expect(focus).to_have_text("node-2", timeout=15_000)
    expect(viewer.locator("#follow-trainer")).to_be_hidden()

    viewer.locator(NODE.format("node-1")).first.click()  # the viewer looks at a node of their own
    expect(focus).to_have_text("node-1")
    expect(viewer.locator("#follow-trainer")).to_be_visible()
    trainer.locator(NODE.format("node-3")).first.click()
    viewer.wait_for_function("() => window.heartbeat.follow.last.node === 'node-3'", timeout=15_000)  # it arrived
    expect(focus).to_have_text("node-1")  # ...and the viewer's choice stands

    viewer.locator("#follow-trainer").click()
    expect(focus).to_have_text("node-3")
    expect(viewer.locator("#follow-trainer")).to_be_hidden()
    for page in (trainer, viewer):
        assert page.errors == [] and page.console_errors == [], (page.errors, page.console_errors)
    assert offsite.offsite == []
