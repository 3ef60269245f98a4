"""Per-run live state in Redis: ownership lease, bounded event log, latest snapshot,
viewers, and the command inbox/acks between web processes and the driving worker.

Every write a driver makes is fenced by its lease token inside one Lua script, so a
worker that lost its lease (paused, partitioned) can never publish into a run that
another worker has taken over. Keys share the ``{run_id}`` hash tag (Redis Cluster safe).

The client decodes replies (``decode_responses=True`` in redis_client.py), which redis-py's
annotations cannot express (they say ``bytes | str``): the ``cast`` calls below say what a reply is.
"""

from __future__ import annotations

import json
import logging
import math
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import cast

import redis
from django.conf import settings

from heartbeat_site.live import frames
from heartbeat_site.live.redis_client import get_redis

log = logging.getLogger(__name__)

ACTIVE_RUNS = "hb:runs:active"
VIEWER_STALE_SECONDS = 90.0
FRAMES_KEPT = 600  # node-level frames kept for joins and resumes: a minute at 10 frames/s


def _key(run_id: str, part: str) -> str:
    return f"hb:run:{{{run_id}}}:{part}"


def lease_key(run_id: str) -> str:
    return _key(run_id, "lease")


def log_key(run_id: str) -> str:
    return _key(run_id, "log")


def state_key(run_id: str) -> str:
    return _key(run_id, "state")


def snapshot_key(run_id: str) -> str:
    return _key(run_id, "snapshot")


def frames_key(run_id: str) -> str:
    """Recent node-level frames (score: first seq; member: "<last seq> <frame text>")."""
    return _key(run_id, "frames")


def checkpoints_key(run_id: str) -> str:
    """The run's checkpoints (a hash: field ``"<t> <seq>"``, value ``pack_checkpoint``; ``Lease.store_checkpoint``)."""
    return _key(run_id, "checkpoints")


def asks_key(run_id: str) -> str:
    return _key(run_id, "asks")


def viewers_key(run_id: str) -> str:
    return _key(run_id, "viewers")


def inbox_key(run_id: str) -> str:
    return _key(run_id, "inbox")


def ack_key(run_id: str, seq: int) -> str:
    return _key(run_id, f"ack:{seq}")


def feed_channel(run_id: str) -> str:
    """The run's live feed, a pub/sub channel: what its driver tells every viewer (``publisher.py``)."""
    return _key(run_id, "feed")


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


@dataclass
class Checkpoint:
    """A run's simulation at virtual time ``t`` (``Simulation.checkpoint()``), whose last event is ``seq``;
    ``commands``: the applied fault commands (ids) it holds; ``lesson``: the lesson runner's state then."""

    t: float
    seq: int
    commands: list[int]
    sim: bytes
    lesson: bytes | None = None

    @property
    def field(self) -> str:
        return f"{self.t!r} {self.seq}"


Position = tuple[float, int]  # a checkpoint's virtual time and last seq

CHECKPOINT_MAGIC = b"heartbeat-run-checkpoint/1\n"


def pack_checkpoint(checkpoint: Checkpoint) -> bytes:
    """One Redis value: a header line (JSON: t, seq, commands, the simulation's length), the simulation's bytes,
    then the lesson's."""
    header = json.dumps({"t": checkpoint.t, "seq": checkpoint.seq, "commands": checkpoint.commands,
                         "sim": len(checkpoint.sim)}).encode()
    return b"".join((CHECKPOINT_MAGIC, header, b"\n", checkpoint.sim, checkpoint.lesson or b""))


def unpack_checkpoint(data: bytes) -> Checkpoint:
    """What ``pack_checkpoint`` wrote; ValueError (or KeyError) for anything else."""
    if not data.startswith(CHECKPOINT_MAGIC):
        raise ValueError("not a run checkpoint (or one of another format version)")
    end = data.index(b"\n", len(CHECKPOINT_MAGIC))
    header = json.loads(data[len(CHECKPOINT_MAGIC):end])
    sim_end = end + 1 + int(header["sim"])
    if sim_end > len(data):
        raise ValueError("a truncated run checkpoint")
    return Checkpoint(t=float(header["t"]), seq=int(header["seq"]), commands=list(header["commands"]),
                      sim=data[end + 1:sim_end], lesson=data[sim_end:] or None)


def checkpoint_positions(run_id: str) -> list[Position]:
    """The (virtual time, last seq) of each of the run's checkpoints, in order."""
    fields = cast("list[str]", get_redis().hkeys(checkpoints_key(run_id)))
    positions = []
    for field in fields:
        t, _, seq = field.partition(" ")
        positions.append((float(t), int(seq)))
    return sorted(positions)


def nearest_checkpoint(positions: list[Position], t: float, seq: int | None = None) -> Position | None:
    """The latest of ``positions`` at or before virtual time ``t`` (and, given ``seq``, whose last event is at or
    before it), or None."""
    fitting = [p for p in positions if p[0] <= t and (seq is None or p[1] <= seq)]
    return max(fitting) if fitting else None


def read_checkpoint(run_id: str, t: float = math.inf, seq: int | None = None) -> Checkpoint | None:
    """The run's latest checkpoint at or before virtual time ``t`` (and last seq ``seq``), or None; a malformed
    one raises ValueError (or KeyError)."""
    position = nearest_checkpoint(checkpoint_positions(run_id), t, seq)
    if position is None:
        return None
    return read_checkpoint_at(run_id, position)


def read_checkpoint_at(run_id: str, position: Position) -> Checkpoint | None:
    """The run's checkpoint at ``position`` (from ``checkpoint_positions``), None if it went meanwhile."""
    data = get_redis(binary=True).hget(checkpoints_key(run_id), f"{position[0]!r} {position[1]}")
    return None if data is None else unpack_checkpoint(cast("bytes", data))


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


def ping() -> bool:
    return bool(get_redis().ping())


def lease_holder(run_id: str) -> str | None:
    return cast("str | None", get_redis().get(lease_key(run_id)))


def read_state(run_id: str) -> dict[str, str]:
    return cast("dict[str, str]", get_redis().hgetall(state_key(run_id)))


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


def claim_takeover(run_id: str, ttl: float) -> bool:
    """One watchdog at a time may re-dispatch a run whose lease lapsed."""
    return bool(get_redis().set(_key(run_id, "takeover"), "1", nx=True, px=max(1, int(ttl * 1000))))


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


def ask_detail(run_id: str, node: str) -> str:
    """Ask the run's driver for a node's full objects; returns the key its answer goes to."""
    reply = _key(run_id, f"answer:{uuid.uuid4().hex}")
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


def send_ack(run_id: str, seq: int, payload: dict) -> None:
    client = get_redis()
    pipe = client.pipeline()
    pipe.rpush(ack_key(run_id, seq), json.dumps(payload))
    pipe.expire(ack_key(run_id, seq), 120)
    pipe.execute()


def wait_ack(run_id: str, seq: int, timeout: float) -> dict | None:
    found = get_redis().blpop([ack_key(run_id, seq)], timeout=timeout)
    return json.loads(found[1]) if found else None


def encode_events(events: Iterable[dict]) -> list[tuple[int, str]]:
    return [(int(event["seq"]), frames.dumps(event)) for event in events]
