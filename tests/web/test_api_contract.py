"""The served OpenAPI document is generated from the API's models (heartbeat_site/live/api/contract.py), and a
request body is judged alike by the document and by the model the view reads it with."""

from __future__ import annotations

import threading

import pytest
from jsonschema import Draft202012Validator

from heartbeat_site.live.api.contract import (
    REQUESTS,
    RESPONSES,
    Command,
    ComparisonCreate,
    ObservationCreate,
    RunCreate,
    ScenarioPreview,
    ScenarioSave,
    component_schemas,
    parse,
)
from heartbeat_site.live.classroom import questions
from heartbeat_site.live.driving.comparison_driver import ComparisonDriver
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.lookback import seek
from heartbeat_site.live.models import Answer, Question, QuestionStatus, RunStatus
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runs.saved_scenarios import load_builtins
from heartbeat_site.live.runstore import activity, event_log
from simulation import Simulation, load_scenario
from simulation.lessons import builtin_drills, builtin_lessons, get_drill

from .conftest import bearer, post_json, reached_run, small_document
from .test_observe import fake_cluster

pytestmark = [pytest.mark.django_db, pytest.mark.persistence]

AT_NULL = {**small_document(), "faults": [{"at": None, "action": "restart-controller-manager"}]}
# (model, body, whether it is valid): each request model's examples, good and bad, as a client sends them
EXAMPLES = [
    (RunCreate, {"scenario": "kubelet-crash", "speed": 10, "seed": 7, "paused": True}, True),
    (RunCreate, {"document": small_document()}, True),
    (RunCreate, {"lesson": builtin_lessons()[0].name}, True),
    (RunCreate, {"drill": builtin_drills()[0].name, "speed": 0.1}, True),
    (RunCreate, {"recipe": "abc"}, True),
    (RunCreate, {"recipe": "abc", "seed": 3}, False),
    (RunCreate, {"scenario": "kubelet-crash", "lesson": "x"}, False),
    (RunCreate, {"scenario": "kubelet-crash", "speed": 0}, False),
    (RunCreate, {"scenario": "kubelet-crash", "seed": "7"}, False),
    (RunCreate, {"scenario": None}, False),
    (RunCreate, {"document": small_document(), "colour": "blue"}, False),
    (ComparisonCreate, {"scenario": "kubelet-crash", "a": {"kubernetesVersion": "1.31"}, "b": {}}, True),
    (ComparisonCreate, {"document": small_document(), "seed": 2, "a": {"cluster.nodes": 5}}, True),
    (ComparisonCreate, {"a": {}}, False),
    (ScenarioSave, {"document": small_document()}, True),
    (ScenarioSave, {"document": small_document(), "name": "x"}, False),
    (ScenarioSave, {"document": "kubelet-crash"}, False),
    (ScenarioPreview, {"document": small_document(), "until": "5m"}, True),
    (ScenarioPreview, {"document": small_document(), "until": 120}, True),
    (ScenarioPreview, {"until": "5m"}, False),
    (Command, {"action": "stop-kubelet", "node": "node-2", "for": "2m"}, True),
    (Command, {"action": "speed", "value": 20}, True),
    (Command, {"action": "pause"}, True),
    (Command, {"action": "follow", "on": False}, True),
    (Command, {"action": "focus", "node": "node-1", "tab": "diagrams"}, True),
    (Command, {"action": "speed", "value": 1000}, False),
    (Command, {"action": "pause", "value": 1}, False),
    (Command, {"action": "explode"}, False),
    (Command, {"action": "focus"}, False),
    (Command, {"action": "focus", "tab": "settings"}, False),
    (Command, {}, False),
    (ObservationCreate, {"server": "https://10.0.0.1:6443", "token": "abc", "nodeMonitorGracePeriod": "40s"}, True),
    (ObservationCreate, {"kubeconfig": "apiVersion: v1", "nodeMonitorGracePeriod": 90}, True),
    (ObservationCreate, {"token": "abc"}, False),
    (ObservationCreate, {"server": "https://10.0.0.1:6443", "insecure": True}, False),
    (ObservationCreate, {"server": 6443}, False),
]


@pytest.fixture
def served(api) -> dict:
    response = api.get("/api/openapi.json")
    assert response.status_code == 200
    return response.json()


def served_schema(served: dict, name: str) -> Draft202012Validator:
    """The served document's schema ``name``, its references resolved among the served components."""
    return Draft202012Validator({"$ref": f"#/components/schemas/{name}", "components": served["components"]})


