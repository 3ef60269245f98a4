"""Drill documents, drill runs and the filters that hide a drill's fault until the reveal."""

from __future__ import annotations

import copy
import json

import pytest

from simulation import get_builtin
from simulation.lessons import (
    builtin_drills,
    drill_simulation,
    get_drill,
    hide_cause,
    hide_in_snapshot,
    load_drill,
    matches,
)

from .test_lessons import assert_rejected


def drill(**extra):
    doc = {
        "name": "d", "position": 1, "scenario": "kubelet-crash", "speed": 5,
        "title": {"en": "D", "zh": "D"}, "brief": {"en": "Something is wrong.", "zh": "出问题了。"},
        "fault": {"at": "40s", "action": "stop-kubelet", "node": "node-2"},
        "choices": [{"id": "stop-kubelet", "text": {"en": "kubelet", "zh": "kubelet"}},
                    {"id": "stop-runtime", "text": {"en": "runtime", "zh": "运行时"}}],
        "nodes": ["node-1", "node-2", "node-3"],
        "explanation": {"en": "Because.", "zh": "因为。"},
        "symptoms": [{"type": "transition", "kind": "node-ready", "node": "node-2", "to": "Unknown"}],
    }
    doc.update(extra)
    return doc


ZERO = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 0}]
BAD_DRILLS = [
    (drill(name="D 1"), "name", "lowercase slug"),
    (drill(brief={"en": "Something is wrong."}), "brief.zh", "is required"),
    (drill(scenario="nope"), "scenario", "no built-in scenario"),
    (drill(fault={"action": "stop-kubelet", "node": "node-2"}), "fault.at", "is required"),
    (drill(fault={"at": "1h", "action": "stop-kubelet", "node": "node-2"}), "fault.at", "at most"),
    (drill(fault={"at": "40s", "action": "melt", "node": "node-2"}), "fault.action", "unknown action"),
    (drill(fault={"at": "40s", "action": "stop-kubelet", "node": "node-8"}), "fault.node", "unknown node"),
    (drill(fault={"at": "40s", "action": "start-pressure", "node": "node-2"}), "fault.resource", "is required"),
    (drill(fault="stop-kubelet"), "fault", "is required"),
    (drill(choices=[{"id": "stop-runtime", "text": {"en": "r", "zh": "r"}},
                    {"id": "partition", "text": {"en": "p", "zh": "p"}}]),
     "choices", "must be one of the choice ids"),
    (drill(answer="zero-toleration"), "answer", "must be one of the choice ids"),
    (drill(choices=[{"id": "stop-kubelet", "text": {"en": "k", "zh": "k"}}] * 2), "choices[1].id",
     "duplicate choice id"),
    (drill(nodes=["node-1", "node-3"]), "nodes", "must include the fault's node"),
    (drill(nodes=["node-1", "node-2", "node-2"]), "nodes[2]", "duplicate node"),
    (drill(nodes=["node-1", "node-2", "node-9"]), "nodes[2]", "unknown node"),
    (drill(explanation=None), "explanation", "non-empty 'en' and 'zh'"),
    (drill(symptoms=[]), "symptoms", "non-empty list"),
    (drill(symptoms=[{"type": "transition", "kind": "node-ready", "to": False}]), "symptoms[0].to", "quote it"),
    (drill(workloads=[{"name": "pay", "tolerations": [{"key": "k", "operator": "Maybe"}]}]),
     "workloads[0].tolerations[0].operator", "Exists or Equal"),
    (drill(workloads=[{"name": "web", "replicas": 2}]), "workloads[0].name", "duplicate workload"),
    (drill(workloads="pay"), "workloads", "must be a list"),
    (drill(hint="look at the Lease"), "hint", "unknown field"),
]


@pytest.mark.parametrize(("doc", "path", "words"), BAD_DRILLS, ids=[f"{b[1]}:{b[2]}" for b in BAD_DRILLS])
def test_bad_drill_field_is_named(doc, path, words):
    assert_rejected(load_drill, doc, path, words)


def test_drill_scenario_replaces_the_faults_and_adds_workloads():
    d = load_drill(drill(answer="stop-kubelet", workloads=[{"name": "pay", "replicas": 3, "tolerations": ZERO}]))
    base = get_builtin("kubelet-crash")
    assert d.scenario.name == "d" and d.scenario.title == d.title and d.scenario.watch == d.document["brief"]
    assert [dict(f) for f in d.scenario.faults] == [{"at": "40s", "action": "stop-kubelet", "node": "node-2"}]
    assert d.fault == {"action": "stop-kubelet", "node": "node-2", "at": 40.0}
    names = [w["name"] for w in d.scenario.document["cluster"]["workloads"]]
    assert names == [w["name"] for w in base.document["cluster"]["workloads"]] + ["pay"]
    assert d.document["workloads"][0]["tolerations"] == ZERO
    public = d.public_document
    assert not {"fault", "answer", "explanation", "symptoms"} & set(public)
    assert load_drill(d.document).document == d.document  # a normalised document loads as itself


