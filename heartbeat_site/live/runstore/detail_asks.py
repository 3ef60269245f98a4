"""A viewer's ask for a node's full objects at node level (docs/websocket-protocol.md "Detail levels"): the asks
``hb:run:{<id>}:asks`` the driver takes between slices, and each answer, ``hb:run:{<id>}:answer:<uuid>``.
"""

from __future__ import annotations

import json
import uuid
from typing import cast

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore.naming import run_key


def asks_key(run_id: str) -> str:
    return run_key(run_id, "asks")


def ask_detail(run_id: str, node: str) -> str:
    """Ask the run's driver for a node's full objects; returns the key its answer goes to."""
    reply = run_key(run_id, f"answer:{uuid.uuid4().hex}")
    get_redis().rpush(asks_key(run_id), json.dumps({"node": node, "reply": reply}))
    return reply


def take_asks(run_id: str) -> list[dict]:
    texts = cast("list[str] | None", get_redis().lpop(asks_key(run_id), 100))
    return [json.loads(text) for text in texts or ()]


def answer(reply: str, text: str) -> None:
    pipe = get_redis().pipeline()
    pipe.rpush(reply, text)
    pipe.expire(reply, 30)
    pipe.execute()


def wait_answer(reply: str, timeout: float) -> str | None:
    found = cast("tuple[str, str] | None", get_redis().blpop([reply], timeout=timeout))
    return found[1] if found else None
