"""The lesson path and the drills over REST: listed without answers, started as runs."""

import json

import pytest

from heartbeat_site.live.models import Run
from simulation.lessons import builtin_drills, builtin_lessons

from .conftest import post_json

pytestmark = [pytest.mark.django_db]


def test_lessons_are_listed_in_path_order_without_their_answers(api):
    body = api.get("/api/lessons").json()
    names = [lesson["name"] for lesson in body["lessons"]]
    assert names == [lesson.name for lesson in sorted(builtin_lessons(), key=lambda item: item.position)]
    assert len(names) >= 10
    text = json.dumps(body)
    for field in ('"answer"', '"evidence"', '"measure"', '"explain"', '"match"'):
        assert field not in text, f"{field} shown before the reveal"
    first = body["lessons"][0]
    assert first["title"]["en"] and first["title"]["zh"] and first["steps"] and first["questions"]


def test_drills_are_listed_without_their_causes(api):
    body = api.get("/api/drills").json()
    assert len(body["drills"]) == len(builtin_drills()) >= 7
    for listed, drill in zip(body["drills"], sorted(builtin_drills(), key=lambda item: item.position), strict=True):
        assert drill.fault["action"] not in json.dumps(listed), listed["name"]
        assert [c["id"] for c in listed["choices"]] == [f"cause-{i + 1}" for i in range(len(listed["choices"]))]


def test_a_lesson_run_starts_with_its_scenario_and_speed(api, dispatched):
    lesson = builtin_lessons()[1]
    response = post_json(api, "/api/runs", {"lesson": lesson.name})
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert (run.lesson, run.scenario_name, run.speed) == (lesson.name, lesson.scenario.name,
                                                          lesson.document.get("speed", 1.0))
    assert response.json()["run"]["lesson"] == lesson.name


@pytest.mark.parametrize(("body", "status", "fragment"), [
    ({"lesson": "no-such-lesson"}, 404, "no lesson named 'no-such-lesson'"),
    ({"drill": 7}, 400, "drill: must be a string, got a number"),
    ({"lesson": "two-heartbeats", "scenario": "kubelet-crash"}, 400, 'exactly one of "scenario"'),
])
def test_bad_lesson_or_drill_requests_are_named(api, dispatched, body, status, fragment):
    response = post_json(api, "/api/runs", body)
    assert response.status_code == status and fragment in response.json()["message"], response.content
    assert dispatched == []


def test_a_report_is_only_for_a_lesson_or_drill_and_its_trainer(api, dispatched):
    plain = post_json(api, "/api/runs", {"scenario": "kubelet-crash"}).json()
    lesson = post_json(api, "/api/runs", {"lesson": "two-heartbeats"}).json()
    auth = {"HTTP_AUTHORIZATION": f"Bearer {lesson['control_token']}"}
    response = api.get(f"/api/runs/{plain['id']}/report", HTTP_AUTHORIZATION=f"Bearer {plain['control_token']}")
    assert (response.status_code, response.json()["error"]) == (404, "no-lesson")
    response = api.get(f"/api/runs/{lesson['id']}/report", HTTP_AUTHORIZATION=f"Bearer {plain['control_token']}")
    assert (response.status_code, response.json()["error"]) == (403, "wrong-control-token")
    assert api.get("/api/runs/no-such-run/report", **auth).status_code == 404
    body = api.get(f"/api/runs/{lesson['id']}/report", **auth).json()
    assert (body["lesson"]["name"], body["questions"], body["viewers"]) == ("two-heartbeats", [], [])
    csv_text = api.get(f"/api/runs/{lesson['id']}/report?format=csv", **auth).content.decode("utf-8-sig")
    assert csv_text.splitlines()[0].startswith("question,question_id,kind,status,")
