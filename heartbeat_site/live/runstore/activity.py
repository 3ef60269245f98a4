"""Which runs are active, ``hb:runs:active`` (a set the watchdogs go through), and which workers are alive,
``hb:workers`` (a sorted set of worker names scored by when each watchdog last reported).

An ended run leaves the set and its keys expire after ``HEARTBEAT_RETENTION_SECONDS`` (``mark_inactive``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import cast

from django.conf import settings

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore.checkpoint_series import checkpoints_key
from heartbeat_site.live.runstore.command_inbox import inbox_key
from heartbeat_site.live.runstore.event_log import log_key
from heartbeat_site.live.runstore.run_state import state_key
from heartbeat_site.live.runstore.snapshot_and_frames import frames_key, snapshot_key
from heartbeat_site.live.runstore.viewer_presence import viewers_key

ACTIVE_RUNS = "hb:runs:active"


def mark_active(run_id: str) -> None:
    get_redis().sadd(ACTIVE_RUNS, run_id)


def mark_inactive(run_id: str) -> None:
    client = get_redis()
    client.srem(ACTIVE_RUNS, run_id)
    retention = settings.HEARTBEAT["RETENTION_SECONDS"]
    for key in (log_key(run_id), state_key(run_id), snapshot_key(run_id), viewers_key(run_id), inbox_key(run_id),
                frames_key(run_id), checkpoints_key(run_id)):
        client.expire(key, retention)


def active_runs() -> set[str]:
    return set(cast("Iterable[str]", get_redis().smembers(ACTIVE_RUNS)))


WORKERS = "hb:workers"  # worker name -> wall time it was last seen (its watchdog's passes)


def worker_seen(name: str) -> None:
    get_redis().zadd(WORKERS, {name: time.time()})


def worker_gone(name: str) -> None:
    get_redis().zrem(WORKERS, name)


def live_workers(within: float) -> list[str]:
    """Workers whose watchdog reported in the last ``within`` seconds."""
    client = get_redis()
    client.zremrangebyscore(WORKERS, "-inf", time.time() - max(within, 60.0))
    return list(cast("Iterable[str]", client.zrangebyscore(WORKERS, time.time() - within, "+inf")))
