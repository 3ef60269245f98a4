"""Replay and seek: an ended run's page offers "Replay"; seeking to the moment node-2 was tainted shows the
taint on node-2 from that moment on and not before it, and a step forward from just before brings it in. The export
menu's cluster objects are those of the moment the replay shows."""

from __future__ import annotations

import pytest
import yaml
from playwright.sync_api import expect

from tests.web.live import http

from .conftest import classroom_document, create_run
from .test_classroom import NODE2, UNREACHABLE, open_page, shot, wait_for_cluster

pytestmark = pytest.mark.live

TAINT = f'{NODE2} [data-taint="{UNREACHABLE}:NoSchedule"]'


def ended_run(browser, stack, offsite) -> str:
    """A 3-minute run at 100x whose node-2 kubelet stops at 20 s, watched to its end."""
    document = {**classroom_document("replay-me"), "duration": "3m",
                "faults": [{"at": "20s", "action": "stop-kubelet", "node": "node-2"}]}
    run_id = create_run(stack, speed=100, document=document)["id"]
    watcher = open_page(browser, f"{stack.base}/runs/{run_id}/", offsite)
    expect(watcher.locator("#run-end")).to_contain_text("Ended", timeout=60_000)
    watcher.context.close()
    return run_id


def taint_time(stack, run_id: str) -> float:
    """When the node lifecycle controller put the unreachable NoSchedule taint on node-2, from the event log."""
    after, found = 0, []
    while True:
        _, page = http("GET", f"{stack.base}/api/runs/{run_id}/events?after={after}&limit=5000&types=transition")
        found += [e["t"] for e in page["events"] if e.get("kind") == "taint-added" and e.get("node") == "node-2"
                  and e.get("key") == UNREACHABLE and e.get("effect") == "NoSchedule"]
        if not page["has_more"]:
            break
        after = page["next_after"]
    assert found, "node-2 was never tainted"
    return found[0]


def seek(page, t: float) -> None:
    """Drag the scrubber to ``t`` and let go (the range input's change event), then wait for the clock."""
    page.locator("#replay-time").evaluate(
        "(el, t) => { el.value = String(t); el.dispatchEvent(new Event('change')); }", t)
    # the server may have to simulate the run up to t first (no checkpoint yet): that can take a while
    expect(page.locator("#replay-at")).to_have_text(clock_text(t), timeout=30_000)
    page.wait_for_function("t => Math.abs(window.heartbeat.clock.now() - t) < 1e-6", arg=t)


def clock_text(t: float) -> str:
    """As the page prints virtual time (static/js/time.js formatOffset): T+mm:ss.t, tenths cut, not rounded."""
    tenths = int(t * 10)
    return f"T+{tenths // 600:02d}:{tenths % 600 // 10:02d}.{tenths % 10}"


def test_an_ended_run_replays_and_seeks_to_the_moment_of_the_taint(browser, stack, artifacts, offsite):
    run_id = ended_run(browser, stack, offsite)
    tainted_at = taint_time(stack, run_id)
    page = open_page(browser, f"{stack.base}/runs/{run_id}/", offsite)
    wait_for_cluster(page)
    expect(page.locator("#run-end")).to_contain_text("Ended")
    expect(page.locator(TAINT)).to_be_visible()  # the end of the run: still tainted
    replay = page.locator("#btn-replay")
    expect(replay).to_have_text("Replay")
    replay.click()
    expect(page.locator("#replay-bar")).to_be_visible()

    # the snapshot at t holds what happened strictly before t: one millisecond after the taint it is there
    seek(page, tainted_at + 0.001)
    expect(page.locator(TAINT)).to_be_visible()
    expect(page.locator("#clock-time")).to_have_text(clock_text(tainted_at + 0.001))
    shot(page, artifacts, "replay-at-the-taint")

    seek(page, tainted_at - 1)  # backwards: a second before, no taint yet
    expect(page.locator(f"#cluster {NODE2}")).to_be_visible()
    expect(page.locator(TAINT)).to_have_count(0)
    # the sequence diagram shows the traffic before the cursor, none after it
    seqs = page.evaluate("() => { const m = window.heartbeat.sequence.model; return m.length; }")
    assert seqs > 0
    last_t = page.evaluate("() => { const h = window.heartbeat.history; return h.length ? h.t[h.length - 1] : -1; }")
    assert 0 <= last_t < tainted_at - 1
    shot(page, artifacts, "replay-before-the-taint")

    page.locator("#replay-step").click()  # five virtual seconds on: the taint comes in with the events
    expect(page.locator("#replay-at")).to_have_text(clock_text(tainted_at + 4))
    expect(page.locator(TAINT)).to_be_visible()

    page.locator("#replay-speed").select_option("100")  # play at 100x to the end of the run
    page.locator("#replay-play").click()
    expect(page.locator("#replay-play")).to_have_text("Pause")
    page.wait_for_function("window.heartbeat.clock.now() > 170")
    expect(page.locator("#replay-play")).to_have_text("Play", timeout=10_000)  # it stops at the run's end
    expect(page.locator("#replay-at")).to_have_text("T+03:00.0")
    expect(page.locator(f'{NODE2} [data-taint="{UNREACHABLE}:NoExecute"]')).to_be_visible()

    page.locator("#replay-exit").click()
    expect(page.locator("#replay-bar")).to_be_hidden()
    wait_for_cluster(page)
    expect(page.locator(TAINT)).to_be_visible()
    assert page.errors == [] and page.console_errors == [], (page.errors, page.console_errors)
    assert offsite.offsite == []


