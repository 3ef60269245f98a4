"""The classroom end to end: a trainer's control page and a viewer's page on the same run at
20x; the trainer stops node-2's kubelet and both pages follow the consequences."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .conftest import classroom_document, create_run
from .untranslated import COLLECT_JS, english_words

pytestmark = pytest.mark.live

NODE2 = '[data-node="node-2"]'
UNREACHABLE = "node.kubernetes.io/unreachable"


def open_page(browser, url, offsite, *, viewport=(1920, 1080), locale="en-US"):
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, locale=locale)
    offsite.watch(context)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    # what the console reports as an error: a script error, or a resource the site failed to serve
    console_errors: list[str] = []
    page.on("console",
            lambda m: console_errors.append(f"{m.text} ({m.location.get('url')})") if m.type == "error" else None)
    page.goto(url)
    page.errors = errors
    page.console_errors = console_errors
    return page


def wait_for_cluster(page):
    try:
        expect(page.locator("#conn-state")).to_have_attribute("data-state", re.compile("live|resynced"),
                                                              timeout=30_000)
    except AssertionError as failure:  # say what the page itself reported while it waited
        errors = getattr(page, "errors", []) + getattr(page, "console_errors", [])
        state = page.evaluate("""() => ({
            scripts: Boolean(window.heartbeat), built: window.heartbeat?.built ?? null,
            socket: window.heartbeat?.connection?.ws?.readyState ?? null,
            queued: window.heartbeat?.connection?.queue?.length ?? null,
        })""")
        raise AssertionError(f"{failure}\npage errors: {errors}\npage state: {state}") from None
    expect(page.locator(f"#cluster {NODE2}")).to_be_visible(timeout=30_000)


def shot(page, artifacts, name):
    page.screenshot(path=str(artifacts / f"{name}.png"))


# The machine's own CJK fonts that site.css's font stacks name before the one the site serves
# (static/vendor/noto-sans-sc, a web font: DevTools calls it a custom font).
LOCAL_CJK_FAMILIES = ("Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei")
HAN = re.compile(r"[\u4e00-\u9fff]")


def cjk_glyphs(page, selector: str) -> tuple[int, dict[str, int]]:
    """How many glyphs of the element's text Chrome drew with a font that has Chinese glyphs,
    and every font it drew with (family -> glyphs), as DevTools reports them. A character no
    font of the stack has is drawn as a box by a font without it (here DejaVu Sans)."""
    page.evaluate("document.fonts.ready")
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument")["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    fonts = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    cdp.detach()
    cjk = sum(f["glyphCount"] for f in fonts if f["isCustomFont"] or f["familyName"].startswith(LOCAL_CJK_FAMILIES))
    return cjk, {f["familyName"]: f["glyphCount"] for f in fonts}


def sequence_labels(page, after_note: str = "") -> list[str]:
    """Request lines of the sequence rows drawn right now (the live window at the bottom), only
    the ones after the fault note `after_note` when the window still reaches back to it."""
    return page.locator("#sequence g.row").evaluate_all("""(rows, note) => {
        rows = rows.sort((a, b) => Number(a.dataset.seq) - Number(b.dataset.seq));
        const at = note ? rows.findIndex(r => r.dataset.kind === 'note' && r.dataset.label.includes(note)) : -1;
        return rows.slice(at + 1).map(r => r.dataset.label);
    }""", after_note)


def test_home_page_lists_the_catalogue(browser, stack, artifacts, offsite):
    page = open_page(browser, f"{stack.base}/", offsite)
    cards = page.locator(".scenario-card")
    expect(cards.first).to_be_visible()
    assert cards.count() >= 10
    crash = page.locator('.scenario-card[data-scenario="kubelet-crash"]')
    expect(crash.locator("h3")).to_have_text(re.compile("kubelet", re.IGNORECASE))
    expect(crash.locator("[data-start=live]")).to_be_visible()
    expect(crash.locator(".fault-chip").first).to_be_visible()
    shot(page, artifacts, "home-1920")
    page.set_viewport_size({"width": 1366, "height": 768})
    shot(page, artifacts, "home-1366")
    assert page.errors == []
    assert page.console_errors == []
    assert offsite.offsite == []


def test_live_session_from_the_home_page_gives_control_and_viewer_links(browser, stack, artifacts, offsite):
    page = open_page(browser, f"{stack.base}/", offsite)
    page.locator('.scenario-card[data-scenario="kubelet-crash"] [data-start=live]').click()
    dialog = page.locator("#session-dialog")
    expect(dialog).to_be_visible(timeout=20_000)
    control = page.locator("#control-link").input_value()
    viewer = page.locator("#viewer-link").input_value()
    assert "#control=" in control and "?" not in control
    assert "control" not in viewer
    shot(page, artifacts, "home-session-dialog")
    page.locator("#open-control").click()
    wait_for_cluster(page)
    # The token left the address bar (projector-safe) and lives in this tab only.
    assert "#control" not in page.url
    expect(page.locator('[data-fault="stop-kubelet"]')).to_be_visible()
    assert page.console_errors == []
    assert offsite.offsite == []


def test_trainer_stops_kubelet_and_both_pages_follow(browser, stack, artifacts, offsite):
    run = create_run(stack, speed=20)
    control = open_page(browser, f"{stack.base}/runs/{run['id']}/#control={run['control_token']}", offsite)
    viewer = open_page(browser, f"{stack.base}/runs/{run['id']}/", offsite)
    pages = {"control": control, "viewer": viewer}
    for page in pages.values():
        wait_for_cluster(page)
        expect(page.locator(f"{NODE2} [data-role=kubectl-status]")).to_have_text("Ready", timeout=30_000)
    expect(viewer.locator("#viewers")).to_contain_text("2", timeout=15_000)
    for name, page in pages.items():
        shot(page, artifacts, f"run-0-healthy-{name}")

    # The viewer has no way to break the run.
    assert viewer.locator("[data-fault]").count() == 0
    assert viewer.locator("#faults, #control-bar").count() == 0

    control.locator(f"#cluster {NODE2}").click()
    expect(control.locator(".fault-target").first).to_have_text("node-2")
    control.locator('[data-fault="stop-kubelet"]').click()
    expect(control.locator(".toast-item").first).to_contain_text(re.compile("T\\+"), timeout=15_000)

    # 1. The Lease bar runs out on both pages while node-1's stays short.
    for name, page in pages.items():
        expect(page.locator(f"{NODE2} .fault-flag")).to_be_visible(timeout=15_000)
        bar = page.locator(f"{NODE2} [data-role=lease-bar] .fill")
        expect(bar).to_have_class(re.compile("warn|over"), timeout=30_000)
        expect(page.locator('[data-node="node-1"] [data-role=lease-bar] .fill')).to_have_class(re.compile("ok"))
        shot(page, artifacts, f"run-1-lease-running-out-{name}")

    # 2. NotReady, the unreachable taints, pods Ready=False.
    for name, page in pages.items():
        expect(page.locator(f"{NODE2} [data-role=lease-bar]")).to_have_attribute("data-expired", "true", timeout=30_000)
        expect(page.locator(f"{NODE2} [data-role=kubectl-status]")).to_have_text("NotReady", timeout=30_000)
        expect(page.locator(f'{NODE2} [data-taint="{UNREACHABLE}:NoSchedule"]')).to_be_visible(timeout=15_000)
        expect(page.locator(f'{NODE2} [data-taint="{UNREACHABLE}:NoExecute"]')).to_be_visible(timeout=30_000)
        pods = page.locator(f"{NODE2} li.pod")
        expect(pods.first).to_be_visible()
        expect(page.locator(f'{NODE2} li.pod[data-ready="True"]')).to_have_count(0, timeout=15_000)
        shot(page, artifacts, f"run-2-notready-tainted-{name}")

    # The sequence diagram: node-2 renews no more, the other kubelets go on.
    for page in pages.values():
        labels = sequence_labels(page, after_note="stop-kubelet node-2")
        assert "PUT leases/node-2" not in labels, labels[-30:]
        assert "PUT leases/node-1" in labels or "PUT leases/node-3" in labels, labels[-30:]
        fault_rows = page.evaluate("""() => {
            const rows = window.heartbeat.sequence.model.rows;
            const fault = rows.find(r => r.kind === 'note' && r.label.includes('stop-kubelet'));
            const after = (l) => rows.filter(r => r.label === l && r.t > fault.t + 11).length;
            return {fault: fault.t, node2: after('PUT leases/node-2'),
                    others: after('PUT leases/node-1') + after('PUT leases/node-3')};
        }""")
        assert fault_rows["node2"] == 0 and fault_rows["others"] >= 2, fault_rows

    # 3. Eviction countdowns on web pods (DaemonSet pods tolerate for ever: no countdown).
    for name, page in pages.items():
        countdown = page.locator(f'{NODE2} li.pod[data-pod^="default/web-"] [data-role=eviction]').first
        expect(countdown).to_be_visible(timeout=30_000)
        expect(page.locator(f'{NODE2} li.pod[data-pod^="default/agent-"] [data-role=eviction]')).to_be_hidden()
        shot(page, artifacts, f"run-3-countdowns-{name}")

    # 4. Deleted after 300 s of virtual time: Terminating on node-2, replacements elsewhere.
    for name, page in pages.items():
        terminating = page.locator(f'{NODE2} li.pod[data-pod^="default/web-"][data-terminating="true"]')
        expect(terminating.first).to_be_visible(timeout=60_000)
        healthy_web = page.locator('#cluster article.node:not([data-node="node-2"]) '
                                   'li.pod[data-pod^="default/web-"][data-ready="True"]')
        expect(healthy_web).to_have_count(6, timeout=30_000)
        shot(page, artifacts, f"run-4-replaced-{name}")

    # kubectl panels print what kubectl would print.
    control.locator('[data-tab="kubectl"]').click()
    output = control.locator(".kubectl-output")
    expect(output).to_contain_text(re.compile(r"node-2\s+NotReady\s+<none>\s+\S+\s+v1\.\d+"))
    control.locator("select[name=kubectl]").select_option("get-pods")
    expect(output).to_contain_text(re.compile(r"web-\S+\s+1/1\s+Terminating\s+0\s+\S+\s+\S+\s+node-2"))
    control.locator("select[name=kubectl]").select_option("get-lease")
    expect(output).to_contain_text("holderIdentity: node-2")
    control.locator("select[name=kubectl]").select_option("describe-node")
    expect(output).to_contain_text(
        re.compile(r"Ready\s+Unknown .* NodeStatusUnknown\s+Kubelet stopped posting node status."))
    shot(control, artifacts, "run-5-kubectl-describe-control")

    # Clicking an arrow explains it; the NLC's Unknown write names its rule and inputs.
    control.locator("#timeline .tl-node").first.click()
    expect(control.locator("#why .why")).to_be_visible()
    shot(control, artifacts, "run-6-why-control")

    # A forged command from the viewer page is refused.
    for token, refused in ((None, 401), ("forged-token", 403)):
        status = viewer.evaluate("""async ([id, token]) => {
            const headers = {'Content-Type': 'application/json'};
            if (token) headers.Authorization = `Bearer ${token}`;
            const body = JSON.stringify({action: 'start-kubelet', node: 'node-2'});
            const r = await fetch(`/api/runs/${id}/commands`, {method: 'POST', headers, body});
            return r.status;
        }""", [run["id"], token])
        assert status == refused
    for page in pages.values():
        assert page.errors == []
    assert offsite.offsite == []


def test_viewer_reconnects_and_resumes_without_gap(browser, stack, offsite):
    run = create_run(stack, speed=20)
    viewer = open_page(browser, f"{stack.base}/runs/{run['id']}/", offsite, viewport=(1366, 768))
    wait_for_cluster(viewer)
    viewer.wait_for_function("window.heartbeat.store.lastSeq > 20")
    viewer.evaluate("""() => {
        window.seen = [];
        const original = window.heartbeat.onFrame.bind(window.heartbeat);
        window.heartbeat.onFrame = (m) => { window.seen.push(...m.events.map(e => e.seq)); original(m); };
    }""")
    viewer.evaluate("window.heartbeat.connection.drop()")
    expect(viewer.locator("#conn-state")).to_have_attribute("data-state", re.compile("reconnecting|resynced"))
    expect(viewer.locator("#conn-state")).to_have_attribute("data-state", re.compile("resynced|live"), timeout=20_000)
    viewer.wait_for_function("window.seen.length > 30", timeout=20_000)
    seen = viewer.evaluate("window.seen")
    assert seen == list(range(seen[0], seen[0] + len(seen))), seen[:40]
    status, body = http("GET", f"{stack.base}/api/runs/{run['id']}/events?after={seen[0] - 1}")
    assert status == 200
    assert [e["seq"] for e in body["events"]][: len(seen)] == seen[: len(body["events"])]
    assert offsite.offsite == []


def test_chinese_pages_have_no_untranslated_string(browser, stack, artifacts, offsite):
    run = create_run(stack, speed=20)
    home = open_page(browser, f"{stack.base}/", offsite, locale="zh-CN")
    expect(home.locator("html")).to_have_attribute("lang", "zh-hans")
    texts = home.evaluate(COLLECT_JS)
    leftovers = sorted({word for text in texts for word in english_words(text)})
    assert leftovers == [], [text for text in texts if english_words(text)]
    # Scenario texts are the library's own Chinese (its title/watch zh fields).
    from simulation import builtin_scenarios

    for scenario in builtin_scenarios():
        card = home.locator(f'.scenario-card[data-scenario="{scenario.name}"]')
        expect(card.locator('[data-field="title"]')).to_have_text(scenario.title["zh"])
        expect(card.locator('[data-field="watch"]')).to_have_text(" ".join(scenario.watch["zh"].split()))
    # Drawn with a font that has the glyphs, on any machine: this one has no CJK font at all.
    expect(home.locator(".brand-text")).to_have_text("心跳课堂")
    for selector in (".brand-text", "h1", "#theme-toggle", ".scenario-card h3"):
        text = home.locator(selector).first.inner_text()
        cjk, fonts = cjk_glyphs(home, selector)
        assert cjk >= len(HAN.findall(text)) > 0, (selector, text, fonts)
    shot(home, artifacts, "home-zh")

    page = open_page(browser, f"{stack.base}/runs/{run['id']}/#control={run['control_token']}", offsite, locale="zh-CN")
    wait_for_cluster(page)
    page.locator(f"#cluster {NODE2}").click()
    page.locator('[data-fault="stop-kubelet"]').click()
    expect(page.locator(f'{NODE2} [data-taint="{UNREACHABLE}:NoExecute"]')).to_be_visible(timeout=60_000)
    page.locator('#sequence g.row.row-decision').last.click()
    texts = []
    for tab in ("why", "flows", "kubectl", "diagrams"):
        page.locator(f'[data-tab="{tab}"]').click()
        texts += page.evaluate(COLLECT_JS)
    leftovers = sorted({word for text in texts for word in english_words(text)})
    assert leftovers == [], [text for text in texts if english_words(text)]
    page.locator('[data-tab="flows"]').click()
    for selector in ('[data-tab="flows"]', "#cluster-title", "#seq-title"):
        text = page.locator(selector).first.inner_text()
        cjk, fonts = cjk_glyphs(page, selector)
        assert cjk >= len(HAN.findall(text)) > 0, (selector, text, fonts)
    shot(page, artifacts, "run-zh-1920")
    assert offsite.offsite == []


def test_english_pages_draw_the_chinese_pages_link(browser, stack, artifacts, offsite):
    """The language menu's "简体中文" on an English page, on this machine without any CJK font: drawn with the
    glyphs the site serves (a face of those four characters), not as boxes, although the Chinese web font's
    stylesheet comes only after the first paint there."""
    run = create_run(stack, speed=20)
    for name, path in (("home", "/"), ("myths", "/myths/"), ("run", f"/runs/{run['id']}/")):
        page = open_page(browser, f"{stack.base}{path}", offsite, viewport=(1366, 768))
        link = page.locator('a.lang[lang^="zh"]')
        expect(link).to_have_text("简体中文")
        cjk, fonts = cjk_glyphs(page, 'a.lang[lang^="zh"]')
        assert cjk == 4, (path, fonts)
        shot(page, artifacts, f"{name}-en-language-menu-1366")
        page.context.close()
    assert offsite.offsite == []


def test_projector_theme_and_laptop_size(browser, stack, artifacts, offsite):
    run = create_run(stack, speed=20)
    page = open_page(browser, f"{stack.base}/runs/{run['id']}/?theme=projector#control={run['control_token']}", offsite)
    wait_for_cluster(page)
    expect(page.locator("html")).to_have_attribute("data-theme", "projector")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(0, 0, 0)"
    page.wait_for_function("window.heartbeat.sequence.model.rows.length > 10")
    shot(page, artifacts, "run-projector-1920")
    laptop = open_page(browser, f"{stack.base}/runs/{run['id']}/", offsite, viewport=(1366, 768))
    wait_for_cluster(laptop)
    # Nothing of the three columns spills out of a 1366x768 screen.
    overflow = laptop.evaluate("document.documentElement.scrollWidth > window.innerWidth")
    assert overflow is False
    shot(laptop, artifacts, "run-laptop-1366")
    assert offsite.offsite == []


# Records, per task, how many node rows were put into the compact list (a MutationObserver's
# callback runs once after each task that changed the DOM). Full cards, drawn all at once while
# the run has fewer than 25 nodes (they register over its first seconds), are not counted.
COUNT_MOUNTS_JS = """() => {
    window.mountsPerTask = [];
    new MutationObserver((records) => {
        let rows = 0;
        for (const r of records) for (const n of r.addedNodes) {
            if (n.nodeType !== Node.ELEMENT_NODE) continue;
            if (n.dataset.node) rows += r.target.classList.contains('vlist') ? 1 : 0;
            else {
                const inside = n.classList.contains('vlist') ? '[data-node]' : '.vlist [data-node]';
                rows += n.querySelectorAll(inside).length;
            }
        }
        if (rows) window.mountsPerTask.push(rows);
    }).observe(document.querySelector('#cluster'), { childList: true, subtree: true });
}"""

# The rows in the compact list, top to bottom, and whether they fill the cluster panel's view.
ROWS_JS = """() => {
    const root = document.querySelector('#cluster');
    const rows = [...root.querySelectorAll('.vlist > [data-node]')].sort((a, b) => a.offsetTop - b.offsetTop);
    const rowsBottom = Math.max(...rows.map((r) => r.offsetTop + r.offsetHeight));
    return { count: rows.length, filled: rowsBottom >= root.scrollTop + root.clientHeight,
             heights: [...new Set(rows.filter((r) => !r.classList.contains('focused')).map((r) => r.style.height))] };
}"""


def test_a_large_cluster_is_drawn_a_few_rows_per_task(browser, stack, artifacts, offsite):
    """50 nodes: the cluster view's compact list (more would make it the overview). Its rows come
    a step (12) per frame pass after a snapshot, so the page's opening has no long task of them;
    all of them arrive. A theme change while the run is paused is drawn too (in a frame pass the
    page asks for)."""
    document = classroom_document("browser-large")
    document["cluster"]["zones"] = [{"name": "zone-a", "nodes": 25}, {"name": "zone-b", "nodes": 25}]
    document["cluster"]["workloads"] = [{"name": "web", "replicas": 50}]
    run = create_run(stack, speed=1, document=document)
    context = browser.new_context(viewport={"width": 1920, "height": 1080})
    offsite.watch(context)
    page = context.new_page()
    page.add_init_script(f"document.addEventListener('DOMContentLoaded', {COUNT_MOUNTS_JS})")
    page.goto(f"{stack.base}/runs/{run['id']}/#control={run['control_token']}")
    wait_for_cluster(page)
    page.wait_for_function("window.heartbeat.cluster.compact && !window.heartbeat.cluster.mountPending")
    rows = page.evaluate(ROWS_JS)
    assert rows["filled"] and rows["count"] > 12, rows  # more rows than one step: several passes
    assert max(page.evaluate("window.mountsPerTask")) <= 12, page.evaluate("window.mountsPerTask")
    assert "24px" in rows["heights"] and set(rows["heights"]) <= {"24px", "46px"}, rows  # default theme's rows

    page.locator("#btn-pause").click()
    expect(page.locator("body")).to_have_attribute("data-paused", "true")
    page.evaluate("window.mountsPerTask = []")
    page.locator("#theme-toggle").click()  # paused: the page still draws the rebuilt list
    page.wait_for_function(f"({ROWS_JS})().heights.includes('28px') && !window.heartbeat.cluster.mountPending")
    rows = page.evaluate(ROWS_JS)
    # the projector theme's row heights
    assert rows["filled"] and "28px" in rows["heights"] and set(rows["heights"]) <= {"28px", "54px"}, rows
    assert max(page.evaluate("window.mountsPerTask"), default=0) <= 12, page.evaluate("window.mountsPerTask")
    shot(page, artifacts, "run-large-projector")
    assert offsite.offsite == []
