"""Commands between the web processes and a run's driver: the inbox ``hb:run:{<id>}:inbox`` (a list of command
ids the driver waits on between slices) and each command's ack, ``hb:run:{<id>}:ack:<seq>``, that the web request
waits on (docs/architecture.md §8).
"""

from __future__ import annotations

import json
from typing import cast

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore.naming import run_key


def inbox_key(run_id: str) -> str:
    return run_key(run_id, "inbox")


def ack_key(run_id: str, seq: int) -> str:
    return run_key(run_id, f"ack:{seq}")


def notify_command(run_id: str, command_id: int) -> None:
    get_redis().rpush(inbox_key(run_id), command_id)


def wait_inbox(run_id: str, timeout: float) -> list[str]:
    """Block up to ``timeout`` seconds for command notifications; drain what is there."""
    client = get_redis()
    if timeout >= 0.001:
        first = cast("tuple[str, str] | None", client.blpop([inbox_key(run_id)], timeout=timeout))
        if first is None:
            return []
        items = [first[1]]
    else:
        items = []
    more = cast("list[str] | None", client.lpop(inbox_key(run_id), 1000))
    return items + list(more or [])


def send_ack(run_id: str, seq: int, payload: dict) -> None:
    client = get_redis()
    pipe = client.pipeline()
    pipe.rpush(ack_key(run_id, seq), json.dumps(payload))
    pipe.expire(ack_key(run_id, seq), 120)
    pipe.execute()


def wait_ack(run_id: str, seq: int, timeout: float) -> dict | None:
    found = get_redis().blpop([ack_key(run_id, seq)], timeout=timeout)
    return json.loads(found[1]) if found else None
