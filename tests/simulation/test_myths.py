"""Myth against fact (simulation/lessons/myths.yaml): the shipped file and its validation."""

from __future__ import annotations

import copy
import re

import pytest

from simulation import Simulation, get_builtin
from simulation.lessons import LessonError, get_lesson
from simulation.lessons.myths import MYTHS_FILE, MythError, builtin_myths, load_myths

from .test_lessons import assert_rejected

HAN = re.compile(r"[\u4e00-\u9fff]")

# The corrections every version of the page must keep (the usual explanations they answer).
REQUIRED_MYTHS = {
    "lifecycle-controller-evicts", "lease-duration-decides", "grace-period-40s", "kubectl-shows-unknown",
    "one-taint-per-state", "pods-deleted-at-notready", "pod-eviction-timeout", "node-owns-the-300s", "one-heartbeat",
    "endpoints-removed", "pressure-makes-notready", "eviction-rate-per-pod", "small-clusters-never-evict",
    "taints-stay-after-recovery",
}


def entries():
    book = builtin_myths()
    return [*book.myths, *book.questions]


def texts(entry) -> dict[str, dict[str, str]]:
    names = ("myth", "fact") if hasattr(entry, "fact") else ("question", "usual", "answer")
    return {name: getattr(entry, name) for name in names}


def test_the_shipped_file_has_the_myths_and_the_interview_questions():
    book = builtin_myths()
    assert len(book.myths) >= 10
    assert {m.id for m in book.myths} >= REQUIRED_MYTHS
    assert len(book.questions) == 6  # the write-up's Q1-Q6
    ids = [e.id for e in entries()]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e.id)
def test_every_text_is_in_both_languages(entry):
    for name, text in texts(entry).items():
        assert text["en"].strip() and text["zh"].strip(), name
        assert not HAN.search(text["en"]), f"{name}.en has Chinese: {text['en']}"
        assert len(HAN.findall(text["zh"])) >= 3, f"{name}.zh is not Chinese: {text['zh']}"
    assert entry.sources and all(s.endswith(".go") and not s.startswith(("/", "http")) for s in entry.sources)


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e.id)
def test_every_link_resolves(entry):
    see = entry.see
    if see.kind == "lesson":
        lesson = get_lesson(see.lesson)
        assert lesson is not None
        assert [s.id for s in lesson.steps][see.step_index] == see.step
        assert see.step_count == len(lesson.steps) and see.scenario == lesson.scenario.name
        assert see.run_body() == {"lesson": see.lesson}
    else:
        scenario = get_builtin(see.scenario)
        assert scenario is not None
        assert 0 <= see.at <= scenario.duration
        assert see.run_body() == {"scenario": see.scenario}


def test_scenario_links_point_at_a_moment_where_something_happens():
    """Each scenario link's time is within a few seconds of a node, taint or pod transition."""
    for entry in entries():
        see = entry.see
        if see.kind != "scenario":
            continue
        sim = Simulation(get_builtin(see.scenario))
        events = [e.to_dict() for e in sim.run_until(see.at + 5)]
        near = [e for e in events if e["type"] == "transition" and see.at - 5 <= e["t"] <= see.at + 5]
        assert near, f"{entry.id}: nothing happens near t={see.at} in {see.scenario}"


def document():
    """A small valid myths document."""
    return {
        "myths": [
            {"id": "one", "myth": {"en": "M", "zh": "误"}, "fact": {"en": "F", "zh": "实"},
             "sources": ["pkg/controller/nodelifecycle/node_lifecycle_controller.go"],
             "see": {"lesson": "kubelet-crash-walkthrough", "step": "unknown"}},
            {"id": "two", "myth": {"en": "M", "zh": "误"}, "fact": {"en": "F", "zh": "实"},
             "sources": ["pkg/controller/tainteviction/taint_eviction.go"],
             "see": {"scenario": "kubelet-crash", "at": "415s"}},
        ],
        "questions": [
            {"id": "q", "question": {"en": "Q?", "zh": "问？"}, "usual": {"en": "U", "zh": "常"},
             "answer": {"en": "A", "zh": "答"}, "sources": ["pkg/kubelet/kubelet_node_status.go"],
             "see": {"lesson": "two-heartbeats", "step": "report"}},
        ],
    }


