"""Accessibility of the pages, checked by axe-core (npm, read from node_modules) in the browser:
no serious or critical violation (WCAG 2 A and AA rules, contrast included) on the home, scenario,
builder and run pages, a trainer's and a viewer's, in both themes, on a laptop and on a phone.
Keyboard focus is visible, and a node's state change is told to screen readers once, not every frame."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .conftest import create_run

pytestmark = pytest.mark.live

AXE = Path(__file__).resolve().parents[2] / "node_modules" / "axe-core" / "axe.min.js"
THEMES = ("default", "projector")  # light and dark (js/theme.js)
SIZES = {"laptop": {"viewport": {"width": 1366, "height": 768}},
         "phone": {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True,
                   "device_scale_factor": 3}}

# What axe reports, one line per element, for the violations that matter here.
AXE_RUN = """async () => {
    const result = await axe.run(document, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
        resultTypes: ['violations'],
    });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').flatMap((v) =>
        v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')}: ${n.failureSummary.replace(/\\s+/g, ' ')}`));
}"""


def serious_violations(page) -> list[str]:
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE.read_text())
    return page.evaluate(AXE_RUN)


def live(page, rows: int = 5):
    """The run page is connected and its diagram has `rows` rows drawn from the run."""
    expect(page.locator("#conn-state")).to_have_attribute("data-state", re.compile("live|resynced"), timeout=30_000)
    page.wait_for_function(f"window.heartbeat.sequence.model.length > {rows}", timeout=30_000)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("theme", THEMES)
def test_no_serious_axe_violation(browser, stack, offsite, theme, size):
    assert AXE.exists(), "npm ci installs axe-core (a dev dependency)"
    run = create_run(stack, speed=20)
    context = browser.new_context(**SIZES[size])
    offsite.watch(context)
    page = context.new_page()
    pages = {
        "home": f"{stack.base}/?theme={theme}",
        "viewer": f"{stack.base}/runs/{run['id']}/?theme={theme}",
        "control": f"{stack.base}/runs/{run['id']}/?theme={theme}#control={run['control_token']}",
    }
    found = {}
    for name, url in pages.items():
        page.goto(url)
        if name == "home":
            expect(page.locator(".lesson-card").first).to_be_visible()
        else:
            live(page)
        expect(page.locator("html")).to_have_attribute("data-theme", theme)
        found[name] = serious_violations(page)
    # The scenario link's page, while it starts its run (held back here: it would open the run page).
    page.route("**/api/runs", lambda route: None)
    page.goto(f"{stack.base}/scenarios/kubelet-crash/?theme={theme}")
    expect(page.locator("#scenario-status")).to_be_visible()
    found["scenario"] = serious_violations(page)
    page.goto(f"{stack.base}/build/?theme={theme}")  # the builder, its document checked by the server
    expect(page.locator("#builder-status")).to_have_attribute("data-state", re.compile("ok|bad"))
    found["builder"] = serious_violations(page)
    assert found == {name: [] for name in found}
    context.close()
    assert offsite.offsite == []


def open_control_page(browser, stack, offsite):
    """A new run's control page on a laptop screen: (context, page)."""
    run = create_run(stack, speed=20)
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    offsite.watch(context)
    page = context.new_page()
    page.goto(f"{stack.base}/runs/{run['id']}/#control={run['control_token']}")
    return context, page


def test_keyboard_focus_is_visible(browser, stack, offsite):
    context, page = open_control_page(browser, stack, offsite)
    live(page, rows=0)
    seen = set()
    for _ in range(40):
        page.keyboard.press("Tab")
        focused = page.evaluate("""() => {
            const el = document.activeElement;
            const style = getComputedStyle(el);
            const ring = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
            const card = el.classList.contains('node') && parseFloat(style.borderTopWidth) >= 2;  // a node card's own
            return { what: el.id || el.getAttribute('class') || el.tagName, visible: ring || card };
        }""")
        assert focused["visible"], focused
        seen.add(focused["what"])
    assert len(seen) > 10, seen  # the Tab key went through the page, not round one element
    context.close()


def test_arrows_and_timeline_markers_are_explained_from_the_keyboard(browser, stack, offsite):
    """What a click on an arrow or a marker does (the Why? panel), Enter does on the focused one."""
    context, page = open_control_page(browser, stack, offsite)
    live(page)
    why = page.locator("#why .why-what")
    page.locator("#btn-pause").click()  # a diagram that stands still: its rows stay where they are
    expect(page.locator("body")).to_have_attribute("data-paused", "true")
    seq = page.locator("#sequence g.row.row-request").first.get_attribute("data-seq")
    row = page.locator(f'#sequence g.row[data-seq="{seq}"]')
    label = row.get_attribute("data-label")
    row.focus()
    expect(row).to_be_focused()
    expect(row).to_have_accessible_name(re.compile(r"^\d\d:\d\d\.\d.*" + re.escape(label)))  # its time, its request
    page.keyboard.press("Enter")
    expect(why.first).to_contain_text(label.split(" ")[1])  # e.g. leases/node-2
    page.locator("#btn-step").click()  # a monitor pass: the timeline gets markers to reach
    marker = page.locator(".timeline-svg [data-seq][role=button]").last
    expect(marker).to_be_visible(timeout=30_000)
    marker.focus()
    expect(marker).to_be_focused()
    before = why.first.inner_text()
    page.keyboard.press(" ")
    expect(why.first).not_to_have_text(before)  # the Why? panel now explains the marker's event
    context.close()


def test_a_node_state_change_is_announced_once(browser, stack, offsite):
    run = create_run(stack, speed=20)
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    offsite.watch(context)
    page = context.new_page()
    page.goto(f"{stack.base}/runs/{run['id']}/")
    live(page)
    region = page.locator("#node-announcer")
    expect(region).to_have_attribute("aria-live", "polite")
    # Everything the region says from now on, as it says it.
    page.evaluate("""() => {
        window.announced = [];
        const region = document.querySelector('#node-announcer');
        new MutationObserver(() => window.announced.push(region.textContent))
            .observe(region, { childList: true, characterData: true, subtree: true });
    }""")
    status, body = http("POST", f"{stack.base}/api/runs/{run['id']}/commands",
                        {"action": "stop-kubelet", "node": "node-2"}, token=run["control_token"])
    assert status == 202, body
    expect(region).to_have_text("node-2 NotReady", timeout=60_000)
    # Ten more seconds of virtual time at 20x: the other nodes' Lease renewals (every 10 s) and
    # the controller's passes (every 5 s) went on and said nothing. (The nodes becoming Ready as
    # the run started may have been said first: that is a change of state too.)
    start = page.evaluate("window.heartbeat.clock.now()")
    page.wait_for_function(f"window.heartbeat.clock.now() > {start + 10}", timeout=30_000)
    said = page.evaluate("window.announced")
    assert [text for text in said if "NotReady" in text] == ["node-2 NotReady"], said
    assert len(said) <= 2, said
    context.close()