def test_a_live_viewer_looks_back_and_returns_to_live(browser, stack, artifacts, offsite):
    run_id = create_run(stack, speed=20)["id"]
    page = open_page(browser, f"{stack.base}/runs/{run_id}/", offsite)
    wait_for_cluster(page)
    page.wait_for_function("window.heartbeat.clock.now() > 40")
    look_back = page.locator("#btn-replay")
    expect(look_back).to_have_text("Look back")
    look_back.click()
    expect(page.locator("#replay-exit")).to_have_text("Back to live")
    expect(page.locator("#replay-bar")).to_be_visible()
    seek(page, 10.0)
    expect(page.locator("#clock-time")).to_have_text("T+00:10.0")
    assert page.evaluate("window.heartbeat.clock.paused")
    objects = page.locator(".export-menu a[href*='objects.yaml']")
    expect(objects).to_have_attribute("href", f"/api/runs/{run_id}/export/objects.yaml?t=10")
    shot(page, artifacts, "replay-look-back-live")

    page.locator("#replay-exit").click()
    expect(page.locator("#replay-bar")).to_be_hidden()
    wait_for_cluster(page)
    page.wait_for_function("window.heartbeat.clock.now() > 45 && !window.heartbeat.clock.paused")
    expect(objects).to_have_attribute("href", f"/api/runs/{run_id}/export/objects.yaml")  # at the run's clock
    expect(look_back).to_be_visible()
    assert page.errors == [] and page.console_errors == [], (page.errors, page.console_errors)
    assert offsite.offsite == []


def test_a_large_run_replays_at_node_level(browser, stack, offsite):
    """120 nodes: sent at node level (pods as counts per node); a seek shows the counts of that time."""
    document = {**classroom_document("replay-large"), "duration": "2m",
                "cluster": {"zones": [{"name": "zone-a", "nodes": 60}, {"name": "zone-b", "nodes": 60}],
                            "workloads": [{"name": "web", "replicas": 240}]}}
    run_id = create_run(stack, speed=100, document=document)["id"]
    page = open_page(browser, f"{stack.base}/runs/{run_id}/", offsite)
    expect(page.locator("#run-end")).to_contain_text("Ended", timeout=90_000)
    page.locator("#btn-replay").click()
    expect(page.locator("#replay-bar")).to_be_visible()  # the replay knows the run's end: the scrubber is usable
    seek(page, 1.0)  # the cluster is still starting: no pod runs yet
    assert page.evaluate("window.heartbeat.store.nodeLevel")
    assert page.evaluate("window.heartbeat.store.podCounts('node-2').ready") == 0
    seek(page, 45.0)  # from the snapshot at 15 s (pods counted: none), the events up to 45 s (pods started at 20 s)
    page.wait_for_function("window.heartbeat.store.podCounts('node-2').ready === 2")
    assert page.errors == [] and page.console_errors == [], (page.errors, page.console_errors)


def exported_taints(page, node: str = "node-2") -> list[str]:
    """The taints of ``node`` in the export menu's "Cluster objects (kubectl YAML)", downloaded as a user does."""
    page.locator(".export-menu").evaluate("menu => { menu.open = true; }")
    with page.expect_download() as download:
        page.locator(".export-menu a[href*='objects.yaml']").click()
    with open(download.value.path(), encoding="utf-8") as file:
        listing = yaml.safe_load(file)
    item = next(i for i in listing["items"] if i["kind"] == "Node" and i["metadata"]["name"] == node)
    return sorted(f"{t['key']}:{t['effect']}" for t in item["spec"].get("taints") or ())


def test_the_export_menu_gives_the_cluster_objects_at_the_replay_cursor(browser, stack, offsite):
    run_id = ended_run(browser, stack, offsite)
    tainted_at = taint_time(stack, run_id)  # NoSchedule; NoExecute follows at the next monitor pass
    page = open_page(browser, f"{stack.base}/runs/{run_id}/", offsite)
    wait_for_cluster(page)
    at_the_end = [f"{UNREACHABLE}:NoExecute", f"{UNREACHABLE}:NoSchedule"]
    assert exported_taints(page) == at_the_end
    page.locator("#btn-replay").click()
    expect(page.locator("#replay-bar")).to_be_visible()
    seek(page, tainted_at - 1)
    assert exported_taints(page) == []
    seek(page, tainted_at + 0.001)
    assert exported_taints(page) == [f"{UNREACHABLE}:NoSchedule"]
    page.locator("#replay-exit").click()  # live (here: the ended run's clock) again
    wait_for_cluster(page)
    assert exported_taints(page) == at_the_end
    assert page.errors == [] and page.console_errors == [], (page.errors, page.console_errors)
    assert offsite.offsite == []
