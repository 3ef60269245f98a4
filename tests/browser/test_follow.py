""""Viewers follow me": while the trainer's toggle is on, a viewer's page shows the trainer's node until the viewer
picks one of their own; "Follow the trainer" brings it back. A page that opens later starts where the trainer looks,
and the scenario's faults do not pull it away."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import classroom_document, create_run
from .test_classroom import open_page, wait_for_cluster

pytestmark = pytest.mark.live

NODE = '#cluster [data-node="{}"]'


def test_viewers_follow_the_trainer_until_they_pick_a_node(browser, stack, offsite):
    run = create_run(stack, speed=5)  # no fault: nothing moves a page's focus of its own accord
    trainer = open_page(browser, run["control_url"], offsite)
    viewer = open_page(browser, run["viewer_url"], offsite)
    wait_for_cluster(trainer)
    wait_for_cluster(viewer)
    focus = viewer.locator("#focus-name")

    trainer.locator(".share summary").click()  # "Viewers follow me" is in the Share menu, with the room's links
    trainer.locator("#follow-me").check()
    trainer.locator(".share summary").click()
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


def test_a_viewer_who_joins_later_starts_on_the_trainers_node(browser, stack, offsite):
    # node-2's kubelet stops at 15 s: a page not following anyone turns to node-2 then
    fault = {"at": "15s", "action": "stop-kubelet", "node": "node-2"}
    document = {**classroom_document("follow-late"), "faults": [fault]}
    run = create_run(stack, speed=5, document=document)
    trainer = open_page(browser, run["control_url"], offsite)
    wait_for_cluster(trainer)
    trainer.locator(".share summary").click()  # "Viewers follow me" is in the Share menu, with the room's links
    trainer.locator("#follow-me").check()
    trainer.locator(".share summary").click()
    with trainer.expect_response(lambda r: r.url.endswith("/commands") and "node-3" in (r.request.post_data or "")):
        trainer.locator(NODE.format("node-3")).first.click()
    trainer.locator("[data-tab=kubectl]").click()

    viewer = open_page(browser, run["viewer_url"], offsite)  # after the trainer's clicks: no focus is on its way
    wait_for_cluster(viewer)
    expect(viewer.locator("#focus-name")).to_have_text("node-3")
    expect(viewer.locator("[data-tab=kubectl]")).to_have_attribute("aria-selected", "true")
    viewer.wait_for_function("() => window.heartbeat.clock.now() > 16", timeout=30_000)  # past node-2's fault
    expect(viewer.locator("#focus-name")).to_have_text("node-3")

    trainer.reload()  # the trainer's own page, reloaded, shows the toggle as the class has it
    wait_for_cluster(trainer)
    expect(trainer.locator("#follow-me")).to_be_checked()
    for page in (trainer, viewer):
        assert page.errors == [] and page.console_errors == [], (page.errors, page.console_errors)
    assert offsite.offsite == []
