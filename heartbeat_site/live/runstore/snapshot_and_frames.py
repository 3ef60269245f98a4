"""What a viewer joining or resuming a run starts from: its latest snapshot, ``hb:run:{<id>}:snapshot``, and
a large run's recent node-level frames, ``hb:run:{<id>}:frames`` (a sorted set scored by each frame's first seq).

Both are written by the driver, fenced by its lease (``ownership.Lease.store_snapshot``, ``store_frame``).
"""

from __future__ import annotations

import json
from typing import cast

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore.naming import run_key

FRAMES_KEPT = 600  # node-level frames kept for joins and resumes: a minute at 10 frames/s


def snapshot_key(run_id: str) -> str:
    return run_key(run_id, "snapshot")


def frames_key(run_id: str) -> str:
    """Recent node-level frames (score: first seq; member: "<last seq> <frame text>")."""
    return run_key(run_id, "frames")


def read_snapshot_text(run_id: str) -> str | None:
    return cast("str | None", get_redis().get(snapshot_key(run_id)))


def read_snapshot(run_id: str) -> dict | None:
    text = read_snapshot_text(run_id)
    return json.loads(text) if text else None


def frames_after(run_id: str, after: int, upto: int | None = None) -> list[tuple[int, int, str]] | None:
    """Kept node-level frames covering ``(after, upto]`` as (first, last, text), oldest first;
    None when they do not start right after ``after`` (older than what is kept)."""
    high = "+inf" if upto is None else upto
    found = cast("list[tuple[str, float]]",
                 get_redis().zrangebyscore(frames_key(run_id), after + 1, high, withscores=True))
    frames = []
    for member, score in found:
        last, _, text = member.partition(" ")
        frames.append((int(score), int(last), text))
    if frames and frames[0][0] != after + 1:
        return None
    return frames
