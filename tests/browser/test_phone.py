"""The pages on a phone (390x844) and a tablet (768x1024), touch screens with mobile emulation:
nothing wider than the screen, a one-line top bar with the clock and the run's state, the run
page's panels as tabs with the live sequence diagram first, a node focused and an arrow
explained by a tap, and a lesson's question over the whole screen with fingers-sized buttons.
Screenshots in English and Chinese go to tests/artifacts/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from simulation.lessons import builtin_drills
from tests.web.live import http

from .conftest import classroom_document, create_run
from .test_classroom import NODE2, shot

pytestmark = pytest.mark.live

PHONE = (390, 844)
TABLET = (768, 1024)
LOCALES = {"en": "en-US", "zh": "zh-CN"}
LESSON = "kubelet-crash-walkthrough"  # its first question comes at once
TOUCH_TARGET = 44  # px, WCAG 2.5.5


def open_on(browser, url, offsite, size, *, lang="en", routes=None, sockets=None):
    """A page in a touch screen's browser (mobile viewport, device pixels as a phone's or a tablet's).
    `routes`: {url pattern: handler} for the page's requests; `sockets`: the same for its websockets."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, is_mobile=True, has_touch=True,
                                  device_scale_factor=3 if size == PHONE else 2, locale=LOCALES[lang])
    offsite.watch(context)
    for pattern, handler in (routes or {}).items():
        context.route(pattern, handler)
    for pattern, handler in (sockets or {}).items():
        context.route_web_socket(pattern, handler)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto(url)
    return page


def live(page):
    expect(page.locator("#conn-state")).to_have_attribute("data-state", re.compile("live|resynced"), timeout=30_000)


def fits_the_screen(page, size) -> None:
    """No sideways page scroll: the document is no wider than the screen, and the browser did not
    widen its layout viewport to fit something (a phone's browser zooms out then)."""
    width, inner = page.evaluate("[document.scrollingElement.scrollWidth, window.innerWidth]")
    assert inner == size[0] and width <= size[0], (page.url, width, inner)


def one_line_top_bar(page) -> None:
    """The bar is one line: its height is that of one touch target (plus its padding)."""
    height = page.locator(".topbar").evaluate("el => el.getBoundingClientRect().height")
    assert height <= 56, height


def rows(page) -> int:
    return page.evaluate("window.heartbeat.sequence.model.length")


# Every text under 12 px on the page as Lighthouse's font-size audit finds it: each text node the browser laid out
# (display: none is not) whose element is not visibility: hidden (a panel off its tab is), at its element's
# computed font-size, on the screen or scrolled out of it. Lighthouse reads the computed size only, which for the
# text of an SVG is in the drawing's units: the size it is drawn at (that times the drawing's scale, as a
# diagram fitted to a phone shrinks it) is held to 12 px too.
SMALL_TEXT = """() => {
  const small = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    const el = node.parentElement;
    if (!text || !el) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || style.visibility === "collapse") continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    if (![...range.getClientRects()].some((r) => r.width > 0 && r.height > 0)) continue;
    const size = parseFloat(style.fontSize);
    const m = el instanceof SVGElement ? el.getScreenCTM() : null;
    const drawn = m ? size * Math.min(Math.hypot(m.a, m.b), Math.hypot(m.c, m.d)) : size;
    if (size < 12 || drawn < 11.95) {
      small.push(`${el.tagName.toLowerCase()}.${el.getAttribute("class") ?? ""} ${size}px`
        + `${drawn === size ? "" : ` (drawn ${drawn.toFixed(1)}px)`}: ${text.slice(0, 40)}`);
    }
  }
  return small;
}"""


def small_text(page) -> list[str]:
    return page.evaluate(SMALL_TEXT)


def small_text_in_tabs(page, tabs: dict[str, str], artifacts, shot_name: str) -> dict[str, list[str]]:
    """The texts under 12 px of each tab (``view``: a selector of what it draws), a screenshot of each."""
    seen = {}
    for view, drawn in tabs.items():
        page.locator(f'[data-view="{view}"]').tap()
        expect(page.locator(drawn).first).to_be_visible(timeout=60_000)
        page.wait_for_timeout(300)  # a pass of the page's frame loop: the panel's live parts drawn
        seen[view] = small_text(page)
        shot(page, artifacts, shot_name.format(view))
    return seen


