"""The OpenAPI 3 document served at /api/openapi.json (kept beside the views it describes;
tests check that every API route appears here and every documented path resolves)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, JsonResponse

from heartbeat_site.live.api.contract import component_schemas
from heartbeat_site.live.api.events import EVENT_TYPES, MAX_AFTER
from heartbeat_site.live.lookback.exports import EXPORT_NAMES
from simulation.schema import scenario_schema

_ERROR = {"$ref": "#/components/responses/Error"}
# `x-400-beyond-schema`: the 400s an operation answers to a request its schema accepts, by error code, each with
# what decides it (the run's nodes or clock, one field against another); tests/web/test_api_fuzz.py holds them to it.
_SCENARIO_400 = {
    "invalid-scenario": "what a schema cannot say: a fault's node or zone must exist, its time within the duration, "
    "one field against another (docs/architecture.md §6.2)",
    "cluster-too-large": "more nodes than the site's HEARTBEAT_MAX_NODES",
}
_INVALID = {"$ref": "#/components/responses/InvalidScenario"}
_RUN_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}, "description": "run id"}
_TYPES = "|".join(EVENT_TYPES)
_AFTER = {
    "name": "after",
    "in": "query",
    "schema": {"type": "integer", "minimum": 0, "maximum": MAX_AFTER, "default": 0},
    "description": "return what has seq > after",
}


def _limit(default: int) -> dict:
    return {
        "name": "limit",
        "in": "query",
        "schema": {"type": "integer", "minimum": 1, "maximum": 5000, "default": default},
    }


def _json(schema: dict) -> dict:
    return {"application/json": {"schema": schema}}


def _ref(model: str) -> dict:
    return {"$ref": f"#/components/schemas/{model}"}


def _ok(description: str, schema: dict, status: str = "200") -> dict:
    return {status: {"description": description, "content": _json(schema)}}




def nulls_as_absent(schema: Any) -> Any:
    """``schema`` with JSON null allowed for each optional field of an object, as the scenario validator reads it
    (absent: YAML's empty value, ``faults:``, is null in the JSON the builder sends); simulation/schema.py, for
    editors, refuses null."""
    if isinstance(schema, list):
        return [nulls_as_absent(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: nulls_as_absent(value) for key, value in schema.items()}
    if out.get("type") == "object" and "properties" in out:
        required = set(out.get("required", ()))
        out["properties"] = {name: part if name in required else {"anyOf": [part, {"type": "null"}]}
                             for name, part in out["properties"].items()}
    return out


# The scenario document's JSON Schema (simulation/schema.py), its parts among the components, as the API reads it;
# the same schema, standalone and without nulls, is GET /api/scenarios/schema.json.
_SCENARIO, _SCENARIO_PARTS = map(nulls_as_absent, scenario_schema("#/components/schemas/Scenario"))
_SCENARIO_DOC = {"$ref": "#/components/schemas/Scenario"}
_SAVED = {"$ref": "#/components/schemas/SavedScenario"}
_CREATE_ERRORS = dict.fromkeys(("400", "404", "413", "429", "503"), _ERROR)
_COMMAND_ERRORS = dict.fromkeys(("400", "401", "403", "404", "409", "413"), _ERROR)


def _recipe_post(summary: str, id_parameter: dict) -> dict:
    """POST <run or comparison>/recipe: the same answer for both (a comparison's recipe also has its overrides)."""
    return {
        "post": {
            "summary": summary,
            "security": [{"controlToken": []}],
            "parameters": [id_parameter],
            "responses": {
                **_ok("the recipe", {"$ref": "#/components/schemas/RecipeLink"}, "201"),
                "401": _ERROR,
                "403": _ERROR,
                "404": _ERROR,
                "409": _ERROR,
            },
        }
    }


def _qr(summary: str, parameter: dict) -> dict:
    svg = {"description": "the QR code", "content": {"image/svg+xml": {"schema": {"type": "string"}}}}
    return {"get": {"summary": summary, "parameters": [parameter], "responses": {"200": svg, "404": _ERROR}}}


_COMPARISON_ID = {"name": "id", "in": "path", "required": True, "schema": {"type": "string"},
                  "description": "comparison id"}

DOCUMENT: dict = {
    "openapi": "3.1.0",
    "info": {
        "title": "Heartbeat Classroom API",
        "version": "1.0.0",
        "description": (
            "Scenarios, live runs and their commands. No cookie or CSRF token is needed; control of a run is by "
            'its bearer control token alone. Every error is JSON: {"error": code, "message": text}. Live frames: '
            "websocket /ws/runs/{id}/ (see README 'Websocket protocol')."
        ),
    },
    "paths": {
        "/api/scenarios": {
            "get": {
                "summary": "List scenarios (built-in and saved)",
                "responses": _ok("scenarios", _ref("ScenarioList")),
            },
            "post": {
                "summary": "Save a custom scenario",
                "requestBody": {"required": True, "content": _json({"$ref": "#/components/schemas/ScenarioSave"})},
                "x-400-beyond-schema": _SCENARIO_400,
                "responses": {
                    **_ok("saved", _SAVED, "201"),
                    **_ok("the name's document replaced (its id and link are new; earlier links stay)", _SAVED),
                    "400": _ERROR,
                    "409": _ERROR,
                    "413": _ERROR,
                },
            },
        },
        "/api/scenarios/validate": {
            "post": {
                "summary": "Validate a scenario document without saving it",
                "requestBody": {"required": True, "content": _json(
                    {"anyOf": [_SCENARIO_DOC, {"$ref": "#/components/schemas/ScenarioSave"}]})},
                "x-400-beyond-schema": _SCENARIO_400,
                "responses": {
                    **_ok("valid; the normalised document", _ref("ScenarioValidated")),
                    "400": _INVALID,
                    "413": _ERROR,
                },
            }
        },
        "/api/scenarios/preview": {
            "post": {
                "summary": "Run a document's first minutes headless: its key transitions at their virtual times",
                "description": (
                    "At most 50 nodes and 15 minutes of virtual time (`until`, default 10m, never past the "
                    "document's `duration`). The same document and seed give the same transitions in a run."
                ),
                "requestBody": {"required": True, "content": _json({"$ref": "#/components/schemas/ScenarioPreview"})},
                "x-400-beyond-schema": {
                    **_SCENARIO_400,
                    "preview-too-large": "more than the 50 nodes a preview runs",
                    "bad-until": "until past the 15 minutes a preview runs (a duration's bound written as text)",
                },
                "responses": {
                    **_ok("the key transitions and the state at `until`", {"$ref": "#/components/schemas/Preview"}),
                    "400": _INVALID,
                    "413": _ERROR,
                },
            }
        },
        "/api/scenarios/schema.json": {
            "get": {
                "summary": "The JSON Schema of the scenario document (docs/architecture.md §3)",
                "responses": _ok("JSON Schema, draft 2020-12", {"type": "object"}),
            }
        },
        "/api/scenarios/{name}": {
            "get": {
                "summary": "A scenario document",
                "parameters": [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {**_ok("the document", _SCENARIO_DOC), "404": _ERROR},
            }
        },
        "/api/lessons": {
            "get": {
                "summary": "The lesson path: steps and questions, without their answers (docs/lessons.md)",
                "responses": _ok("the lessons", _ref("Lessons")),
            }
        },
        "/api/drills": {
            "get": {
                "summary": "The drills: briefs and possible causes, never the cause (docs/lessons.md)",
                "responses": _ok("the drills", _ref("Drills")),
            }
        },
        "/api/observations": {
            "post": {
                "summary": "Watch a real cluster read-only, as a run (docs/observe.md); off unless the operator sets "
                "HEARTBEAT_OBSERVE=1, and only the hosts in HEARTBEAT_OBSERVE_HOSTS",
                "requestBody": {"required": True, "content": _json(_ref("ObservationCreate"))},
                "x-400-beyond-schema": {
                    "bad-server": "the URL is not http(s) with a host, or carries a user, query or fragment",
                    "bad-token": "a token that is not one line of ASCII",
                    "bad-ca": "a CA that is not PEM certificates",
                    "bad-kubeconfig": "a kubeconfig that is not YAML, or lacks its current context's parts",
                    "unsupported-credentials": "a kubeconfig user with client certificates or an exec plugin",
                    "missing-field": "no server, in the body or the kubeconfig",
                    "cluster-refused": "the cluster refused the token (which resource it may not list)",
                    "bad-grace-period": "a nodeMonitorGracePeriod that is no duration, or not in (0, 3600] s",
                },
                "responses": {**_ok("watching", _ref("ObservationStarted"), "201"),
                              **dict.fromkeys(("400", "403", "413", "429", "502", "503"), _ERROR)},
            }
        },
        "/api/audit-replays": {
            "post": {
                "summary": "Replay a kube-apiserver audit log (audit.k8s.io/v1 Events, JSON lines) as an ended run of "
                "its node health traffic (docs/observe.md)",
                "requestBody": {"required": True, "description": "the log as --audit-log-path writes it (the body's "
                                "content type is not read)",
                                "content": {"text/plain": {"schema": {"type": "string"}}}},
                "x-400-beyond-schema": {
                    "not-an-audit-log": "no line is an audit.k8s.io Event",
                    "nothing-to-replay": "no write to nodes, leases in kube-node-lease, pods, endpointslices or events",
                },
                "responses": {**_ok("replayed", _ref("AuditReplayed"), "201"), "400": _ERROR, "413": _ERROR},
            }
        },
        "/api/runs": {
            "post": {
                "summary": "Start a run from a scenario name, a document, a lesson or a drill (exactly one of them)",
                "requestBody": {"required": True, "content": _json({"$ref": "#/components/schemas/RunCreate"})},
                "x-400-beyond-schema": _SCENARIO_400,
                "responses": {
                    **_ok("created; a comparison lesson or a comparison's recipe starts a comparison, answered as POST "
                          "/api/comparisons answers",
                          {"anyOf": [{"$ref": "#/components/schemas/RunStarted"},
                                     {"$ref": "#/components/schemas/ComparisonStarted"}]}, "201"),
                    **_CREATE_ERRORS,
                },
            }
        },
        "/api/comparisons": {
            "post": {
                "summary": "Run one scenario twice with one seed on one clock, each side with its own settings",
                "requestBody": {"required": True, "content": _json({"$ref": "#/components/schemas/ComparisonCreate"})},
                "x-400-beyond-schema": {
                    **_SCENARIO_400,
                    "invalid-overrides": "a side's setting the scenario validator refuses (a bad value, a workload or "
                    "zone the scenario does not have, a fault's node that a smaller zone no longer has), each "
                    "named in errors as <side>.<field>",
                },
                "responses": {
                    **_ok("created", {"$ref": "#/components/schemas/ComparisonStarted"}, "201"),
                    **_CREATE_ERRORS,
                },
            }
        },
        "/api/comparisons/{id}": {
            "get": {
                "summary": "A comparison: both runs and the key transitions that differ so far",
                "parameters": [_COMPARISON_ID],
                "responses": {
                    **_ok("the comparison", _ref("ComparisonDetail")),
                    "404": _ERROR,
                },
            }
        },
        "/api/comparisons/{id}/commands": {
            "post": {
                "summary": "A command for both sides, applied at one virtual instant (needs the control token)",
                "security": [{"controlToken": []}],
                "parameters": [_COMPARISON_ID],
                "requestBody": {"required": True, "content": _json({"$ref": "#/components/schemas/Command"})},
                "x-400-beyond-schema": {
                    "invalid-command": "a fault either side cannot take: a node or zone it does not have, a field "
                    "its action does not take",
                    "unknown-node": "a focus on a node the runs do not have",
                    "command-rejected": "the simulation of a side refused it",
                },
                "responses": {
                    **_ok("accepted: the virtual time both sides apply it at, and each side's command",
                          _ref("ComparisonCommandResult"), "202"),
                    **_COMMAND_ERRORS,
                },
            },
        },
        "/api/comparisons/{id}/qr.svg": _qr("The comparison's viewer link as a QR code (SVG), drawn by the site",
                                            _COMPARISON_ID),
        "/api/runs/{id}": {
            "get": {
                "summary": "A run: clock, status, summary",
                "parameters": [_RUN_ID],
                "responses": {**_ok("the run", {"$ref": "#/components/schemas/Run"}), "404": _ERROR},
            }
        },
        "/api/runs/{id}/commands": {
            "get": {
                "summary": "The run's command log, in order",
                "parameters": [_RUN_ID],
                "responses": {
                    **_ok("commands", _ref("CommandLog")),
                    "404": _ERROR,
                },
            },
            "post": {
                "summary": "Send a command (needs the control token)",
                "security": [{"controlToken": []}],
                "parameters": [_RUN_ID],
                "requestBody": {"required": True, "content": _json({"$ref": "#/components/schemas/Command"})},
                "x-400-beyond-schema": {
                    "invalid-command": "a fault the run cannot take: a node or zone it does not have, a field its "
                    "action does not take (the scenario document's faults say which)",
                    "unknown-node": "a focus on a node the run does not have",
                },
                "responses": {
                    **_ok(
                        "accepted: seq and the virtual time at which it applies",
                        {"$ref": "#/components/schemas/CommandResult"},
                        "202",
                    ),
                    **_COMMAND_ERRORS,
                },
            },
        },
        "/api/runs/{id}/events": {
            "get": {
                "summary": "Page through the run's events",
                "parameters": [
                    _RUN_ID,
                    _AFTER,
                    _limit(1000),
                    {
                        "name": "types",
                        "in": "query",
                        "schema": {"type": "string", "pattern": f"^(({_TYPES})(,({_TYPES}))*)?$"},
                        "description": (
                            f"comma-separated event types to keep ({', '.join(EVENT_TYPES)}): the page holds up to "
                            "limit of these; next_after says how far it read. Empty, as absent: all types (an empty "
                            "query parameter is its default, as for every parameter here)"
                        ),
                    },
                    {
                        "name": "detail",
                        "in": "query",
                        "schema": {"type": "string", "enum": ["nodes"]},
                        "description": "nodes: none of the events about single pods (what a large run's page holds)",
                    },
                ],
                "responses": {
                    **_ok("events with seq > after", _ref("EventsPage")),
                    "400": _ERROR,
                    "404": _ERROR,
                },
            }
        },
        "/api/runs/{id}/audit": {
            "get": {
                "summary": "Page through the run's audit records (audit.k8s.io/v1 Events)",
                "parameters": [_RUN_ID, _AFTER, _limit(500)],
                "responses": {
                    **_ok("audit records of write events with seq > after", _ref("AuditPage")),
                    "400": _ERROR,
                    "404": _ERROR,
                },
            }
        },
        "/api/runs/{id}/snapshot": {
            "get": {
                "summary": "The run's snapshot at a virtual time it has reached (replay and seek)",
                "parameters": [
                    _RUN_ID,
                    {
                        "name": "t",
                        "in": "query",
                        "schema": {"type": "number", "minimum": 0},
                        "description": "virtual seconds, at most the run's clock; absent: the run's clock",
                    },
                ],
                "x-400-beyond-schema": {"not-reached": "t is after the virtual time the run has reached"},
                "responses": {
                    **_ok(
                        "the snapshot as the websocket sends it (node level for large runs; a drill's cause "
                        "hidden before its reveal) and the clock at t, paused",
                        _ref("RunSnapshot"),
                    ),
                    "400": _ERROR,
                    "404": _ERROR,
                    "409": {**_ERROR, "description": "older-than-the-log: a real cluster's run (docs/observe.md) whose "
                            "event log no longer holds its first events (HEARTBEAT_EVENT_LOG_SIZE), which rebuild its "
                            "past"},
                },
            }
        },
        "/api/runs/{id}/qr.svg": _qr("The run's viewer link as a QR code (SVG), drawn by the site", _RUN_ID),
        "/api/runs/{id}/kubeconfig": {
            "get": {
                "summary": "A kubeconfig for the run's own Kubernetes API (/k8s/runs/<id>, docs/kubectl.md): one "
                "cluster, one context, no credentials",
                "parameters": [_RUN_ID],
                "responses": {
                    "200": {
                        "description": "the kubeconfig (YAML), as an attachment heartbeat-<id>.kubeconfig",
                        "content": {"application/yaml": {"schema": {
                            "type": "object",
                            "properties": {"apiVersion": {"const": "v1"}, "kind": {"const": "Config"}},
                            "required": ["apiVersion", "kind", "clusters", "contexts"],
                        }}},
                    },
                    "404": _ERROR,
                },
            }
        },
        "/api/runs/{id}/recipe": _recipe_post(
            "A recipe link of this run: document, seed and the trainer's fault commands with times", _RUN_ID),
        "/api/comparisons/{id}/recipe": _recipe_post(
            "A recipe link of this comparison: its document, both sides' settings, seed and commands", _COMPARISON_ID),
        "/api/runs/{id}/report": {
            "get": {
                "summary": "A lesson's or drill's report for its trainer: every question asked, its right answer, the "
                "distribution of answers, the share right and each viewer's answer (by nickname, else anonymous N)",
                "security": [{"controlToken": []}],
                "parameters": [
                    _RUN_ID,
                    {"name": "format", "in": "query", "schema": {"type": "string", "enum": ["json", "csv"],
                                                                 "default": "json"},
                     "description": "csv: one row per question and viewer who answered it, with a header, as an "
                     "attachment (UTF-8 with a byte-order mark)"},
                ],
                "responses": {
                    "200": {
                        "description": "the report",
                        "content": {
                            "application/json": {"schema": _ref("LessonReport")},
                            "text/csv": {"schema": {"type": "string"}},
                        },
                    },
                    "401": _ERROR,
                    "403": _ERROR,
                    "404": _ERROR,
                },
            }
        },
        "/api/runs/{id}/export/{name}": {
            "get": {
                "summary": "A run as a file: summary, audit or event log, sequence diagram (replayed to its clock), "
                "or its objects at a virtual time as kubectl get -o yaml prints them (a List)",
                "parameters": [
                    _RUN_ID,
                    {
                        "name": "name",
                        "in": "path",
                        "required": True,
                        "schema": {"type": "string", "enum": list(EXPORT_NAMES)},
                    },
                    {"name": "from", "in": "query", "schema": {"type": "number", "minimum": 0},
                     "description": "sequence diagrams: window start, virtual seconds (default 0)"},
                    {"name": "to", "in": "query", "schema": {"type": "number", "minimum": 0},
                     "description": "sequence diagrams: window end, virtual seconds (default: the run's clock)"},
                    {"name": "node", "in": "query", "schema": {"type": "string"},
                     "description": "sequence diagrams: the node in focus (default node-2, else the first node)"},
                    {"name": "t", "in": "query", "schema": {"type": "number", "minimum": 0},
                     "description": "objects.yaml: the virtual time, at most the run's clock (default: its clock); "
                     "the other files are of the run's clock, and refuse a t that is no time alike"},
                ],
                "x-400-beyond-schema": {"bad-window": "from is after to", "unknown-node": "the run has no such node",
                                        "not-reached": "objects.yaml: t is after the virtual time the run reached",
                                        "too-many-objects": "objects.yaml of a run of more than 1,000 nodes"},
                "responses": {
                    "200": {
                        "description": "the file, as an attachment",
                        "content": {
                            "text/markdown": {"schema": {"type": "string"}},
                            "application/jsonl": {"schema": {"type": "string"}},
                            "text/vnd.mermaid": {"schema": {"type": "string"}},
                            "image/svg+xml": {"schema": {"type": "string"}},
                            "application/yaml": {"schema": {
                                "type": "object",
                                "description": "objects.yaml: a List as kubectl get -o yaml prints it",
                                "properties": {
                                    "apiVersion": {"const": "v1"},
                                    "kind": {"const": "List"},
                                    "items": {"type": "array", "items": {
                                        "type": "object", "required": ["apiVersion", "kind", "metadata"]}},
                                },
                                "required": ["apiVersion", "kind", "items"],
                            }},
                        },
                    },
                    "400": _ERROR,
                    "404": _ERROR,
                },
            }
        },
        "/api/openapi.json": {
            "get": {"summary": "This document", "responses": _ok("OpenAPI 3 document", {"type": "object"})}
        },
    },
    "components": {
        "securitySchemes": {
            "controlToken": {
                "type": "http",
                "scheme": "bearer",
                "description": "the control_token returned when the run was created",
            }
        },
        "schemas": {
            "Scenario": _SCENARIO,
            **_SCENARIO_PARTS,
            **component_schemas(),
        },
        "responses": {
            "Error": {
                "description": "error naming the problem",
                "content": _json({"$ref": "#/components/schemas/Error"}),
            },
            "InvalidScenario": {
                "description": "the document's problems, each with its field",
                "content": _json({"$ref": "#/components/schemas/InvalidScenario"}),
            },
        },
    },
}


def openapi(request: HttpRequest) -> JsonResponse:
    return JsonResponse(DOCUMENT)
