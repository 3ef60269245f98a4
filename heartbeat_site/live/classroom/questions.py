"""Lessons and drills in live runs (docs/lessons.md): what viewers may be told, and the answers.

The lesson's steps run in the run's driver, in the Celery worker (``teaching.py``, with
``simulation.lessons.LessonRun``); this module keeps the rest: the public form of lessons, drills and questions
(never their answers before the reveal), answers stored per viewer and question, tallies and reveals. It runs
in the web process (the REST API, the websocket consumer, exports and the report) and in the driver too, which
hides a drill's cause from what it publishes with it (``viewer_event``, ``viewer_snapshot``) and tallies and
reveals through it.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.db import IntegrityError

from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Answer, Question, QuestionStatus, Run
from simulation.lessons import (
    Drill,
    Lesson,
    builtin_drills,
    builtin_lessons,
    get_drill,
    get_lesson,
    hide_cause,
    hide_in_snapshot,
    in_place,
    order_fits,
    run_order,
    shown_order,
)

DIAGNOSIS = "diagnosis"  # the question id of a drill's diagnosis
MAX_VIEWER_ID = 64
MAX_NICKNAME = 40
NUMBER_BUCKETS = 8  # a number question's tally groups answers in at most this many ranges
ORDER_SEPARATOR = ">"  # an order question's tally counts each whole order given, as "a>b>c"


# -- what viewers may see ---------------------------------------------------------------------


def public_question(document: dict) -> dict:
    """A question as pages show it: no answer, evidence, measure, matcher or explanation."""
    out: dict[str, Any] = {"id": document["id"], "kind": document["kind"], "text": document["text"]}
    if document["kind"] == "choice":
        out["choices"] = [{"id": c["id"], "text": c["text"]} for c in document["choices"]]
    elif document["kind"] == "order":  # shuffled, never in the right order; no matcher
        texts = {item["id"]: item["text"] for item in document["items"]}
        out["items"] = [{"id": item, "text": texts[item]} for item in shown_order(document)]
    elif document.get("unit"):
        out["unit"] = document["unit"]
    return out


def public_step(document: dict, index: int) -> dict:
    """A step as pages show it: its text, its page actions, and its question without the answer."""
    out: dict[str, Any] = {"id": document["id"], "index": index, "text": document["text"]}
    out["actions"] = [a for a in document.get("actions") or ()
                      if a["action"] in ("focus", "tab", "pause", "resume", "speed")]
    if document.get("question"):
        out["question"] = public_question(document["question"])
    return out


def lesson_listing(lesson: Lesson) -> dict:
    doc = lesson.document
    return {
        "name": lesson.name,
        "position": lesson.position,
        "title": lesson.title,
        "summary": doc.get("summary"),
        "scenario": lesson.scenario.name,
        "comparison": lesson.comparison,  # a comparison lesson: each side's settings (docs/lessons.md)
        "steps": [public_step(step, i) for i, step in enumerate(doc["steps"])],
        "questions": [public_question(step["question"]) for step in doc["steps"] if step.get("question")],
    }


def drill_listing(drill: Drill) -> dict:
    public = drill.public_document
    return {
        "name": drill.name,
        "position": drill.position,
        "title": drill.title,
        "brief": public.get("brief"),
        "choices": diagnosis_question(drill)["choices"],
        "nodes": public["nodes"],
    }


def diagnosis_question(drill: Drill) -> dict:
    """A drill's diagnosis as a question: the cause (a choice) and the node.

    The choices go out as ``cause-1``, ``cause-2``...: their own ids are fault actions, and the
    right one must not be named to anyone before the reveal."""
    return {"id": DIAGNOSIS, "kind": "diagnosis", "text": drill.document["brief"],
            "choices": [{"id": cause_id(i), "text": c["text"]} for i, c in enumerate(drill.document["choices"])],
            "nodes": drill.document["nodes"]}


def cause_id(index: int) -> str:
    return f"cause-{index + 1}"


def public_cause(drill: Drill, cause: str) -> str:
    """The public id of one of a drill's causes."""
    return next(cause_id(i) for i, c in enumerate(drill.document["choices"]) if c["id"] == cause)


def lessons() -> list[dict]:
    return [lesson_listing(lesson) for lesson in builtin_lessons()]