@pytest.mark.parametrize("size", [PHONE, TABLET], ids=["phone", "tablet"])
def test_every_page_fits_the_screen(browser, stack, artifacts, offsite, size):
    run = create_run(stack, speed=20)
    name = f"{size[0]}x{size[1]}"
    home = open_on(browser, f"{stack.base}/", offsite, size)
    expect(home.locator(".lesson-card").first).to_be_visible()
    fits_the_screen(home, size)
    one_line_top_bar(home)
    shot(home, artifacts, f"{name}-home")
    # The menu opens the links (theme, language), each a touch target.
    home.locator("#menu-toggle").tap()
    expect(home.locator("#theme-toggle")).to_be_visible()
    for link in (home.locator("#theme-toggle"), home.locator(".lang-switch .lang").last):
        assert link.bounding_box()["height"] >= TOUCH_TARGET
    fits_the_screen(home, size)

    # A scenario link opens a private run of it: both pages fit. (Its run is held back a moment,
    # so the scenario's own page is measured before it goes.)
    held = []
    scenario = open_on(browser, f"{stack.base}/scenarios/kubelet-crash/", offsite, size,
                       routes={"**/api/runs": lambda route: held.append(route)})
    expect(scenario.locator("#scenario-status")).to_be_visible()
    fits_the_screen(scenario, size)
    shot(scenario, artifacts, f"{name}-scenario")
    for _ in range(100):  # Playwright hands the held request over in one of its calls
        if held:
            break
        scenario.wait_for_timeout(50)
    assert held, "the scenario page starts its run"
    held[0].continue_()
    expect(scenario).to_have_url(re.compile(r"/runs/[^/]+/"), timeout=30_000)
    live(scenario)
    fits_the_screen(scenario, size)

    pages = {
        "viewer": open_on(browser, f"{stack.base}/runs/{run['id']}/", offsite, size),
        "control": open_on(browser, f"{stack.base}/runs/{run['id']}/#control={run['control_token']}", offsite, size),
    }
    for mode, page in pages.items():
        live(page)
        page.wait_for_function("window.heartbeat.sequence.model.length > 5")
        fits_the_screen(page, size)
        one_line_top_bar(page)
        for part in ("#clock-time", "#clock-speed", "#clock-state", "#conn-state"):
            expect(page.locator(part)).to_be_visible()
        # API traffic is the first tab and the one shown.
        expect(page.locator(".view-tabs [role=tab]").first).to_have_attribute("aria-selected", "true")
        expect(page.locator("#sequence g.row").first).to_be_visible()
        shot(page, artifacts, f"{name}-run-{mode}")
    # The trainer breaks the cluster from its own tab; a viewer has none.
    assert pages["viewer"].locator('[data-view="faults"]').count() == 0
    control = pages["control"]
    control.locator('[data-view="faults"]').tap()
    expect(control.locator('[data-fault="stop-kubelet"]')).to_be_visible()
    fits_the_screen(control, size)
    shot(control, artifacts, f"{name}-run-control-faults")
    for page in (home, scenario, *pages.values()):
        assert page.errors == []
        page.context.close()
    assert offsite.offsite == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_phone_viewer_watches_the_traffic_focuses_a_node_and_asks_why(browser, stack, artifacts, offsite, lang):
    run = create_run(stack, speed=20)
    page = open_on(browser, f"{stack.base}/runs/{run['id']}/", offsite, PHONE, lang=lang)
    live(page)
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans" if lang == "zh" else "en")

    # The sequence diagram is on the screen at once, inside its panel, and grows.
    scroller = page.locator("#sequence .seq-scroll")
    expect(scroller).to_be_visible()
    box = scroller.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE[0] and box["height"] > 300, box
    page.wait_for_function("window.heartbeat.sequence.model.length > 5")
    before = rows(page)
    page.wait_for_function(f"window.heartbeat.sequence.model.length > {before + 3}", timeout=30_000)
    # Every lane's lifeline is inside the panel: the diagram does not need a sideways scroll.
    lifelines = page.locator("#sequence .lifeline").evaluate_all("ls => ls.map(l => Number(l.getAttribute('x1')))")
    assert lifelines and max(lifelines) < box["width"], (lifelines, box)
    shot(page, artifacts, f"phone-traffic-{lang}")

    # A tap on the Cluster tab, a tap on node-3: it is the focus, and the diagram follows it.
    page.locator('[data-view="cluster"]').tap()
    expect(page.locator("#panel-cluster")).to_have_attribute("role", "tabpanel")
    node3 = page.locator('#cluster [data-node="node-3"]')
    expect(node3).to_be_visible()
    node3.tap()
    expect(node3).to_have_class(re.compile("focused"))
    expect(page.locator("#focus-name")).to_have_text("node-3")
    shot(page, artifacts, f"phone-cluster-{lang}")
    page.locator('[data-view="traffic"]').tap()
    expect(page.locator('#sequence g.row[data-label="PUT leases/node-3"]').first).to_be_visible(timeout=30_000)

    # A tap on an arrow explains it in the Why? tab.
    page.locator("#sequence g.row.row-request").last.tap()
    expect(page.locator('[data-view="why"]')).to_have_attribute("aria-selected", "true")
    expect(page.locator("#why .why")).to_be_visible()
    fits_the_screen(page, PHONE)
    shot(page, artifacts, f"phone-why-{lang}")

    # The tabs follow the arrow keys (a keyboard on a tablet, a switch device).
    page.locator('[data-view="why"]').focus()
    page.keyboard.press("ArrowLeft")
    expect(page.locator('[data-view="kubectl"]')).to_be_focused()
    expect(page.locator('[data-view="kubectl"]')).to_have_attribute("aria-selected", "true")
    expect(page.locator(".kubectl-output")).to_contain_text("node-3")
    page.keyboard.press("Home")
    expect(page.locator('[data-view="traffic"]')).to_have_attribute("aria-selected", "true")
    assert page.errors == []
    page.context.close()
    assert offsite.offsite == []


