"""The API's bodies as pydantic models: what a request may hold, what a response holds.

The OpenAPI document's ``components/schemas`` are generated from these models (:func:`component_schemas`, served
by openapi.py), and the views read their request bodies with :func:`parse` (runs/fields.py), so that the document
says what the code checks and cannot drift from it. A refused body is a 400 of the API's error shape (errors.py),
its message in words naming the field, e.g. ``speed: must be between 0.1 and 100, got 0``, with every problem in
``errors``. What a schema cannot say (a node the run does not have, one field against another) is checked after,
by the code that knows, and each operation's ``x-400-beyond-schema`` lists those 400s. A command's models are
runs/commands.py's, which reads every command with them, from the API or from the Kubernetes API's writes.
"""

from __future__ import annotations

from functools import cache, partial
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator
from pydantic.json_schema import models_json_schema
from pydantic_core import PydanticCustomError

from heartbeat_site.live.runs.command_bodies import Command, Speed
from heartbeat_site.live.runs.fields import Body, ComponentSchemas, absent_not_null
from heartbeat_site.live.runs.fields import parse as parse  # the views read their bodies with it
from heartbeat_site.observe.access import NO_SERVER

REF = "#/components/schemas/{model}"
MAX_SEED = 2**63 - 1  # a seed is a signed 64-bit integer, as the scenario document's

# The scenario document and its parts are simulation/schema.py's JSON Schema, among the same components: a body's
# document is that schema there, and the scenario validator (load_scenario) checks it, naming each field.
Document = Annotated[dict[str, Any], WithJsonSchema({"$ref": REF.format(model="Scenario")})]
# a duration is read as the scenario's are (simulation/clock.py parse_duration), by the view, naming the field
Duration = Annotated[Any, WithJsonSchema({"$ref": REF.format(model="ScenarioDuration")})]


def _whole(value: object) -> object:
    """9052681.0 as 9052681: JSON Schema counts a number with no fraction as an integer, and so does the API."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


Seed = Annotated[int, Field(ge=0, le=MAX_SEED, description="the simulation's seed: the same seed, the same run"),
                 BeforeValidator(_whole)]
Overrides = Annotated[dict[str, Any], WithJsonSchema({
    "type": "object",
    "description": "one side's settings, each a dotted key of the scenario document and its value (e.g. "
    '{"kubernetesVersion": "1.31", "controllerManager.nodeMonitorGracePeriod": "20s", '
    '"workloads.web.tolerationSeconds": 30, "zones.zone-a.nodes": 5}); checked as the scenario\'s own fields '
    "(docs/architecture.md §4, §6.9)",
    "propertyNames": {"pattern": r"^(kubernetesVersion|cluster\.nodes|(controllerManager|kubelet|apiServer)\.[A-Za-z]+"
                                 r"|workloads\.[a-z0-9-]+\.(tolerations|tolerationSeconds)|zones\.[a-z0-9-]+\.nodes)$"},
})]


class StartFields(Body):
    """How a run or comparison starts: its pace, seed and whether paused."""

    speed: Speed | None = None
    seed: Seed | None = None
    paused: bool = False


SCENARIO_NAME = "a scenario's name (GET /api/scenarios)"


class RunCreate(StartFields):
    """``POST /api/runs``: exactly one of a scenario's name, a document, a lesson, a drill or a recipe."""

    scenario: str | None = Field(None, description=SCENARIO_NAME)
    document: Document | None = None
    lesson: str | None = Field(None, description="a lesson's name (GET /api/lessons)")
    drill: str | None = Field(None, description="a drill's name (GET /api/drills)")
    recipe: str | None = Field(None, description="a recipe id (POST /api/runs/{id}/recipe): plays its session "
                               "again; no seed with it")
    together = {"oneOf": [{"required": ["scenario"]}, {"required": ["document"]}, {"required": ["lesson"]},
                          {"required": ["drill"]}, {"required": ["recipe"], "not": {"required": ["seed"]}}]}

    @model_validator(mode="after")
    def _one_source(self) -> RunCreate:
        if len(self.model_fields_set & {"scenario", "document", "lesson", "drill", "recipe"}) != 1:
            raise PydanticCustomError(
                "scenario-or-document", 'give exactly one of "scenario" (a scenario name), "document" (a scenario '
                'document), "lesson" or "drill" (their names), or "recipe" (a recipe id)')
        if self.recipe is not None and self.seed is not None:
            raise PydanticCustomError("recipe-seed", "seed: a recipe plays its own seed; leave seed out")
        return self


