"""An observation's run page (docs/observe.md): it says plainly that a real cluster is observed, draws the
cluster and its traffic from the watch, and offers none of a simulation's faults, pacing or look-back. What goes
wrong with its watch is said in words: a server that goes away in the observed bar while the worker retries, to a
page that joins later too; a token that may list but not watch ends it, the page's end naming the refusal."""

from __future__ import annotations

import json
import select
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import ThreadingHTTPServer

import pytest
from playwright.sync_api import expect

from simulation import Simulation, audit_record, load_scenario
from tests.web.live import http, running_stack
from tests.web.test_observe import FakeApiServer

from .conftest import classroom_document, create_run
from .untranslated import COLLECT_JS, english_words

pytestmark = pytest.mark.live


@pytest.fixture(scope="module")
def observing_stack(django_db_setup, django_db_blocker, tmp_path_factory):
    with django_db_blocker.unblock(), running_stack(tmp_path_factory.mktemp("observe-stack"), ("browser-w1",),
                                                    HEARTBEAT_OBSERVE="1", HEARTBEAT_OBSERVE_HOSTS="127.0.0.1") as live:
        yield live


def observed(stack) -> tuple[dict, dict]:
    """A simulated run (the stand-in cluster) and an observation of its Kubernetes API."""
    stand_in = create_run(stack, speed=20)
    status, observation = http("POST", f"{stack.base}/api/observations",
                               {"server": f"{stack.base}/k8s/runs/{stand_in['id']}"})
    assert status == 201, observation
    return stand_in, observation


def test_the_observed_cluster_is_drawn_and_said_to_be_real(browser, observing_stack):
    stack = observing_stack
    stand_in, observation = observed(stack)
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(observation["control_url"])
    bar = page.locator("#observed-bar")
    expect(bar).to_contain_text("A real cluster, observed")
    expect(bar).to_contain_text(f"/k8s/runs/{stand_in['id']}")
    expect(bar).to_contain_text("inferred")
    expect(page.locator("#cluster [data-node='node-2']").first).to_be_visible(timeout=30_000)
    expect(page.locator("#sequence g.row").first).to_be_attached(timeout=30_000)  # the watch's changes, drawn
    expect(page.locator("#btn-end")).to_be_visible()  # the trainer ends it
    for hidden in ("#faults", "#btn-pause", "#btn-step"):
        expect(page.locator(hidden)).to_be_hidden()
    assert not errors


def audit_log() -> bytes:
    """The audit log of a three-node cluster whose node-2 kubelet stops at 20 s, to 200 s (as a run exports it)."""
    document = {**classroom_document("audit-replay"), "duration": "200s",
                "faults": [{"at": "20s", "action": "stop-kubelet", "node": "node-2"}]}
    sim = Simulation(load_scenario(document))
    return b"".join(json.dumps(audit_record(event)).encode() + b"\n" for event in sim.run_until(200)
                    if event.type == "write")


