"""A large cluster on the run page: the overview (one cell per node, by zone) shows a zone outage
spreading, on the trainer's page and on a viewer's, and the focused node keeps its full card."""

from __future__ import annotations

import itertools
import re

import pytest
from playwright.sync_api import expect

from tests.web.conftest import large_document
from tests.web.live import http

from .test_classroom import open_page, shot
from .untranslated import COLLECT_JS, english_words

pytestmark = pytest.mark.live

SCENARIO = "zone-outage-large-zones"  # 3 zones of 60; node-1 .. node-36 of zone-a cut off at t=60 s
ZONE_A = '#cluster .ov-zone[data-zone="zone-a"]'
CELLS = "#cluster .ov-cell[data-node]"
OUTAGE_TIMEOUT = 90_000  # ms: t~110 s of virtual time at 10x, on a busy 2-core machine

# What the overview shows, per zone, read from the page.
ZONES_JS = """() => [...document.querySelectorAll('#cluster .ov-zone')].map((zone) => ({
    zone: zone.dataset.zone,
    nodes: [...zone.querySelectorAll('.ov-cell')].map((c) => c.dataset.node),
    notReady: zone.querySelectorAll('.ov-cell[data-status^="NotReady"]').length,
    state: zone.querySelector('.zone-state')?.dataset.state,
}))"""


LARGE = 1000  # nodes of the large run (5,000 on the same page: bench/large_bench.py)
# The nodes whose cells had an attribute written (the Lease bar's step, data-age, apart in window.aged), and the
# number of cells after each task that added some (a pass of the page's render loop).
OBSERVE_JS = """() => {
    window.changed = new Set();
    window.aged = new Set();
    window.cellCounts = [];
    document.addEventListener('DOMContentLoaded', () => new MutationObserver((records) => {
        for (const r of records) {
            if (r.type !== 'attributes' || !r.target.dataset?.node) continue;
            (r.attributeName === 'data-age' ? window.aged : window.changed).add(r.target.dataset.node);
        }
        if (records.some((r) => r.type === 'childList' && r.addedNodes.length)) {
            const cells = document.querySelectorAll('#cluster .ov-cell[data-node]').length;
            if (cells !== window.cellCounts.at(-1)) window.cellCounts.push(cells);
        }
    }).observe(document.querySelector('#cluster'), { attributes: true, childList: true, subtree: true }));
}"""


def shots(page, artifacts, name: str) -> None:
    """The page, and the cluster panel alone at full size (to look at the cells closely)."""
    page.evaluate("document.fonts.ready")
    shot(page, artifacts, name)
    page.locator(".cluster-panel").screenshot(path=str(artifacts / f"{name}-panel.png"))


def start_run(stack) -> dict:
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": SCENARIO, "speed": 10})
    assert status == 201, run
    return run


def pause(stack, run) -> None:
    """A run a test is done with stops using the worker's CPU (the module's other tests measure)."""
    status, body = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "pause"},
                        token=run["control_token"])
    assert status == 202, body


def changed_nodes(page, *, ages: bool = True) -> set[str]:
    """The nodes whose cells were written since the last call (``ages``: their Lease bar's step too)."""
    return set(page.evaluate("""(ages) => {
        const names = [...window.changed, ...(ages ? window.aged : [])];
        window.changed.clear();
        window.aged.clear();
        return names;
    }""", ages))


