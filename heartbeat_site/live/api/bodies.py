"""Reading request input strictly: JSON object bodies, typed query parameters, known keys."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest

from heartbeat_site.live.errors import ApiError


def json_object(request: HttpRequest) -> dict[str, Any]:
    """The request body as a JSON object, or an ApiError saying what is wrong with it."""
    limit = settings.HEARTBEAT_MAX_BODY_BYTES
    try:
        raw = request.body
    except RequestDataTooBig:
        raise ApiError(413, "body-too-large", f"request body is larger than the {limit} byte limit") from None
    if len(raw) > limit:
        raise ApiError(413, "body-too-large", f"request body is {len(raw)} bytes, the limit is {limit}")
    if not raw.strip():
        raise ApiError(400, "empty-body", "the request needs a JSON object body")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiError(400, "bad-encoding", "the body must be UTF-8 encoded JSON") from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ApiError(
            400, "malformed-json", f"malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise ApiError(400, "malformed-json", "JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise ApiError(400, "not-an-object", f"the body must be a JSON object, got {_json_type(value)}")
    return value


def reject_unknown_keys(body: dict, allowed: Iterable[str], where: str = "body") -> None:
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        raise ApiError(
            400,
            "unknown-field",
            f"{where}: unknown field(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}",
        )


def number_field(body: dict, key: str, *, minimum: float, maximum: float, default: float | None = None) -> float | None:
    if key not in body:
        return default
    value = body[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ApiError(400, "wrong-type", f"{key}: must be a number, got {_json_type(value)}")
    if not minimum <= value <= maximum:
        raise ApiError(400, "out-of-range", f"{key}: must be between {minimum:g} and {maximum:g}, got {value!r}")
    return float(value)


def int_field(body: dict, key: str, *, minimum: int, maximum: int) -> int | None:
    if key not in body:
        return None
    value = body[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(400, "wrong-type", f"{key}: must be a whole number, got {_json_type(value)}")
    if not minimum <= value <= maximum:
        raise ApiError(400, "out-of-range", f"{key}: must be between {minimum} and {maximum}, got {value}")
    return value


def bool_field(body: dict, key: str, default: bool) -> bool:
    value = body.get(key, default)
    if not isinstance(value, bool):
        raise ApiError(400, "wrong-type", f"{key}: must be true or false, got {_json_type(value)}")
    return value


def query_int(request: HttpRequest, key: str, *, default: int, minimum: int, maximum: int) -> int:
    raw = request.GET.get(key)
    if raw is None or raw == "":
        return default
    if not (raw.isascii() and raw.isdigit()):  # str.isdigit() alone takes "²", which int() refuses
        raise ApiError(400, "bad-query", f"?{key}= must be a whole number >= {minimum}, got {raw!r}")
    value = int(raw)
    if not minimum <= value <= maximum:
        raise ApiError(400, "bad-query", f"?{key}= must be between {minimum} and {maximum}, got {value}")
    return value


def _json_type(value: Any) -> str:
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
