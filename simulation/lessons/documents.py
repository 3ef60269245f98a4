"""Lesson and drill documents (docs/lessons.md): parse, validate, normalise.

Validated like scenarios, with the same machinery (`simulation.scenario`): every problem is
reported with the path of its field, all at once, and unknown fields are errors.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from ..builtins import builtin_scenarios, get_builtin
from ..clock import format_duration
from ..comparison import SIDES, side_scenarios
from ..scenario import SLUG, Scenario, ScenarioError, _Checker, load_scenario, read_document
from ..simulation import CommandError, validate_command
from .matchers import check_matcher

PAGE_ACTIONS = ("pause", "resume", "speed", "focus", "tab")
TABS = ("cluster", "traffic", "flows", "kubectl", "why")
MIN_SPEED, MAX_SPEED = 0.1, 100.0
LESSON_FIELDS = ("name", "position", "title", "summary", "scenario", "comparison", "speed", "steps")
STEP_FIELDS = ("id", "text", "trigger", "actions", "question")
QUESTION_FIELDS = ("id", "text", "kind", "choices", "items", "unit", "answer", "tolerance", "evidence", "measure",
                   "since", "explain")
QUESTION_KINDS = ("choice", "number", "order")
MIN_ITEMS, MAX_ITEMS = 3, 6  # an order question's events
ONLY_FOR = {"choices": "choice", "items": "order", "unit": "number", "tolerance": "number", "measure": "number"}
DRILL_FIELDS = ("name", "position", "title", "brief", "scenario", "speed", "fault", "choices", "answer", "nodes",
                "explanation", "workloads", "symptoms")


class LessonError(ScenarioError):
    """A lesson or drill document is invalid; `.errors` lists (field path, message)."""


@dataclass(frozen=True)
class Question:
    id: str
    kind: str  # "choice", "number" or "order"
    answer: Any  # a choice id, a number, or (order, optional) the item ids in the order the run shows them
    evidence: dict[str, Any]  # matcher: the event that settles the question
    since: str = "step"  # where evidence and measure.to are looked for: from the step's start, or the run's
    choices: tuple[dict[str, Any], ...] = ()  # choice: {id, text, match}
    tolerance: float = 0.0  # number
    measure: dict[str, Any] | None = None  # number: {from: matcher, to: matcher}
    items: tuple[dict[str, Any], ...] = ()  # order: {id, text, match}; the run orders them by their first match


@dataclass(frozen=True)
class Step:
    id: str
    index: int
    at: float | None  # trigger {at}: virtual seconds
    event: dict[str, Any] | None  # trigger {event}: a matcher
    commands: tuple[dict[str, Any], ...]  # fault actions (normalised commands)
    page_actions: tuple[dict[str, Any], ...]  # pause, resume, speed, focus, tab
    question: Question | None


class _Catalogued:
    """name, position and title of a lesson or drill, read from its normalised document."""

    document: dict[str, Any]

    @property
    def name(self) -> str:
        return self.document["name"]

    @property
    def position(self) -> int:
        return self.document["position"]

    @property
    def title(self) -> dict[str, str]:
        return self.document["title"]


@dataclass(frozen=True)
class Lesson(_Catalogued):
    document: dict[str, Any]
    scenario: Scenario  # the built-in scenario; a comparison lesson's sides are it with their overrides
    steps: tuple[Step, ...] = field(default=())
    # a comparison lesson: side a's and side b's scenarios, run on one clock with one seed (simulation.comparison)
    sides: tuple[Scenario, Scenario] | None = None

    @property
    def questions(self) -> list[Question]:
        return [s.question for s in self.steps if s.question is not None]

    @property
    def comparison(self) -> dict[str, dict[str, Any]] | None:
        """The overrides of each side ({"a": {...}, "b": {...}}), or None for a lesson of one run."""
        return self.document.get("comparison")

    @property
    def side_names(self) -> tuple[str | None, ...]:
        """The sides whose events the lesson watches: ("a", "b"), or (None,) for a lesson of one run."""
        return SIDES if self.sides is not None else (None,)


@dataclass(frozen=True)
class Drill(_Catalogued):
    document: dict[str, Any]
    scenario: Scenario  # the built-in scenario with the drill's workloads and its hidden fault as only fault
    fault: dict[str, Any]  # the normalised fault command, `at` in seconds
    symptoms: tuple[dict[str, Any], ...] = ()

    @property
    def answer(self) -> str:
        return self.document["answer"]

    @property
    def node(self) -> str | None:
        """The node the hidden cause concerns, which the class is asked to name: the fault's `node`,
        or the node it creates; None for a cluster-wide fault (any node the class names counts)."""
        if self.fault.get("action") == "create-node":
            return self.fault.get("name")
        return self.fault.get("node")

    @property
    def public_document(self) -> dict[str, Any]:
        """What may be shown before the reveal: no fault, answer, explanation or symptoms."""
        return {k: v for k, v in self.document.items() if k not in ("fault", "answer", "explanation", "symptoms")}


class _DocChecker(_Checker):
    comparison = False  # a comparison lesson's matchers may name a side

    def bitext(self, value: Any, path: str) -> dict[str, str]:
        """A text in both languages: {en, zh}, both non-empty."""
        if not isinstance(value, dict):
            self.error(path, f"must be a mapping with non-empty 'en' and 'zh' texts, got {value!r}")
            return {"en": "", "zh": ""}
        m = self.mapping(value, path, ("en", "zh"))
        out = {}
        for lang in ("en", "zh"):
            text = m.get(lang)
            if not isinstance(text, str) or not text.strip():
                self.error(f"{path}.{lang}", "is required (a non-empty text)")
                text = ""
            out[lang] = text.strip()
        return out

    def required(self, doc: dict[str, Any], key: str, path: str) -> Any:
        if key not in doc:
            self.error(path, "is required")
        return doc.get(key)

    def slug_id(self, value: Any, path: str, seen: set[str], what: str) -> str:
        if value is None:
            self.error(path, "is required")
            return ""
        slug = self.slug(value, path)
        if slug in seen:
            self.error(path, f"duplicate {what} {slug!r}")
        seen.add(slug)
        return slug

    def speed(self, value: Any, path: str) -> float:
        return self.number(value, path, 1.0, minimum=MIN_SPEED, maximum=MAX_SPEED)

    def scenario(self, value: Any, path: str) -> Scenario | None:
        if value is None:
            self.error(path, "is required (the name of a built-in scenario)")
            return None
        scenario = get_builtin(value) if isinstance(value, str) else None
        if scenario is None:
            names = ", ".join(s.name for s in builtin_scenarios())
            self.error(path, f"no built-in scenario named {value!r} (built-ins: {names})")
        return scenario

    def listing(self, value: Any, path: str, *, required: bool = True) -> list[Any]:
        if value is None:
            if required:
                self.error(path, "is required (a non-empty list)")
            return []
        if not isinstance(value, list) or (required and not value):
            self.error(path, f"must be a{' non-empty' if required else ''} list, got {value!r}")
            return []
        return value

    def matcher(self, value: Any, path: str) -> dict[str, Any]:
        """An event matcher; in a comparison lesson it may name the `side` (a or b) the event comes from."""
        if not isinstance(value, dict) or "side" not in value:
            return check_matcher(self, value, path)
        side = value["side"]
        if not self.comparison:
            self.error(f"{path}.side", "only a comparison lesson (one with comparison: {a: ..., b: ...}) has sides")
        elif side not in SIDES:
            self.error(f"{path}.side", f"must be a or b (the comparison's sides), got {side!r}")
        rest = check_matcher(self, {k: v for k, v in value.items() if k != "side"}, path)
        return {"side": side, **rest}

    def comparison_sides(self, value: Any, path: str, scenario: Scenario | None) -> tuple[Scenario, Scenario] | None:
        """`comparison: {a: {overrides}, b: {overrides}}`: both sides' scenarios, each the lesson's scenario with
        its overrides (the settings `python -m simulation compare` takes); a problem names `comparison.<side>.<key>`."""
        before = len(self.errors)
        m = self.mapping(value, path, SIDES)
        if not isinstance(value, dict):
            if value is None:
                self.error(path, "must be a mapping {a: {settings}, b: {settings}} (or leave it out)")
            return None
        overrides: dict[str, Any] = {}
        for side in SIDES:
            given = m.get(side, {})
            if not isinstance(given, dict):
                self.error(f"{path}.{side}", f"must be a mapping of settings to values, e.g. "
                                             f"{{kubernetesVersion: \"1.31\"}}, got {given!r}")
                given = {}
            overrides[side] = given
        if not any(overrides.values()):
            self.error(path, "give side a or side b at least one setting to change: the two sides would be one run")
        if scenario is None or len(self.errors) > before:
            return None
        try:
            return side_scenarios(scenario.document, overrides["a"], overrides["b"])
        except ScenarioError as exc:
            for p, message in exc.errors:
                self.error(f"{path}.{p}", message)
            return None


def _head(source: Any, what: str, fields: tuple[str, ...],
          text: str) -> tuple[_DocChecker, dict[str, Any], dict[str, Any], Scenario | None]:
    """Read a lesson or drill and check the fields both have: name, position, title, scenario,
    speed, and its second text (`summary` or `brief`)."""
    c = _DocChecker()
    doc = c.mapping(read_document(source, what, LessonError), "", fields)
    out: dict[str, Any] = {}
    out["name"] = c.slug(doc["name"], "name") if "name" in doc else c.required(doc, "name", "name")
    out["position"] = c.integer(c.required(doc, "position", "position"), "position", 1, minimum=1)
    out["title"] = c.bitext(doc.get("title"), "title")
    scenario = c.scenario(doc.get("scenario"), "scenario")
    out["scenario"] = scenario.name if scenario else doc.get("scenario")
    out["speed"] = c.speed(doc.get("speed"), "speed")
    out[text] = c.bitext(doc.get(text), text)
    return c, doc, out, scenario


def load_lesson(source: Any) -> Lesson:
    """Parse and validate a lesson from a dict, YAML/JSON text, or a file path."""
    c, doc, out, scenario = _head(source, "lesson", LESSON_FIELDS, "summary")
    sides = None
    if "comparison" in doc:
        c.comparison = True
        sides = c.comparison_sides(doc["comparison"], "comparison", scenario)
        given = doc["comparison"] if isinstance(doc["comparison"], dict) else {}
        out["comparison"] = {side: copy.deepcopy(given.get(side) or {}) for side in SIDES}
    known_nodes = _scenario_nodes(scenario)
    steps_out: list[dict[str, Any]] = []
    steps: list[Step] = []
    step_ids: set[str] = set()
    question_ids: set[str] = set()
    last_at = 0.0
    for i, raw in enumerate(c.listing(doc.get("steps"), "steps")):
        path = f"steps[{i}]"
        sm = c.mapping(raw, path, STEP_FIELDS)
        if not isinstance(raw, dict):
            continue
        sid = c.slug_id(sm.get("id"), f"{path}.id", step_ids, "step id")
        s_out: dict[str, Any] = {"id": sid, "text": c.bitext(sm.get("text"), f"{path}.text")}
        at, event = _trigger(c, sm.get("trigger"), f"{path}.trigger", scenario, s_out)
        if at is not None:
            if at < last_at:
                c.error(f"{path}.trigger.at",
                        f"must not be before an earlier step's trigger ({format_duration(last_at)})")
            last_at = max(last_at, at)
        commands, page = _actions(c, sm.get("actions"), f"{path}.actions", sides or (scenario,), known_nodes, s_out)
        question = None
        if sm.get("question") is not None:
            question, q_out = _question(c, sm["question"], f"{path}.question", question_ids)
            s_out["question"] = q_out
        steps_out.append(s_out)
        steps.append(Step(id=sid, index=i, at=at, event=event, commands=commands, page_actions=page, question=question))
    out["steps"] = steps_out
    if c.errors:
        raise LessonError(c.errors)
    assert scenario is not None
    return Lesson(document=out, scenario=scenario, steps=tuple(steps), sides=sides)


def _scenario_nodes(scenario: Scenario | None) -> set[str]:
    if scenario is None:
        return set()
    created = {f["name"] for f in scenario.faults if f["action"] == "create-node"}
    return {n for n, _z in scenario.nodes} | created


def _trigger(c: _DocChecker, raw: Any, path: str, scenario: Scenario | None,
             out: dict[str, Any]) -> tuple[float | None, dict[str, Any] | None]:
    out["trigger"] = None
    if raw is None:
        return None, None
    tm = c.mapping(raw, path, ("at", "event"))
    if not isinstance(raw, dict):
        return None, None
    if ("at" in tm) == ("event" in tm):
        c.error(path, "give exactly one of 'at' (a virtual time) or 'event' (a matcher)")
        return None, None
    if "at" in tm:
        duration = scenario.duration if scenario else None
        at = c.duration(tm["at"], f"{path}.at", 0.0, maximum=duration)
        out["trigger"] = {"at": format_duration(at)}
        return at, None
    event = c.matcher(tm["event"], f"{path}.event")
    out["trigger"] = {"event": event}
    return None, event


def _actions(c: _DocChecker, raw: Any, path: str, scenarios: tuple[Scenario | None, ...], known_nodes: set[str],
             out: dict[str, Any]) -> tuple[tuple[dict[str, Any], ...], tuple[dict[str, Any], ...]]:
    """A step's actions; a fault action must fit every side of a comparison (it happens on both)."""
    commands: list[dict[str, Any]] = []
    page: list[dict[str, Any]] = []
    normalised: list[dict[str, Any]] = []
    for j, action in enumerate(c.listing(raw, path, required=False)):
        p = f"{path}[{j}]"
        if not isinstance(action, dict) or "action" not in action:
            c.error(p, f"must be a mapping with an 'action', got {action!r}")
            continue
        name = action["action"]
        if name in PAGE_ACTIONS:
            item = _page_action(c, action, p, known_nodes)
            page.append(item)
        else:
            if any(scenario is None for scenario in scenarios):
                continue
            try:
                for scenario in scenarios:
                    assert scenario is not None  # the ones without a scenario were skipped above
                    item = validate_command(action, scenario)
            except CommandError as exc:
                _command_errors(c, p, str(exc), name)
                continue
            if item["action"] == "create-node":
                known_nodes.add(item["name"])
            commands.append(item)
        normalised.append(item)
    out["actions"] = normalised
    return tuple(commands), tuple(page)


