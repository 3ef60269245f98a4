"""No answer before its question: nothing a class reads before a question's reveal gives its answer.

Before a question is revealed the class has seen the lesson's title and summary, the texts of the
steps up to the question's own step, the earlier questions with their choices and `explain` texts,
and the question itself. None of these may hold the answer: for a number question the answer (or a
number within its tolerance, or whole minutes of it), for a choice question the right choice's text,
for an order question two or more of its events named in the run's order.
A drill's title and brief are read before the class picks a cause: they must not name it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from simulation.lessons import builtin_drills, builtin_lessons, run_lesson

LANGS = ("en", "zh")
LESSONS = builtin_lessons()
DRILLS = builtin_drills()

# A number token: not part of a longer number ("1.33", "3600"), nor of a name ("node-10", "v1").
NUMBER = re.compile(r"(?<![A-Za-z0-9_.\-])\d+(?:\.\d+)?(?![\d]|\.\d)")
# A time point ("t≈110 s", "t=60 s", "第 110 秒"), not a duration: only the exact answer is banned there.
TIME_POINT = re.compile(r"(?:\bt\s*[=≈~]\s*|第\s*)$")
# What may follow a number of seconds: a time unit, punctuation, the end. "10 nodes", "10 个节点" or
# "60 %" count something else.
SECONDS_AFTER = re.compile(r"\s*(?:$|[^\w\s%]|(?:s|sec|secs|second|seconds|min|mins|minute|minutes)\b|秒|分钟)")
ZH_DIGITS = "零一二三四五六七八九十"


def seen_before(lesson, step_index: int) -> Iterator[tuple[str, dict[str, str]]]:
    """(where, text) of everything shown before the reveal of the question of step `step_index`."""
    doc = lesson.document
    yield "title", doc["title"]
    yield "summary", doc["summary"]
    for i, step in enumerate(doc["steps"][:step_index + 1]):
        yield f"steps[{i}] {step['id']}", step["text"]
        q = step.get("question")
        if q is None:
            continue
        yield f"question {q['id']}", q["text"]
        if i == step_index:
            continue  # the question itself: its own choices (or events) are the answers to pick from
        for ch in (*q.get("choices", ()), *q.get("items", ())):
            yield f"question {q['id']} choice {ch['id']}", ch["text"]
        if q.get("explain"):
            yield f"question {q['id']} explain", q["explain"]


def questions(lesson) -> Iterator[tuple[int, dict]]:
    for i, step in enumerate(lesson.document["steps"]):
        if step.get("question"):
            yield i, step["question"]


def number_leaks(text: str, answer: float, tolerance: float, lang: str) -> list[str]:
    """The places in `text` that give away the number `answer` (seconds when it is a duration)."""
    out = []
    for m in NUMBER.finditer(text):
        if not SECONDS_AFTER.match(text, m.end()):
            continue
        value = float(m.group())
        exact = abs(value - answer) < 1e-9
        near = abs(value - answer) <= tolerance + 1e-9 and not TIME_POINT.search(text[:m.start()])
        if exact or near:
            out.append(text[max(0, m.start() - 30):m.end() + 10])
    if answer >= 60 and answer % 60 == 0:  # "5 minutes" is 300 s
        minutes = int(answer // 60)
        words = [rf"(?<![\d.]){minutes}\s*(?:min|minute|minutes)\b" if lang == "en"
                 else rf"(?<![\d.]){minutes}\s*分钟"]
        if lang == "zh" and minutes <= 10:
            words.append(rf"(?<![{ZH_DIGITS}]){ZH_DIGITS[minutes]}\s*分钟")
        for w in words:
            out += [text[max(0, m.start() - 30):m.end() + 10] for m in re.finditer(w, text)]
    return out


def normalise(text: str) -> str:
    """Lower case, punctuation and spaces folded into single spaces."""
    return " ".join(re.sub(r"[^\w]+", " ", text.lower()).split())


def phrase_in(phrase: str, text: str) -> bool:
    """Whether `phrase` occurs in `text` as a whole phrase (Latin words whole; Chinese as written)."""
    p, t = normalise(phrase), normalise(text)
    if not p:
        return False
    if re.search(r"[\u4e00-\u9fff]", p):
        return p in t
    return re.search(rf"(?<![a-z0-9]){re.escape(p)}(?![a-z0-9])", t) is not None


def phrase_at(phrase: str, text: str) -> int | None:
    """Where `phrase` starts in `text` (normalised as `phrase_in` does), or None."""
    p, t = normalise(phrase), normalise(text)
    if not p:
        return None
    if re.search(r"[\u4e00-\u9fff]", p):
        found = t.find(p)
        return None if found < 0 else found
    m = re.search(rf"(?<![a-z0-9]){re.escape(p)}(?![a-z0-9])", t)
    return None if m is None else m.start()


def order_leak(items: dict[str, str], order: list[str], text: str) -> list[str] | None:
    """The ids of the events `text` names (two or more), when it names them in the run's `order`."""
    places = {item: phrase_at(items[item], text) for item in order}
    named = sorted((at, item) for item, at in places.items() if at is not None)
    if len(named) < 2:
        return None
    said = [item for _at, item in named]
    return said if said == [item for item in order if places[item] is not None] else None


