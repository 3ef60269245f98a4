"""Every API error is JSON naming the problem: ``{"error": code, "message": text, ...}``.

Views and the service code they call raise :class:`~heartbeat_site.live.errors.ApiError`; the
method router and the middleware turn it (and anything unexpected) into a JSON response, so
that scripts never have to parse an HTML error page.
"""

from __future__ import annotations

import logging
from typing import Any

import redis
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from heartbeat_site.live.errors import ApiError

log = logging.getLogger(__name__)


def error_response(status: int, code: str, message: str, **extra: Any) -> JsonResponse:
    response = JsonResponse({"error": code, "message": message, **extra}, status=status)
    if status == 405 and "allowed" in extra:
        response["Allow"] = ", ".join(extra["allowed"])
    if status == 401:
        response["WWW-Authenticate"] = "Bearer"  # what a 401 must say (RFC 9110 §11.6.1): a control token
    if "retry_after" in extra:
        response["Retry-After"] = str(extra["retry_after"])
    return response


def api_error_response(error: ApiError) -> JsonResponse:
    """The JSON response for an :class:`ApiError` raised by a view or the service code."""
    return error_response(error.status, error.code, error.message, **error.extra)


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
            return api_error_response(exception)
        unavailable = dependency_unavailable(exception)
        if unavailable is not None:
            log.warning("%s %s: %s", request.method, request.path, unavailable.message)
            return api_error_response(unavailable)
        log.exception("unexpected error on %s %s", request.method, request.path)
        return error_response(500, "internal", f"unexpected server error: {type(exception).__name__}")


RETRY_AFTER_SECONDS = 5


def dependency_unavailable(exception: BaseException) -> ApiError | None:
    """A 503 naming what is down when ``exception`` says Redis or the database is away."""
    if isinstance(exception, redis.RedisError | ConnectionError):
        return ApiError(503, "redis-unavailable",
                        f"Redis cannot be reached ({type(exception).__name__}); nothing was changed, retry shortly",
                        retry_after=RETRY_AFTER_SECONDS)
    if isinstance(exception, OperationalError | InterfaceError):
        return ApiError(503, "database-unavailable",
                        f"the database cannot be reached ({type(exception).__name__}); "
                        "nothing was changed, retry shortly",
                        retry_after=RETRY_AFTER_SECONDS)
    return None


def not_found_handler(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api_path(request.path):
        return error_response(404, "not-found", f"no API endpoint at {request.path}")
    return defaults.page_not_found(request, exception)


def server_error_handler(request: HttpRequest) -> HttpResponse:
    if is_api_path(request.path):
        return error_response(500, "internal", "unexpected server error")
    return defaults.server_error(request)
