"""The websocket ``Origin`` check: a browser's page must come from an allowed host; a client that
sends no ``Origin`` (a command-line client, a script) may watch.

The check protects viewers' browsers from other sites' pages (cross-site websocket hijacking);
only browsers send ``Origin``, always, and a non-browser client could send any value it likes,
so refusing a missing one protects nothing (docs/architecture.md §7).
"""

from __future__ import annotations

from urllib.parse import ParseResult

from channels.security.websocket import OriginValidator
from django.conf import settings


class BrowserOriginValidator(OriginValidator):
    def valid_origin(self, parsed_origin: ParseResult | None) -> bool:
        return parsed_origin is None or super().valid_origin(parsed_origin)


def allowed_hosts_or_no_origin(application):
    """Like Channels' ``AllowedHostsOriginValidator``, letting a handshake without ``Origin`` through."""
    allowed_hosts = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed_hosts:
        allowed_hosts = ["localhost", "127.0.0.1", "[::1]"]
    return BrowserOriginValidator(application, allowed_hosts)