def drills() -> list[dict]:
    return [drill_listing(drill) for drill in builtin_drills()]


def lesson_of(run: Run) -> Lesson:
    """The lesson of a lesson run (``run.lesson`` was checked by ``find_lesson`` when it started)."""
    lesson = get_lesson(run.lesson) if run.lesson else None
    if lesson is None:
        raise LookupError(f"run {run.pk} names no built-in lesson ({run.lesson!r})")
    return lesson


def drill_of(run: Run) -> Drill:
    """The drill of a drill run (``run.drill`` was checked by ``find_drill`` when it started)."""
    drill = get_drill(run.drill) if run.drill else None
    if drill is None:
        raise LookupError(f"run {run.pk} names no built-in drill ({run.drill!r})")
    return drill


def find_lesson(name: object) -> Lesson:
    return _find("lesson", name, get_lesson, builtin_lessons)


def find_drill(name: object) -> Drill:
    return _find("drill", name, get_drill, builtin_drills)


def _find(kind: str, name: object, get, catalogue):
    found = get(name) if isinstance(name, str) else None
    if found is None:
        known = ", ".join(item.name for item in catalogue())
        raise ApiError(404, f"unknown-{kind}",
                       f"{kind}: no {kind} named {name!r}; GET /api/{kind}s lists them ({known})")
    return found


# -- drills: the cause stays hidden until the reveal ---------------------------------------------


def hides_cause(run: Run) -> bool:
    return bool(run.drill) and not run.revealed


def hidden(event: dict) -> dict:
    """What a viewer gets instead of an event that names a drill's cause: its place in the stream."""
    return {"seq": event["seq"], "t": event["t"], "time": event.get("time"), "type": "hidden", "component": None,
            "node": None}


def viewer_event(event: dict) -> dict:
    """An event as a viewer of an unrevealed drill may see it."""
    shown = hide_cause(event)
    return hidden(event) if shown is None else shown


def viewer_snapshot(snapshot: dict) -> dict:
    return hide_in_snapshot(snapshot)


# -- answers and tallies ----------------------------------------------------------------------


def record_answer(run_id: str, message: dict) -> dict:
    """Store a viewer's answer (replacing their earlier one) while the question is open.

    ``message``: ``{"question", "viewer", "choice" | "value", "node" (drills), "nickname"}``.
    Returns the ack for the viewer; raises ApiError naming the problem otherwise.
    """
    qid, viewer = message.get("question"), message.get("viewer")
    if not isinstance(qid, str) or not qid:
        raise ApiError(400, "bad-answer", 'an answer needs "question": the id of the question asked')
    if not isinstance(viewer, str) or not 1 <= len(viewer) <= MAX_VIEWER_ID:
        raise ApiError(400, "bad-answer",
                       f'an answer needs "viewer": the random id the page keeps (1 to {MAX_VIEWER_ID} characters)')
    nickname = message.get("nickname") or ""
    if not isinstance(nickname, str) or len(nickname) > MAX_NICKNAME:
        raise ApiError(400, "bad-answer", f"nickname: a text of at most {MAX_NICKNAME} characters")
    question = Question.objects.filter(run_id=run_id, qid=qid).select_related("run").first()
    if question is None:
        raise ApiError(404, "unknown-question", f"question {qid!r} has not been asked in this run")
    if question.status != QuestionStatus.OPEN:
        raise ApiError(409, "question-closed", f"question {qid!r} has been revealed: answers are closed")
    fields = _answer_fields(question, message)
    with contextlib.suppress(IntegrityError):  # the same viewer from two tabs at once: the other one won
        Answer.objects.update_or_create(question=question, viewer=viewer, defaults={**fields, "nickname": nickname})
    return {"type": "answer-ack", "question": qid, **{k: v for k, v in fields.items() if v not in ("", None)}}