def test_the_served_document_holds_every_models_generated_schema(served):
    generated = component_schemas()
    for model in (*REQUESTS, *RESPONSES):
        assert served["components"]["schemas"][model.__name__] == generated[model.__name__], model.__name__
        Draft202012Validator.check_schema(generated[model.__name__])
    bodies = {operation["requestBody"]["content"]["application/json"]["schema"].get("$ref", "").rsplit("/", 1)[-1]
              for path in served["paths"].values() for operation in path.values()
              if "application/json" in operation.get("requestBody", {}).get("content", {})}
    assert {model.__name__ for model in REQUESTS} <= bodies


def test_a_run_says_its_lesson_and_drill_as_the_document_does(api, served, dispatched):
    lesson = post_json(api, "/api/runs", {"lesson": builtin_lessons()[0].name}).json()
    run = api.get(f"/api/runs/{lesson['id']}").json()
    assert {"lesson", "drill"} <= set(served["components"]["schemas"]["Run"]["properties"])
    served_schema(served, "Run").validate(run)  # every field the view answers, and none it does not
    assert (run["lesson"], run["drill"]) == (builtin_lessons()[0].name, None)


@pytest.mark.parametrize(("model", "body", "valid"), EXAMPLES,
                         ids=[f"{model.__name__}-{i}" for i, (model, _b, _v) in enumerate(EXAMPLES)])
def test_an_example_is_judged_alike_by_the_served_document_and_the_model(served, model, body, valid):
    assert served_schema(served, model.__name__).is_valid(body) is valid
    if valid:
        parse(model, body)
    else:
        with pytest.raises(ApiError) as refused:
            parse(model, body)
        assert refused.value.status == 400
        assert refused.value.message  # in words; each field named in errors
        assert all(set(problem) == {"field", "message"} for problem in refused.value.extra["errors"])


def test_a_fault_at_null_is_refused_by_the_document_and_the_api(api, served, dispatched):
    assert not served_schema(served, "RunCreate").is_valid({"document": AT_NULL})
    response = post_json(api, "/api/runs", {"document": AT_NULL})
    assert response.status_code == 400
    assert {"field": "faults[0].at", "message": "is required (when the fault happens, e.g. 60s)"} in \
        response.json()["errors"]
    assert dispatched == []


def test_a_bad_start_time_is_answered_in_words_naming_the_field(api):
    document = {**small_document(), "startTime": "2026-01-01T00:00:00+25:00"}
    response = post_json(api, "/api/scenarios/validate", {"document": document})
    assert response.status_code == 400
    assert response.json()["errors"] == [{"field": "startTime", "message": "must be an RFC 3339 time such as "
                                          "2026-01-01T00:00:00Z: the time zone offset +25:00 is out of range, at "
                                          "most 23:59 either way"}]


def test_the_answers_are_as_the_served_document_says(api, served, dispatched, monkeypatch):
    """Each answer holds the fields its model lists and no other (the models forbid extra fields)."""
    monkeypatch.setattr("heartbeat_site.live.api.comparisons.start_driver", lambda run: dispatched.append(run.id))
    started = post_json(api, "/api/runs", {"scenario": "kubelet-crash"}).json()
    served_schema(served, "RunStarted").validate(started)
    served_schema(served, "ComparisonStarted").validate(
        post_json(api, "/api/comparisons", {"scenario": "kubelet-crash", "b": {"kubernetesVersion": "1.31"}}).json())
    recipe = post_json(api, f"/api/runs/{started['id']}/recipe", {}, **bearer(started["control_token"]))
    served_schema(served, "RecipeLink").validate(recipe.json())
    served_schema(served, "SavedScenario").validate(
        post_json(api, "/api/scenarios", {"document": small_document("contract-saved")}).json())


FAULT = {"action": "stop-kubelet", "node": "node-2"}


@pytest.fixture
def finished_run(replays_here):
    """A run that reached 120 virtual seconds, node-2's kubelet stopped at 30: its events, snapshots and audit
    records are the simulation's, replayed."""
    run = reached_run(120.0, RunStatus.FINISHED, FAULT, 30.0)
    sim = Simulation(load_scenario(run.document), seed=run.seed)
    sim.schedule_command(FAULT, 30.0)
    run.last_seq = sim.run_until(run.duration)[-1].seq  # as its driver's end records it
    run.save(update_fields=["last_seq"])
    yield run
    seek.forget(run.id)