def run_order(lesson, q: dict) -> list[str]:
    """An order question's right order: its `answer`, else what a headless run shows."""
    return q["answer"] or run_lesson(lesson).question(q["id"])["order"]


def lesson_leaks(lesson) -> list[str]:
    problems = []
    for step_index, q in questions(lesson):
        order = run_order(lesson, q) if q["kind"] == "order" else []
        for where, text in seen_before(lesson, step_index):
            for lang in LANGS:
                if q["kind"] == "order":
                    said = order_leak({it["id"]: it["text"][lang] for it in q["items"]}, order, text[lang])
                    if said:
                        problems.append(f"{lesson.name} / question {q['id']} ({lang}): {where} names {said} "
                                        f"in the run's order: {text[lang]}")
                elif q["kind"] == "number":
                    for hit in number_leaks(text[lang], float(q["answer"]), float(q.get("tolerance") or 0), lang):
                        problems.append(f"{lesson.name} / question {q['id']} ({lang}): answer {q['answer']} "
                                        f"in {where}: ...{hit}...")
                else:
                    right = next(ch for ch in q["choices"] if ch["id"] == q["answer"])["text"][lang]
                    if phrase_in(right, text[lang]):
                        problems.append(f"{lesson.name} / question {q['id']} ({lang}): right choice "
                                        f"{right!r} in {where}: {text[lang]}")
    return problems


@pytest.mark.parametrize("lesson", LESSONS, ids=[x.name for x in LESSONS])
def test_no_answer_before_its_question(lesson):
    problems = lesson_leaks(lesson)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("drill", DRILLS, ids=[x.name for x in DRILLS])
def test_a_drill_does_not_name_its_cause(drill):
    doc = drill.document
    right = next(ch for ch in doc["choices"] if ch["id"] == doc["answer"])["text"]
    problems = []
    for field in ("title", "brief"):
        for lang in LANGS:
            for name, phrase in (("right choice", right[lang]), ("fault action", drill.fault["action"])):
                if phrase_in(phrase, doc[field][lang]):
                    problems.append(f"{drill.name} {field} ({lang}) names the {name} {phrase!r}: {doc[field][lang]}")
    assert not problems, "\n".join(problems)


# -- the checks themselves ----------------------------------------------------------------------


def test_number_leaks_are_found_and_names_are_not():
    assert number_leaks("renewed every 10 s", 10, 0, "en")
    assert number_leaks("from 10.24 s", 10, 0.5, "en")  # within the tolerance
    assert number_leaks("every 5 minutes", 300, 11, "en") and number_leaks("每 5 分钟", 300, 11, "zh")
    assert number_leaks("五分钟后", 300, 0, "zh")
    assert not number_leaks("node-10, v1.10 and 1.33 and 110 s", 10, 0.5, "en")
    assert not number_leaks("zones of 10 nodes, 10 个节点, 10 %", 10, 0, "en")
    assert number_leaks("within 10 秒内", 10, 0, "zh") and number_leaks("(10).", 10, 0, "en")
    assert not number_leaks("at t≈105 s", 100, 10, "en")  # a time point near a duration answer
    assert number_leaks("at t≈100 s", 100, 10, "en")  # ... but never the answer itself
    assert not number_leaks("15 minutes", 300, 0, "en")


def test_an_order_is_a_leak_only_in_the_runs_order():
    items = {"a": "Ready becomes Unknown", "b": "the NoExecute taint", "c": "pods deleted"}
    order = ["a", "b", "c"]
    assert order_leak(items, order, "First Ready becomes Unknown, then the NoExecute taint comes.") == ["a", "b"]
    assert order_leak(items, order, "Pods deleted, then Ready becomes Unknown.") is None  # the wrong way round
    assert order_leak(items, order, "Ready becomes Unknown; nothing else.") is None  # one event says no order
    assert order_leak({"a": "变为 Unknown", "b": "加上污点"}, ["a", "b"], "先变为 Unknown，再加上污点。") == ["a", "b"]


def test_choice_phrases_match_whole():
    assert phrase_in("Never evict it", "It will never evict it, ever.")
    assert not phrase_in("never", "nevertheless")
    assert phrase_in("memory-pressure:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule follows")
    assert phrase_in("被取消", "倒计时被取消了")
    assert phrase_in("stop-kubelet", "Somebody stopped... no: stop kubelet")
