"""A run's ownership lease, ``hb:run:{<id>}:lease`` (and ``hb:run:{<id>}:takeover``, one watchdog's claim to
re-dispatch it), and every write a driver makes, fenced by it.

Every write a driver makes is fenced by its lease token inside one Lua script, so a worker that lost its lease
(paused, partitioned) can never publish into a run that another worker has taken over (docs/architecture.md §9.2).
The writes go to the keys of ``event_log.py``, ``run_state.py``, ``snapshot_and_frames.py`` and
``checkpoint_series.py``, which read them back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import redis
from django.conf import settings

from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore.checkpoint_series import Checkpoint, checkpoints_key, pack_checkpoint
from heartbeat_site.live.runstore.event_log import log_key
from heartbeat_site.live.runstore.naming import run_key
from heartbeat_site.live.runstore.run_state import state_key
from heartbeat_site.live.runstore.snapshot_and_frames import FRAMES_KEPT, frames_key, snapshot_key

log = logging.getLogger(__name__)


def lease_key(run_id: str) -> str:
    return run_key(run_id, "lease")


# KEYS: lease, log, state. ARGV: token, ttl_ms, log_max, n, resume_seq, (seq, json) x n, (field, value)...
# A lease that lapsed is taken back when ``resume_seq`` is given and the run is still where this
# driver left it (running, its last published seq): nobody drove it meanwhile (``Lease.publish``).
_PUBLISH = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
elseif holder == false and ARGV[5] ~= '' and redis.call('HGET', KEYS[3], 'status') == 'running'
    and redis.call('HGET', KEYS[3], 'last_seq') == ARGV[5] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  return 0
end
local n = tonumber(ARGV[4])
local i = 6
for _ = 1, n do
  redis.call('ZADD', KEYS[2], ARGV[i], ARGV[i + 1])
  i = i + 2
end
if n > 0 then redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[3]) + 1)) end
while i <= #ARGV do
  redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
  i = i + 2
end
return 1
"""

# KEYS: lease, key. ARGV: token, ttl_ms, value
_GUARDED_SET = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3])
return 1
"""

# KEYS: lease, frames. ARGV: token, ttl_ms, keep, first, member
_STORE_FRAME = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[5])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(tonumber(ARGV[3]) + 1))
return 1
"""

# KEYS: lease. ARGV: token, ttl_ms. 1: held (renewed or taken back after Redis lost it), 0: another holder
_RECLAIM = """
local holder = redis.call('GET', KEYS[1])
if holder == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if holder then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""

# KEYS: lease, log. ARGV: token, ttl_ms, n, (seq, json) x n
_REPLACE_EVENTS = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local i = 4
for _ = 1, tonumber(ARGV[3]) do
  redis.call('ZREMRANGEBYSCORE', KEYS[2], ARGV[i], ARGV[i])
  redis.call('ZADD', KEYS[2], ARGV[i], ARGV[i + 1])
  i = i + 2
end
return 1
"""