def _command_errors(c: _DocChecker, path: str, message: str, action: Any) -> None:
    """A CommandError's text is "field: problem; field: problem": keep the field in the path."""
    for part in message.split("; "):
        field_name, sep, problem = part.partition(": ")
        if sep and " " not in field_name:
            if field_name == "action" and "unknown action" in problem:
                problem += f" (or a page action: {', '.join(PAGE_ACTIONS)})"
            c.error(f"{path}.{field_name}", problem)
        else:
            c.error(path, part)


def _page_action(c: _DocChecker, action: dict[str, Any], path: str, known_nodes: set[str]) -> dict[str, Any]:
    name = action["action"]
    extra = {"speed": ("value",), "focus": ("node",), "tab": ("tab",)}.get(name, ())
    c.mapping(action, path, ("action", *extra))
    item: dict[str, Any] = {"action": name}
    if name == "speed":
        if "value" not in action:
            c.error(f"{path}.value", "is required (0.1 to 100)")
        item["value"] = c.speed(action.get("value"), f"{path}.value")
    elif name == "focus":
        node = action.get("node")
        if not isinstance(node, str) or node not in known_nodes:
            c.error(f"{path}.node", f"unknown node {node!r} (nodes: {', '.join(sorted(known_nodes, key=_node_order))})")
        item["node"] = node
    elif name == "tab":
        tab = action.get("tab")
        if tab not in TABS:
            c.error(f"{path}.tab", f"must be one of {', '.join(TABS)}, got {tab!r}")
        item["tab"] = tab
    return item


