"""The JSON Schema of the scenario document agrees with the validator whose messages the CLI and the API give.

Every built-in document is accepted by both; then each field of the built-ins is replaced by values of other types
and ranges, and both must decide alike, except where simulation/schema.py says the schema cannot follow the
validator (one field against another, the bounds of durations written as text) or is stricter about form.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator

from simulation import ScenarioError, builtin_scenarios, load_scenario
from simulation.schema import scenario_json_schema

from .test_validation import BAD_FIELDS
from .trace import scenario

BUILTIN_DIR = Path(__file__).resolve().parents[2] / "simulation" / "builtin"
VALUES = [True, -1, 0, 1.5, "", "x", "9999h", [], {}, {"x": 1}, 6000, "node-1"]
# Errors only the validator can find: a name against the cluster's, a duration's bound written as text,
# one field against another.
CROSS_FIELD = ("unknown node", "unknown zone", "already exists", "duplicate", "must be at most",
               "must be more than 0 and at most", "must not exceed", "can exist when the fault runs", "from 1.30 on")


@pytest.fixture(scope="module")
def schema() -> Draft202012Validator:
    document = scenario_json_schema()
    Draft202012Validator.check_schema(document)
    return Draft202012Validator(document)


def _validator_errors(document: dict) -> list[tuple[str, str]]:
    try:
        load_scenario(document)
    except ScenarioError as exc:
        return exc.errors
    return []


def _leaves(node: Any, path: tuple = ()) -> Iterator[tuple]:
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield (*path, key)
        yield from _leaves(value, (*path, key))


def _replaced(document: dict, path: tuple, value: Any) -> dict:
    out = copy.deepcopy(document)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return out


def test_every_builtin_is_valid_as_written_and_normalised(schema):
    for builtin in builtin_scenarios():
        assert not list(schema.iter_errors(builtin.document)), builtin.name
    for path in BUILTIN_DIR.glob("*.yaml"):
        assert not list(schema.iter_errors(yaml.safe_load(path.read_text(encoding="utf-8")))), path.name


def test_an_empty_document_is_rejected_by_both(schema):
    assert [e.message for e in schema.iter_errors({})] == ["'name' is a required property"]
    assert _validator_errors({}) == [("name", "is required")]


def test_schema_and_validator_decide_alike_on_changed_fields(schema):
    seen: set[tuple] = set()
    checked = 0
    for path in sorted(BUILTIN_DIR.glob("*.yaml")):
        base = yaml.safe_load(path.read_text(encoding="utf-8"))
        for where in _leaves(base):
            shape = tuple(k if isinstance(k, str) else 0 for k in where) + (_action(base, where),)
            if shape in seen:
                continue  # the same field of another fault or workload: already tried
            seen.add(shape)
            for value in VALUES:
                document = _replaced(base, where, value)
                accepted = schema.is_valid(document)
                errors = _validator_errors(document)
                checked += 1
                if accepted and errors:
                    assert all(any(words in m for words in CROSS_FIELD) for _p, m in errors), (where, value, errors)
                elif not accepted and not errors:
                    # the validator's leniency the schema does not copy: an empty value for the fault list
                    assert where == ("faults",) and not value, (where, value)
    assert checked > 1000


def _action(document: dict, where: tuple) -> str:
    """A fault's action: the same field means other things in other actions."""
    if len(where) >= 2 and where[0] == "faults":
        return str(document["faults"][where[1]].get("action"))
    return ""


@pytest.mark.parametrize(("patch", "path", "words"), BAD_FIELDS, ids=[b[1] + ":" + b[2] for b in BAD_FIELDS])
def test_the_validators_bad_fields_are_bad_for_the_schema_too(schema, patch, path, words):
    document = {**scenario("1.33"), **patch}
    errors = _validator_errors(document)
    assert errors, (path, words)
    if all(any(w in m for w in CROSS_FIELD) for _p, m in errors):
        return  # one field against another: only the validator sees it
    assert not schema.is_valid(document), (path, words)