class ComparisonCreate(StartFields):
    """``POST /api/comparisons``: one scenario (by name or document) twice, each side with its settings."""

    scenario: str | None = Field(None, description=SCENARIO_NAME)
    document: Document | None = None
    a: Overrides = Field(default_factory=dict)
    b: Overrides = Field(default_factory=dict)
    together = {"oneOf": [{"required": ["scenario"]}, {"required": ["document"]}]}

    @model_validator(mode="after")
    def _one_source(self) -> ComparisonCreate:
        if len(self.model_fields_set & {"scenario", "document"}) != 1:
            raise PydanticCustomError(
                "scenario-or-document", 'give exactly one of "scenario" (a scenario name) or "document" (a scenario '
                "document)")
        return self


class ScenarioSave(Body):
    """``POST /api/scenarios`` (and a wrapped ``POST /api/scenarios/validate``): a scenario document."""

    document: Document


class ScenarioPreview(Body):
    """``POST /api/scenarios/preview``: a document, and until when to run it."""

    document: Document
    until: Duration | None = Field(None, description="virtual time to stop at (default 10m, at most 15m)")


class ObservationCreate(Body):
    """``POST /api/observations``: a real cluster to watch read-only (docs/observe.md), by its server or a
    kubeconfig; a field given in the body wins over the kubeconfig's."""

    server: str | None = Field(None, description="the API server's URL, e.g. https://10.0.0.1:6443")
    token: str | None = Field(None, description="a bearer token with list and watch on nodes, leases in "
                              "kube-node-lease, pods, endpointslices and events; held only in the observing worker's "
                              "memory")
    kubeconfig: str | None = Field(None, description="a kubeconfig (YAML): its current context's server, CA and token "
                                   "(bearer tokens only)")
    ca: str | None = Field(None, description="PEM CA certificates to verify the server with")
    nodeMonitorGracePeriod: float | str | None = Field(
        None, description='the cluster\'s --node-monitor-grace-period (90, "40s"), when known; else the version\'s '
        "default is inferred")
    together = {"anyOf": [{"required": ["server"]}, {"required": ["kubeconfig"]}]}

    @model_validator(mode="after")
    def _server_or_kubeconfig(self) -> ObservationCreate:
        if self.server is None and self.kubeconfig is None:
            raise PydanticCustomError("missing-field", NO_SERVER)
        return self


# Responses: what the views answer; schemathesis checks every answer against these (tests/web/test_api_fuzz.py).
class Clock(BaseModel):
    t: float = Field(description="virtual seconds")
    speed: float
    paused: bool


class Event(BaseModel):
    """A simulation event (docs/simulation-api.md 'Events'): each type has fields of its own."""

    model_config = ConfigDict(extra="allow")
    seq: int
    t: float
    time: str | None = None
    type: str


class WatchedCluster(BaseModel):
    model_config = ConfigDict(extra="forbid")
    server: str = Field(description="the API server's URL (audit.k8s.io/v1: a replayed audit log)")
    nodeMonitorGracePeriod: float | None = Field(None, description="seconds, as the trainer stated it (null: the "
                                                 "version's default)")


class ObservedDocument(BaseModel):
    """What a real cluster's run keeps in place of a scenario document (docs/observe.md): never a credential."""

    model_config = ConfigDict(extra="forbid")
    name: Literal["observation", "audit-replay"]
    title: dict[str, Any]
    observation: WatchedCluster