def test_a_large_run_opens_its_cells_a_few_hundred_a_pass_and_redraws_only_changed_cells(browser, stack, artifacts,
                                                                                         offsite):
    """The run page of a real 1,000-node run (3 zones, 10 pods per node) at 10x: its overview's cells come a few
    hundred per pass, a steady cluster writes no cell, and a zone outage writes that zone's cells and no other.
    (How long the page's tasks take, and the same page at 5,000 nodes, are bench/large_bench.py's.)"""
    document = {**large_document(LARGE, f"large-{LARGE}"), "duration": "1h"}
    status, run = http("POST", f"{stack.base}/api/runs", {"document": document, "speed": 10})
    assert status == 201, run
    zones = {z["name"]: z["nodes"] for z in document["cluster"]["zones"]}
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    offsite.watch(context)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.add_init_script(f"({OBSERVE_JS})()")
    page.goto(run["viewer_url"])
    cells = page.locator(CELLS)
    expect(cells).to_have_count(LARGE, timeout=180_000)  # a large run's start-up is simulated first
    page.wait_for_function("!window.heartbeat.clock.preparing && window.heartbeat.clock.now() >= 20",
                           timeout=180_000)
    zone_b = '#cluster .ov-zone[data-zone="zone-b"]'
    zone_b_nodes = set(page.locator(f"{zone_b} .ov-cell").evaluate_all("cs => cs.map(c => c.dataset.node)"))
    assert len(zone_b_nodes) == zones["zone-b"]

    # The cells came a step at a time: no pass drew more than 500 of them.
    counts = page.evaluate("window.cellCounts")
    steps = [b - a for a, b in itertools.pairwise([0, *counts])]
    assert counts[-1] == LARGE and max(steps) <= 500, counts
    assert sum(1 for c in counts if 0 < c < LARGE) >= 2, counts

    # Steady: 10 virtual seconds of Lease renewals (1,000 writes) change no cell.
    page.wait_for_function("() => { const n = window.changed.size + window.aged.size; window.changed.clear(); "
                           "window.aged.clear(); return n === 0; }",
                           polling=1000, timeout=60_000)  # the renewals of the opening's passes are done
    start = page.evaluate("window.heartbeat.clock.now()")
    page.wait_for_function(f"window.heartbeat.clock.now() > {start + 10}", timeout=60_000)
    # (on a loaded machine a renewal may come a little after the page's clock passed a step of its Lease bar, which
    # then steps back: a bar's step is not a change of the cell's state)
    assert changed_nodes(page, ages=False) == set()

    # zone-b is cut off: the Lease bars of its cells, and of no other, grow until the grace period ran out; the
    # controller marks them all Unknown and taints them.
    status, body = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "zone-outage",
                                                                                 "zone": "zone-b"},
                        token=run["control_token"])
    assert status == 202, body
    expect(page.locator(f'{zone_b} .ov-cell[data-age="3"]')).to_have_count(zones["zone-b"], timeout=90_000)
    expect(page.locator(f'{zone_b} .ov-cell[data-status^="NotReady"]')).to_have_count(zones["zone-b"],
                                                                                      timeout=60_000)
    expect(page.locator(f'{zone_b} .ov-cell[data-status^="NotReady"][data-taint=""]')).to_have_count(0)
    expect(page.locator(f"{zone_b} .zone-count")).to_have_attribute("data-ready", "0")
    for zone in ("zone-a", "zone-c"):
        expect(page.locator(f'#cluster .ov-zone[data-zone="{zone}"] .zone-count')).to_have_attribute(
            "data-ready", str(zones[zone]))
    # the outage's burst of transitions may bring a healthy node's renewal a little after the page's clock passed a
    # step of its Lease bar (a loaded machine): the state of no other zone's cell changes
    assert changed_nodes(page, ages=False) == zone_b_nodes
    expect(page.locator(f'{zone_b} .ov-cell[title*="NotReady"]')).to_have_count(zones["zone-b"])  # labels follow
    shots(page, artifacts, f"overview-{LARGE}-1920")
    page.set_viewport_size({"width": 1366, "height": 768})
    expect(cells).to_have_count(LARGE)
    shots(page, artifacts, f"overview-{LARGE}-1366")
    assert errors == [], errors
    assert offsite.offsite == []
    pause(stack, run)


