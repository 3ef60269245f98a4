"""The trainer's report of a lesson (GET /api/runs/<id>/report) after a live class of three viewers.

Real Daphne, Redis and a worker: ana, 小明 and a viewer without a nickname answer the
kubelet-crash walkthrough's first two questions differently; the report lists both questions in
order with their right answers, distributions, shares right and each viewer's answer, as JSON and
as CSV, and only to the holder of the control token.
"""

from __future__ import annotations

import asyncio
import csv
import io
import urllib.request

import pytest

from .live import Viewer, ahttp, running_stack
from .test_live_lessons import LESSON, answer, asked, command, tallied

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

CLASS = (("ana", "ana"), ("xiaoming", "小明"), ("anon", None))  # (websocket name, nickname)


@pytest.fixture
def stack(django_db_setup, tmp_path):
    with running_stack(tmp_path, ("first",)) as live:
        yield live


def download(url: str, token: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, dict(response.headers), response.read()


async def class_answers(viewers: list[Viewer], question: str, answers: tuple[dict, ...]) -> None:
    for viewer, (_, nickname), fields in zip(viewers, CLASS, answers, strict=True):
        nick = {"nickname": nickname} if nickname else {}
        assert (await answer(viewer, question, **fields, **nick))["type"] == "answer-ack"
    await tallied(viewers[0], question, len(viewers))


async def reveal(stack, run: dict, viewers: list[Viewer]) -> None:
    status, body = await command(stack, run, {"action": "reveal"}, run["control_token"])
    assert (status, body["status"]) == (202, "applied"), body
    for viewer in viewers:
        await viewer.next_of_type("reveal")


async def test_the_report_after_a_lesson_with_three_viewers(stack):
    status, run = await ahttp("POST", f"{stack.base}/api/runs", {"lesson": LESSON, "speed": 20})
    assert status == 201, run
    url = f"{stack.base}/api/runs/{run['id']}/report"
    token = run["control_token"]
    viewers = [await Viewer.open(run["ws_url"], name) for name, _ in CLASS]
    for viewer in viewers:
        assert (await asked(viewer))["id"] == "notready-when"
    # 50 s is right, and 45 within its tolerance of 5 s; 90 is not
    await class_answers(viewers, "notready-when", ({"value": 50}, {"value": 45}, {"value": 90}))
    await reveal(stack, run, viewers)
    for viewer in viewers:  # the crash step at t=60 s asks where the endpoints go
        assert (await viewer.next_of_type("question", timeout=30))["question"]["id"] == "endpoints"
    await class_answers(viewers, "endpoints", ({"choice": "not-ready"}, {"choice": "removed"},
                                               {"choice": "until-deleted"}))

    # before its reveal the question is in the report as open, with the answer the trainer holds
    status, body = await ahttp("GET", url, token=token)
    assert status == 200, body
    assert [(q["id"], q["status"]) for q in body["questions"]] == [("notready-when", "revealed"), ("endpoints", "open")]
    assert body["questions"][1]["correct"] == {"choice": "not-ready"}

    await reveal(stack, run, viewers)
    status, body = await ahttp("GET", url, token=token)
    assert status == 200, body
    assert body["lesson"]["name"] == LESSON and body["run"]["id"] == run["id"]
    first, second = body["questions"]
    assert (first["kind"], first["status"], first["correct"], first["tolerance"]) == ("number", "revealed",
                                                                                       {"value": 50.0}, 5)
    assert first["text"]["zh"] and first["text"]["en"].startswith("How many seconds")
    assert first["distribution"] == {"40-50": 1, "50-60": 1, "90-100": 1}
    assert (first["answers"], first["right"], first["share_right"]) == (3, 2, 0.6667)
    assert [(r["nickname"], r["answer"], r["right"]) for r in first["responses"]] == [
        ("ana", {"value": 50.0}, True), ("小明", {"value": 45.0}, True), (None, {"value": 90.0}, False)]
    assert (second["kind"], second["status"], second["correct"]) == ("choice", "revealed", {"choice": "not-ready"})
    assert second["distribution"] == {"removed": 1, "not-ready": 1, "until-deleted": 1}
    assert (second["answers"], second["right"], second["share_right"]) == (3, 1, 0.3333)
    assert [(r["nickname"], r["answer"]["choice"], r["right"]) for r in second["responses"]] == [
        ("ana", "not-ready", True), ("小明", "removed", False), (None, "until-deleted", False)]
    chosen = next(c for c in second["choices"] if c["id"] == "removed")["text"]
    assert second["responses"][1]["text"] == chosen
    assert [(v["viewer"], v["nickname"], v["answered"], v["right"]) for v in body["viewers"]] == [
        (1, "ana", 2, 2), (2, "小明", 2, 1), (3, None, 2, 0)]
    assert "id-ana" not in str(body), "a viewer's browser id is theirs: anyone holding it could answer as them"

    status, headers, raw = await asyncio.to_thread(download, f"{url}?format=csv", token)
    assert status == 200
    assert headers["Content-Type"] == "text/csv; charset=utf-8"
    assert headers["Content-Disposition"] == f'attachment; filename="run-{run["id"]}-report.csv"'
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"))))
    assert [(r["question"], r["question_id"], r["viewer"], r["nickname"], r["answer"], r["right"]) for r in rows] == [
        ("1", "notready-when", "1", "ana", "50", "yes"), ("1", "notready-when", "2", "小明", "45", "yes"),
        ("1", "notready-when", "3", "", "90", "no"),
        ("2", "endpoints", "1", "ana", "not-ready", "yes"), ("2", "endpoints", "2", "小明", "removed", "no"),
        ("2", "endpoints", "3", "", "until-deleted", "no")]
    assert {r["correct"] for r in rows} == {"50", "not-ready"} and rows[4]["answer_zh"] == chosen["zh"]

    # nobody else gets it: no token, a wrong token (a viewer's page has none)
    for bad, expected in ((None, (401, "control-token-required")), ("a-viewer-guess", (403, "wrong-control-token"))):
        status, refused = await ahttp("GET", url, token=bad)
        assert (status, refused["error"]) == expected
    status, refused = await ahttp("GET", f"{url}?format=xml", token=token)
    assert (status, refused["error"]) == (400, "bad-query")