def test_a_real_runs_log_and_snapshots_are_as_the_served_document_says(api, served, finished_run):
    """The events page, audit page, snapshot and command log of a run the simulation played hold the fields their
    models list and no other."""
    run = finished_run
    events = api.get(f"/api/runs/{run.id}/events?limit=5000").json()
    served_schema(served, "EventsPage").validate(events)
    assert {"fault", "transition", "write"} <= {event["type"] for event in events["events"]}
    filtered = api.get(f"/api/runs/{run.id}/events?types=transition&detail=nodes&limit=3").json()
    served_schema(served, "EventsPage").validate(filtered)
    assert filtered["has_more"] and len(filtered["events"]) == 3
    audit = api.get(f"/api/runs/{run.id}/audit?limit=50").json()
    served_schema(served, "AuditPage").validate(audit)
    assert audit["records"][0]["record"]["kind"] == "Event"
    for t in ("", "?t=45.5"):
        snapshot = api.get(f"/api/runs/{run.id}/snapshot{t}").json()
        served_schema(served, "RunSnapshot").validate(snapshot)
        assert snapshot["snapshot"]["objects"]["nodes"] and snapshot["clock"]["paused"]
    commands = api.get(f"/api/runs/{run.id}/commands").json()
    served_schema(served, "CommandLog").validate(commands)
    assert [(c["action"], c["at"]) for c in commands["commands"]] == [("stop-kubelet", 30.0)]


def test_a_reports_every_kind_of_question_is_as_the_served_document_says(api, served, dispatched):
    """A lesson's choice, number and order questions, open and revealed, and a drill's diagnosis."""
    drill = get_drill("silent-node")
    assert drill is not None
    chain = ["unknown", "endpoints", "noexecute", "deleted"]
    diagnosis = {"choice": questions.public_cause(drill, drill.answer), "node": drill.fault["node"]}
    sessions = {
        ("lesson", "two-heartbeats"): [("lease-interval", True, [{"value": 10.0}, {"value": 40.0}]),
                                       ("next-write", False, [{"choice": "lease"}]),
                                       ("report-interval", False, [])],
        ("lesson", "cause-and-effect"): [("chain", False, [{"order": chain}])],
        ("drill", drill.name): [(questions.DIAGNOSIS, False, [diagnosis, {**diagnosis, "node": "node-1"}])],
    }
    kinds = set()
    for (source, name), asked in sessions.items():
        started = post_json(api, "/api/runs", {source: name}).json()
        for step, (qid, revealed, answers) in enumerate(asked, start=1):
            question = Question.objects.create(
                run_id=started["id"], qid=qid, step=step, asked_at=10.0 * step, revealed_at=10.0 * step + 2 if
                revealed else None, status=QuestionStatus.REVEALED if revealed else QuestionStatus.OPEN)
            for i, answer in enumerate(answers):
                Answer.objects.create(question=question, viewer=f"v-{i}", nickname="ana" if i else "", **answer)
        report = api.get(f"/api/runs/{started['id']}/report", **bearer(started["control_token"]))
        assert report.status_code == 200, report.content
        served_schema(served, "LessonReport").validate(report.json())
        kinds |= {(q["kind"], q["status"], q["share_right"] is None) for q in report.json()["questions"]}
    assert kinds == {("number", "revealed", False), ("choice", "open", False), ("number", "open", True),
                     ("order", "open", False), ("diagnosis", "open", False)}


def test_the_lists_and_a_validated_document_are_as_the_served_document_says(api, served):
    load_builtins()
    post_json(api, "/api/scenarios", {"document": small_document("contract-listed")})
    scenarios = api.get("/api/scenarios").json()
    served_schema(served, "ScenarioList").validate(scenarios)
    assert {("kubelet-crash", True), ("contract-listed", False)} <= {(s["name"], s["builtin"])
                                                                    for s in scenarios["scenarios"]}
    for body in (small_document(), {"document": small_document()}):  # the document, bare or wrapped
        validated = post_json(api, "/api/scenarios/validate", body)
        assert validated.status_code == 200, validated.content
        served_schema(served, "ScenarioValidated").validate(validated.json())
        assert validated.json()["node_count"] == 3
    lessons = api.get("/api/lessons").json()
    served_schema(served, "Lessons").validate(lessons)
    assert [lesson["name"] for lesson in lessons["lessons"]] == [lesson.name for lesson in builtin_lessons()]
    assert any(lesson["comparison"] for lesson in lessons["lessons"])
    assert {q["kind"] for lesson in lessons["lessons"] for q in lesson["questions"]} == {"choice", "number", "order"}
    drills = api.get("/api/drills").json()
    served_schema(served, "Drills").validate(drills)
    assert [drill["name"] for drill in drills["drills"]] == [drill.name for drill in builtin_drills()]