def _node_order(name: str) -> tuple[int, str]:
    return (len(name), name)


def _question(c: _DocChecker, raw: Any, path: str, seen: set[str]) -> tuple[Question | None, dict[str, Any]]:
    qm = c.mapping(raw, path, QUESTION_FIELDS)
    out: dict[str, Any] = {"id": c.slug_id(qm.get("id"), f"{path}.id", seen, "question id"),
                           "text": c.bitext(qm.get("text"), f"{path}.text")}
    kind = qm.get("kind")
    if kind not in QUESTION_KINDS:
        c.error(f"{path}.kind", f"must be {', '.join(QUESTION_KINDS[:-1])} or {QUESTION_KINDS[-1]}, got {kind!r}")
        return None, out
    out["kind"] = kind
    since = qm.get("since", "step")
    if since not in ("step", "start"):
        c.error(f"{path}.since",
                f"must be step (events from the step's start on) or start (the whole run), got {since!r}")
    out["since"] = since
    for other, owner in ONLY_FOR.items():
        if other in qm and owner != kind:
            c.error(f"{path}.{other}", f"only applies to {owner} questions")
    if kind == "order" and qm.get("evidence") is not None:
        c.error(f"{path}.evidence", "does not apply to order questions: each item's match dates that item")
    choices: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    measure = None
    tolerance = 0.0
    answer = qm.get("answer")
    evidence: dict[str, Any] | None
    if kind == "choice":
        choices = _choices(c, qm.get("choices"), f"{path}.choices", with_match=True)
        out["choices"] = choices
        ids = [ch["id"] for ch in choices]
        if answer not in ids:
            c.error(f"{path}.answer", f"must be one of the choice ids ({', '.join(map(str, ids))}), got {answer!r}")
        if "evidence" not in qm:
            c.error(f"{path}.evidence", "is required (a matcher for the event that settles the question)")
        evidence = c.matcher(qm.get("evidence"), f"{path}.evidence") if "evidence" in qm else {}
    elif kind == "order":
        items = _items(c, qm.get("items"), f"{path}.items")
        out["items"] = items
        if answer is not None:
            answer = _order_answer(c, answer, f"{path}.answer", [it["id"] for it in items])
        evidence = None  # every item's own match settles it
    else:
        out["unit"] = c.string(qm.get("unit"), f"{path}.unit", "")
        if isinstance(answer, bool) or not isinstance(answer, (int, float)):
            c.error(f"{path}.answer", f"must be a number, got {answer!r}")
        tolerance = c.number(qm.get("tolerance"), f"{path}.tolerance", 0.0)
        out["tolerance"] = tolerance
        mm = c.mapping(qm.get("measure"), f"{path}.measure", ("from", "to"))
        if not isinstance(qm.get("measure"), dict):
            c.error(f"{path}.measure", "is required: {from: <matcher>, to: <matcher>}")
        measure = {"from": c.matcher(mm.get("from"), f"{path}.measure.from"),
                   "to": c.matcher(mm.get("to"), f"{path}.measure.to")}
        out["measure"] = measure
        evidence = c.matcher(qm["evidence"], f"{path}.evidence") if "evidence" in qm else measure["to"]
    out["answer"] = answer
    out["evidence"] = evidence
    out["explain"] = c.bitext(qm["explain"], f"{path}.explain") if qm.get("explain") is not None else None
    question = Question(id=out["id"], kind=kind, answer=answer, evidence=evidence or {}, since=since,
                        choices=tuple(choices), tolerance=tolerance, measure=measure, items=tuple(items))
    return question, out


