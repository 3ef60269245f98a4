"""The run page's Export menu: its files download from the page, and the sequence diagram's Mermaid text parses with
the Mermaid the site serves (and renders to an SVG)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from .conftest import create_run
from .test_classroom import open_page, shot, wait_for_cluster

pytestmark = pytest.mark.live

PARSE_WITH_SERVED_MERMAID = """async (url) => {
  const text = await (await fetch(url)).text();
  await new Promise((resolve, reject) => {
    const script = Object.assign(document.createElement("script"), {src: "/static/vendor/mermaid.min.js"});
    script.onload = resolve;
    script.onerror = reject;
    document.head.append(script);
  });
  window.mermaid.initialize({startOnLoad: false});
  const parsed = await window.mermaid.parse(text);
  const {svg} = await window.mermaid.render("export-check", text);
  return {type: parsed.diagramType, lines: text.split("\\n").length, svg: svg.length};
}"""


def test_exports_from_the_run_page_and_mermaid_parses_the_diagram(browser, stack, artifacts, offsite):
    run = create_run(stack, speed=50)
    trainer = open_page(browser, run["control_url"], offsite)
    wait_for_cluster(trainer)
    status = trainer.evaluate(
        """async ([id, token]) => (await fetch(`/api/runs/${id}/commands`, {method: 'POST',
             headers: {'Content-Type': 'application/json', Authorization: `Bearer ${token}`},
             body: JSON.stringify({action: 'stop-kubelet', node: 'node-2'})})).status""",
        [run["id"], run["control_token"]],
    )
    assert status == 202
    trainer.wait_for_function("() => /T\\+0[2-9]:/.test(document.getElementById('clock-time').textContent)",
                              timeout=30_000)  # past the grace period: node-2 is NotReady

    trainer.locator(".export-menu summary").click()
    links = trainer.locator(".export-menu a")
    expect(links).to_have_count(6)
    shot(trainer, artifacts, "run-export-menu")
    with trainer.expect_download() as download:
        trainer.locator(".export-menu a[href$='summary.md']").click()
    assert download.value.suggested_filename == f"run-{run['id']}-summary.md"

    result = trainer.evaluate(PARSE_WITH_SERVED_MERMAID, f"/api/runs/{run['id']}/export/sequence.mmd")
    assert result["type"] == "sequence" and result["lines"] > 5 and result["svg"] > 1000, result
    assert trainer.errors == [] and trainer.console_errors == [], (trainer.errors, trainer.console_errors)
    assert offsite.offsite == []
