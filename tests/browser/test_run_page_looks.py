"""The run page as a person sees it when it has little to show: a lesson's first question stops the run at
T+0, before any node registered, and a page opened on a paused run has no request to draw. Each empty panel
says what will appear in it; and the timeline's hint reads as the other panels' hints do."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from playwright.sync_api import expect

from tests.web.live import http

from .test_classroom import open_page, shot, wait_for_cluster
from .test_late_joiner import wait_until_virtual
from .test_lessons import LAPTOP, LOCALES, start

pytestmark = pytest.mark.live

LESSON = "kubelet-crash-walkthrough"  # its first question comes at T+0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lesson_stopped_at_its_start_says_what_the_empty_panels_will_show(browser, stack, artifacts, offsite,
                                                                           lang):
    run = start(stack, {"lesson": LESSON})
    page = open_page(browser, f"{stack.base}/runs/{run['id']}/", offsite, viewport=LAPTOP, locale=LOCALES[lang][0])
    expect(page.locator(".question-card")).to_be_visible(timeout=30_000)
    assert page.evaluate("window.heartbeat.clock.now()") == 0
    expect(page.locator("#cluster article.node")).to_have_count(0)
    expect(page.locator(".cluster-waiting")).to_be_visible()
    expect(page.locator(".cluster-waiting")).to_contain_text("kubelet")
    expect(page.locator(".seq-waiting")).to_be_visible()  # the lifelines are drawn, no request is
    shot(page, artifacts, f"lesson-at-start-empty-panels-{lang}")
    assert page.errors == []


def test_the_explanations_go_once_nodes_and_requests_are_drawn(browser, stack, offsite):
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": "kubelet-crash", "speed": 20})
    assert status == 201, run
    page = open_page(browser, run["viewer_url"], offsite, viewport=LAPTOP)
    wait_for_cluster(page)
    expect(page.locator("#sequence g.row").first).to_be_attached(timeout=30_000)
    expect(page.locator(".cluster-waiting")).to_be_hidden()
    expect(page.locator(".seq-waiting")).to_be_hidden()


def test_a_page_opened_on_a_paused_run_explains_its_empty_diagram(browser, stack, artifacts, offsite):
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": "kubelet-crash", "speed": 50})
    assert status == 201, run
    wait_until_virtual(stack, run["id"], 30)
    status, body = http("POST", f"{stack.base}/api/runs/{run['id']}/commands", {"action": "pause"},
                        token=run["control_token"])
    assert status == 202, body
    page = open_page(browser, run["viewer_url"], offsite, viewport=LAPTOP)
    wait_for_cluster(page)
    expect(page.locator(".cluster-waiting")).to_be_hidden()
    assert page.evaluate("window.heartbeat.sequence.model.length") == 0  # nothing was sent since it opened
    expect(page.locator(".seq-waiting")).to_be_visible()
    # the timeline's hint is a sentence in small letters, as the cluster panel's is (its heading is in capitals)
    expect(page.locator("#panel-timeline h3 .hint")).to_have_text("click a marker or an arrow to see why it happened")
    assert page.locator("#panel-timeline h3 .hint").inner_text() == "click a marker or an arrow to see why it happened"
    shot(page, artifacts, "paused-run-empty-diagram")
    assert page.errors == []


def test_the_why_panels_first_sentence_is_set_in_from_its_border(browser, stack, offsite):
    status, run = http("POST", f"{stack.base}/api/runs", {"scenario": "kubelet-crash", "speed": 20})
    assert status == 201, run
    page = open_page(browser, run["viewer_url"], offsite, viewport=LAPTOP)
    wait_for_cluster(page)
    page.locator("[role=tab][data-tab=why]").click()
    hint = page.locator("#why .hint")
    expect(hint).to_be_visible()
    panel = page.locator("#panel-side").bounding_box()
    assert hint.evaluate("el => el.getBoundingClientRect().left + parseFloat(getComputedStyle(el).paddingLeft)") \
        - panel["x"] >= 8


def test_a_page_opened_before_the_driver_started_says_running_once_frames_come(browser, stack, offsite,
                                                                               django_db_blocker):
    """A page that joins a run no driver has published yet is told it is starting (status pending); status
    messages come only at the end (docs/architecture.md), so the first frame is what says the run is going."""
    from heartbeat_site.live.models import Run
    from heartbeat_site.live.runstore import activity
    from simulation import load_scenario
    from tests.web.conftest import small_document

    scenario = load_scenario({**small_document(), "duration": "3m"})
    # Another run keeps the set of active runs from being empty: a worker's watchdog that finds it empty takes it for
    # a Redis that restarted and registers again every run the database says is active (watchdog.py), ours too.
    status, keeper = http("POST", f"{stack.base}/api/runs", {"scenario": "kubelet-crash", "speed": 1})
    assert status == 201, keeper
    # the ORM in a thread of its own: Playwright's sync API keeps an event loop running in this one
    with django_db_blocker.unblock(), ThreadPoolExecutor(1) as pool:
        run = pool.submit(lambda: Run.objects.create(
            scenario_name=scenario.name, document=scenario.document, seed=scenario.seed,
            version=str(scenario.version), node_count=scenario.node_count, duration=scenario.duration, speed=10,
            control_token_hash="0" * 64)).result()
    page = open_page(browser, f"{stack.base}/runs/{run.id}/", offsite, viewport=LAPTOP)
    expect(page.locator("body")).to_have_attribute("data-run-status", "pending", timeout=30_000)
    activity.mark_active(run.id)  # an active run nobody drives: the worker's watchdog sends it a driver
    wait_for_cluster(page)
    expect(page.locator("body")).to_have_attribute("data-run-status", "running", timeout=30_000)
    expect(page.locator("#run-status")).to_have_text("")
    assert page.errors == []
