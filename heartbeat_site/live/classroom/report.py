"""What a trainer keeps of a lesson or a drill (``GET /api/runs/<id>/report``, docs/architecture.md §6.5).

Every question asked, in order: its text, kind, right answer, the distribution of the class's
answers (the tally's counts), the share right, and each viewer's answer. Viewers are known by the
nickname they gave, else as "anonymous N"; their random browser ids never leave the server, as
anyone holding one could answer in its name. Answers are read and judged by ``classroom``
(``answer_value``, ``answer_is_right``), whatever the question's kind.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from heartbeat_site.live.classroom import questions
from heartbeat_site.live.models import Answer, Question, QuestionStatus, Run

CSV_COLUMNS = ("question", "question_id", "kind", "status", "question_en", "question_zh", "correct",
               "viewer", "nickname", "answer", "answer_en", "answer_zh", "right")


def build(run: Run) -> dict[str, Any]:
    """The report of a lesson or drill run (JSON-ready)."""
    asked = list(Question.objects.filter(run=run).select_related("run").order_by("id"))
    answers = list(Answer.objects.filter(question__run=run).select_related("question__run").order_by("id"))
    viewers = _viewers(answers)
    by_question: dict[int, list[Answer]] = {}
    for answer in answers:
        by_question.setdefault(answer.question_id, []).append(answer)
    entries = [_question(q, by_question.get(q.pk, []), viewers) for q in asked]
    scores: dict[int, dict[str, Any]] = {
        n: {"viewer": n, "nickname": nickname or None, "answered": 0, "right": 0}
        for n, nickname in viewers.values()}
    for entry in entries:
        for response in entry["responses"]:
            score = scores[response["viewer"]]
            score["answered"] += 1
            score["right"] += response["right"] is True
    return {
        "run": {"id": run.id, "scenario": run.scenario_name, "status": run.status,
                "created_at": run.created_at.isoformat(),
                "ended_at": run.ended_at.isoformat() if run.ended_at else None},
        "lesson": _teaching(run),
        "questions": entries,
        "viewers": list(scores.values()),
    }


def _teaching(run: Run) -> dict[str, Any]:
    if run.lesson:
        lesson = questions.lesson_of(run)
        return {"kind": "lesson", "name": lesson.name, "title": lesson.title, "position": lesson.position}
    drill = questions.drill_of(run)
    return {"kind": "drill", "name": drill.name, "title": drill.title, "position": drill.position}


def _viewers(answers: list[Answer]) -> dict[str, tuple[int, str]]:
    """Browser id -> (number by first answer, latest nickname given)."""
    out: dict[str, tuple[int, str]] = {}
    for answer in sorted(answers, key=lambda a: a.pk):
        number, nickname = out.get(answer.viewer, (len(out) + 1, ""))
        out[answer.viewer] = (number, answer.nickname or nickname)
    return out


def _question(question: Question, answers: list[Answer], viewers: dict[str, tuple[int, str]]) -> dict[str, Any]:
    document = questions.question_document(question)
    revealed = question.status == QuestionStatus.REVEALED
    correct = _correct(question, document, revealed)
    responses: list[dict[str, Any]] = []
    for answer in answers:
        number, nickname = viewers[answer.viewer]
        value = questions.answer_value(answer)
        responses.append({"viewer": number, "nickname": nickname or None, "answer": value,
                          "text": answer_text(document, value), "right": questions.answer_is_right(question, answer)})
    judged: list[bool] = [r["right"] for r in responses if r["right"] is not None]
    tally = questions.tally(question)
    entry: dict[str, Any] = {
        **questions.public_question(document),
        "step": question.step,
        "status": question.status,  # "open": not revealed yet; the answer is given all the same (the trainer's)
        "asked_at": question.asked_at,
        "revealed_at": question.revealed_at,
        "correct": correct,
        "correct_text": answer_text(document, correct) if correct else None,
        "answers": len(responses),
        "distribution": tally["counts"],
        "right": None if responses and not judged else sum(judged),  # None: the run cannot tell yet
        "share_right": round(sum(judged) / len(judged), 4) if judged else None,
        "responses": responses,
    }
    if "nodes" in tally:
        entry["distribution_nodes"] = tally["nodes"]
    if document.get("tolerance"):
        entry["tolerance"] = document["tolerance"]
    return entry


def _correct(question: Question, document: dict, revealed: bool) -> dict[str, Any] | None:
    """The right answer shaped as an answer: as revealed, or (still open) as the document says."""
    summary = questions.reveal_summary(question) if revealed else {"correct": document.get("answer"),
                                                                  "node": document.get("node")}
    right = summary.get("correct")
    if right is None:
        return None
    if document["kind"] == "number":
        return {"value": float(right)}
    if isinstance(right, list):
        return {"order": right}
    return {"choice": right, **({"node": summary["node"]} if summary.get("node") else {})}


def answer_text(document: dict, value: dict[str, Any]) -> dict[str, str]:
    """An answer in words, {en, zh}: the choice's text, the items' texts in order, or the number."""
    if "value" in value:
        text = f"{value['value']:g} {document.get('unit') or ''}".strip()
        return {"en": text, "zh": text}
    if "order" in value:
        texts = {item["id"]: item["text"] for item in document.get("items") or ()}
        return {lang: " > ".join(texts.get(i, {}).get(lang) or str(i) for i in value["order"]) for lang in ("en", "zh")}
    texts = {choice["id"]: choice["text"] for choice in document.get("choices") or ()}
    node = f" · {value['node']}" if value.get("node") else ""
    chosen = texts.get(value.get("choice"), {})
    return {lang: f"{chosen.get(lang) or value.get('choice', '')}{node}" for lang in ("en", "zh")}


def answer_code(value: dict[str, Any] | None) -> str:
    """An answer in one cell: ``not-ready``, ``50``, ``cause-2@node-3``, ``a>b>c``."""
    if not value:
        return ""
    if "value" in value:
        return f"{value['value']:g}"
    if "order" in value:
        return ">".join(value["order"])
    return value.get("choice", "") + (f"@{value['node']}" if value.get("node") else "")


def csv_text(report: dict[str, Any]) -> str:
    """One row per question and viewer who answered it, after a header (UTF-8 with a byte-order
    mark, so that spreadsheet programs read Chinese nicknames right)."""
    out = io.StringIO()
    out.write("\ufeff")
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for position, q in enumerate(report["questions"], start=1):
        for r in q["responses"]:
            writer.writerow([position, q["id"], q["kind"], q["status"], q["text"]["en"], q["text"]["zh"],
                             answer_code(q["correct"]), r["viewer"], r["nickname"] or "",
                             answer_code(r["answer"]), r["text"]["en"], r["text"]["zh"],
                             {True: "yes", False: "no", None: ""}[r["right"]]])
    return out.getvalue()