def test_hide_cause_and_snapshot_leave_their_input_alone():
    write = {"seq": 9, "t": 70.0, "type": "write", "code": 500, "resource": "leases",
             "message": 'Internal error occurred: injected fault "fail-lease-writes" rejects Lease writes from node-2'}
    hidden = hide_cause(write)
    assert "fail-lease-writes" not in json.dumps(hidden) and hidden["message"].startswith("Internal error occurred")
    assert "injected" in write["message"]
    assert hide_cause({"type": "fault", "action": "partition"}) is None
    assert hide_cause({"type": "request-failed", "message": "context deadline exceeded"}) is None
    ok = {"type": "transition", "kind": "node-ready"}
    assert hide_cause(ok) is ok
    snap = {"kubelets": {"node-1": {"running": False, "reachable": True, "runtimeUp": True, "powered": True,
                                    "shuttingDown": False, "pressure": [], "lastRenew": 3.0, "lastStatusReport": 2.0}},
            "scenario": {"name": "d", "title": {"en": "D", "zh": "D"}}, "t": 5}
    before = copy.deepcopy(snap)
    assert hide_in_snapshot(snap)["kubelets"] == {"node-1": {"lastRenew": 3.0, "lastStatusReport": 2.0}}
    assert snap == before


# -- the built-in drills ---------------------------------------------------------------------------

DRILLS = builtin_drills()


def test_the_drill_catalogue():
    assert len(DRILLS) >= 7
    assert [d.position for d in DRILLS] == list(range(1, len(DRILLS) + 1))
    actions = {d.fault["action"] for d in DRILLS}
    assert {"stop-kubelet", "stop-runtime", "partition", "start-pressure", "fail-lease-writes",
            "slow-apiserver"} <= actions
    assert any(d.answer != d.fault["action"] for d in DRILLS)  # a cause that is not the fault itself
    assert get_drill(DRILLS[0].name) is DRILLS[0] and get_drill("nope") is None
    for d in DRILLS:
        assert load_drill(json.loads(json.dumps(d.document))).document == d.document  # normalised, JSON-able
        for lang in ("en", "zh"):  # briefs name symptoms, never the cause
            brief = d.document["brief"][lang]
            assert d.fault["action"] not in brief and d.answer not in brief, (d.name, lang)
            answer_text = next(c["text"][lang] for c in d.document["choices"] if c["id"] == d.answer)
            assert answer_text not in brief, (d.name, lang)


@pytest.mark.parametrize("d", DRILLS, ids=[d.name for d in DRILLS])
def test_drill_shows_its_symptoms_and_hides_its_cause(d):
    sim = drill_simulation(d)
    action = d.fault["action"]
    seen = [False] * len(d.symptoms)
    end = d.scenario.duration
    cuts = [d.fault["at"] + 1, (d.fault["at"] + end) / 2, end]
    for cut in cuts:
        for ev in sim.run_until(cut):
            for i, symptom in enumerate(d.symptoms):
                seen[i] = seen[i] or matches(symptom, ev)
            shown = hide_cause(ev.to_dict())
            if shown is not None:
                text = json.dumps(shown, ensure_ascii=False)
                assert action not in text, f"{d.name}: event {ev!r} names {action!r}: {text[:300]}"
                assert shown["type"] not in ("fault", "request-failed")
        snap = json.dumps(hide_in_snapshot(sim.snapshot()), ensure_ascii=False)
        assert action not in snap, f"{d.name}: the snapshot at {cut}s names {action!r}"
    missing = [m for m, ok in zip(d.symptoms, seen, strict=True) if not ok]
    assert not missing, f"{d.name}: symptoms never seen: {missing}"


def test_a_node_the_fault_creates_is_one_the_class_can_name():
    created = {"at": "40s", "action": "create-node", "name": "node-4", "kubelet": False}
    d = load_drill({k: v for k, v in drill(fault=created, answer="stop-kubelet").items() if k != "nodes"})
    assert d.document["nodes"] == ["node-1", "node-2", "node-3", "node-4"]
    assert load_drill(drill(fault=created, answer="stop-kubelet",
                            nodes=["node-2", "node-4"])).document["nodes"] == ["node-2", "node-4"]


def test_the_node_a_drill_asks_for():
    """The node the class is scored on: the fault's node, the node the fault creates, or none."""
    assert load_drill(drill()).node == "node-2"
    created = {"at": "40s", "action": "create-node", "name": "node-4", "kubelet": False}
    assert load_drill(drill(fault=created, answer="stop-kubelet")).node == "node-4"
    slow = {"at": "40s", "action": "slow-apiserver", "latency": "15s"}
    assert load_drill(drill(fault=slow, answer="stop-kubelet")).node is None
