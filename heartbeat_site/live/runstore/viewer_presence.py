"""Who watches a run: ``hb:run:{<id>}:viewers``, a sorted set of viewer ids scored by when each was last seen;
entries not refreshed for ``VIEWER_STALE_SECONDS`` lapse.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore.naming import run_key

VIEWER_STALE_SECONDS = 90.0


def viewers_key(run_id: str) -> str:
    return run_key(run_id, "viewers")


def add_viewers(run_id: str, viewer_ids: Iterable[str]) -> None:
    """Register (or refresh) viewers; entries not refreshed for VIEWER_STALE_SECONDS lapse."""
    now = time.time()
    mapping = dict.fromkeys(viewer_ids, now)
    if mapping:
        get_redis().zadd(viewers_key(run_id), mapping)


def remove_viewer(run_id: str, viewer_id: str) -> None:
    get_redis().zrem(viewers_key(run_id), viewer_id)


def viewer_count(run_id: str) -> int:
    client = get_redis()
    now = time.time()
    client.zremrangebyscore(viewers_key(run_id), "-inf", now - VIEWER_STALE_SECONDS)
    return int(client.zcard(viewers_key(run_id)))
