"""The session report reads every kind of question the same way: an order question's permutations
and a drill's diagnosis (a cause and a node) are judged and written out like a choice or a number.
The live class of three viewers is in test_live_report.py."""

from __future__ import annotations

import csv
import io

import pytest

from heartbeat_site.live.classroom import questions, report
from heartbeat_site.live.models import Answer, Question, QuestionStatus, Run
from heartbeat_site.live.runs.tokens import hash_token
from simulation.lessons import get_drill, get_lesson

pytestmark = [pytest.mark.django_db]

CHAIN = ["unknown", "endpoints", "noexecute", "deleted"]  # cause-and-effect's chain, as the run orders it


def make_run(scenario, **fields) -> Run:
    return Run.objects.create(scenario_name=scenario.name, document=scenario.document, seed=scenario.seed,
                              version=str(scenario.version), node_count=scenario.node_count,
                              duration=scenario.duration, control_token_hash=hash_token("t"), **fields)


def test_an_order_questions_answers_are_judged_against_the_runs_order():
    lesson = get_lesson("cause-and-effect")
    assert lesson is not None
    run = make_run(lesson.scenario, lesson=lesson.name)
    happened = {item: {"seq": 10 + i, "t": t} for i, (item, t) in enumerate(zip(CHAIN, (110, 110.5, 115, 415),
                                                                                strict=True))}
    chain = Question.objects.create(run=run, qid="chain", step=2, asked_at=60, status=QuestionStatus.REVEALED,
                                    revealed_at=61, happened=happened)
    swapped = [CHAIN[1], CHAIN[0], *CHAIN[2:]]
    Answer.objects.create(question=chain, viewer="v-ana", nickname="ana", order=CHAIN)
    Answer.objects.create(question=chain, viewer="v-bo", nickname="", order=swapped)

    body = report.build(run)
    (entry,) = body["questions"]
    assert (entry["kind"], entry["status"], entry["correct"]) == ("order", "revealed", {"order": CHAIN})
    assert [(r["nickname"], r["answer"], r["right"]) for r in entry["responses"]] == [
        ("ana", {"order": CHAIN}, True), (None, {"order": swapped}, False)]
    assert (entry["right"], entry["share_right"]) == (1, 0.5)
    texts = {item["id"]: item["text"] for item in questions.question_document(chain)["items"]}
    assert entry["responses"][0]["text"]["zh"] == " > ".join(texts[item]["zh"] for item in CHAIN)
    rows = list(csv.DictReader(io.StringIO(report.csv_text(body).lstrip("\ufeff"))))
    assert [(r["answer"], r["correct"], r["right"]) for r in rows] == [
        (">".join(CHAIN), ">".join(CHAIN), "yes"), (">".join(swapped), ">".join(CHAIN), "no")]


def test_a_drills_diagnosis_is_right_only_with_the_cause_and_the_node():
    drill = get_drill("silent-node")
    assert drill is not None
    run = make_run(drill.scenario, drill=drill.name)
    diagnosis = Question.objects.create(run=run, qid=questions.DIAGNOSIS, asked_at=0)
    cause, node = questions.public_cause(drill, drill.answer), drill.fault["node"]
    other = next(n for n in drill.document["nodes"] if n != node)
    for viewer, picked in (("v-1", node), ("v-2", other)):
        Answer.objects.create(question=diagnosis, viewer=viewer, choice=cause, node=picked)

    body = report.build(run)
    assert body["lesson"]["kind"] == "drill"
    (entry,) = body["questions"]
    assert (entry["kind"], entry["status"], entry["correct"]) == ("diagnosis", "open", {"choice": cause, "node": node})
    assert [r["right"] for r in entry["responses"]] == [True, False]
    assert entry["distribution_nodes"][node] == entry["distribution_nodes"][other] == 1
    rows = list(csv.DictReader(io.StringIO(report.csv_text(body).lstrip("\ufeff"))))
    assert [r["answer"] for r in rows] == [f"{cause}@{node}", f"{cause}@{other}"]
