"""Comparison lessons (docs/lessons.md "Comparison lessons"): two sides on one clock, matchers that name a side."""

from __future__ import annotations

import copy

import pytest

from simulation.lessons import LessonRun, get_lesson, load_lesson, run_lesson
from tests.simulation.test_lessons import assert_rejected, lesson


def comparison_lesson(**extra):
    """The small test lesson as a comparison: 1.31 on side a, 1.33 on side b; a question across sides."""
    doc = lesson(comparison={"a": {"kubernetesVersion": "1.31"}, "b": {"kubernetesVersion": "1.33"}})
    doc["steps"][2]["question"].update(measure={
        "from": {"side": "a", "type": "transition", "kind": "node-ready", "node": "node-2", "to": "Unknown"},
        "to": {"side": "b", "type": "transition", "kind": "node-ready", "node": "node-2", "to": "Unknown"}},
        answer=10, tolerance=1)
    doc["steps"][2]["trigger"] = {"event": {"side": "a", "type": "transition", "kind": "node-ready", "to": "Unknown"}}
    doc.update(extra)
    return doc


def test_the_versions_lesson_compares_1_31_with_1_33_on_one_seed():
    versions = get_lesson("versions")
    a, b = versions.sides
    assert (a.version, b.version) == ((1, 31), (1, 33)) or (str(a.version), str(b.version)) == ("1.31", "1.33")
    assert a.seed == b.seed == versions.scenario.seed
    assert a.document["controllerManager"].get("nodeMonitorGracePeriod") in (None, "40s")
    tr = run_lesson(versions)
    assert not tr.missing_steps
    crash = tr.question("notready-131")
    assert crash["measured"] == pytest.approx(40.2, abs=0.05)
    assert crash["measure_from"]["side"] == crash["measure_to"]["side"] == "a"
    gap = tr.question("notready-gap")  # measured across the sides: a's NotReady to b's
    assert gap["measured"] == pytest.approx(10.0, abs=0.1)
    assert (gap["measure_from"]["side"], gap["measure_to"]["side"]) == ("a", "b")
    assert gap["evidence"]["side"] == "b"
    who = tr.question("who-deletes")
    assert who["evidence"]["side"] == "a" and who["evidence_choices"] == ["taint-eviction"]
    assert tr.step("evicted").trigger["side"] == "b"
    assert all(q["consistent"] for q in tr.questions)


def test_the_tuning_lesson_asks_what_changes_with_the_tolerations_of_side_b():
    tuning = get_lesson("tuning-the-defaults")
    assert tuning.comparison == {"a": {}, "b": {"workloads.web.tolerationSeconds": 100}}
    tr = run_lesson(tuning)
    assert tr.question("notready-with-tolerations")["measured"] == pytest.approx(0.0, abs=0.01)
    deletion = tr.question("deletion-with-tolerations")
    assert deletion["measured"] == pytest.approx(70.0, abs=0.01)
    assert (deletion["measure_from"]["side"], deletion["measure_to"]["side"]) == ("a", "b")
    assert tr.question("eviction-after-crash")["measured"] == pytest.approx(55.2, abs=0.1)  # side a: as before
    assert all(q["consistent"] for q in tr.questions)


def test_a_comparison_lesson_is_fed_both_sides():
    run = LessonRun(load_lesson(comparison_lesson()))
    run.start(0.0)
    with pytest.raises(RuntimeError, match="feed_sides"):
        run.feed([], 1.0)
    with pytest.raises(ValueError, match="unknown sides"):
        run.feed_sides({"c": []}, 1.0)


def test_a_question_across_sides_settles_and_a_wrong_answer_is_caught():
    tr = run_lesson(load_lesson(comparison_lesson()))
    q = tr.question("n")
    assert q["measured"] == pytest.approx(10.0, abs=0.1) and q["consistent"] is True
    assert tr.step("three").trigger["side"] == "a"
    doc = comparison_lesson()
    doc["steps"][2]["question"]["answer"] = 20
    assert run_lesson(load_lesson(doc)).question("n")["consistent"] is False


def test_a_matcher_without_a_side_matches_either_side():
    doc = comparison_lesson()
    doc["steps"][2]["question"]["measure"] = {
        "from": {"type": "fault", "action": "stop-kubelet", "node": "node-2"},
        "to": {"type": "transition", "kind": "node-ready", "node": "node-2", "to": "Unknown"}}
    doc["steps"][2]["question"].update(answer=40, tolerance=1)
    doc["steps"][2]["trigger"] = {"at": "61s"}  # the window opens after the crash, before either side's NotReady
    q = run_lesson(load_lesson(doc)).question("n")
    assert q["measure_to"]["side"] == "a" and q["measured"] == pytest.approx(40.2, abs=0.05)  # 1.31 comes first


def bad(mutate):
    doc = comparison_lesson()
    mutate(doc)
    return doc


BAD = [
    (bad(lambda d: d["comparison"]["a"].update(kubernetesVersion="1.2")), "comparison.a.kubernetesVersion",
     "1.2"),
    (bad(lambda d: d["comparison"]["b"].update({"controllerManager.nodeMonitorGracePeriod": "-5s"})),
     "comparison.b.controllerManager.nodeMonitorGracePeriod", ""),
    (bad(lambda d: d["comparison"]["b"].update(colour="red")), "comparison.b.colour", "not a setting"),
    (bad(lambda d: d["comparison"].update(c={})), "comparison.c", "unknown field"),
    (bad(lambda d: d["comparison"].update(a="1.31")), "comparison.a", "mapping of settings"),
    (bad(lambda d: d.update(comparison={"a": {}, "b": {}})), "comparison", "at least one setting"),
    (bad(lambda d: d.update(comparison=None)), "comparison", "mapping"),
    (bad(lambda d: d["steps"][2]["question"]["measure"]["to"].update(side="c")),
     "steps[2].question.measure.to.side", "must be a or b"),
    (bad(lambda d: d["steps"][2]["trigger"]["event"].update(side="both")), "steps[2].trigger.event.side",
     "must be a or b"),
]


@pytest.mark.parametrize(("doc", "path", "words"), BAD, ids=[f"{b[1]}:{b[2]}" for b in BAD])
def test_bad_comparison_field_is_named(doc, path, words):
    assert_rejected(load_lesson, doc, path, words)


def test_a_side_needs_a_comparison_lesson():
    doc = lesson()
    doc["steps"][1]["question"]["evidence"] = {"side": "a", "type": "transition", "kind": "node-ready"}
    assert_rejected(load_lesson, doc, "steps[1].question.evidence.side", "only a comparison lesson")


def test_a_fault_action_must_fit_both_sides():
    doc = comparison_lesson(comparison={"a": {"cluster.nodes": 2}, "b": {}})
    doc["steps"][0]["actions"] = [{"action": "stop-kubelet", "node": "node-3"}]
    assert_rejected(load_lesson, doc, "steps[0].actions[0].node", "node-3")


def test_the_normalised_comparison_loads_again():
    loaded = load_lesson(comparison_lesson())
    assert loaded.comparison == {"a": {"kubernetesVersion": "1.31"}, "b": {"kubernetesVersion": "1.33"}}
    assert load_lesson(copy.deepcopy(loaded.document)).document == loaded.document
    assert loaded.side_names == ("a", "b") and load_lesson(lesson()).side_names == (None,)