def test_an_observation_and_an_audit_replay_start_as_the_served_document_says(api, served, dispatched, settings,
                                                                               finished_run):
    """The 201 of a real cluster watched (a fake API server's empty lists) and of a run's own audit log replayed."""
    settings.HEARTBEAT = {**settings.HEARTBEAT, "OBSERVE": True, "OBSERVE_HOSTS": ["127.0.0.1"]}
    with fake_cluster() as server:
        observed = post_json(api, "/api/observations", {"server": server, "token": "contract-token"})
    assert observed.status_code == 201, observed.content
    served_schema(served, "ObservationStarted").validate(observed.json())
    assert observed.json()["run"]["kind"] == "observation"
    log = api.get(f"/api/runs/{finished_run.id}/export/audit.jsonl").content
    replayed = api.post("/api/audit-replays", log, content_type="application/jsonl")
    assert replayed.status_code == 201, replayed.content
    served_schema(served, "AuditReplayed").validate(replayed.json())
    assert replayed.json()["events"] > 0


@pytest.mark.django_db(transaction=True)
def test_a_comparisons_commands_and_strip_are_as_the_served_document_says(api, served, monkeypatch, settings):
    """A command no driver took yet (pending), one the comparison's driver applied, and the comparison with its
    strip of differences as the driver (in this process) left it at the end."""
    monkeypatch.setattr("heartbeat_site.live.api.comparisons.start_driver", lambda run: None)
    settings.HEARTBEAT = {**settings.HEARTBEAT, "LEASE_TTL": 1.0, "FRAME_INTERVAL": 0.05}
    started = post_json(api, "/api/comparisons", {"document": {**small_document(), "duration": "3m"}, "speed": 100,
                                                  "b": {"kubernetesVersion": "1.31"}}).json()
    url, token = f"/api/comparisons/{started['id']}", bearer(started["control_token"])
    pending = post_json(api, f"{url}/commands", {"action": "speed", "value": 100}, **token)
    assert (pending.status_code, pending.json()["status"]) == (202, "pending"), pending.content
    served_schema(served, "ComparisonCommandResult").validate(pending.json())
    settings.HEARTBEAT = {**settings.HEARTBEAT, "COMMAND_ACK_SECONDS": 30.0}  # the answer awaits the driver's ack
    try:
        driver = ComparisonDriver(started["id"])
        thread = threading.Thread(target=driver.drive, daemon=True)
        thread.start()
        applied = post_json(api, f"{url}/commands", {"action": "stop-kubelet", "node": "node-2"}, **token)
        assert (applied.status_code, applied.json()["status"]) == (202, "applied"), applied.content
        served_schema(served, "ComparisonCommandResult").validate(applied.json())
        thread.join(60)
        detail = api.get(url).json()
        served_schema(served, "ComparisonDetail").validate(detail)
        assert not thread.is_alive() and detail["comparison"]["final"]
        assert "fault: stop-kubelet node-2" in {row["label"] for row in detail["comparison"]["rows"]}
    finally:
        driver.stop.set()
        client = get_redis()
        for key in client.keys(f"hb:cmp:{{{started['id']}}}:*"):
            client.delete(key)
        for run in started["runs"]:
            client.srem(activity.ACTIVE_RUNS, run["id"])
            for key in client.keys(f"hb:run:{{{run['id']}}}:*"):
                client.delete(key)


def test_a_pending_commands_answer_is_as_the_served_document_says(api, served, dispatched):
    """No driver took the run yet: the answer says why, in a field CommandResult lists."""
    started = post_json(api, "/api/runs", {"scenario": "kubelet-crash"}).json()
    pending = post_json(api, f"/api/runs/{started['id']}/commands", FAULT, **bearer(started["control_token"]))
    assert (pending.status_code, pending.json()["status"]) == (202, "pending"), pending.content
    assert pending.json()["message"]
    served_schema(served, "CommandResult").validate(pending.json())
    assert not served_schema(served, "CommandResult").is_valid({**pending.json(), "note": "unlisted"})


def test_a_real_clusters_look_back_past_its_log_is_a_documented_409(api, served, finished_run):
    """A replayed audit log whose event log lost its first events (HEARTBEAT_EVENT_LOG_SIZE): its past cannot be
    rebuilt, and the document lists the 409 that says so."""
    log = api.get(f"/api/runs/{finished_run.id}/export/audit.jsonl").content
    replayed = api.post("/api/audit-replays", log, content_type="application/jsonl").json()
    get_redis().zremrangebyscore(event_log.log_key(replayed["id"]), 1, 1)  # as the bounded log drops its oldest
    refused = api.get(f"/api/runs/{replayed['id']}/snapshot?t=1")
    assert (refused.status_code, refused.json()["error"]) == (409, "older-than-the-log")
    snapshot = served["paths"]["/api/runs/{id}/snapshot"]["get"]["responses"]
    assert "older-than-the-log" in snapshot["409"]["description"]
    served_schema(served, "Error").validate(refused.json())
