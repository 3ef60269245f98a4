"""A StatefulSet on a node that does not come back, on the run page: the three built-ins at high
speed. The db pod stuck Terminating says why, node-2's card keeps its volume attached and in use,
the replacement waits with a Multi-Attach error while node-2's volume counts down to the force
detach, the volume flow lights the branch taken, the StatefulSet, attach/detach and Pod GC lanes
draw their decisions, Why? names the Kubernetes source, and the trainer's two new buttons (force
delete, out-of-service taint) work while a viewer has none. Desktop and phone, English and Chinese;
screenshots go to tests/artifacts/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .test_classroom import NODE2, open_page, shot, wait_for_cluster
from .test_phone import PHONE, fits_the_screen, live, open_on
from .untranslated import COLLECT_JS, english_words

pytestmark = pytest.mark.live

DB1 = 'li.pod[data-pod="default/db-1"]'
ELSEWHERE = 'article.node:not([data-node="node-2"])'
STUCK = f"{NODE2} {DB1} [data-role=pod-why][data-kind=unconfirmed]"
DB1_VOLUME = f'{NODE2} [data-role=volumes] .volume[data-claim="data-db-1"]'


def start(stack, scenario: str, speed: float) -> dict:
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": scenario, "speed": speed})
    assert status == 201, run
    return run


def command(stack, run, body) -> None:
    status, answer = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", body, token=run["control_token"])
    assert status in (200, 202), answer


def decisions(page, rule: str) -> list[dict]:
    """The sequence diagram's decision rows of one rule (lane and node), from the page's model."""
    return page.evaluate("""(rule) => window.heartbeat.sequence.model.rows
        .filter(r => r.kind === 'decision' && r.label === rule).map(r => ({lane: r.lane, node: r.node ?? null}))""",
                         rule)


def explain_last(page, rule: str) -> None:
    """What a click on the rule's latest decision row does (the row may have scrolled out of the live
    window at this speed): the Why? panel explains its event."""
    page.evaluate("""(rule) => {
        const row = window.heartbeat.sequence.model.rows.findLast(r => r.kind === 'decision' && r.label === rule);
        window.heartbeat.explain(row.event);
    }""", rule)


def test_trainer_force_deletes_the_stuck_pod_and_the_volume_is_force_detached(browser, stack, artifacts, offsite):
    run = start(stack, "statefulset-node-lost", speed=50)
    control = open_page(browser, f"{stack.base}/runs/{run['id']}/#control={run['control_token']}", offsite)
    viewer = open_page(browser, f"{stack.base}/runs/{run['id']}/", offsite)
    pages = {"control": control, "viewer": viewer}
    for page in pages.values():
        wait_for_cluster(page)
        # node-2 has db-1's volume, attached and in use, before anything breaks
        volume = page.locator(DB1_VOLUME)
        expect(volume).to_have_attribute("data-in-use", "true", timeout=30_000)
        expect(volume).to_have_attribute("data-attached", "true")
        for lane in ("statefulset-controller", "volume-controllers", "pod-garbage-collector"):
            expect(page.locator(f"#sequence .lane-label.lane-{lane}")).to_have_count(1)

    # 1. After the taint eviction, db-1 stays Terminating on node-2 and says why; nobody makes a new db-1.
    for page in pages.values():
        expect(page.locator(STUCK)).to_contain_text("node-2", timeout=60_000)
        expect(page.locator(STUCK)).to_contain_text("kubelet")
        expect(page.locator(f"#cluster {ELSEWHERE} {DB1}")).to_have_count(0)
        assert any(r["lane"] == "statefulset-controller" for r in decisions(page, "statefulset.wait-same-name"))
    command(stack, run, {"action": "pause"})
    for name, page in pages.items():
        page.locator(f"#cluster {NODE2} {DB1}").click()
        flow = page.locator("#flow-volume")
        expect(flow.locator('[data-id="stuck"]')).to_have_class(re.compile(r"\blit\b"))
        expect(flow.locator('[data-id="q-inuse"]')).not_to_have_class(re.compile(r"\blit\b"))
        shot(page, artifacts, f"sts-1-stuck-terminating-{name}")

    # The viewer has no buttons; the trainer's pod buttons act on the pod picked.
    assert viewer.locator('[data-fault="force-delete-pod"], [data-fault="taint-out-of-service"]').count() == 0
    expect(control.locator(".fault-group.scope-pod .fault-target")).to_have_text("db-1")
    control.locator('[data-fault="force-delete-pod"]').click()
    expect(control.locator(".toast-item").first).to_contain_text(re.compile(r"T\+"), timeout=15_000)
    # 10x through the 6 min wait (36 s here), so that the pages are looked at inside it on a busy machine
    command(stack, run, {"action": "speed", "value": 10})
    command(stack, run, {"action": "resume"})

    # 2. The replacement comes at once elsewhere and waits: its volume is still attached to node-2.
    for page in pages.values():
        waiting = page.locator(f"#cluster {ELSEWHERE} {DB1} [data-role=pod-why][data-kind=volume-elsewhere]")
        expect(waiting).to_contain_text("node-2", timeout=30_000)
        expect(page.locator(f"#cluster {ELSEWHERE} {DB1} [data-role=multi-attach]")).to_be_visible(timeout=30_000)
        expect(page.locator(f"{DB1_VOLUME} [data-role=force-detach]")).to_be_visible(timeout=30_000)
    command(stack, run, {"action": "pause"})
    for name, page in pages.items():
        left = int(page.locator(f"{DB1_VOLUME} [data-role=force-detach]").get_attribute("data-left"))
        assert 0 < left <= 360, left
        page.locator(f"#cluster {ELSEWHERE} {DB1}").click()
        flow = page.locator("#flow-volume")
        for lit in ("q-timeout", "wait", "multi-attach"):
            expect(flow.locator(f'[data-id="{lit}"]')).to_have_class(re.compile(r"\blit\b"))
        expect(flow.locator("[data-role=force-detach]")).to_be_visible()
        shot(page, artifacts, f"sts-2-multi-attach-countdown-{name}")
    command(stack, run, {"action": "speed", "value": 50})
    command(stack, run, {"action": "resume"})

    # 3. Six minutes later the controller forces the detach: db-1 runs elsewhere; node-2's status still lists
    # the volume in use (its kubelet is dead and reports nothing more), but it is attached there no more.
    for name, page in pages.items():
        running = page.locator(f'#cluster {ELSEWHERE} {DB1}[data-ready="True"]')
        expect(running).to_have_count(1, timeout=60_000)
        expect(page.locator(DB1_VOLUME)).to_have_attribute("data-attached", "false")
        expect(page.locator(f"{DB1_VOLUME} [data-role=force-detach]")).to_have_count(0)
        expect(page.locator(f'#cluster {ELSEWHERE} [data-role=volumes] .volume[data-claim="data-db-1"]'
                            '[data-attached="true"][data-in-use="true"]')).to_have_count(1)
        flow = page.locator("#flow-volume")
        for lit in ("timeout-yes", "force", "attach"):
            expect(flow.locator(f'[data-id="{lit}"]')).to_have_class(re.compile(r"\blit\b"))
        rows = decisions(page, "attachdetach.force-detach-timeout")
        assert rows and rows[0]["lane"] == "volume-controllers", rows
        shot(page, artifacts, f"sts-3-force-detached-{name}")

    # Why? for the force detach names its rule and the Kubernetes source.
    explain_last(control, "attachdetach.force-detach-timeout")
    why = control.locator("#why .why-decision")
    expect(why).to_have_attribute("data-rule", "attachdetach.force-detach-timeout")
    expect(why.locator(".why-source")).to_contain_text("pkg/controller/volume/attachdetach/reconciler/reconciler.go")
    for page in pages.values():
        assert page.errors == []
    assert offsite.offsite == []


def test_out_of_service_taint_from_the_button_frees_the_volume_at_once(browser, stack, artifacts, offsite):
    run = start(stack, "statefulset-node-lost", speed=50)
    control = open_page(browser, f"{stack.base}/runs/{run['id']}/#control={run['control_token']}", offsite,
                        viewport=(1366, 768))
    wait_for_cluster(control)
    expect(control.locator(STUCK)).to_be_visible(timeout=60_000)
    control.locator(f"#cluster {NODE2}").click()
    expect(control.locator(".fault-group.scope-node .fault-target")).to_have_text("node-2")
    # no pod picked yet: the pod's buttons wait for one
    expect(control.locator('[data-fault="force-delete-pod"]')).to_be_disabled()
    control.locator('[data-fault="taint-out-of-service"]').click()
    expect(control.locator(f'{NODE2} [data-taint="node.kubernetes.io/out-of-service:NoExecute"]')).to_be_visible(
        timeout=15_000)
    # Pod GC deletes the stuck pod, the volume is detached without the wait, db-1 runs elsewhere.
    expect(control.locator(f'#cluster {ELSEWHERE} {DB1}[data-ready="True"]')).to_have_count(1, timeout=60_000)
    expect(control.locator(DB1_VOLUME)).to_have_attribute("data-attached", "false")
    assert any(r["lane"] == "pod-garbage-collector" for r in decisions(control, "podgc.terminating-out-of-service"))
    assert decisions(control, "attachdetach.force-detach-out-of-service")
    assert not decisions(control, "attachdetach.force-detach-timeout")
    control.locator(f"#cluster {ELSEWHERE} {DB1}").click()
    flow = control.locator("#flow-volume")
    for lit in ("oos-yes", "detach-now", "attach"):
        expect(flow.locator(f'[data-id="{lit}"]')).to_have_class(re.compile(r"\blit\b"))
    expect(flow.locator('[data-id="wait"]')).not_to_have_class(re.compile(r"\blit\b"))
    shot(control, artifacts, "sts-4-out-of-service-1366")
    assert control.errors == []
    assert offsite.offsite == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_phone_shows_the_stuck_pod_and_the_countdown(browser, stack, artifacts, offsite, lang):
    """statefulset-force-delete on a phone: the scenario force-deletes db-1 at 8 min."""
    run = start(stack, "statefulset-force-delete", speed=20)  # the 6 min wait takes 18 s
    page = open_on(browser, f"{stack.base}/runs/{run['id']}/#control={run['control_token']}", offsite, PHONE,
                   lang=lang)
    live(page)
    page.locator('[data-view="cluster"]').tap()
    expect(page.locator(f"{DB1_VOLUME} [data-role=force-detach]")).to_be_visible(timeout=60_000)
    command(stack, run, {"action": "pause"})
    expect(page.locator("body")).to_have_attribute("data-paused", "true")  # no frame redraws the pods after this
    # db-1 was force-deleted; node-2's web pod still waits for a kubelet that cannot confirm
    expect(page.locator(f'{NODE2} li.pod[data-pod^="default/web-"] [data-role=pod-why][data-kind=unconfirmed]'))\
        .to_be_visible()
    fits_the_screen(page, PHONE)
    # found and scrolled in one step of the page's own: a frame drawn meanwhile replaces the pod's element
    page.evaluate("(selector) => document.querySelector(selector).scrollIntoView({block: 'center'})",
                  f"#cluster {ELSEWHERE} {DB1}")
    shot(page, artifacts, f"sts-phone-cluster-{lang}")
    page.locator(f"#cluster {ELSEWHERE} {DB1}").tap()
    expect(page.locator('[data-view="flows"]')).to_have_attribute("aria-selected", "true")
    page.locator("#flow-volume").scroll_into_view_if_needed()
    expect(page.locator('#flow-volume [data-id="wait"]')).to_have_class(re.compile(r"\blit\b"))
    shot(page, artifacts, f"sts-phone-volume-flow-{lang}")
    page.locator('[data-view="traffic"]').tap()
    expect(page.locator("#sequence .lane-label.lane-stateful-controllers")).to_have_count(1)
    shot(page, artifacts, f"sts-phone-traffic-{lang}")
    # The trainer's buttons for the pod tapped, finger-sized
    page.locator('[data-view="faults"]').tap()
    button = page.locator('[data-fault="force-delete-pod"]')
    expect(button).to_be_enabled()
    expect(page.locator(".fault-group.scope-pod .fault-target")).to_have_text("db-1")
    button.scroll_into_view_if_needed()
    assert button.bounding_box()["height"] >= 44
    shot(page, artifacts, f"sts-phone-faults-{lang}")
    if lang == "zh":
        page.locator('[data-view="cluster"]').tap()
        texts = page.evaluate(COLLECT_JS, "#cluster")
        page.locator('[data-view="flows"]').tap()
        texts += page.evaluate(COLLECT_JS, "#flow-volume-section")
        leftovers = sorted({word for text in texts for word in english_words(text)})
        assert leftovers == [], [text for text in texts if english_words(text)]
    fits_the_screen(page, PHONE)
    assert page.errors == []
    assert offsite.offsite == []


def test_non_graceful_shutdown_built_in(browser, stack, artifacts, offsite):
    """The built-in adds the out-of-service taint at 8 min: db-1 runs again elsewhere within seconds (its stuck
    Terminating before is the other tests' to look at: here it lasts 1.8 s of wall time)."""
    run = start(stack, "non-graceful-shutdown", speed=50)
    page = open_page(browser, f"{stack.base}/runs/{run['id']}/", offsite, locale="zh-CN")
    wait_for_cluster(page)
    expect(page.locator(f'{NODE2} [data-taint="node.kubernetes.io/out-of-service:NoExecute"]')).to_be_visible(
        timeout=60_000)
    expect(page.locator(f'#cluster {ELSEWHERE} {DB1}[data-ready="True"]')).to_have_count(1, timeout=60_000)
    explain_last(page, "podgc.terminating-out-of-service")
    why = page.locator("#why .why-decision")
    expect(why.locator(".why-source")).to_contain_text("pkg/controller/podgc/gc_controller.go")
    # the whole page: lanes, cards, the volume flow, the Why? panel
    texts = page.evaluate(COLLECT_JS)
    page.locator('[data-tab="flows"]').click()
    texts += page.evaluate(COLLECT_JS)
    leftovers = sorted({w for text in texts for w in english_words(text)})
    assert leftovers == [], [text for text in texts if english_words(text)]
    page.locator('[data-tab="why"]').click()
    shot(page, artifacts, "sts-5-non-graceful-zh-1920")
    # The reference diagram of the two ways out, drawn by Mermaid in the Diagrams tab, in Chinese.
    page.locator('[data-tab="diagrams"]').click()
    figure = page.locator("#static-diagrams .volumes-only .mermaid-figure svg")
    expect(figure).to_be_visible(timeout=30_000)
    expect(figure).to_contain_text("出路二")
    texts = page.evaluate(COLLECT_JS, "#static-diagrams .volumes-only")
    assert sorted({w for text in texts for w in english_words(text)}) == [], texts
    figure.scroll_into_view_if_needed()
    shot(page, artifacts, "sts-6-diagram-zh-1920")
    assert page.errors == []
    assert offsite.offsite == []


def shots(page, output, artifacts, name: str) -> None:
    """The panel, then its output scrolled to the end of its lines (a wide table scrolls inside the panel)."""
    page.locator("#kubectl").screenshot(path=str(artifacts / f"{name}.png"))
    output.evaluate("(pre) => { pre.scrollLeft = pre.scrollWidth; }")
    page.locator("#kubectl").screenshot(path=str(artifacts / f"{name}-end.png"))
    output.evaluate("(pre) => { pre.scrollLeft = 0; }")


def test_the_kubectl_panel_prints_the_statefulsets_storage(browser, stack, artifacts, offsite):
    """Paused with db-1 stuck on node-2: the panel's get statefulsets, pvc, pv and volumeattachments show db at
    2/3, every claim Bound to its volume, and db-1's volume still attached to node-2 (the rows' values are
    compared with the real kubectl in tests/web/test_kubectl_panel.py)."""
    run = start(stack, "statefulset-node-lost", speed=20)
    page = open_page(browser, f"{stack.base}/runs/{run['id']}/", offsite, viewport=(1600, 1000))
    wait_for_cluster(page)
    expect(page.locator(STUCK)).to_contain_text("node-2", timeout=60_000)
    command(stack, run, {"action": "pause"})
    page.locator('[data-tab="kubectl"]').click()
    menu, prompt, output = (page.locator(f"#kubectl {part}")
                            for part in ("select[name=kubectl]", ".kubectl-prompt", ".kubectl-output"))
    menu.select_option("get-statefulsets")
    expect(prompt).to_have_text("$ kubectl get statefulsets -o wide")
    expect(output).to_contain_text(re.compile(r"^db\s+2/3\s+\S+\s+db\s+registry\.example/db:1\.0$", re.M))
    menu.select_option("get-pvc")
    expect(output).to_contain_text(re.compile(r"^data-db-1\s+Bound\s+pvc-\S+\s+1Gi\s+RWO\s", re.M))
    claims = output.text_content()
    volume = re.search(r"^data-db-1\s+Bound\s+(\S+)", claims, re.M).group(1)
    shots(page, output, artifacts, "kubectl-panel-get-pvc")
    menu.select_option("get-pv")
    expect(output).to_contain_text(re.compile(rf"^{volume}\s+1Gi\s+RWO\s+\S+\s+Bound\s+default/data-db-1\s", re.M))
    shots(page, output, artifacts, "kubectl-panel-get-pv")
    menu.select_option("get-volumeattachments")
    expect(output).to_contain_text(re.compile(rf"^\S+\s+\S+\s+{volume}\s+node-2\s+true\s", re.M))
    shots(page, output, artifacts, "kubectl-panel-get-volumeattachments")
    assert page.errors == [] and page.console_errors == []