def _items(c: _DocChecker, raw: Any, path: str) -> list[dict[str, Any]]:
    """An order question's events: 3 to 6, each {id, text, match}."""
    items = c.listing(raw, path)
    if items and not MIN_ITEMS <= len(items) <= MAX_ITEMS:
        c.error(path, f"give {MIN_ITEMS} to {MAX_ITEMS} events to put in order, got {len(items)}")
    out = []
    ids: set[str] = set()
    for k, raw_item in enumerate(items):
        p = f"{path}[{k}]"
        im = c.mapping(raw_item, p, ("id", "text", "match"))
        item: dict[str, Any] = {"id": c.slug_id(im.get("id"), f"{p}.id", ids, "item id"),
                                "text": c.bitext(im.get("text"), f"{p}.text")}
        if "match" not in im:
            c.error(f"{p}.match", "is required (a matcher for the event; its first match in the window dates the item)")
        item["match"] = c.matcher(im.get("match"), f"{p}.match") if "match" in im else {}
        out.append(item)
    return out


def _order_answer(c: _DocChecker, raw: Any, path: str, ids: list[str]) -> list[str] | None:
    """An order question's optional answer: every item id once (the tests check it against the run)."""
    if not isinstance(raw, list) or sorted(map(str, raw)) != sorted(ids) or len(set(map(str, raw))) != len(raw):
        c.error(path, f"must list every item id once, in the order the run shows them ({', '.join(ids)}), got {raw!r}")
        return None
    return [str(x) for x in raw]


