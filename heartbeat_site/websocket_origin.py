"""The websocket ``Origin`` check: a browser's page must come from an allowed host; a client that
sends no ``Origin`` (a command-line client, a script) may watch.

The check protects viewers' browsers from other sites' pages (cross-site websocket hijacking);
only browsers send ``Origin``, always, and a non-browser client could send any value it likes,
so refusing a missing one protects nothing (docs/architecture.md §7).

A refused handshake says why. Daphne answers a close before the accept with a bare HTTP 403 and
drops a close reason (``daphne/ws_protocol.py`` ``handle_reply``), so the refusal is an accept, one
``error`` message naming the origin (``origin-not-allowed``) and a close with code 4403; the run's
consumer never sees the connection, so nothing of the run reaches the foreign page.
"""

from __future__ import annotations

from urllib.parse import ParseResult, urlparse

from channels.security.websocket import OriginValidator
from django.conf import settings

from heartbeat_site.live.delivery import frames

REFUSED_CLOSE_CODE = 4403


class BrowserOriginValidator(OriginValidator):
    def valid_origin(self, parsed_origin: ParseResult | None) -> bool:
        return parsed_origin is None or super().valid_origin(parsed_origin)

    async def __call__(self, scope, receive, send):
        origin = _origin(scope)
        try:
            parsed = urlparse(origin) if origin is not None else None
        except ValueError:  # not a URL at all (``http://[::1``): no allowed host's
            return await refuse(origin, receive, send)
        if self.valid_origin(parsed):
            return await self.application(scope, receive, send)
        return await refuse(origin, receive, send)


def _origin(scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"origin":
            return value.decode("latin1")
    return None


async def refuse(origin: str | None, receive, send) -> None:
    """Accept, say why, close with 4403."""
    if (await receive())["type"] != "websocket.connect":
        return
    message = (f"Origin {origin!r} is not an allowed host of this site (DJANGO_ALLOWED_HOSTS): pages of other "
               "sites may not open a run's websocket; a client that is not a browser may send no Origin")
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.send", "text": frames.dumps(frames.error_message(message, "origin-not-allowed"))})
    await send({"type": "websocket.close", "code": REFUSED_CLOSE_CODE})


def allowed_hosts_or_no_origin(application):
    """Like Channels' ``AllowedHostsOriginValidator``, letting a handshake without ``Origin`` through."""
    allowed_hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed_hosts:
        allowed_hosts = ["localhost", "127.0.0.1", "[::1]"]
    return BrowserOriginValidator(application, allowed_hosts)