# KEYS: lease, checkpoints. ARGV: token, field ("<t> <seq>"), packed checkpoint, kept, kept_bytes. The lease is
# not renewed: the writer may be the driver's checkpoint process, which must not keep a dead driver's lease alive.
# Over ``kept`` checkpoints or ``kept_bytes``, the one closest after the one before it (after time 0 for the
# first) goes, never the newest: the series thins out evenly over the run's life (``CHECKPOINTS_KEPT``).
_STORE_CHECKPOINT = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
local kept, budget = tonumber(ARGV[4]), tonumber(ARGV[5])
local entries, bytes = {}, 0
for _, f in ipairs(redis.call('HKEYS', KEYS[2])) do
  entries[#entries + 1] = {tonumber(string.match(f, '^(%S+)')), f}
  bytes = bytes + redis.call('HSTRLEN', KEYS[2], f)
end
table.sort(entries, function(a, b) return a[1] < b[1] end)
while #entries > 1 and (#entries > kept or bytes > budget) do
  local drop, gap = 1, nil
  for i = 1, #entries - 1 do
    local g = entries[i][1] - (i > 1 and entries[i - 1][1] or 0)
    if gap == nil or g < gap then drop, gap = i, g end
  end
  bytes = bytes - redis.call('HSTRLEN', KEYS[2], entries[drop][2])
  redis.call('HDEL', KEYS[2], entries[drop][2])
  table.remove(entries, drop)
end
return 1
"""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass
class Lease:
    """The right to drive one run, held while renewed more often than ``ttl``."""

    run_id: str
    token: str
    ttl: float

    @property
    def ttl_ms(self) -> int:
        return max(1, int(self.ttl * 1000))

    def acquire(self) -> bool:
        return bool(get_redis().set(lease_key(self.run_id), self.token, nx=True, px=self.ttl_ms))

    def reclaim(self) -> bool:
        """Keep the lease, or take it back when nobody holds it (a restarted Redis forgot it,
        or it lapsed while this process was stopped); False when another driver holds it."""
        return bool(get_redis().eval(_RECLAIM, 1, lease_key(self.run_id), self.token, self.ttl_ms))

    def release(self) -> None:
        get_redis().eval(_RELEASE, 1, lease_key(self.run_id), self.token)

    def publish(self, events: Sequence[tuple[int, str]], state: dict[str, str | int | float], *,
                resume_from: int | None = None) -> bool:
        """Append events to the log and update the state, only while we hold the lease.

        With ``resume_from`` (the last seq this driver published) a lease that lapsed is taken back
        if nobody holds it and the run's published state is still running at that seq. A driver
        whose process was starved of CPU for longer than the lease (a machine under load, a
        long collection) is slow, not gone: when no other driver took the run meanwhile it goes
        on, instead of giving the run up and leaving viewers waiting for the watchdog's takeover.
        Another driver that did take it publishes its own seqs, so the state no longer matches.
        """
        resume = "" if resume_from is None else str(resume_from)
        args: list[str | int | float] = [
            self.token, self.ttl_ms, settings.HEARTBEAT["EVENT_LOG_SIZE"], len(events), resume,
        ]  # fmt: skip
        for seq, text in events:
            args.extend((seq, text))
        for field, value in state.items():
            args.extend((field, value))
        keys = (lease_key(self.run_id), log_key(self.run_id), state_key(self.run_id))
        return bool(get_redis().eval(_PUBLISH, 3, *keys, *args))

    def replace_events(self, events: Sequence[tuple[int, str]]) -> bool:
        """Put other texts in the log for these seqs (a drill's hidden events, after its reveal)."""
        if not events:
            return True
        args: list[str | int] = [self.token, self.ttl_ms, len(events)]
        for seq, text in events:
            args.extend((seq, text))
        return bool(get_redis().eval(_REPLACE_EVENTS, 2, lease_key(self.run_id), log_key(self.run_id), *args))

    def store_frame(self, first: int, last: int, text: str) -> bool:
        """Keep a node-level frame for viewers who join or resume (``frames_after``)."""
        keys = (lease_key(self.run_id), frames_key(self.run_id))
        return bool(get_redis().eval(_STORE_FRAME, 2, *keys, self.token, self.ttl_ms, FRAMES_KEPT, first,
                                     f"{last} {text}"))

    def store_snapshot(self, text: str) -> bool:
        keys = (lease_key(self.run_id), snapshot_key(self.run_id))
        return bool(get_redis().eval(_GUARDED_SET, 2, *keys, self.token, self.ttl_ms, text))

    def store_checkpoint(self, checkpoint: Checkpoint) -> bool:
        """Add ``checkpoint`` to the run's series (thinned to ``HEARTBEAT_CHECKPOINTS_KEPT`` and
        ``HEARTBEAT_CHECKPOINTS_KEPT_MB``), only while this lease holds the run: a deposed driver (or its
        checkpoint process) cannot write beside its successor's."""
        conf = settings.HEARTBEAT
        keys = (lease_key(self.run_id), checkpoints_key(self.run_id))
        return bool(get_redis().eval(_STORE_CHECKPOINT, 2, *keys, self.token, checkpoint.field,
                                     pack_checkpoint(checkpoint), conf["CHECKPOINTS_KEPT"],
                                     conf["CHECKPOINTS_KEPT_MB"] * 1024 * 1024))


class LeaseKeeper:
    """Renews a driver's lease from a thread of its own, every ``ttl / 3``.

    A driver computing a long slice (a large cluster's burst, or several runs sharing one
    worker's CPU) is busy, not dead: its lease must not lapse because of how long the
    simulation takes. Only the death of the process (the thread dies with it) or losing the
    lease to another holder ends the ownership. ``lost`` is set once a renewal finds the lease
    held by someone else; a lease that nobody holds (Redis restarted empty) is taken back.
    Redis errors are retried at the next tick.
    """

    def __init__(self, lease: Lease) -> None:
        self.lease = lease
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease {lease.run_id}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        renewed = time.monotonic()
        while not self._stop.wait(self.lease.ttl / 3):
            try:
                if not self.lease.reclaim():
                    self.lost.set()
                    return
            except redis.RedisError as exc:
                log.warning("run %s: lease renewal failed (%s); retrying", self.lease.run_id, exc)
                continue
            now = time.monotonic()
            if now - renewed > self.lease.ttl:
                # the lease lapsed in between: this process (or Redis) was held up that long
                log.warning("run %s: lease renewed %.1f s after the last renewal (TTL %g s)",
                            self.lease.run_id, now - renewed, self.lease.ttl)
            renewed = now


def lease_holder(run_id: str) -> str | None:
    return cast("str | None", get_redis().get(lease_key(run_id)))


def claim_takeover(run_id: str, ttl: float) -> bool:
    """One watchdog at a time may re-dispatch a run whose lease lapsed."""
    return bool(get_redis().set(run_key(run_id, "takeover"), "1", nx=True, px=max(1, int(ttl * 1000))))
