"""A JSON object sent by a client (a request body, a command) read by its pydantic model, with errors that name the
field and say what was wrong in words: shared by the REST API (api/contract.py, whose models generate the OpenAPI
document) and the services behind it (``commands.py``), so that a body is checked once, by its model, and the same
mistake gets the same message wherever it is made.

A refused body is a 400 of the API's error shape (errors.py), e.g. ``speed: must be between 0.1 and 100, got 0``,
with every problem in ``errors``.
"""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue

from heartbeat_site.live.errors import ApiError


def absent_not_null(schema: dict[str, Any], model: type[BaseModel], optional_only: bool = False) -> None:
    """A request body's optional field may be left out, never null: its schema says the type alone (and so does
    a response's field that is left out rather than null, with ``optional_only``: a required one may be null)."""
    for name, part in schema.get("properties", {}).items():
        part.pop("title", None)
        optional = part.get("default", False) is None
        if optional:
            del part["default"]
        branches = part.get("anyOf", [])
        if {"type": "null"} in branches and (optional or not optional_only):
            rest = [branch for branch in branches if branch != {"type": "null"}]
            del part["anyOf"]
            schema["properties"][name] = {**(rest[0] if len(rest) == 1 else {"anyOf": rest}), **part}
    schema.update(getattr(model, "together", {}))


class Body(BaseModel):
    """A request body: no field beyond the model's, no conversion (``"5"`` is no number), no null for a field
    left out (:func:`parse`)."""

    model_config = ConfigDict(extra="forbid", strict=True, json_schema_extra=absent_not_null)
    # which fields go together, in the schema's words (oneOf, anyOf); the model's validator checks it
    together: ClassVar[dict[str, Any]] = {}


class Tagged:
    """Mixed into a ``RootModel`` whose root is a union of :class:`Body` models told apart by one field, its
    ``tag`` (a command's action, the union's discriminator): :func:`parse` then names the fields as the body does
    and ``tag_problem`` words a missing or unknown tag."""

    tag: ClassVar[str]
    model_fields: ClassVar[dict[str, Any]]

    @staticmethod
    def tag_problem(body: object) -> tuple[str, str, str]:
        """(error code, field, message in words) for a body whose tag is missing or unknown."""
        raise NotImplementedError

    @classmethod
    def kind_of(cls, tag: object) -> type[BaseModel]:
        """The model of the bodies with this tag."""
        union = get_args(cls.model_fields["root"].annotation)
        return next(kind for kind in union if tag in get_args(kind.model_fields[cls.tag].annotation))


class ComponentSchemas(GenerateJsonSchema):
    """pydantic's JSON Schemas, less a title for each field (its name says it), with references to the scenario's
    parts, which are not models, left as they are (api/contract.py: the OpenAPI document's components)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def handle_ref_overrides(self, json_schema: JsonSchemaValue) -> JsonSchemaValue:
        if json_schema.get("$ref") not in self.json_to_defs_refs:
            return json_schema
        return super().handle_ref_overrides(json_schema)


M = TypeVar("M", bound=BaseModel)

_TYPE_WORDS = {"float_type": "a number", "int_type": "a whole number", "bool_type": "true or false",
               "string_type": "a string", "dict_type": "a JSON object", "model_type": "a JSON object",
               "model_attributes_type": "a JSON object", "list_type": "an array"}
_RANGES = ("greater_than_equal", "less_than_equal", "greater_than", "less_than")


def parse(model: type[M], body: object) -> M:
    """``body`` read by ``model``, or a 400 whose message names the (first) field and says what is wrong in words;
    ``errors`` lists every problem, by field."""
    nulls = sorted(key for key, value in body.items() if value is None) if isinstance(body, dict) else []
    try:
        if nulls:  # an optional field is None in the model when left out; sent, it must have a value
            raise ApiError(400, "wrong-type", f"{nulls[0]}: must not be null; leave the field out",
                           errors=[{"field": key, "message": "must not be null"} for key in nulls])
        return model.model_validate(body)
    except ValidationError as exc:
        problems = _problems(model, exc)
    code, field, message = problems[0]
    raise ApiError(400, code, f"{field}: {message}" if field else message,
                   errors=[{"field": field, "message": message} for _code, field, message in problems])


def _problems(model: type[BaseModel], exc: ValidationError) -> list[tuple[str, str, str]]:
    """(error code, field, message in words) of each problem, the unknown fields of one object together."""
    problems: list[tuple[str, str, str]] = []
    unknown: dict[tuple, list[str]] = {}
    tagged = model if issubclass(model, Tagged) else None
    for error in exc.errors(include_url=False):
        kind, loc, given = error["type"], error["loc"], error.get("input")
        if tagged is not None and loc:  # a tagged body's location starts with its tag: "speed", "value"
            loc = loc[1:]
        field = ".".join(str(part) for part in loc)
        if kind == "extra_forbidden":
            unknown.setdefault(loc[:-1], []).append(str(loc[-1]))
        elif tagged is not None and kind in ("union_tag_not_found", "union_tag_invalid"):
            problems.append(tagged.tag_problem(given))
        elif kind == "missing":
            problems.append(("missing-field", field, "is required"))
        elif kind in _TYPE_WORDS:
            problems.append(("wrong-type", field, f"must be {_TYPE_WORDS[kind]}, got {json_type(given)}"))
        elif kind in _RANGES:
            problems.append(("out-of-range", field, _range_words(_model_at(model, exc), loc, given)))
        elif kind == "literal_error":
            problems.append((f"unknown-{loc[-1]}", field, f"{given!r} is not one of {error['ctx']['expected']}"))
        elif kind in ("string_too_short", "string_too_long"):
            problems.append(("out-of-range", field, error["msg"].replace("String should", "must").lower()))
        else:  # ours (PydanticCustomError): the code is its type, the message is in words already
            problems.append((kind, field, error["msg"]))
    for where, names in unknown.items():
        allowed = sorted(_model_at(model, exc).model_fields)
        what = ".".join(map(str, where)) or "body"
        if tagged is not None:
            what = f"{exc.errors()[0]['loc'][0]} {model.__name__.lower()}"
        problems.insert(0, ("unknown-field", "", f"{what}: unknown field(s) {', '.join(sorted(names))}; allowed: "
                            f"{', '.join(allowed)}"))
    return problems


def _model_at(model: type[BaseModel], exc: ValidationError) -> type[BaseModel]:
    """The model that read the body: ``model``, or for a tagged body the model of its tag."""
    if not issubclass(model, Tagged):
        return model
    return model.kind_of(exc.errors()[0]["loc"][0])


def _range_words(model: type[BaseModel], loc: tuple, given: object) -> str:
    """``must be between 0.1 and 100, got 0``: the bounds are those the model's field says (its schema's)."""
    field = model.model_fields[str(loc[-1])]
    # a bound is on the field, or (an optional field, ``Speed | None``) on its annotated type
    parts = [field, *(meta for arg in get_args(field.annotation) for meta in getattr(arg, "__metadata__", ()))]
    bounds = {key: value for part in parts for item in getattr(part, "metadata", ()) for key in ("ge", "le")
              if (value := getattr(item, key, None)) is not None}
    low, high = (f"{bound:g}" if isinstance(bound, float) else str(bound) for bound in (bounds["ge"], bounds["le"]))
    return f"must be between {low} and {high}, got {given!r}"


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"