def changed(path: str, value):
    """document() with the field at `path` (e.g. "myths[1].see.at") set, or removed for ...."""
    doc = copy.deepcopy(document())
    *parents, last = re.findall(r"[^.\[\]]+", path)
    target = doc
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    key = int(last) if last.isdigit() else last
    if value is ...:
        del target[key]
    else:
        target[key] = value
    return doc


BAD = [
    (changed("myths[0].see.lesson", "no-such-lesson"), "myths[0].see.lesson", "no built-in lesson"),
    (changed("myths[0].see.step", "no-such-step"), "myths[0].see.step", "has no step"),
    (changed("myths[0].see.step", ...), "myths[0].see.step", "is required"),
    (changed("myths[0].see.at", "30s"), "myths[0].see.at", "belongs to a scenario link"),
    (changed("myths[1].see.scenario", "no-such-scenario"), "myths[1].see.scenario", "no built-in scenario"),
    (changed("myths[1].see.at", "13m"), "myths[1].see.at", "at most"),
    (changed("myths[1].see.at", "soon"), "myths[1].see.at", "duration"),
    (changed("myths[1].see.at", ...), "myths[1].see.at", "is required"),
    (changed("myths[1].see.step", "unknown"), "myths[1].see.step", "belongs to a lesson link"),
    (changed("myths[1].see.lesson", "two-heartbeats"), "myths[1].see", "exactly one"),
    (changed("myths[1].see", ...), "myths[1].see", "is required"),
    (changed("myths[0].fact.zh", ""), "myths[0].fact.zh", "is required"),
    (changed("myths[0].myth", "just text"), "myths[0].myth", "'en' and 'zh'"),
    (changed("myths[1].fact", ...), "myths[1].fact", "non-empty 'en' and 'zh'"),
    (changed("myths[1].id", "one"), "myths[1].id", "duplicate id"),
    (changed("myths[0].id", "Not A Slug"), "myths[0].id", "slug"),
    (changed("myths[0].colour", "red"), "myths[0].colour", "unknown field"),
    (changed("myths[0].sources", []), "myths[0].sources", "non-empty list"),
    (changed("myths[0].sources", ["https://github.com/kubernetes/kubernetes/blob/master/pkg/kubelet/kubelet.go"]),
     "myths[0].sources[0]", "file path in the Kubernetes tree"),
    (changed("myths[0].sources", ["../pkg/kubelet/kubelet.go"]), "myths[0].sources[0]", "file path"),
    (changed("questions[0].usual.en", " "), "questions[0].usual.en", "is required"),
    (changed("questions[0].answer", ...), "questions[0].answer", "non-empty 'en' and 'zh'"),
    (changed("questions[0].id", "two"), "questions[0].id", "duplicate id"),
    (changed("questions[0].see.step", "boot-up"), "questions[0].see.step", "has no step"),
    (changed("questions", "none"), "questions", "list"),
    (changed("extra", 1), "extra", "unknown field"),
]


@pytest.mark.parametrize(("doc", "path", "words"), BAD, ids=[f"{b[1]}:{b[2]}" for b in BAD])
def test_a_bad_entry_is_rejected_with_its_field_named(doc, path, words):
    assert_rejected(load_myths, doc, path, words)
    with pytest.raises(MythError):
        load_myths(doc)


def test_every_problem_is_reported_at_once_and_is_a_lesson_error():
    doc = changed("myths[0].see.step", "nope")
    doc["myths"][1]["see"]["at"] = "2h"
    doc["questions"][0]["question"] = {"en": "Q?"}
    with pytest.raises(LessonError) as info:
        load_myths(doc)
    assert {"myths[0].see.step", "myths[1].see.at", "questions[0].question.zh"} <= {p for p, _m in info.value.errors}


def test_a_valid_document_loads_from_text_and_from_the_shipped_path():
    book = load_myths(document())
    assert [m.id for m in book.myths] == ["one", "two"]
    assert book.myths[0].see.step_index == 2 and book.myths[1].see.at == 415.0
    assert load_myths(MYTHS_FILE.read_text(encoding="utf-8")) == builtin_myths()
    with pytest.raises(MythError, match="must be a mapping"):
        load_myths("- just\n- a list\n")
