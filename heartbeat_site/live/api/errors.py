"""Every API error is JSON naming the problem: ``{"error": code, "message": text, ...}``.

Views raise :class:`ApiError`; the middleware turns it (and anything unexpected) into a
JSON response so that scripts never have to parse an HTML error page.
"""

from __future__ import annotations

import logging
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An error a client caused (or must hear about), with its HTTP status."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra

    def response(self) -> JsonResponse:
        return error_response(self.status, self.code, self.message, **self.extra)


def error_response(status: int, code: str, message: str, **extra: Any) -> JsonResponse:
    response = JsonResponse({"error": code, "message": message, **extra}, status=status)
    if status == 405 and "allowed" in extra:
        response["Allow"] = ", ".join(extra["allowed"])
    return response


def is_api_path(path: str) -> bool:
    return path.startswith("/api/") or path == "/api"


class JsonErrorsForApiMiddleware:
    """Turn ApiError and unexpected exceptions under /api/ into JSON responses."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_api_path(request.path):
            return None
        if isinstance(exception, ApiError):
            return exception.response()
        log.exception("unexpected error on %s %s", request.method, request.path)
        return error_response(500, "internal", f"unexpected server error: {type(exception).__name__}")


def not_found_handler(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_path(request.path):
        return error_response(404, "not-found", f"no API endpoint at {request.path}")
    return defaults.page_not_found(request, exception)


def server_error_handler(request: HttpRequest) -> HttpResponse:
    if is_api_path(request.path):
        return error_response(500, "internal", "unexpected server error")
    return defaults.server_error(request)