def test_a_replayed_audit_log_is_drawn_and_said_to_be_real(browser, observing_stack):
    stack = observing_stack
    request = urllib.request.Request(f"{stack.base}/api/audit-replays", data=audit_log(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        replay = json.loads(response.read())
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(replay["url"])
    expect(page.locator("#observed-bar")).to_contain_text("A real cluster's audit log, replayed")
    expect(page.locator("#cluster [data-node='node-2']").first).to_be_visible(timeout=30_000)
    expect(page.locator("#timeline")).to_contain_text("node-2", timeout=30_000)
    # look back: the log's writes folded to a time (a replay opens at its start), then played on
    page.locator("#btn-replay").click()
    expect(page.locator("#replay-bar")).to_be_visible()
    expect(page.locator("#cluster [data-node='node-2']")).to_have_count(0)  # before the first write
    page.locator("#replay-time").fill("150")
    page.locator("#replay-time").dispatch_event("change")
    expect(page.locator("#cluster [data-node='node-2']").first).to_contain_text("NotReady", timeout=30_000)
    assert not errors


def test_the_observe_page_starts_either_and_names_a_refusal(browser, observing_stack, tmp_path):
    stack = observing_stack
    stand_in = create_run(stack, speed=20)
    page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
    page.goto(f"{stack.base}/")
    page.get_by_role("link", name="Your own cluster in the same diagrams").click()
    watch = page.locator("#observe-form")
    watch.locator("input[name=server]").fill("https://10.1.2.3:6443")
    watch.locator("button[type=submit]").click()
    expect(watch.locator(".observe-error")).to_contain_text("HEARTBEAT_OBSERVE_HOSTS")  # not among the allowed
    watch.locator("input[name=server]").fill(f"{stack.base}/k8s/runs/{stand_in['id']}")
    watch.locator("button[type=submit]").click()
    expect(page.locator("#observed-bar")).to_contain_text("A real cluster, observed")
    expect(page.locator("#btn-end")).to_be_visible()  # the page opened with the control token

    (tmp_path / "audit.log").write_bytes(audit_log())
    page.goto(f"{stack.base}/observe/")
    page.locator("#replay-form input[type=file]").set_input_files(tmp_path / "audit.log")
    page.locator("#replay-form button[type=submit]").click()
    expect(page.locator("#observed-bar")).to_contain_text("A real cluster's audit log, replayed")


def test_the_chinese_observe_page_and_bar_leave_no_english(browser, observing_stack):
    stack = observing_stack
    _, observation = observed(stack)
    context = browser.new_context(viewport={"width": 1366, "height": 768}, locale="zh-CN")
    for path, part in (("/observe/", "main"), (f"/runs/{observation['id']}/", "#observed-bar")):
        page = context.new_page()
        page.goto(f"{stack.base}{path}")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        texts = page.evaluate(COLLECT_JS, part)
        assert texts and sorted({word for text in texts for word in english_words(text)}) == [], texts


class ClusterApi(FakeApiServer):
    """An empty cluster's API: lists answer, watches wait (a quiet cluster) until ``gone`` is set, or are refused
    (403) when ``watch_refused``: an RBAC role with list but not watch."""

    watch_refused = False
    gone: threading.Event

    def do_GET(self) -> None:
        if "watch=" not in self.path:
            super().do_GET()
        elif self.watch_refused:
            self._send(403, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
                             "code": 403, "message": "nodes is forbidden: cannot watch resource"})
        else:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.flush()
            while not self.gone.is_set():  # until the server goes away, or the client does
                if select.select([self.connection], [], [], 0.1)[0] and not self.connection.recv(1):
                    return


@contextmanager
def cluster_api(watch_refused: bool = False, port: int = 0) -> Iterator[tuple[str, threading.Event]]:
    """The API's URL and the event that takes it away (its watches cut, its port closed)."""
    gone = threading.Event()
    handler = type("Handler", (ClusterApi,), {"watch_refused": watch_refused, "gone": gone})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()

    def go_away() -> None:
        gone.wait()
        server.shutdown()
        server.server_close()

    threading.Thread(target=go_away, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", gone
    finally:
        gone.set()


def observation_of(stack, server: str) -> dict:
    status, observation = http("POST", f"{stack.base}/api/observations", {"server": server, "token": "t"})
    assert status == 201, observation
    return observation


def test_a_server_that_goes_away_is_said_in_the_bar_until_it_is_back(browser, observing_stack):
    with cluster_api() as (server, gone):
        observation = observation_of(observing_stack, server)
        page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(observation["control_url"])
        expect(page.locator("#observed-bar")).to_contain_text("A real cluster, observed")
        expect(page.locator("#conn-state")).to_have_attribute("data-state", "live")  # it hears the driver
        problem = page.locator("#observed-problem")
        expect(problem).to_be_hidden()
        gone.set()
        expect(problem).to_contain_text("Watching the cluster fails, retrying", timeout=30_000)
        expect(problem).to_contain_text(f"cannot reach the API server at {server}")
        expect(problem).to_contain_text("Connection refused")

        # a Chinese page joins while it fails: the problem in its words, from the snapshot
        late = browser.new_context(viewport={"width": 1366, "height": 768}, locale="zh-CN").new_page()
        late.goto(observation["viewer_url"])
        said = f"观察集群出错，正在重试：无法连接 {server} 的 API server"
        expect(late.locator("#observed-problem")).to_contain_text(said, timeout=30_000)
    with cluster_api(port=int(server.rsplit(":", 1)[1])):  # back: the next retry lists and watches again
        expect(problem).to_be_hidden(timeout=40_000)
        expect(page.locator("#toast")).to_contain_text("Watching the cluster again")
        expect(late.locator("#observed-problem")).to_be_hidden()
    assert not errors


def test_a_token_that_may_not_watch_ends_the_observation_naming_the_refusal(browser, observing_stack):
    with cluster_api(watch_refused=True) as (server, _):
        observation = observation_of(observing_stack, server)  # its lists pass the checks before it starts
        for locale, ended in (("en-US", "watching the cluster failed: the token may not list or watch"),
                              ("zh-CN", "观察集群失败：该令牌无权列出或 watch")):
            page = browser.new_context(viewport={"width": 1366, "height": 768}, locale=locale).new_page()
            page.goto(observation["viewer_url"])
            end = page.locator("#run-end")
            expect(end).to_contain_text(ended, timeout=30_000)
            expect(end).to_contain_text("403 Forbidden")
            expect(page.locator("#observed-problem")).to_be_hidden()  # ended: nothing is being retried
            expect(end).not_to_contain_text("simulation")
