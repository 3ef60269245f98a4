"""A run's published state, ``hb:run:{<id>}:state``: a hash of its status, virtual time, speed and last
published seq, written with every frame by its driver (``ownership.Lease.publish``) and read by every web process.
"""

from __future__ import annotations

from typing import cast

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore.naming import run_key


def state_key(run_id: str) -> str:
    return run_key(run_id, "state")


def read_state(run_id: str) -> dict[str, str]:
    return cast("dict[str, str]", get_redis().hgetall(state_key(run_id)))