def test_a_tablet_shows_the_cluster_beside_the_tabs(browser, stack, artifacts, offsite):
    run = create_run(stack, speed=20)
    page = open_on(browser, f"{stack.base}/runs/{run['id']}/", offsite, TABLET)
    live(page)
    expect(page.locator(f"#cluster {NODE2}")).to_be_visible()
    expect(page.locator("#sequence .seq-scroll")).to_be_visible()
    expect(page.locator('[data-view="cluster"]')).to_be_hidden()
    page.locator('[data-view="timeline"]').tap()
    expect(page.locator("#timeline svg")).to_be_visible()
    expect(page.locator(f"#cluster {NODE2}")).to_be_visible()
    page.locator('[data-view="traffic"]').tap()
    page.wait_for_function("window.heartbeat.sequence.model.length > 5")
    expect(page.locator("#sequence g.row").first).to_be_visible()
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lesson_question_takes_the_phone_screen(browser, stack, artifacts, offsite, lang):
    status, run = http("POST", f"{stack.base}/api/runs", {"lesson": LESSON, "speed": 20})
    assert status == 201, run
    page = open_on(browser, f"{stack.base}/runs/{run['id']}/", offsite, PHONE, lang=lang)
    live(page)
    card = page.locator(".question-card")
    # the question comes at its step's virtual time; the module's worker also drives its other runs
    expect(card).to_be_visible(timeout=60_000)
    box = card.bounding_box()
    assert box["width"] >= PHONE[0] - 20 and box["x"] >= 0, box
    top_bar = page.locator(".topbar").bounding_box()
    assert box["y"] >= top_bar["y"] + top_bar["height"] - 1  # the clock stays in view
    expect(page.locator("#clock-time")).to_be_visible()
    for target in card.locator("button:visible, input:visible").all():
        assert target.bounding_box()["height"] >= TOUCH_TARGET, target.evaluate("el => el.outerHTML")
    fits_the_screen(page, PHONE)
    assert small_text(page) == []
    shot(page, artifacts, f"phone-question-{lang}")
    # Its first question asks for a number of seconds: typed, then sent.
    card.locator(".qc-number input").fill("50")
    card.locator(".qc-number button").tap()
    expect(card.locator(".qc-status")).not_to_be_empty(timeout=15_000)
    assert page.errors == []
    page.context.close()


