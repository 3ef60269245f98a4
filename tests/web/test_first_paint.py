"""What a phone shows before its scripts and the run's snapshot arrive: the run page's HTML itself."""

from __future__ import annotations

import json
import re

import pytest

from heartbeat_site.live.models import Run
from simulation.lessons.catalogue import get_drill, get_lesson

from .conftest import post_json

pytestmark = pytest.mark.django_db


def lesson_bar(html: str) -> str:
    return re.search(r'<section id="lesson-bar".*?</section>', html, re.S).group(0)


def test_a_lesson_runs_page_holds_its_current_step(api, dispatched):
    created = post_json(api, "/api/runs", {"lesson": "kubelet-crash-walkthrough"}).json()
    lesson = get_lesson("kubelet-crash-walkthrough")
    Run.objects.filter(pk=created["id"]).update(steps_started=2)
    bar = lesson_bar(api.get(f"/runs/{created['id']}/").content.decode())
    assert 'data-kind="lesson"' in bar and " hidden" not in bar
    assert lesson.title["en"] in bar and f"Step 2 of {len(lesson.steps)}" in bar
    assert lesson.document["steps"][1]["text"]["en"].split()[0] in bar
    zh = lesson_bar(api.get(f"/runs/{created['id']}/", headers={"Accept-Language": "zh-hans"}).content.decode())
    assert lesson.title["zh"] in zh and f"第 2 步，共 {len(lesson.steps)} 步" in zh


def test_a_drills_page_holds_its_brief_and_a_scenarios_page_no_bar(api, dispatched, document):
    created = post_json(api, "/api/runs", {"drill": "silent-node"}).json()
    bar = lesson_bar(api.get(f"/runs/{created['id']}/").content.decode())
    assert 'data-kind="drill"' in bar and get_drill("silent-node").document["brief"]["en"] in bar
    plain = post_json(api, "/api/runs", {"document": document}).json()
    bar = lesson_bar(api.get(f"/runs/{plain['id']}/").content.decode())
    assert bar.split(">")[0].endswith(" hidden") and "lb-text" not in bar


def test_a_runs_page_names_its_modules_for_after_its_first_paint(api, dispatched):
    """Nothing in the HTML asks for a module before the page paints (a phone's link goes to the stylesheets
    first); the plan the page follows afterwards names the whole graph and the scripts in their order."""
    created = post_json(api, "/api/runs", {"lesson": "kubelet-crash-walkthrough"}).json()
    html = api.get(f"/runs/{created['id']}/").content.decode()
    assert 'rel="modulepreload"' not in html and not re.search(r'<script[^>]*type="module"', html)
    assert not re.search(r"<script[^>]*d3-selection", html)
    plan = re.search(r'<script type="application/json" id="after-first-paint">(.*?)</script>', html).group(1)
    plan = json.loads(plan)
    assert [s["src"].rsplit("/", 1)[1] for s in plan["scripts"]][:2] == ["d3-selection.min.js", "run.js"]
    assert [s["module"] for s in plan["scripts"]][:2] == [False, True]
    assert any(href.endswith("/js/api.js") for href in plan["preload"]) and len(plan["preload"]) > 30