def _choices(c: _DocChecker, raw: Any, path: str, *, with_match: bool) -> list[dict[str, Any]]:
    out = []
    ids: set[str] = set()
    items = c.listing(raw, path)
    if items and len(items) < 2:
        c.error(path, "give at least two choices")
    for k, ch in enumerate(items):
        p = f"{path}[{k}]"
        cm = c.mapping(ch, p, ("id", "text", "match") if with_match else ("id", "text"))
        item: dict[str, Any] = {"id": c.slug_id(cm.get("id"), f"{p}.id", ids, "choice id"),
                                "text": c.bitext(cm.get("text"), f"{p}.text")}
        if with_match:
            if "match" not in cm:
                c.error(f"{p}.match", "is required (a matcher the evidence event fits only when this choice is right)")
            item["match"] = c.matcher(cm.get("match"), f"{p}.match") if "match" in cm else {}
        out.append(item)
    return out


def load_drill(source: Any) -> Drill:
    """Parse and validate a drill from a dict, YAML/JSON text, or a file path."""
    c, doc, out, base = _head(source, "drill", DRILL_FIELDS, "brief")
    scenario = _drill_scenario(c, base, out, doc.get("workloads"))
    fault = _drill_fault(c, doc.get("fault"), scenario, out)
    choices = _choices(c, doc.get("choices"), "choices", with_match=False)
    out["choices"] = choices
    ids = [ch["id"] for ch in choices]
    default_answer = fault.get("action") if fault else None
    answer = doc.get("answer", default_answer)
    if answer not in ids:
        where = "answer" if "answer" in doc else "choices"
        c.error(where, f"the answer {answer!r} must be one of the choice ids ({', '.join(map(str, ids))})")
    out["answer"] = answer
    nodes = _drill_nodes(c, doc.get("nodes"), scenario, fault)
    out["nodes"] = nodes
    out["explanation"] = c.bitext(doc.get("explanation"), "explanation")
    symptoms = [c.matcher(m, f"symptoms[{i}]") for i, m in enumerate(c.listing(doc.get("symptoms"), "symptoms"))]
    out["symptoms"] = symptoms
    if c.errors:
        raise LessonError(c.errors)
    assert scenario is not None and fault is not None
    scenario = load_scenario({**scenario.document, "faults": [out["fault"]]})
    return Drill(document=out, scenario=scenario, fault=fault, symptoms=tuple(symptoms))


