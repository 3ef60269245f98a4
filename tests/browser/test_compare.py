"""The comparison page in Chromium: both sides on one clock, a fault clicked once reaching both at one virtual
instant, the strip of differences naming the grace periods' 10 s, in English and Chinese, and on a phone."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.web.conftest import small_document
from tests.web.live import http

from .test_accessibility import serious_violations
from .test_classroom import open_page, shot
from .test_phone import PHONE, fits_the_screen, open_on
from .untranslated import COLLECT_JS, english_words

pytestmark = pytest.mark.live

SIDE_NODES = "window.heartbeat && window.heartbeat.sides.every((s) => s.store.count('nodes') === 3)"


def create(stack, **extra) -> dict:
    document = {**small_document("browser-compare"), "duration": "15m"}
    body = {"document": document, "a": {"kubernetesVersion": "1.31"}, "b": {"kubernetesVersion": "1.33"},
            "speed": 20, **extra}
    status, comparison = http("POST", f"{stack.base}/api/comparisons", body)
    assert status == 201, comparison
    return comparison


def side_clocks(page) -> list[float]:
    return page.evaluate("window.heartbeat.sides.map((s) => s.clock.now())")


def test_one_click_breaks_both_sides_at_one_instant_and_the_strip_shows_what_differs(browser, stack, artifacts,
                                                                                     offsite):
    comparison = create(stack)
    fetched = []  # the page's fetches of the whole strip: once on opening, then only if it missed an update
    strip_url = re.compile(rf"/api/comparisons/{comparison['id']}$")
    page = open_page(browser, comparison["url"], offsite, viewport=(1366, 768))
    page.on("request", lambda request: fetched.append(request.url) if strip_url.search(request.url) else None)
    page.wait_for_function(SIDE_NODES)
    expect(page.locator("#side-a .side-settings")).to_have_text("kubernetesVersion=1.31")
    expect(page.locator("#side-b .side-settings")).to_have_text("kubernetesVersion=1.33")
    # both sides advance together: their clocks move on from where they stand, past a later point
    start = max(side_clocks(page))
    page.wait_for_function(f"window.heartbeat.sides.every((s) => s.store.lastSeq > 0 && s.clock.now() > {start + 20})")

    page.locator("#faults summary").click()
    page.locator("#fault-buttons .fault-button.a-stop-kubelet").click()  # the focused node: node-2
    # the command's answer waits for the driver's ack: on a loaded machine that and the frame take a while
    page.wait_for_function("window.heartbeat.sides.every((s) => s.faults.length === 1)", timeout=60_000)
    faults = page.evaluate("window.heartbeat.sides.map((s) => s.faults[0])")
    assert [fault["action"] for fault in faults] == ["stop-kubelet", "stop-kubelet"]
    assert [fault["node"] for fault in faults] == ["node-2", "node-2"]
    assert faults[0]["t"] == faults[1]["t"]  # one virtual instant on both

    row = page.locator('#differences .diff-row[data-kind="node-ready"]')
    expect(row).to_contain_text("node-2 Ready=Unknown", timeout=30_000)
    expect(row.locator(".diff-b")).not_to_contain_text("not yet", timeout=30_000)
    times = [float(re.search(r"[\d.]+", row.locator(part).inner_text()).group()) for part in (".diff-a", ".diff-b")]
    assert times[1] - times[0] == pytest.approx(10, abs=0.6)  # the grace period: 40 s on 1.31, 50 s on 1.33
    expect(page.locator("#differences .diff-none")).to_be_hidden()
    assert len(fetched) <= 1, fetched  # the updates followed on from each other

    page.locator("#btn-pause").click()
    page.wait_for_function("window.heartbeat.sides.every((s) => s.clock.paused)")
    first, second = side_clocks(page)
    assert first == second  # paused at one virtual time
    shot(page, artifacts, "compare-laptop-en")
    assert not page.errors


def test_the_viewer_page_in_chinese_and_on_a_phone(browser, stack, artifacts, offsite):
    comparison = create(stack)
    page = open_page(browser, comparison["viewer_url"], offsite, viewport=(1366, 768), locale="zh-CN")
    page.wait_for_function(SIDE_NODES)
    page.wait_for_function("window.heartbeat.sides.every((s) => s.clock.now() > 30)")  # the cluster is up
    status, answer = http("POST", f"{stack.base}/api/comparisons/{comparison['id']}/commands",
                          {"action": "stop-kubelet", "node": "node-2"}, token=comparison["control_token"])
    assert status == 202, answer
    expect(page.locator("#control-bar")).to_have_count(0)  # a viewer link commands nothing
    expect(page.locator("#diff-title")).to_have_text("不同之处")
    row = page.locator('#differences .diff-row[data-kind="node-ready"]')
    expect(row).to_be_visible(timeout=30_000)
    strip = page.locator("#differences").inner_text()
    assert not english_words(strip), strip
    leftovers = [text for text in page.evaluate(COLLECT_JS, None) if english_words(text)]
    assert not leftovers, leftovers  # the whole page: the sides' panels too
    shot(page, artifacts, "compare-laptop-zh")

    phone = open_on(browser, comparison["viewer_url"], offsite, PHONE)
    phone.wait_for_function(SIDE_NODES)
    fits_the_screen(phone, PHONE)
    expect(phone.locator(".side-tabs")).to_be_visible()
    expect(phone.locator("#side-a")).to_be_visible()
    expect(phone.locator("#side-b")).to_be_hidden()
    strip_box = phone.locator("#differences").bounding_box()
    side_box = phone.locator("#side-a").bounding_box()
    assert strip_box["y"] < side_box["y"]  # the strip on top
    phone.locator('.side-tabs [data-side="b"]').tap()
    expect(phone.locator("#side-b")).to_be_visible()
    expect(phone.locator("#side-a")).to_be_hidden()
    expect(phone.locator('#differences .diff-row[data-kind="node-ready"]')).to_be_visible(timeout=30_000)
    phone.mouse.wheel(0, 600)
    expect(phone.locator("#differences")).to_be_in_viewport()  # it stays on top while the side scrolls
    expect(phone.locator(".side-tabs")).to_be_in_viewport()  # and so do the tabs: which side this is
    assert phone.locator("#differences").bounding_box()["y"] < phone.locator(".side-tabs").bounding_box()["y"]
    shot(phone, artifacts, "compare-phone-en")
    assert not page.errors and not phone.errors


def test_a_scenario_card_opens_its_versions_compared(browser, stack, artifacts, offsite):
    page = open_page(browser, f"{stack.base}/", offsite, viewport=(1366, 768))
    page.locator('.scenario-card[data-scenario="kubelet-crash"] [data-compare]').click()
    page.wait_for_url(re.compile(r"/compare/[^/]+/$"))  # the token has left the address bar
    page.wait_for_function(SIDE_NODES)
    expect(page.locator("#control-bar")).to_be_visible()
    expect(page.locator("#side-a .side-version")).to_have_text("Kubernetes 1.31")
    expect(page.locator("#side-b .side-version")).to_have_text("Kubernetes 1.33")
    page.wait_for_function("window.heartbeat.sides.every((s) => s.sequence.model.length > 5)")
    assert serious_violations(page) == []  # axe-core, as for the run page
    assert not page.errors


def test_a_page_opened_before_the_cluster_is_up_focuses_node_2_once_it_comes(browser, stack, offsite):
    """Opened on a comparison paused at t=0 (no node yet in its snapshot), the page focuses the first nodes that
    come once it runs, so the trainer's first fault button has its node."""
    comparison = create(stack, paused=True)
    page = open_page(browser, comparison["url"], offsite, viewport=(1366, 768))
    page.wait_for_function("window.heartbeat && window.heartbeat.sides.every((s) => s.clock.paused)")
    assert page.evaluate("window.heartbeat.sides.map((s) => s.store.count('nodes'))") == [0, 0]
    page.locator("#btn-resume").click()
    page.wait_for_function(SIDE_NODES)
    expect(page.locator(".focus-name").first).to_have_text("node-2")
    page.locator("#faults summary").click()
    page.locator("#fault-buttons .fault-button.a-stop-kubelet").click()
    page.wait_for_function("window.heartbeat.sides.every((s) => s.faults.length === 1)", timeout=60_000)
    assert page.evaluate("window.heartbeat.sides.map((s) => s.faults[0].node)") == ["node-2", "node-2"]
    assert not page.errors and not page.console_errors