def test_a_drill_diagnosis_takes_the_phone_screen(browser, stack, artifacts, offsite):
    drill = builtin_drills()[0]
    status, run = http("POST", f"{stack.base}/api/runs", {"drill": drill.name, "speed": 20})
    assert status == 201, run
    page = open_on(browser, f"{stack.base}/runs/{run['id']}/", offsite, PHONE)
    live(page)
    card = page.locator('.question-card[data-kind="diagnosis"]')
    expect(card).to_be_visible(timeout=30_000)
    assert card.bounding_box()["width"] >= PHONE[0] - 20
    for target in card.locator("button:visible, select:visible").all():
        assert target.bounding_box()["height"] >= TOUCH_TARGET, target.evaluate("el => el.outerHTML")
    fits_the_screen(page, PHONE)
    shot(page, artifacts, "phone-diagnosis")
    # Hidden, it gives the screen back to the panels; the lesson bar brings it back.
    card.locator(".qc-hide").tap()
    expect(card).to_be_hidden()
    expect(page.locator("#sequence .seq-scroll")).to_be_visible()
    page.locator(".lb-show").tap()
    expect(card).to_be_visible()
    assert page.errors == []
    page.context.close()


def test_a_long_title_keeps_the_wide_top_bar_on_one_line(browser, stack, artifacts, offsite):
    document = classroom_document("browser-long-title")
    long = "A very long scenario title that a trainer wrote to describe everything the class will see " * 2
    document["title"] = {"en": long.strip(), "zh": long.strip()}
    run = create_run(stack, speed=20, document=document)
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    offsite.watch(context)
    page = context.new_page()
    page.goto(f"{stack.base}/runs/{run['id']}/#control={run['control_token']}")
    live(page)
    title = page.locator("#scenario-title")
    expect(title).to_have_attribute("title", long.strip())
    cut = title.evaluate("el => el.scrollWidth > el.clientWidth && getComputedStyle(el).textOverflow === 'ellipsis'")
    assert cut
    height = page.locator(".topbar").evaluate("el => el.getBoundingClientRect().height")
    parts = page.locator(".topbar > *, .clockbar > *").evaluate_all(
        "els => els.map(e => [e.className || e.tagName, Math.round(e.getBoundingClientRect().width),"
        " Math.round(e.getBoundingClientRect().top)])")
    assert height <= 50, (height, [p for p in parts if p[2] > 20])
    shot(page, artifacts, "run-long-title-1920")
    context.close()


def test_the_run_page_asks_for_all_its_modules_at_once(browser, stack, offsite):
    """Every script module the run page loads is preloaded (modulepreload), so a phone requests them all at
    once rather than in rounds, one per level of imports, each after a slow parse."""
    run = create_run(stack, speed=20)
    loaded: list[str] = []
    context = browser.new_context()
    offsite.watch(context)
    page = context.new_page()
    page.on("request", lambda request: loaded.append(request.url) if request.resource_type == "script" else None)
    page.goto(f"{stack.base}/runs/{run['id']}/")
    live(page)
    preloaded = set(page.locator('link[rel="modulepreload"]').evaluate_all("ls => ls.map(l => l.href)"))
    entries = set(page.locator("script[src]").evaluate_all("ss => ss.map(s => s.src)"))  # the scripts themselves
    # json-worker.js is a Worker's script, fetched only when a message is too long to parse on the page (a busy
    # run's catch-up), not an import
    modules = {url for url in loaded if url.endswith(".js") and "/static/js/" in url
               and not url.endswith("/json-worker.js")} - entries
    assert len(modules) > 30, modules
    assert modules <= preloaded, sorted(modules - preloaded)
    assert preloaded <= modules | entries, sorted(preloaded - modules)  # nothing preloaded in vain
    # ... once the page has painted: before, a phone's link goes to what that paint awaits.
    painted = page.evaluate("performance.getEntriesByName('first-paint')[0].startTime")
    started = dict(page.evaluate("performance.getEntriesByType('resource').map(r => [r.name, r.startTime])"))
    early = {url: started[url] for url in modules if started.get(url, painted) < painted}
    assert early == {}, (painted, early)
    context.close()


