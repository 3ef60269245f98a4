"""The trainer's credentials on their way from the web process to the observing worker.

They must cross Redis (the worker is another process, maybe another machine), so they go encrypted (Fernet:
AES-128-CBC with an HMAC) with a key derived from the Django SECRET_KEY, which Redis does not hold, under a key of
their own that lives a minute at most and is deleted when the worker reads it (GETDEL). Neither the Celery task nor
the database ever holds them (docs/observe.md, "Credentials").
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import cast

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.observe.access import Target

HANDOFF_SECONDS = 60  # the worker picks the task up within seconds; an unread hand-off does not linger


def _key(run_id: str) -> str:
    return f"hb:run:{{{run_id}}}:sealed"


def _fernet() -> Fernet:
    digest = hashlib.sha256(b"heartbeat-observe-credentials\0" + settings.SECRET_KEY.encode()).digest()
    return Fernet(base64.urlsafe_b64encode(digest))


def seal(run_id: str, target: Target) -> None:
    text = json.dumps({"server": target.server, "token": target.token, "ca": target.ca, "host": target.host})
    get_redis().set(_key(run_id), _fernet().encrypt(text.encode()).decode(), ex=HANDOFF_SECONDS)


def unseal(run_id: str) -> Target | None:
    """The credentials, read once (deleted as they are read); None when they are gone or were not sealed here."""
    sealed = cast("str | None", get_redis().getdel(_key(run_id)))
    if sealed is None:
        return None
    try:
        fields = json.loads(_fernet().decrypt(sealed.encode()))
    except InvalidToken:
        return None
    return Target(**fields)


def discard(run_id: str) -> None:
    get_redis().delete(_key(run_id))