class Run(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    kind: Literal["simulation", "observation", "audit-replay"] = Field(
        description="a simulated run, or a real cluster watched or replayed from its audit log (docs/observe.md): "
        "only a simulation takes faults and pacing, exports and seeks")
    scenario: str
    title: dict[str, Any]
    version: str
    seed: int
    node_count: int
    duration: float
    status: Literal["pending", "running", "finished", "idle", "failed"]
    end_reason: str = Field(description="why it ended, e.g. stopped by the trainer")
    document: Document | ObservedDocument | None = Field(
        description="the run's scenario document (null for a drill until its reveal); a real cluster's: what it "
        "watches")
    clock: Clock
    last_seq: int
    viewers: int | None = Field(description="viewers connected now (null: Redis cannot be reached)")
    commands: int
    summary: dict[str, Any]
    lesson: str | None = Field(description="the lesson it runs (GET /api/lessons), if any")
    drill: str | None = Field(description="the drill it runs (GET /api/drills), if any")
    viewer_url: str
    ws_url: str
    created_at: str = Field(json_schema_extra={"format": "date-time"})
    started_at: str | None = Field(json_schema_extra={"format": "date-time"})
    ended_at: str | None = Field(json_schema_extra={"format": "date-time"})


class SideRun(Run):
    """One side of a comparison: its run, and its settings."""

    side: Literal["a", "b"]
    overrides: dict[str, Any]


class RunStarted(BaseModel):
    """``POST /api/runs``: the new run, its links and its control token (shown once, kept only hashed)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    viewer_url: str
    control_url: str
    ws_url: str
    control_token: str
    run: Run


class ObservationStarted(RunStarted):
    """``POST /api/observations``: as a run's start, the token ending the observation (``{"action": "stop"}``)."""

    kind: Literal["observation"]


class AuditReplayed(BaseModel):
    """``POST /api/audit-replays``: the ended run the log made, and what the log held."""

    model_config = ConfigDict(extra="forbid")
    id: str
    kind: Literal["audit-replay"]
    url: str = Field(description="the run page")
    ws_url: str
    events: int = Field(description="events the log made")
    skipped: int = Field(description="lines left out")
    skipped_by_reason: dict[str, int] = Field(description="lines left out by why: malformed, not-audit-events, "
                                              "other-stages, reads, other-resources, failed-writes")


class ComparisonStarted(BaseModel):
    """``POST /api/comparisons``, and ``POST /api/runs`` of a comparison lesson or a comparison's recipe: the control
    page (url, the token in its fragment), the viewers' page and both runs (side a, side b)."""

    model_config = ConfigDict(extra="forbid")
    id: str
    comparison: str = Field(description="its id, as id")
    url: str
    control_url: str = Field(description="the comparison's control page, as url")
    viewer_url: str
    ws_url: str = Field(description="side a's websocket: a comparison lesson's messages come there")
    control_token: str
    lesson: str | None = Field(description="the comparison lesson it runs, if any")
    runs: list[SideRun] = Field(min_length=2, max_length=2)


class SavedScenario(BaseModel):
    """``POST /api/scenarios``: the saved document and its page."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(description="derived from the normalised document: the same document, the same id")
    url: str = Field(description="the scenario's page, /s/<id>: always this very document")
    name: str
    title: dict[str, Any]
    document: Document


class RecipeLink(BaseModel):
    """A recipe of a run or comparison: the same session always gets the same id."""

    model_config = ConfigDict(extra="forbid")
    id: str
    url: str = Field(description="/r/<id>, the page that starts it")
    seed: int
    commands: list[dict[str, Any]]
    overrides: dict[str, Any] | None = Field(description="a comparison's: each side's settings; null: a run")


class CommandResult(BaseModel):
    """A command of a run: as ``POST /api/runs/<id>/commands`` answers it, and in the run's command log."""

    model_config = ConfigDict(extra="forbid")
    seq: int = Field(description="the command's position in the run's command log")
    at: float | None = Field(description="virtual time at which it applies (null while pending)")
    status: Literal["pending", "applied", "rejected"]
    kind: Literal["fault", "control"] | None = None
    action: str | None = None
    command: dict[str, Any] | None = None
    error: str | None = None
    clock: Clock | None = None
    message: str | None = Field(None, description="while pending: why (the run's driver has not picked it up yet)")


class CommandLog(BaseModel):
    """``GET /api/runs/<id>/commands``: every command of the run, in order."""

    model_config = ConfigDict(extra="forbid")
    commands: list[CommandResult]


class SideCommand(CommandResult):
    """One side's command of a comparison's: its run's."""

    run: str


class ComparisonCommandResult(BaseModel):
    """``POST /api/comparisons/<id>/commands``: the virtual time both sides apply it at, and each side's command."""

    model_config = ConfigDict(extra="forbid")
    action: str
    command: dict[str, Any]
    status: Literal["pending", "applied"] = Field(description="applied once both sides applied it")
    at: float | None = Field(description="virtual time at which both apply it (null while pending)")
    runs: list[SideCommand] = Field(min_length=2, max_length=2)
    message: str | None = Field(None, description="while pending: why")


class DifferenceRow(BaseModel):
    """A key transition of either side (simulation/comparison.py ``Row``), with its time on each."""

    model_config = ConfigDict(extra="forbid")
    id: str
    label: str = Field(description="in English, without its time")
    kind: str
    node: str | None
    a: float | None = Field(description="its time on side a (null: not on that side, so far)")
    b: float | None
    differs: bool
    key: str | None = None
    effect: str | None = None
    to: Any = None
    action: str | None = None
    a_count: int | None = Field(None, description="pods grouped in the row, on side a")
    b_count: int | None = None
    a_pods: list[str] | None = None
    b_pods: list[str] | None = None


class Differences(BaseModel):
    """The strip of differences as of the latest comparison message (docs/websocket-protocol.md), whole: every key
    transition of both sides paired; ``v`` names the message the live updates follow on from."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["comparison"]
    comparison: str
    t: float
    v: str
    final: bool | None = None
    rows: list[DifferenceRow]


class ComparisonDetail(BaseModel):
    """``GET /api/comparisons/<id>``: both runs and the key transitions that differ so far."""

    model_config = ConfigDict(extra="forbid")
    id: str
    scenario: str
    overrides: dict[str, Any] = Field(description="each side's settings, by side")
    viewer_url: str
    runs: list[SideRun]
    comparison: Differences | None = Field(description="null: no comparison message yet")


class Page(BaseModel):
    """Where a page of a run's log stops: filters apply before the limit, so ``next_after`` says how far it read."""

    model_config = ConfigDict(extra="forbid")
    last_seq: int = Field(description="the run's last event")
    next_after: int = Field(description="the after of the next page: the seq of the last event looked at")
    has_more: bool = Field(description="whether the run has events past next_after")


class EventsPage(Page):
    """``GET /api/runs/<id>/events``: events with seq > after."""

    events: list[Event]


class AuditRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")
    seq: int = Field(description="the write event's seq")
    record: dict[str, Any] = Field(description="an audit.k8s.io/v1 Event (docs/architecture.md §5)")


class AuditPage(Page):
    """``GET /api/runs/<id>/audit``: the audit records of the write events with seq > after."""

    records: list[AuditRecord]


class RunSnapshot(BaseModel):
    """``GET /api/runs/<id>/snapshot``: the websocket's snapshot body at t (docs/websocket-protocol.md)."""

    model_config = ConfigDict(extra="forbid")
    last_seq: int
    clock: Clock = Field(description="the clock standing at t, paused")
    snapshot: dict[str, Any] = Field(description="the cluster's objects (node level for a large run; a drill's "
                                     "cause hidden before its reveal)")


class Reply(BaseModel):
    """A part of a response whose optional fields are left out, never null (as a request body's)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=partial(absent_not_null, optional_only=True))


class Text(Reply):
    en: str
    zh: str


class Choice(Reply):
    id: str
    text: Text


class AnswerGiven(Reply):
    """An answer as a viewer sends it: a choice (a diagnosis's with its node), a number or an order of items."""

    choice: str | None = None
    node: str | None = None
    value: float | None = None
    order: list[str] | None = None


class ReportResponse(Reply):
    viewer: int = Field(description="viewers are numbered by their first answer")
    nickname: str | None = Field(description="the latest nickname the viewer gave (null: none)")
    answer: AnswerGiven
    text: Text = Field(description="the answer in words")
    right: bool | None = Field(description="null while the run cannot tell")


class QuestionShown(Reply):
    """A question as pages show it (classroom/questions.py ``public_question``): never its answer."""

    id: str
    kind: Literal["choice", "number", "order", "diagnosis"]
    text: Text
    choices: list[Choice] | None = None
    items: list[Choice] | None = Field(None, description="an order question's items, never in the right order")
    unit: str | None = None


class ReportQuestion(QuestionShown):
    """A question asked, in its public form, with the right answer and the class's answers."""

    tolerance: float | None = Field(None, description="a number question's: how far off an answer is still right")
    step: int = Field(description="the index of the lesson step that asked it")
    status: Literal["open", "revealed"]
    asked_at: float = Field(description="virtual seconds")
    revealed_at: float | None
    correct: AnswerGiven | None = Field(description="as revealed, or while open as the lesson says; null: not known "
                                        "yet (an order question before its events)")
    correct_text: Text | None
    answers: int
    distribution: dict[str, int] = Field(description="the tally's counts")
    distribution_nodes: dict[str, int] | None = Field(None, description="a diagnosis's counts per node")
    right: int | None = Field(description="answers right (null: none of them can be judged yet)")
    share_right: float | None = Field(description="of the answers that can be judged (null: none can)")
    responses: list[ReportResponse]


class ReportRun(Reply):
    id: str
    scenario: str
    status: Literal["pending", "running", "finished", "idle", "failed"]
    created_at: str = Field(json_schema_extra={"format": "date-time"})
    ended_at: str | None = Field(json_schema_extra={"format": "date-time"})


class Teaching(Reply):
    kind: Literal["lesson", "drill"]
    name: str
    title: Text
    position: int


class ViewerScore(Reply):
    viewer: int
    nickname: str | None
    answered: int
    right: int


class LessonReport(Reply):
    """``GET /api/runs/<id>/report``: a lesson's or drill's questions and the class's answers, for its trainer."""

    run: ReportRun
    lesson: Teaching
    questions: list[ReportQuestion]
    viewers: list[ViewerScore]


class PageAction(Reply):
    """What a lesson step does on the pages (simulation/lessons/documents.py): turn to a node or tab, pace."""

    action: Literal["focus", "tab", "pause", "resume", "speed"]
    node: str | None = None
    tab: str | None = None
    value: float | None = None


class LessonStep(Reply):
    id: str
    index: int
    text: Text
    actions: list[PageAction]
    question: QuestionShown | None = None


class LessonListing(Reply):
    """A lesson as ``GET /api/lessons`` lists it: its steps and questions without their answers."""

    name: str
    position: int
    title: Text
    summary: Text | None
    scenario: str = Field(description=SCENARIO_NAME)
    comparison: dict[Literal["a", "b"], Overrides] | None = Field(
        description="a comparison lesson's: each side's settings (docs/lessons.md); null: a run")
    steps: list[LessonStep]
    questions: list[QuestionShown]


class Lessons(Reply):
    """``GET /api/lessons``: the lesson path, in order."""

    lessons: list[LessonListing]


class DrillListing(Reply):
    """A drill as ``GET /api/drills`` lists it: its brief and the possible causes, never the cause."""

    name: str
    position: int
    title: Text
    brief: Text | None
    choices: list[Choice] = Field(description="the possible causes, by public id (cause-1, cause-2, ...)")
    nodes: list[str] = Field(description="the nodes a diagnosis may name")


class Drills(Reply):
    """``GET /api/drills``: the drills, in order."""

    drills: list[DrillListing]


class ScenarioFacts(BaseModel):
    """What a scenario list shows of a document, kept beside it (runs/saved_scenarios.py ``scenario_summary``)."""

    model_config = ConfigDict(extra="forbid")
    watch: dict[str, Any] | None = None
    node_count: int | None = None
    duration: float | None = None
    version: str | None = None
    fault_actions: list[str] | None = None


class ScenarioSummary(ScenarioFacts):
    name: str
    title: dict[str, Any]
    builtin: bool | None = None


class ScenarioList(BaseModel):
    """``GET /api/scenarios``: the built-in scenarios, then the saved ones."""

    model_config = ConfigDict(extra="forbid")
    scenarios: list[ScenarioSummary]


class ScenarioValidated(ScenarioFacts):
    """``POST /api/scenarios/validate``: the document is valid; its normalised form and what a list shows of it."""

    valid: Literal[True]
    name: str
    document: Document


class Error(BaseModel):
    """Every error: a code, a message naming the problem in words, and sometimes more (e.g. ``errors``)."""

    error: str
    message: str


class FieldProblem(BaseModel):
    field: str = Field(description="e.g. cluster.zones[1].nodes, or a request body's speed")
    message: str


class InvalidScenario(Error):
    """error invalid-scenario (or cluster-too-large, preview-too-large, ...): every field problem of the document
    with its path, the messages of ``python -m simulation validate``."""

    errors: list[FieldProblem] | None = None


class Transition(BaseModel):
    model_config = ConfigDict(extra="allow")
    t: float
    kind: str
    node: str | None = None
    component: str | None = None


class Preview(BaseModel):
    until: float = Field(description="virtual seconds the preview ran")
    node_count: int | None = None
    transitions: list[Transition] = Field(
        description="faults; node Ready, condition, taint and zone changes; pods NotReady and Terminating grouped "
        "per node and instant (count, pods)")
    truncated: bool | None = None
    summary: dict[str, Any] = Field(description="nodes by Ready, taints, pods at `until`")


REQUESTS: tuple[type[BaseModel], ...] = (RunCreate, ComparisonCreate, ScenarioSave, ScenarioPreview, Command,
                                         ObservationCreate)
RESPONSES: tuple[type[BaseModel], ...] = (
    Clock, Event, Run, SideRun, RunStarted, ObservationStarted, AuditReplayed, ComparisonStarted, ComparisonDetail,
    SavedScenario, RecipeLink, CommandResult, CommandLog, ComparisonCommandResult, EventsPage, AuditPage, RunSnapshot,
    LessonReport, Lessons, Drills, ScenarioSummary, ScenarioList, ScenarioValidated, Error, InvalidScenario, Preview)


@cache
def component_schemas() -> dict[str, Any]:
    """The JSON Schemas of every model, by name, their references into ``#/components/schemas``."""
    _, schemas = models_json_schema([(model, "validation") for model in (*REQUESTS, *RESPONSES)], ref_template=REF,
                                    schema_generator=ComponentSchemas)
    return schemas["$defs"]