def test_zone_outage_spreads_across_the_overview(browser, stack, artifacts, offsite):
    run = start_run(stack)
    control = open_page(browser, run["control_url"], offsite)
    viewer = open_page(browser, run["viewer_url"], offsite, viewport=(1366, 768))
    pages = {"control": control, "viewer": viewer}

    # 180 cells in three zones, zones in name order, nodes in natural order (node-2 before node-10).
    for page in pages.values():
        expect(page.locator(CELLS)).to_have_count(180, timeout=60_000)
        zones = page.evaluate(ZONES_JS)
        assert [z["zone"] for z in zones] == ["zone-a", "zone-b", "zone-c"], zones
        for z in zones:
            assert len(z["nodes"]) == 60, z
            assert z["nodes"] == sorted(z["nodes"], key=lambda name: int(name.split("-")[1])), z
        # Small runs' rows and cards are not there; the focused node's full card is, under the cells.
        assert page.locator("#cluster .vlist [data-node]").count() == 0
        expect(page.locator("#cluster .ov-focus article.node.card")).to_have_count(1)

    # The outage: zone-a PartialDisruption, 36 of its cells NotReady, the other zones untouched.
    for name, page in pages.items():
        expect(page.locator(f"{ZONE_A} .zone-state")).to_have_attribute("data-state", "PartialDisruption",
                                                                       timeout=OUTAGE_TIMEOUT)
        expect(page.locator(f'{ZONE_A} .ov-cell[data-status^="NotReady"]')).to_have_count(36, timeout=30_000)
        expect(page.locator(f"{ZONE_A} .zone-count")).to_have_text(re.compile(r"24/60"))
        for zone in ("zone-b", "zone-c"):
            head = page.locator(f'#cluster .ov-zone[data-zone="{zone}"] .zone-head')
            expect(head.locator(".zone-state")).to_have_attribute("data-state", "Normal")
            expect(head.locator(".zone-count")).to_have_text(re.compile(r"60/60"))
        # The rate limiter: tokens and the queue's length (nodes waiting for their NoExecute taint).
        expect(page.locator(f"{ZONE_A} .zone-tokens")).to_have_text(re.compile(r"\d+\.\d\d"))
        queue = int(page.locator(f"{ZONE_A} .zone-queue").get_attribute("data-queue"))
        assert 1 <= queue <= 36, queue
        # Only node-1 .. node-36 are down; their unreachable:NoSchedule taint marks every one of them.
        down = page.locator(f'{ZONE_A} .ov-cell[data-status^="NotReady"]').evaluate_all(
            "cs => cs.map(c => c.dataset.node)")
        assert sorted(down, key=lambda n: int(n.split("-")[1])) == [f"node-{i}" for i in range(1, 37)], down
        expect(page.locator(f'{ZONE_A} .ov-cell[data-status^="NotReady"][data-taint=""]')).to_have_count(0)
        # node-25, tainted NoExecute before the limiter slowed down, has the stronger mark.
        expect(page.locator('#cluster .ov-cell[data-node="node-25"]')).to_have_attribute("data-taint", "NoExecute",
                                                                                         timeout=30_000)
        # Their Leases ran out long ago: a full bar; a healthy node's is renewed on time.
        expect(page.locator('#cluster .ov-cell[data-node="node-3"]')).to_have_attribute("data-age", "3")
        expect(page.locator('#cluster .ov-cell[data-node="node-100"]')).to_have_attribute("data-age",
                                                                                          re.compile("^[01]$"))
        # Not by colour alone: the cell's accessible name says it all.
        cell = page.get_by_role("button", name=re.compile(r"^node-25 · NotReady · Ready=Unknown · "))
        expect(cell).to_have_attribute("title", re.compile(r"node\.kubernetes\.io/unreachable:NoExecute.* · "
                                                           r"Lease renewed \d+ s ago \(grace \d+ s\)"))
        healthy = page.locator('#cluster .ov-cell[data-node="node-61"]')
        expect(healthy).to_have_attribute("title",
                                          re.compile(r"^node-61 · Ready · no taints · Lease renewed \d+ s ago"))
        # The API traffic panel counts the other kubelets per zone: zone-a's cut-off ones keep failing.
        expect(page.locator(".seq-zones .seq-zone")).to_have_count(3)
        expect(page.locator(".seq-zones .seq-zone").first).to_have_text(
            re.compile(r"^zone-a: \d\d kubelets · \d+ Lease PUTs · \d+ status writes · [1-9]\d* failed, last 10 s$"))
        shots(page, artifacts, f"overview-outage-{name}-{page.viewport_size['width']}")

    # Both sizes on both pages: the cells fill the width, nothing spills out of the panel.
    for name, page in pages.items():
        other = (1366, 768) if page.viewport_size["width"] == 1920 else (1920, 1080)
        page.set_viewport_size({"width": other[0], "height": other[1]})
        expect(page.locator(CELLS)).to_have_count(180)
        page.wait_for_function("() => { const c = document.querySelector('#cluster .ov-cell[data-node]'); "
                               "return c && c.offsetWidth >= 10; }")
        fit = page.evaluate("""() => {
            const box = document.querySelector('#cluster .ov-zones');
            const cells = [...document.querySelectorAll('#cluster .ov-cell[data-node]')];
            const right = Math.max(...cells.map((c) => c.getBoundingClientRect().right));
            // what sticks out of the window, to name it when the page scrolls sideways
            const out = [...document.querySelectorAll('body *')]
                .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5 && e.getClientRects().length)
                .slice(0, 5)
                .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${String(e.className).split(' ').join('.')}`);
            return { scrolls: box.scrollHeight > box.clientHeight, inside: right <= box.getBoundingClientRect().right,
                     size: cells[0].offsetWidth, overflow: document.documentElement.scrollWidth > window.innerWidth,
                     sticking_out: out };
        }""")
        shot(page, artifacts, f"overview-{name}-{other[0]}")
        assert fit["inside"] and not fit["scrolls"] and not fit["overflow"], f"{name} at {other}: {fit}"
        shots(page, artifacts, f"overview-outage-{name}-{other[0]}")

    # Hover names the node; a click focuses it: its full card under the overview, on that page only.
    cell = control.locator('#cluster .ov-cell[data-node="node-7"]')
    cell.hover()
    expect(cell).to_have_attribute("title", re.compile(r"^node-7 · NotReady"))
    cell.click()
    expect(cell).to_have_class(re.compile(r"\bfocused\b"))
    card = control.locator('#cluster .ov-focus article.node.card[data-node="node-7"]')
    expect(card.locator("[data-role=kubectl-status]")).to_have_text("NotReady")
    expect(card.locator('[data-taint="node.kubernetes.io/unreachable:NoSchedule"]')).to_be_visible()
    expect(control.locator("#focus-name")).to_have_text("node-7")
    expect(control.locator(".fault-target").first).to_have_text("node-7")
    # The keyboard: arrows move between cells, Enter focuses the node.
    cell.focus()
    control.keyboard.press("ArrowRight")
    expect(control.locator('#cluster .ov-cell[data-node="node-8"]')).to_be_focused()
    control.keyboard.press("ArrowDown")
    control.keyboard.press("Enter")
    focused = control.locator("#cluster .ov-cell.focused")
    expect(focused).to_have_count(1)
    assert focused.get_attribute("data-node") not in ("node-7", "node-8")
    expect(control.locator("#cluster .ov-focus article.node.card")).to_have_attribute(
        "data-node", focused.get_attribute("data-node"))
    shots(control, artifacts, "overview-focused-control")

    for page in pages.values():
        assert page.errors == [], page.errors
        assert page.console_errors == [], page.console_errors
    assert offsite.offsite == []
    pause(stack, run)


