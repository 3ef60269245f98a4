"""The "your own kubectl" box of the run page: the line it shows (and copies) works with the real
kubectl, and opening its tab gets the run's objects ready on the server before the learner's first command
(static/js/own-kubectl.js, docs/kubectl.md)."""

from __future__ import annotations

import os
import shlex
import subprocess

import pytest
from playwright.sync_api import expect

from .conftest import create_run
from .test_classroom import open_page, shot, wait_for_cluster

pytestmark = pytest.mark.live

KUBECTL = "/usr/bin/kubectl"


def test_the_kubectl_tab_readies_the_objects_and_its_line_works(browser, stack, offsite, artifacts, tmp_path):
    run = create_run(stack, speed=10)
    page = open_page(browser, run["viewer_url"], offsite)
    wait_for_cluster(page)
    api_reads: list[str] = []
    page.on("request", lambda request: api_reads.append(request.url) if "/k8s/runs/" in request.url else None)
    assert api_reads == []  # a page whose kubectl tab stays closed costs the API nothing

    with page.expect_response(lambda response: f"/k8s/runs/{run['id']}/api/v1/namespaces" in response.url) as read:
        page.locator('[data-tab="kubectl"]').click()
    assert read.value.status == 200

    line = page.locator("#own-kubectl [data-line=watch]")
    expect(line).to_contain_text(f"/k8s/runs/{run['id']} get nodes -w")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.locator("#own-kubectl button[data-copy=watch]").click()
    expect(page.locator("#own-kubectl button[data-copy=watch]")).to_have_attribute("data-copied", "true")
    assert page.evaluate("navigator.clipboard.readText()") == line.inner_text()
    shot(page, artifacts, "kubectl-tab")
    words = shlex.split(line.inner_text())
    assert words[0] == "kubectl" and words[-1] == "-w"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "KUBECONFIG": str(tmp_path / "none")}
    listed = subprocess.run([KUBECTL, *words[1:-1]], capture_output=True, text=True, env=env, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.split()[:5] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert {row.split()[0] for row in listed.stdout.splitlines()[1:]} == {"node-1", "node-2", "node-3"}
    assert page.errors == [] and offsite.offsite == []