def _drill_scenario(c: _DocChecker, base: Scenario | None, out: dict[str, Any], workloads: Any) -> Scenario | None:
    """The built-in scenario renamed after the drill (a snapshot names the scenario), with the
    drill's extra workloads and without its faults; the drill's fault is added once validated."""
    extra = c.listing(workloads, "workloads", required=False)
    out["workloads"] = extra
    if base is None:
        return None
    doc = {k: v for k, v in base.document.items() if k != "faults"}
    name = out["name"] if isinstance(out["name"], str) and SLUG.match(out["name"]) else base.name
    doc.update(name=name, title=out["title"], watch=out["brief"])
    own = base.document["cluster"]["workloads"]
    doc["cluster"] = {**base.document["cluster"], "workloads": [*own, *extra]}
    try:
        scenario = load_scenario(doc)
    except ScenarioError as exc:
        prefix = "cluster.workloads["
        for p, m in exc.errors:
            if p.startswith(prefix):
                index, _sep, rest = p[len(prefix):].partition("]")
                if index.isdigit() and int(index) >= len(own):
                    p = f"workloads[{int(index) - len(own)}]{rest}"
            c.error(p if p.startswith("workloads") else f"workloads: {p}" if p else "workloads", m)
        return None
    out["workloads"] = scenario.document["cluster"]["workloads"][len(own):]
    return scenario


def _drill_fault(c: _DocChecker, raw: Any, scenario: Scenario | None, out: dict[str, Any]) -> dict[str, Any] | None:
    if not isinstance(raw, dict):
        c.error("fault", f"is required: a mapping with 'at', 'action' and the action's fields, got {raw!r}")
        return None
    if "at" not in raw:
        c.error("fault.at", "is required (when the fault happens, e.g. 60s)")
    at = c.duration(raw.get("at"), "fault.at", 0.0, maximum=scenario.duration if scenario else None)
    if scenario is None:
        return None
    body = {k: v for k, v in raw.items() if k != "at"}
    try:
        command = validate_command(body, scenario)
    except CommandError as exc:
        _command_errors(c, "fault", str(exc), body.get("action"))
        return None
    out["fault"] = {"at": format_duration(at), **command}
    return {**command, "at": at}


def _drill_nodes(c: _DocChecker, raw: Any, scenario: Scenario | None, fault: dict[str, Any] | None) -> list[str]:
    known = _scenario_nodes(scenario)
    if fault and fault.get("action") == "create-node":  # a node the hidden cause itself adds is one to suspect
        known.add(fault["name"])
    if raw is None:
        return sorted(known, key=_node_order)
    nodes = []
    seen: set[str] = set()
    for i, node in enumerate(c.listing(raw, "nodes")):
        if not isinstance(node, str) or (scenario is not None and node not in known):
            c.error(f"nodes[{i}]", f"unknown node {node!r}")
        elif node in seen:
            c.error(f"nodes[{i}]", f"duplicate node {node!r}")
        seen.add(node)
        nodes.append(node)
    if fault and fault.get("node") and scenario is not None and fault["node"] not in seen:
        c.error("nodes", f"must include the fault's node {fault['node']!r}, so that the class can pick it")
    return nodes