def _answer_fields(question: Question, message: dict) -> dict:
    document = question_document(question)
    if document["kind"] == "number":
        value = message.get("value")
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value or abs(value) > 1e9:
            raise ApiError(400, "bad-answer", f'question {question.qid!r} takes a number: "value"')
        return {"value": float(value), "choice": "", "node": "", "order": None}
    if document["kind"] == "order":
        ids = [item["id"] for item in document["items"]]
        order = message.get("order")
        if not isinstance(order, list) or len(order) != len(ids) or sorted(map(str, order)) != sorted(ids) \
                or not all(isinstance(item, str) for item in order):
            raise ApiError(400, "bad-answer", f'question {question.qid!r} takes "order": a list of every item id once, '
                                              f'first to last ({", ".join(ids)}); got {order!r}')
        return {"order": order, "choice": "", "node": "", "value": None}
    choices = [c["id"] for c in document["choices"]]
    choice = message.get("choice")
    if choice not in choices:
        raise ApiError(400, "bad-answer", f'"choice" must be one of {", ".join(choices)}; got {choice!r}')
    node = ""
    if document["kind"] == "diagnosis":
        named = message.get("node")
        if not isinstance(named, str) or named not in document["nodes"]:
            raise ApiError(400, "bad-answer",
                           f'a diagnosis names a "node" too: one of {", ".join(document["nodes"])}; got {named!r}')
        node = named
    return {"choice": choice, "node": node, "value": None, "order": None}


def question_document(question: Question) -> dict:
    """The full question (answer included) a Question row stands for."""
    run = question.run
    if run.drill:
        drill = drill_of(run)
        return {**diagnosis_question(drill), "answer": public_cause(drill, drill.answer),
                "node": drill.node}
    lesson = lesson_of(run)
    for step in lesson.document["steps"]:
        if step.get("question") and step["question"]["id"] == question.qid:
            return step["question"]
    raise LookupError(f"lesson {run.lesson} has no question {question.qid}")


def tally(question: Question) -> dict:
    """How many answered, and how: counts per choice, per node (diagnosis), per range of numbers,
    or (order) per whole order given ("a>b>c") with, per item, how many put it at each place."""
    answers = list(question.answers.values_list("choice", "node", "value", "order"))
    document = question_document(question)
    counts: dict[str, int] = {}
    out: dict[str, Any] = {"type": "tally", "question": question.qid, "answers": len(answers)}
    if document["kind"] == "number":
        counts = _number_buckets([value for _, _, value, _ in answers if value is not None])
    elif document["kind"] == "order":
        ids = [item["id"] for item in document["items"]]
        positions = {item: [0] * len(ids) for item in ids}
        for *_, order in answers:
            if order:
                key = ORDER_SEPARATOR.join(order)
                counts[key] = counts.get(key, 0) + 1
                for place, item in enumerate(order):
                    positions[item][place] += 1
        out["positions"] = positions
    else:
        for choice in document["choices"]:
            counts[choice["id"]] = 0
        for choice, _, _, _ in answers:
            counts[choice] = counts.get(choice, 0) + 1
    out["counts"] = counts
    if document["kind"] == "diagnosis":
        nodes: dict[str, int] = dict.fromkeys(document["nodes"], 0)
        for _, node, _, _ in answers:
            nodes[node] = nodes.get(node, 0) + 1
        out["nodes"] = nodes
    return out


# -- order questions: the run's order against the class's --------------------------------------


def order_times(document: dict, happened: dict | None) -> dict[str, float] | None:
    """The time each item counts at: the run's, once every item has happened; else the places of
    the document's `answer` (a question revealed before its events); None when neither is known."""
    if happened and all(happened.get(item["id"]) for item in document["items"]):
        return {item: ref["t"] for item, ref in happened.items()}
    if document.get("answer"):
        return {item: float(place) for place, item in enumerate(document["answer"])}
    return None


def order_reveal(question: Question, happened: dict) -> dict:
    """What a reveal says about an order question: the right order with each item's event
    ({seq, t}, or null while still to come, with the matcher pages wait for), and how the class did."""
    document = question_document(question)
    times = order_times(document, happened)
    everything = all(happened.get(item["id"]) for item in document["items"])
    correct = run_order(happened) if everything else document.get("answer")
    matchers = {item["id"]: item["match"] for item in document["items"]}
    items = [{"id": item, "event": happened.get(item), "match": matchers[item]} for item in correct or matchers]
    answers = [order for (order,) in question.answers.values_list("order") if order]
    places = dict.fromkeys(matchers, 0)
    right = 0
    if times is not None:
        for order in answers:
            right += order_fits(order, times)
            for item, ok in zip(order, in_place(order, times), strict=True):
                places[item] += ok
    return {"correct": correct, "items": items, "answers": len(answers), "right": right if times else None,
            "share": round(right / len(answers), 4) if times and answers else None,
            "in_place": places if times else None}