# Each side's drawn rows: virtual second -> the height on the screen of its first row in that second.
SECOND_TOPS = """() => window.heartbeat.sides.map((side) => {
  const tops = {};
  for (const item of side.sequence.drawn.values()) {
    const second = Math.floor(item.row.t);
    const top = item.g.querySelector("rect.hit").getBoundingClientRect().top;
    tops[second] = Math.min(tops[second] ?? Infinity, Math.round(top));
  }
  return tops;
})"""


def test_both_sequence_diagrams_share_one_time_axis(browser, stack, artifacts, offsite):
    comparison = create(stack)
    page = open_page(browser, comparison["url"], offsite, viewport=(1920, 1080))
    page.wait_for_function(SIDE_NODES)
    page.wait_for_function("window.heartbeat.sides.every((s) => s.clock.now() > 30)")
    status, answer = http("POST", f"{stack.base}/api/comparisons/{comparison['id']}/commands",
                          {"action": "stop-kubelet", "node": "node-2"}, token=comparison["control_token"])
    assert status == 202, answer
    # past side b's NotReady (10 s after side a's): side a has made writes side b made later
    expect(page.locator('#differences .diff-row[data-kind="node-ready"] .diff-b')).not_to_contain_text(
        "not yet", timeout=60_000)
    page.locator("#btn-pause").click()
    page.wait_for_function("window.heartbeat.sides.every((s) => s.clock.paused)")
    # the sides' rows part ways: the same row number is another virtual second on each side
    times = page.evaluate("window.heartbeat.sides.map((s) => Array.from({length: s.sequence.model.length},"
                          " (_, i) => Math.floor(s.sequence.model.tAt(i))))")
    assert any(x != y for x, y in zip(*times, strict=False)), times
    a, b = page.evaluate(SECOND_TOPS)
    shared = sorted(set(a) & set(b), key=int)
    assert len(shared) >= 5, (a, b)
    # every second that both diagrams show starts at the same height in both
    assert [a[s] for s in shared] == [b[s] for s in shared]
    # scrolled back on one side, the other follows: the same seconds stay face to face
    page.locator("#side-a .seq-scroll").evaluate("(el) => { el.scrollTop = Math.max(0, el.scrollTop - 300); }")
    page.wait_for_function("() => { const [a, b] = window.heartbeat.sides.map((s) => s.sequence.scroller.scrollTop);"
                           " return Math.abs(a - b) < 1; }")
    # (the rows scrolled into view are drawn by the page's next pass)
    page.wait_for_function(f"() => {{ const [a, b] = ({SECOND_TOPS})(); const shared = Object.keys(a)"
                           ".filter((s) => s in b); return shared.length > 0 && shared.every((s) => a[s] === b[s]); }")
    shot(page, artifacts, "compare-time-axis-desktop")
    assert not page.errors
