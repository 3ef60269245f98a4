"""Reading request input strictly: JSON object bodies and typed query parameters (the fields of a body: fields.py)."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest

from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.runs.fields import json_type


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
        raise ApiError(400, "not-an-object", f"the body must be a JSON object, got {json_type(value)}")
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
