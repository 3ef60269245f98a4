"""For the room: the trainer shows the viewer link as a large QR code drawn by the site, takes a recipe link of the
session, and the recipe link opened in another browser starts the same session."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import create_run
from .test_classroom import open_page, shot, wait_for_cluster

pytestmark = pytest.mark.live


def test_qr_code_and_recipe_link_from_the_control_page(browser, stack, artifacts, offsite):
    run = create_run(stack, speed=20)
    trainer = open_page(browser, run["control_url"], offsite)
    wait_for_cluster(trainer)

    trainer.locator(".share summary").click()  # the class's link and the session's are in the Share menu
    trainer.context.grant_permissions(["clipboard-read", "clipboard-write"])
    trainer.locator("#copy-viewer").click()  # the link for a chat, copied
    expect(trainer.locator(".toast-item").last).to_be_visible()  # said once it is on the clipboard
    assert trainer.evaluate("navigator.clipboard.readText()") == run["viewer_url"]
    trainer.locator("#show-qr").click()
    dialog = trainer.locator("#qr-dialog")
    expect(dialog).to_be_visible()
    expect(trainer.locator("#qr-link")).to_have_text(run["viewer_url"])
    image = trainer.locator("#qr-image")
    expect(image).to_have_attribute("src", f"/api/runs/{run['id']}/qr.svg")
    trainer.wait_for_function("() => document.getElementById('qr-image').naturalWidth > 0")
    box = image.bounding_box()
    assert box and box["width"] >= 400 and box["height"] >= 400, box  # large enough for a projector
    shot(trainer, artifacts, "viewer-link-qr-code")
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()

    trainer.locator("#show-qr").focus()  # the page's own clock keeps running: stop a node, then take the recipe
    status = trainer.evaluate(
        """async ([id, token]) => (await fetch(`/api/runs/${id}/commands`, {method: 'POST',
             headers: {'Content-Type': 'application/json', Authorization: `Bearer ${token}`},
             body: JSON.stringify({action: 'stop-kubelet', node: 'node-2'})})).status""",
        [run["id"], run["control_token"]],
    )
    assert status == 202
    trainer.locator("#take-recipe").click()
    link = trainer.locator("#recipe-link")
    expect(link).to_have_value(re.compile(r"/r/[a-z0-9]+$"), timeout=10_000)
    shot(trainer, artifacts, "recipe-link-dialog")
    recipe_url = link.input_value()

    guest = open_page(browser, recipe_url, offsite)
    expect(guest.locator(".recipe-commands")).to_contain_text("action=stop-kubelet node=node-2")
    shot(guest, artifacts, "recipe-page")
    guest.locator("[data-start=private][data-recipe]").click()
    guest.wait_for_url(re.compile(r"/runs/\w+/"), timeout=20_000)
    wait_for_cluster(guest)
    for page in (trainer, guest):
        assert page.errors == [] and page.console_errors == [], (page.errors, page.console_errors)
    assert offsite.offsite == []
