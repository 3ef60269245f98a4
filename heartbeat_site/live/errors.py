"""The error the service answers with: an HTTP status, a stable code and a message naming the problem.

Service code (commands, caps, the classroom, the websocket consumer) raises :class:`ApiError`
without knowing how it travels: the REST layer renders it as JSON
(``heartbeat_site/live/api/errors.py``), the consumer as a websocket ``error`` message.
"""

from __future__ import annotations

from typing import Any


class ApiError(Exception):
    """An error a client caused (or must hear about), with its HTTP status and a stable code."""

    def __init__(self, status: int, code: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.extra = extra
