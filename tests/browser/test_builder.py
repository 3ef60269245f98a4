"""The scenario builder (/build/): a trainer builds a two-zone scenario with a custom toleration and two faults,
sees the validator's message beside a bad field and on its YAML line, previews the first minutes, saves it, and
the link opens in another browser, where it starts and the run page shows the cluster. On a phone the page is
one column and fits the screen. Screenshots in English and Chinese go to tests/artifacts/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .test_classroom import open_page, shot, wait_for_cluster
from .test_phone import PHONE, fits_the_screen, open_on
from .untranslated import COLLECT_JS, english_words

pytestmark = pytest.mark.live

LOCALES = {"en": "en-US", "zh": "zh-CN"}
# The document's own names and a Kubernetes kind: identifiers, the same in a Chinese page.
IDENTIFIERS = {"web", "agent", "app", "Deployment"}


def control(page, path: str):
    return page.locator(f'#builder-form [data-path="{path}"]')


def script_errors(page) -> list[str]:
    """Console errors but the 400s of the validator, which the browser logs for every invalid document."""
    return [e for e in page.console_errors if "status of 400" not in e] + page.errors


def build_two_zone_scenario(page, name: str) -> None:
    """From the starter (zone-a with 2 nodes, zone-b with 1, web and agent, a kubelet stop at 60 s on node-2):
    zone-b gets a second node, web tolerates unreachable for 30 s, and zone-b has an outage at 5m."""
    status = page.locator("#builder-status")
    expect(status).to_have_attribute("data-state", "ok")
    control(page, "name").fill(name)
    control(page, "cluster.zones[1].nodes").fill("2")
    control(page, "cluster.zones[1].nodes").press("Tab")
    page.locator('[data-op="add-toleration"][data-target="cluster.workloads[0].tolerations"]').click()
    expect(control(page, "cluster.workloads[0].tolerations[0].key")).to_have_value("node.kubernetes.io/unreachable")
    control(page, "cluster.workloads[0].tolerations[0].tolerationSeconds").fill("30")
    control(page, "draft.at").fill("5m")
    control(page, "draft.action").select_option("zone-outage")
    control(page, "draft.zone").select_option("zone-b")  # the zones of the cluster defined above
    page.locator('[data-op="add-fault"]').click()
    expect(control(page, "faults[1].action")).to_have_value("zone-outage")
    expect(page.locator(".timeline .marker")).to_have_count(2)
    expect(status).to_have_attribute("data-state", "ok")
    expect(page.locator("#yaml")).to_have_value(re.compile(r"tolerationSeconds: 30\n(.|\n)*zone: zone-b"))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_trainer_builds_checks_previews_saves_and_starts_a_scenario(browser, stack, artifacts, offsite, lang):
    page = open_page(browser, f"{stack.base}/build/", offsite, locale=LOCALES[lang])
    build_two_zone_scenario(page, f"two-zones-{lang}")

    # a bad zone name: the validator's message beside the field and on the YAML line, the fault follows
    control(page, "cluster.zones[1].name").fill("Zone B")
    expect(page.locator("#builder-status")).to_have_attribute("data-state", "bad")
    message = "must be a lowercase slug (letters, digits, '-'), got 'Zone B'"
    expect(page.locator("#f-cluster-zones-1-name-error")).to_have_text(message)
    expect(control(page, "cluster.zones[1].name")).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#f-faults-1-zone-error")).to_contain_text("unknown zone 'zone-b'")
    yaml_line = page.locator("#yaml-problems li", has_text="cluster.zones[1].name")
    expect(yaml_line).to_contain_text(message)
    line = page.locator("#yaml").input_value().split("\n").index("    - name: Zone B") + 1
    expect(yaml_line.locator(".line-link")).to_have_text(re.compile(rf"\b{line}\b"))
    shot(page, artifacts, f"builder-invalid-{lang}")
    control(page, "cluster.zones[1].name").fill("zone-b")
    expect(page.locator("#builder-status")).to_have_attribute("data-state", "ok")
    expect(page.locator("#f-cluster-zones-1-name-error")).to_be_empty()

    # the first minutes, headless: node-2 Unknown 50 s after its kubelet stops, web evicted 30 s after the taint
    page.locator("#btn-preview").click()
    rows = page.locator("#preview-list li")
    expect(rows.first).to_contain_text("T+1:00")
    unknown = page.locator('#preview-list li[data-kind="node-ready"]').first
    expect(unknown).to_contain_text("T+1:50")
    expect(unknown).to_contain_text("node-2")
    expect(unknown).to_contain_text("Unknown")
    evicted = page.locator('#preview-list li[data-kind="pods-terminating"]').first
    expect(evicted).to_contain_text("T+2:25")
    expect(page.locator('#preview-list li[data-kind="fault"]')).to_have_count(2)
    shot(page, artifacts, f"builder-preview-{lang}")

    page.locator("#btn-save").click()
    link = page.locator("#saved-link")
    expect(page.locator("#save-result")).to_be_visible()
    expect(link).to_have_value(re.compile(rf"^{re.escape(stack.base)}/s/\w+$"))
    shot(page, artifacts, f"builder-saved-{lang}")
    url = link.input_value()

    # another browser opens the link, starts it, and the run page shows the cluster of four nodes in two zones
    other = open_page(browser, url, offsite, locale=LOCALES[lang])
    expect(other.locator(".facts")).to_contain_text("4")
    other.locator("[data-start=private][data-shared]").click()
    other.wait_for_url(re.compile(r"/runs/\w+/"), timeout=20_000)
    wait_for_cluster(other)
    expect(other.locator('#cluster [data-node="node-4"]')).to_be_visible()
    shot(other, artifacts, f"builder-run-{lang}")

    if lang == "zh":
        words = {w for text in page.evaluate(COLLECT_JS, None) for w in english_words(text)}
        assert words <= IDENTIFIERS, words - IDENTIFIERS
    assert script_errors(page) == [] and script_errors(other) == [], (script_errors(page), script_errors(other))
    assert offsite.offsite == []


def test_the_yaml_view_and_the_form_edit_the_same_document(browser, stack, offsite):
    page = open_page(browser, f"{stack.base}/build/", offsite)
    expect(page.locator("#builder-status")).to_have_attribute("data-state", "ok")
    yaml = page.locator("#yaml")
    text = yaml.input_value()
    yaml.fill("# my comment\n" + text.replace("replicas: 6", "replicas: 4"))
    expect(control(page, "cluster.workloads[0].replicas")).to_have_value("4")
    control(page, "cluster.workloads[0].replicas").fill("5")
    expect(yaml).to_have_value(re.compile(r"^# my comment\n(.|\n)*replicas: 5"))  # the author's comment stays
    yaml.fill(yaml.input_value().replace("nodes: 2", "nodes: [2"))
    expect(page.locator("#yaml-problems")).to_contain_text("YAML")
    expect(page.locator("#builder-status")).to_have_attribute("data-state", "bad")
    assert script_errors(page) == []


def test_edit_a_copy_opens_the_builder_with_the_scenario(browser, stack, offsite):
    page = open_page(browser, f"{stack.base}/build/?scenario=kubelet-crash", offsite)
    expect(control(page, "name")).to_have_value("kubelet-crash-copy")
    expect(page.locator("#builder-status")).to_have_attribute("data-state", "ok")
    page.locator("#btn-save").click()
    url = page.locator("#saved-link")
    expect(url).to_have_value(re.compile(r"/s/\w+$"))
    shared = open_page(browser, url.input_value(), offsite)
    shared.locator(".edit-copy").click()
    shared.wait_for_url(re.compile(r"/build/\?s=\w+"))
    expect(control(shared, "name")).to_have_value("kubelet-crash-copy")  # a copy of a copy keeps its name
    expect(control(shared, "faults[0].action")).to_have_value("stop-kubelet")
    assert script_errors(page) == [] and script_errors(shared) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_builder_on_a_phone_is_one_labelled_column(browser, stack, artifacts, offsite, lang):
    page = open_on(browser, f"{stack.base}/build/", offsite, PHONE, lang=lang)
    expect(page.locator("#builder-status")).to_have_attribute("data-state", "ok")
    fits_the_screen(page, PHONE)
    lefts = {round(control(page, p).bounding_box()["x"]) for p in ("name", "kubernetesVersion", "duration", "seed")}
    assert len(lefts) == 1, lefts  # one field per line
    unlabelled = page.evaluate("""() => [...document.querySelectorAll('main input, main select, main textarea')]
        .filter(c => c.type !== 'hidden' && !c.labels?.length && !c.getAttribute('aria-label')).map(c => c.id)""")
    assert unlabelled == []
    control(page, "name").focus()
    outline = control(page, "name").evaluate("el => getComputedStyle(el).outlineStyle")
    assert outline != "none"
    page.locator("#btn-preview").click()
    expect(page.locator("#preview-list li").first).to_be_visible()
    fits_the_screen(page, PHONE)
    page.screenshot(path=str(artifacts / f"builder-phone-{lang}.png"), full_page=True)
    assert page.errors == []
