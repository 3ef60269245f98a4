"""A tiny method router for JSON views: no CSRF token or cookie, JSON 405s."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from heartbeat_site.live.api.errors import api_error_response, error_response
from heartbeat_site.live.errors import ApiError

Handler = Callable[..., HttpResponse]


def methods(**handlers: Handler) -> Callable[..., HttpResponse]:
    """``methods(GET=list_x, POST=create_x)``: one URL, one handler per HTTP method."""
    allowed = sorted(handlers)

    @csrf_exempt  # control is by bearer token (docs/architecture.md §6.1), never by cookie
    def view(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        handler = handlers.get(request.method or "")
        if handler is None:
            return error_response(
                405,
                "method-not-allowed",
                f"{request.method} is not allowed here; use {', '.join(allowed)}",
                allowed=allowed,
            )
        try:
            return handler(request, *args, **kwargs)
        except ApiError as exc:
            return api_error_response(exc)

    return view
