"""Checks of the fields of a JSON object sent by a client (a request body, a command), with
errors that name the field and what was wrong: shared by the REST API and the services behind it
(``commands.py``), so that the same mistake gets the same message wherever it is made."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from heartbeat_site.live.errors import ApiError


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
        raise ApiError(400, "wrong-type", f"{key}: must be a number, got {json_type(value)}")
    if not minimum <= value <= maximum:
        raise ApiError(400, "out-of-range", f"{key}: must be between {minimum:g} and {maximum:g}, got {value!r}")
    return float(value)


def int_field(body: dict, key: str, *, minimum: int, maximum: int) -> int | None:
    if key not in body:
        return None
    value = body[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ApiError(400, "wrong-type", f"{key}: must be a whole number, got {json_type(value)}")
    if not minimum <= value <= maximum:
        raise ApiError(400, "out-of-range", f"{key}: must be between {minimum} and {maximum}, got {value}")
    return value


def bool_field(body: dict, key: str, default: bool) -> bool:
    value = body.get(key, default)
    if not isinstance(value, bool):
        raise ApiError(400, "wrong-type", f"{key}: must be true or false, got {json_type(value)}")
    return value


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
