"""How a run's Redis keys are named, ``hb:run:{<run id>}:<part>``, and the run's live feed channel
``hb:run:{<run id>}:feed``.

The modules of this package keep a live run's state in Redis, one module per thing kept, each naming its keys:
``ownership.py`` (the lease, and every write a driver makes, fenced by it), ``run_state.py`` (the published
position), ``event_log.py``, ``snapshot_and_frames.py``, ``checkpoint_series.py``, ``command_inbox.py``,
``detail_asks.py``, ``viewer_presence.py`` and ``activity.py`` (active runs, live workers). Keys share the
``{run_id}`` hash tag, so one Lua script may touch several keys of a run (Redis Cluster safe).

The client decodes replies (``decode_responses=True`` in redis_client.py), which redis-py's annotations cannot
express (they say ``bytes | str``): the ``cast`` calls of these modules say what a reply is.
"""

from __future__ import annotations


def run_key(run_id: str, part: str) -> str:
    return f"hb:run:{{{run_id}}}:{part}"


def feed_channel(run_id: str) -> str:
    """The run's live feed, a pub/sub channel: what its driver tells every viewer (``publisher.py``)."""
    return run_key(run_id, "feed")
