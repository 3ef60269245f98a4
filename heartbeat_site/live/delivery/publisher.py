"""The run's live feed: what a driver (or a trainer's follow command) tells every viewer of a run.

One Redis pub/sub channel per run, named by this project (``naming.feed_channel``: ``hb:run:{<id>}:feed``), published
on with redis-py's PUBLISH and read by one subscription per ASGI process and run (``fanout.py``). A message on it
is one line of JSON holding its ``type`` (``run.frame``, ``run.clock``, ``run.status``, ``run.presence``,
``run.notice``, ``run.snapshot``) and its numbers (a frame's ``first`` and ``last`` seq), then, after a newline,
the text the pages get, exactly as the driver built it once (``frames.py``): a frame of megabytes is neither
escaped nor parsed on its way. ``decode`` gives the message back as the dict the consumers handle, the text
under ``"text"``.

Pub/sub is at most once, and a subscriber that was not there misses what was published meanwhile: the consumers'
seq checks fill any hole from the run's event log or kept frames (``consumers.py``).
"""

from __future__ import annotations

import json

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore import naming

SEPARATOR = b"\n"  # the JSON head never holds one (json.dumps escapes it inside strings)


def encode(message: dict) -> str:
    """``{"type": ..., numbers..., "text": ...}`` as the feed carries it."""
    head = {key: value for key, value in message.items() if key != "text"}
    text = message.get("text")
    encoded = json.dumps(head, separators=(",", ":"))
    return encoded if text is None else f"{encoded}\n{text}"


def decode(data: bytes) -> dict:
    """A feed message back as a dict (raises ValueError on anything else)."""
    end = data.find(SEPARATOR)
    message = json.loads(data if end < 0 else data[:end])
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ValueError(f"not a feed message: {data[:80]!r}")
    if end >= 0:
        message["text"] = str(memoryview(data)[end + 1:], "utf-8")  # no copy of the tail before decoding
    return message


def publish(run_id: str, message: dict) -> None:
    """Send ``message`` to every viewer of the run, in every ASGI process (raises redis.RedisError when Redis is
    unreachable; thread-safe: the process's connection pool)."""
    get_redis().publish(naming.feed_channel(run_id), encode(message))


class Publisher:
    """A driver's sender for one run (``send`` in the order the driver calls it, from its one thread)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id

    def send(self, message: dict) -> None:
        publish(self.run_id, message)

    def close(self) -> None:
        """Nothing to release (the connection is the process's pool's); kept for the drivers' life cycle."""
