"""A run's bounded event log, ``hb:run:{<id>}:log``: a sorted set of event JSON texts scored by seq.

Written by the driver (``ownership.Lease.publish``, fenced by its lease), at most ``HEARTBEAT_EVENT_LOG_SIZE``
events; read by viewers filling a hole or resuming (docs/architecture.md §2.5) and by the event pages.
"""

from __future__ import annotations

import json
from typing import cast

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore.naming import run_key
from heartbeat_site.live.runstore.run_state import read_state


def log_key(run_id: str) -> str:
    return run_key(run_id, "log")


def log_bounds(run_id: str) -> tuple[int, int] | None:
    """(first, last) seq held in the run's event log, or None when it is empty."""
    client = get_redis()
    first = client.zrange(log_key(run_id), 0, 0, withscores=True)
    last = client.zrange(log_key(run_id), -1, -1, withscores=True)
    if not first or not last:
        return None
    return int(first[0][1]), int(last[0][1])


def events_after(run_id: str, after: int, limit: int, *, upto: int | None = None) -> list[dict]:
    """Events with ``after < seq <= upto`` from the log, oldest first, at most ``limit``."""
    high = "+inf" if upto is None else upto
    texts = cast("list[str]", get_redis().zrangebyscore(log_key(run_id), f"({after}", high, start=0, num=limit))
    return [json.loads(text) for text in texts]


def event_texts_after(run_id: str, after: int, limit: int, *, upto: int | None = None) -> list[tuple[int, str]]:
    """Like events_after, as (seq, JSON text) pairs: consumers forward them without parsing."""
    high = "+inf" if upto is None else upto
    found = cast("list[tuple[str, float]]",
                 get_redis().zrangebyscore(log_key(run_id), f"({after}", high, start=0, num=limit, withscores=True))
    return [(int(score), text) for text, score in found]


def log_covers(run_id: str, after: int) -> bool:
    """True when every event after ``after`` that was published is still in the log."""
    state = read_state(run_id)
    last = int(state.get("last_seq", 0))
    if after >= last:
        return True
    bounds = log_bounds(run_id)
    return bounds is not None and bounds[0] <= after + 1