def answer_value(answer: Answer) -> dict:
    """A stored answer as the viewer sent it: {"choice"} (+ "node"), {"value"} or {"order"}."""
    if answer.order is not None:
        return {"order": answer.order}
    if answer.value is not None:
        return {"value": answer.value}
    return {"choice": answer.choice, **({"node": answer.node} if answer.node else {})}


def answer_is_right(question: Question, answer: Answer) -> bool | None:
    """Whether an answer is the right one (None while the run cannot tell: an order question
    before its reveal). Order: items of the same instant may come in either order."""
    document = question_document(question)
    if document["kind"] == "order":
        times = order_times(document, question.happened)
        return None if times is None or answer.order is None else order_fits(answer.order, times)
    if document["kind"] == "number":
        return answer.value is not None and abs(answer.value - float(document["answer"])) <= \
            float(document.get("tolerance") or 0) + 1e-9
    return answer.choice == document["answer"] and (document["kind"] != "diagnosis" or answer.node == document["node"])


def _number_buckets(values: list[float]) -> dict[str, int]:
    """Answers grouped in ranges of round width, labelled "40-50" (or one value: "50")."""
    if not values:
        return {}
    low, high = min(values), max(values)
    if low == high:
        return {f"{low:g}": len(values)}
    width = next(w for w in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**4, 10**5, 10**6, 10**9)
                 if (high - low) / w < NUMBER_BUCKETS)
    counts: dict[str, int] = {}
    for value in sorted(values):
        start = (value // width) * width
        label = f"{start:g}-{start + width:g}"
        counts[label] = counts.get(label, 0) + 1
    return counts


# -- a (re)joining page: where the lesson or drill is ----------------------------------------------


def state_message(run_id: str) -> dict | None:
    """``{"type": "lesson", ...}`` for a page that joins a lesson or drill run: the lesson (or
    drill) as the class sees it, the step reached, the open question with its tally, and the
    answers of the questions already revealed. None for a plain run."""
    run = Run.objects.filter(pk=run_id).first()
    if run is None or not (run.lesson or run.drill):
        return None
    questions = list(Question.objects.filter(run=run).select_related("run"))
    open_question = next((q for q in questions if q.status == QuestionStatus.OPEN), None)
    revealed = [reveal_summary(q) for q in questions if q.status == QuestionStatus.REVEALED]
    message: dict[str, Any] = {"type": "lesson", "revealed": revealed}
    if run.lesson:
        lesson = lesson_of(run)
        message["lesson"] = lesson_listing(lesson)
        message["steps_started"] = run.steps_started
        if run.steps_started:
            message["step"] = public_step(lesson.document["steps"][run.steps_started - 1], run.steps_started - 1)
        if open_question is not None:
            message["question"] = public_question(question_document(open_question))
    else:
        drill = drill_of(run)
        message["drill"] = drill_listing(drill)
        if open_question is not None:
            message["question"] = diagnosis_question(drill)
    if open_question is not None:
        message["tally"] = tally(open_question)
    return message


def reveal_summary(question: Question) -> dict:
    """A revealed question for a page that joins later: enough to tell whether its own answer was
    right (a number's tolerance too: a learner alone counts their score from it)."""
    document = question_document(question)
    out = {"question": question.qid, "correct": document["answer"],
           "explain": document.get("explain") or document.get("explanation")}
    if document["kind"] == "number":
        out["tolerance"] = document.get("tolerance", 0)
    if document["kind"] == "diagnosis":
        drill = drill_of(question.run)
        out.update(node=drill.node, explain=drill.document.get("explanation"))
    elif document["kind"] == "order":
        out.update(order_reveal(question, question.happened or {}), kind="order")
    elif document.get("evidence"):
        # the event that settles it, as a matcher: a page that joins later finds it among the events since the
        # question was asked (or the run's, `since: start`), as a page that watched got it from the reveal
        out["evidence"] = {"match": document["evidence"],
                           "after": 0.0 if document.get("since") == "start" else question.asked_at}
    return out