@pytest.mark.parametrize("size", [PHONE, TABLET], ids=["phone", "tablet"])
def test_the_first_paint_shows_the_panels_the_tabs_show_first(browser, stack, offsite, size):
    """Before its scripts run (here: without them) a phone shows the traffic panel, its tab selected, as the tabs
    show it once they work (a tablet the cluster beside it): not the side panel stacked over it, whose flows then
    drew and moved on the screen as the scripts started."""
    run = create_run(stack, speed=20)
    url = f"{stack.base}/runs/{run['id']}/"

    def shown(page) -> dict[str, str]:
        return page.evaluate("""() => Object.fromEntries(['#panel-cluster', '#panel-traffic', '#panel-side']
            .map((sel) => [sel, getComputedStyle(document.querySelector(sel)).visibility]))""")

    expected = {"#panel-cluster": "visible" if size == TABLET else "hidden", "#panel-traffic": "visible",
                "#panel-side": "hidden"}
    context = browser.new_context(viewport={"width": size[0], "height": size[1]}, is_mobile=True, has_touch=True,
                                  java_script_enabled=False)
    offsite.watch(context)
    page = context.new_page()
    page.goto(url)
    assert shown(page) == expected
    expect(page.locator(".seq-waiting")).to_be_visible()
    expect(page.locator("#view-tab-traffic")).to_have_attribute("aria-selected", "true")
    context.close()
    page = open_on(browser, url, offsite, size)
    live(page)
    assert shown(page) == expected
    expect(page.locator("#view-tab-traffic")).to_have_attribute("aria-selected", "true")
    assert page.errors == []
    page.context.close()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_text_of_the_run_page_is_12_px_or_more_on_a_phone(browser, stack, artifacts, offsite, lang):
    """No text under 12 px, the smallest a phone shows legibly (Lighthouse's font-size audit), in any of the run
    page's tabs, with a crashed kubelet's traffic in the diagram: request lines, decisions, times."""
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": "kubelet-crash", "speed": 20})
    assert status == 201, run
    page = open_on(browser, f"{stack.base}/runs/{run['id']}/", offsite, PHONE, lang=lang)
    live(page)
    page.wait_for_function("window.heartbeat.sequence.model.length > 40", timeout=60_000)
    for kind in ("request", "decision"):
        expect(page.locator(f"#sequence g.row-{kind}").first).to_be_attached(timeout=30_000)
    seen = {"traffic": small_text(page)}
    shot(page, artifacts, f"phone-text-traffic-{lang}")
    tabs = {"cluster": f"#cluster {NODE2}", "flows": "#panel-side .flow-box svg", "timeline": "#timeline svg",
            "kubectl": ".kubectl-output", "diagrams": ".mermaid-figure svg"}
    seen.update(small_text_in_tabs(page, tabs, artifacts, f"phone-text-{{}}-{lang}"))
    page.locator('[data-view="traffic"]').tap()
    page.locator("#sequence g.row.row-request").last.tap()
    expect(page.locator("#why .why")).to_be_visible()
    seen["why"] = small_text(page)
    fits_the_screen(page, PHONE)
    assert {view: texts for view, texts in seen.items() if texts} == {}
    assert page.errors == []
    page.context.close()


def test_every_text_of_the_run_page_is_12_px_or_more_on_a_tablet(browser, stack, artifacts, offsite):
    """A tablet (the cluster beside the tabs) holds its texts to 12 px as a phone does: the cluster's labels and
    bars, the diagram's lane names, the flows and the reference diagrams (scrolled sideways where they are wider)."""
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": "kubelet-crash", "speed": 20})
    assert status == 201, run
    page = open_on(browser, f"{stack.base}/runs/{run['id']}/", offsite, TABLET)
    live(page)
    page.wait_for_function("window.heartbeat.sequence.model.length > 40", timeout=60_000)
    expect(page.locator(f"#cluster {NODE2} .chip.taint").first).to_be_visible(timeout=60_000)
    seen = {"traffic": small_text(page)}
    tabs = {"flows": "#panel-side .flow-box svg", "timeline": "#timeline svg", "kubectl": ".kubectl-output",
            "diagrams": ".mermaid-figure svg"}
    seen.update(small_text_in_tabs(page, tabs, artifacts, "tablet-text-{}"))
    assert {view: texts for view, texts in seen.items() if texts} == {}
    assert page.errors == []
    page.context.close()