def test_overview_in_chinese_and_on_the_projector(browser, stack, artifacts, offsite):
    run = start_run(stack)
    page = open_page(browser, f"{run['viewer_url']}?theme=projector", offsite, locale="zh-CN")
    expect(page.locator(CELLS)).to_have_count(180, timeout=60_000)
    expect(page.locator("html")).to_have_attribute("data-theme", "projector")
    expect(page.locator(f"{ZONE_A} .zone-state")).to_have_attribute("data-state", "PartialDisruption",
                                                                   timeout=OUTAGE_TIMEOUT)
    expect(page.locator(f'{ZONE_A} .ov-cell[data-status^="NotReady"]')).to_have_count(36, timeout=30_000)
    texts = page.evaluate(COLLECT_JS, "#cluster")  # the overview's texts, cells' labels included
    assert any("污点" in text for text in texts), texts[:20]
    leftovers = sorted({word for text in texts for word in english_words(text)})
    assert leftovers == [], [text for text in texts if english_words(text)]
    shots(page, artifacts, "overview-outage-projector-zh-1920")
    page.set_viewport_size({"width": 1366, "height": 768})
    expect(page.locator(CELLS)).to_have_count(180)
    shots(page, artifacts, "overview-outage-projector-zh-1366")
    assert page.errors == [], page.errors
    assert offsite.offsite == []
    pause(stack, run)


