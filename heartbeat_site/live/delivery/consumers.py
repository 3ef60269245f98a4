"""Websocket ``/ws/runs/<id>/``: a snapshot (or a resume), then the run's frames in order.

Frames come through the run's Redis pub/sub feed (``publisher.py``), which is at-most-once,
to the process's subscription to it (``fanout.py``), which hands each to every local viewer's
inbox; each consumer remembers the last seq it delivered, drops what it already sent and fills
any hole from the Redis event log, so a viewer sees every event exactly once, in order
(docs/architecture.md §2.5).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from urllib.parse import parse_qs

import redis
from autobahn.exception import Disconnected
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings

from heartbeat_site.live.classroom import questions
from heartbeat_site.live.delivery import detail, fanout, frames
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.lookback import replay_process, seek
from heartbeat_site.live.models import Run, RunStatus
from heartbeat_site.live.runs import commands
from heartbeat_site.live.runstore import detail_asks, event_log, run_state, snapshot_and_frames, viewer_presence
from heartbeat_site.observe import replays

log = logging.getLogger(__name__)

CLOSE_BAD_REQUEST = 4400  # malformed query (e.g. ?after=abc)
CLOSE_UNKNOWN_RUN = 4404
MAX_CLIENT_MESSAGE = 4096
# The live service lost Redis (or this process its subscription): reconnect with ?after=
# (docs/websocket-protocol.md). Daphne sends only 1000 and 3000-4999 as close codes.
CLOSE_TRY_AGAIN = 4503
UNAVAILABLE = "the live service lost its connection to Redis; reconnect with ?after=<last seq> (the page does)"
MAX_NODE_NAME = 253  # a Kubernetes object name (DNS subdomain)
DETAIL_WAIT_SECONDS = 5.0
ENDED_STATUSES = (RunStatus.FINISHED, RunStatus.IDLE, RunStatus.FAILED)


class RunConsumer(AsyncWebsocketConsumer):
    run_id: str
    delivered: int = 0
    registered: bool = False

    # No channel layer: an alias no settings configure, for which Channels' get_channel_layer gives None, so its
    # loop waits on the websocket alone and opens no channel per viewer (the run's messages come from the
    # process's feed of the run, fanout.py).
    channel_layer_alias = "heartbeat-no-channel-layer"
    delivering: asyncio.Task | None = None

    async def __call__(
        self, scope: dict, receive: Callable[[], Awaitable[dict]], send: Callable[[dict], Awaitable[None]]
    ) -> None:
        """Channels' own loop (``AsyncConsumer.__call__``) for the websocket's events; the run's messages
        arrive in ``self.inbox`` from the process's feed (``fanout.py``) and are handled by a task of the
        viewer's own (``_deliver``). ``dispatch`` gives each handler its turn, so the two take turns, one handler
        at a time, each side in order.

        Not the run's messages through Channels' loop as its ``receive``: that loop makes a task and an
        ``asyncio.wait`` per message, which doubled the server's CPU for 500 viewers (bench/README.md).
        """
        self.viewer_id = uuid.uuid4().hex
        self.inbox: fanout.Inbox = fanout.Inbox()
        self.turn = asyncio.Lock()
        try:
            await super().__call__(scope, receive, send)
        finally:
            if self.delivering is not None:
                self.delivering.cancel()
            if self.registered:
                await fanout.leave(self.run_id, self.viewer_id)

    async def _deliver(self) -> None:
        """The run's messages, in the order the feed got them, each in its turn."""
        try:
            while True:
                await self.dispatch(await self.inbox.get())
        except StopConsumer:
            pass  # the socket is gone or closed: the server's websocket.disconnect ends Channels' loop
        except Exception:
            log.exception("viewer of run %s: a message of the run could not be sent; closing", self.run_id)
            with contextlib.suppress(Exception):
                await self.close(code=CLOSE_TRY_AGAIN)  # the page reconnects with ?after=
        await fanout.leave(self.run_id, self.viewer_id)  # nothing more to it until the consumer ends

    async def dispatch(self, message: dict) -> None:
        """Call the message's handler in its turn, without Channels' ``aclose_old_connections`` first.

        Channels 4.2+ runs ``close_old_connections`` on the thread-sensitive executor (the one
        thread Django's sync views also run on) before every handler. With 500 viewers that is
        2,000 thread round trips a second, queued one after the other, and a trainer's POST waits
        behind them. These handlers reach the database only through ``database_sync_to_async``,
        which closes old connections itself.
        """
        name = str(message.get("type", "")).replace(".", "_")
        handler = getattr(self, name, None) if name[:1].isalpha() else None
        if handler is None:
            raise ValueError(f"no handler for message type {message.get('type')!r}")
        async with self.turn:
            await handler(message)

    async def send(
        self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool | int = False
    ) -> None:
        """Every text goes out in messages of at most 1 MiB (``frames.parts_of``: split once per
        process for all the viewers the same text goes to).

        A viewer gone while a message was on its way ends the consumer quietly: the ASGI server
        raises on a send to a closed socket (Daphne's ``Disconnected``, uvicorn an ``OSError``),
        and the disconnect event that follows has nothing left to do."""
        try:
            if text_data is not None and len(text_data) * 4 > frames.MAX_MESSAGE_BYTES:
                *pieces, text_data = frames.parts_of(text_data)
                for piece in pieces:
                    await super().send(text_data=piece)
            await super().send(text_data=text_data, bytes_data=bytes_data, close=close)
        except (Disconnected, OSError) as exc:
            raise StopConsumer from exc

    async def connect(self) -> None:
        self.run_id = self.scope["url_route"]["kwargs"]["run_id"]
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        meta = await run_meta(self.run_id)
        if meta is None:
            await self._refuse(CLOSE_UNKNOWN_RUN, "unknown-run", f"no run with id {self.run_id!r}")
            return
        self.meta = meta
        after = None
        if "after" in query:
            raw = query["after"][-1]
            if not (raw.isascii() and raw.isdigit()):  # isdigit() alone takes "²", which int() refuses
                await self._refuse(CLOSE_BAD_REQUEST, "bad-after", f"after must be a whole number >= 0, got {raw!r}")
                return
            after = int(raw)
        self.registered = True
        try:
            await fanout.join(self.run_id, self.viewer_id, self.inbox)
            await self.accept()  # early: Daphne drops handshakes the app has not accepted in 5 s
            await asyncio.to_thread(viewer_presence.add_viewers, self.run_id, [self.viewer_id])
            if after is not None and await asyncio.to_thread(self._covers, after):
                await self._send_resumed(after)
            else:
                await self._send_snapshot()
            if self.meta["lesson"] or self.meta["drill"]:
                state = await database_sync_to_async(questions.state_message)(self.run_id)
                if state is not None:
                    await self.send(text_data=frames.dumps(state))
            # "Viewers follow me": where the trainer looks now, not only from its next focus on (off the one
            # sync thread: a class joins at once)
            follow = await database_sync_to_async(commands.follow_state, thread_sensitive=False)(self.run_id)
            if follow is not None:
                await self.send(text_data=frames.dumps(follow))
            # what the feed brought meanwhile waits in the inbox; the task starts once this handler's turn ends
            self.delivering = asyncio.create_task(self._deliver())
        except (redis.RedisError, OSError) as exc:
            log.warning("viewer of run %s: Redis unreachable at connect (%s)", self.run_id, exc)
            await self._refuse(CLOSE_TRY_AGAIN, "live-service-unavailable", UNAVAILABLE)

    def _covers(self, after: int) -> bool:
        """Whether what came after seq ``after`` can still be sent from what Redis keeps."""
        if not self.meta["node_level"]:
            return event_log.log_covers(self.run_id, after)
        last = int(run_state.read_state(self.run_id).get("last_seq", 0))
        return after >= last or snapshot_and_frames.frames_after(self.run_id, after) not in (None, [])

    async def _refuse(self, code: int, error: str, message: str) -> None:
        with contextlib.suppress(Exception):  # already accepted when Redis failed half way
            await self.accept()
        await self.send(text_data=frames.dumps(frames.error_message(message, error)))
        await self.close(code=code)

    async def disconnect(self, code: int) -> None:
        if not self.registered:
            return  # (the feed is left in __call__, however the consumer ends)
        with contextlib.suppress(redis.RedisError, OSError):  # Redis away: the entry lapses by itself
            await asyncio.to_thread(viewer_presence.remove_viewer, self.run_id, self.viewer_id)

    # -- what a viewer gets first ---------------------------------------------------------

    async def _run_info(self, state: dict) -> dict:
        return {
            **self.meta,
            "status": state.get("status") or "pending",
            "viewers": await asyncio.to_thread(viewer_presence.viewer_count, self.run_id),
        }

    async def _send_snapshot(self, *, fresh: bool = False) -> None:
        """The stored snapshot, forwarded as text (no re-parse per viewer), then catch-up.
        A join may get the one this process read a moment ago; ``fresh`` reads it again."""
        stored = (
            await asyncio.to_thread(snapshot_and_frames.read_snapshot_text, self.run_id)
            if fresh
            else await stored_snapshot(self.run_id)
        )
        if stored is None:
            # No driver has stored one yet (or Redis forgot it): rebuild it deterministically.
            stored = await database_sync_to_async(_rebuilt_snapshot)(self.run_id)
        state = await asyncio.to_thread(run_state.read_state, self.run_id)
        last_seq = frames.snapshot_last_seq(stored)
        # the same text for every viewer joining with this stored snapshot (split once: frames.parts_of);
        # the viewer count, which each join changes, follows as a presence message
        info = {**self.meta, "status": state.get("status") or "pending"}
        await self.send(text_data=_snapshot_text(frames.dumps({"type": "snapshot", "run": info}), stored))
        viewers = await asyncio.to_thread(viewer_presence.viewer_count, self.run_id)
        await self.send(text_data=frames.dumps({"type": "presence", "viewers": viewers}))
        self.delivered = last_seq
        await self._catch_up(self.delivered, None)
        if self.delivered == last_seq and "t" in state:
            # The stored snapshot is as old as its last event: the run may have been paused (or sped up)
            # since, with nothing published to say so. Its clock now, before the driver's next quiet second.
            await self.send(text_data=frames.dumps(frames.clock_message(_clock_from_state(state), last_seq)))
        await self._status_if_ended(state)

    async def _send_resumed(self, after: int) -> None:
        state = await asyncio.to_thread(run_state.read_state, self.run_id)
        message = {
            "type": "resumed",
            "after": after,
            "clock": _clock_from_state(state),
            "last_seq": int(state.get("last_seq", after)),
            "run": await self._run_info(state),
        }
        await self.send(text_data=frames.dumps(message))
        self.delivered = after
        await self._catch_up(after, None)
        await self._status_if_ended(state)

    async def _status_if_ended(self, state: dict) -> None:
        """A viewer who (re)joins an ended run gets its ``status`` after the last events, as
        the viewers who watched the end did."""
        if state.get("status") not in ENDED_STATUSES:
            return
        reason = await database_sync_to_async(
            lambda: Run.objects.filter(pk=self.run_id).values_list("end_reason", flat=True).first()
        )()
        message = frames.status_message(state["status"], reason or "", _clock_from_state(state), self.delivered)
        await self.send(text_data=frames.dumps(message))

    async def _catch_up(self, after: int, upto: int | None) -> None:
        """Send what was published in ``(after, upto]``: frames kept at node level, else events."""
        if self.meta["node_level"]:
            await self._send_kept_frames(after, upto)
        else:
            await self._send_from_log(after, upto)

    async def _send_kept_frames(self, after: int, upto: int | None) -> None:
        """Node level: the kept frame texts as they were; a fresh snapshot if they no longer go back that far."""
        kept = await asyncio.to_thread(snapshot_and_frames.frames_after, self.run_id, after, upto)
        if kept is None or (upto is not None and upto > after and (not kept or kept[-1][1] < upto)):
            # Not (all) kept: older than what Redis keeps, or published without a frame (a driver
            # killed between logging events and storing their frame). A fresh snapshot, never a gap.
            await self._send_snapshot(fresh=True)
            return
        for first, last, text in kept:
            await self.send(text_data=_shared_frame_text(self.run_id, first, last, text))
            self.delivered = last

    async def _send_from_log(self, after: int, upto: int | None) -> None:
        """Send logged events ``(after, upto]`` as frames; resync if the log lost some."""
        chunk = settings.HEARTBEAT["FRAME_MAX_EVENTS"]
        while True:
            events = await asyncio.to_thread(event_log.event_texts_after, self.run_id, after, chunk, upto=upto)
            if not events:
                return
            if events[0][0] != after + 1:
                await self._send_snapshot()  # the gap is older than the bounded log
                return
            state = await asyncio.to_thread(run_state.read_state, self.run_id)
            await self.send(text_data=frames.frame_text(events, _clock_from_state(state)))
            after = self.delivered = events[-1][0]
            if len(events) < chunk:
                return

    # -- the run's messages, from its feed (the driver, a trainer's follow) --------------

    async def run_frame(self, message: dict) -> None:
        first, last = message["first"], message["last"]
        if last <= self.delivered:
            return  # already sent (from the log during catch-up)
        if first > self.delivered + 1:
            await self._catch_up(self.delivered, first - 1)  # a frame went missing
            if last <= self.delivered:
                return
        text = message["text"]
        if first <= self.delivered:
            partial = json.loads(text)
            partial["events"] = [event for event in partial["events"] if event["seq"] > self.delivered]
            partial["seq"] = [self.delivered + 1, last]
            text = frames.dumps(partial)
        await self.send(text_data=text)
        self.delivered = last

    async def run_clock(self, message: dict) -> None:
        await self.send(text_data=message["text"])

    async def run_status(self, message: dict) -> None:
        await self._catch_up_before_status(message)
        await self.send(text_data=message["text"])

    async def _catch_up_before_status(self, message: dict) -> None:
        last = json.loads(message["text"]).get("last_seq", 0)
        if last > self.delivered:
            await self._catch_up(self.delivered, last)

    async def run_presence(self, message: dict) -> None:
        # The driver counts viewers once a second and announces changes: one message per
        # change for the whole room, not one per join per viewer (which is quadratic).
        await self.send(text_data=message["text"])

    async def run_snapshot(self, message: dict) -> None:
        # The driver skipped ahead (a large cluster's start-up, simulated before going live):
        # a fresh snapshot is cheaper for a viewer than the events it skipped.
        await self._send_snapshot(fresh=True)

    async def run_feed_lost(self, message: dict) -> None:
        # Say why before closing, so a page shows "reconnecting" rather than a frozen cluster.
        await self.send(text_data=frames.dumps(frames.error_message(UNAVAILABLE, "live-service-unavailable")))
        await self.close(code=CLOSE_TRY_AGAIN)

    # -- what a viewer may send -------------------------------------------------------

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None:
            await self._error("binary messages are not supported; send JSON text")
            return
        if len(text_data) > MAX_CLIENT_MESSAGE:
            await self._error(f"message too long ({len(text_data)} characters, limit {MAX_CLIENT_MESSAGE})")
            return
        try:
            message = json.loads(text_data)
        except ValueError:
            await self._error("message is not valid JSON")
            return
        kind = message.get("type") if isinstance(message, dict) else None
        if not isinstance(kind, str):
            await self._error('a message must be a JSON object with a string "type" (ping, resync, detail or answer)')
        elif kind == "ping":
            await self.send(
                text_data=frames.dumps({"type": "pong", "echo": message.get("echo"), "sent_at": frames.wall_ms()})
            )
        elif kind == "resync":
            await self._send_snapshot(fresh=True)
        elif kind == "detail":
            await self._send_detail(message.get("node"))
        elif kind == "answer":
            await self._answer(message)
        else:
            await self._error(
                f"unknown message type {kind!r}: viewers may send ping, resync, detail or answer; "
                "commands go to POST /api/runs/<id>/commands with the control token",
                "unknown-type",
            )

    async def _answer(self, message: dict) -> None:
        """A viewer's answer to the open question (stored; the driver sends the tallies)."""
        if not (self.meta["lesson"] or self.meta["drill"]):
            await self._error("this run asks no questions: it is not a lesson or a drill", "no-question")
            return
        try:
            ack = await database_sync_to_async(questions.record_answer)(self.run_id, message)
        except ApiError as exc:
            await self._error(exc.message, exc.code)
            return
        await self.send(text_data=frames.dumps(ack))

    async def run_notice(self, message: dict) -> None:
        # lessons and drills: step, question, tally, reveal (docs/websocket-protocol.md)
        await self.send(text_data=message["text"])

    async def _send_detail(self, node: object) -> None:
        """A node's full objects, from the run's driver (docs/websocket-protocol.md)."""
        if not isinstance(node, str) or not node or len(node) > MAX_NODE_NAME:
            await self._error(
                f'detail needs "node": a node name (string of 1 to {MAX_NODE_NAME} characters), got {node!r}'
            )
            return
        if not self.meta["node_level"]:
            await self._error(
                "this run sends every object already: a node's details are in the snapshot", "not-node-level"
            )
            return
        reply = await asyncio.to_thread(detail_asks.ask_detail, self.run_id, node)
        text = await asyncio.to_thread(detail_asks.wait_answer, reply, DETAIL_WAIT_SECONDS)
        if text is None:
            await self._error(
                f"no answer about {node!r}: the run is not being driven now (ended, or between workers)", "no-driver"
            )
            return
        await self.send(text_data=text)

    async def _error(self, text: str, code: str = "bad-message") -> None:
        await self.send(text_data=frames.dumps(frames.error_message(text, code)))


# The stored snapshot as this process last read it, per event loop: a class joining at once
# (hundreds of viewers within seconds, megabytes each on a large run) reads it from Redis once a
# second, not once per viewer; what a reused snapshot misses comes from the catch-up after it.
SNAPSHOT_REUSE_SECONDS = 1.0
_SNAPSHOTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, tuple[float, asyncio.Future]]] = (
    weakref.WeakKeyDictionary()
)


async def stored_snapshot(run_id: str) -> str | None:
    cache = _SNAPSHOTS.setdefault(asyncio.get_running_loop(), {})
    now = time.monotonic()
    entry = cache.get(run_id)
    if (
        entry is None
        or now - entry[0] >= SNAPSHOT_REUSE_SECONDS
        or (entry[1].done() and entry[1].exception() is not None)
    ):
        entry = (now, asyncio.ensure_future(asyncio.to_thread(snapshot_and_frames.read_snapshot_text, run_id)))
        cache[run_id] = entry
        for stale in [key for key, (at, _) in cache.items() if now - at >= SNAPSHOT_REUSE_SECONDS]:
            del cache[stale]
    return await asyncio.shield(entry[1])


_SNAPSHOT_TEXTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, tuple[float, str, str]]] = (
    weakref.WeakKeyDictionary()
)


def _snapshot_text(head: str, stored: str) -> str:
    """``head`` and the stored snapshot as one message: one str object per (head, stored snapshot)
    while the snapshot is reused (SNAPSHOT_REUSE_SECONDS), so that it is split once."""
    texts = _SNAPSHOT_TEXTS.setdefault(asyncio.get_running_loop(), {})
    entry = texts.get(head)
    if entry is None or entry[1] is not stored:
        now = time.monotonic()
        for stale in [key for key, (at, _, _) in texts.items() if now - at >= 2 * SNAPSHOT_REUSE_SECONDS]:
            del texts[stale]
        entry = texts[head] = (now, stored, f"{head[:-1]},{stored[1:]}")
    return entry[2]


# Kept frames as this process last sent them, one str object per frame: a class joining at once
# catches up on the same frames, and a frame of a large cluster's busy second (megabytes) is then
# split into parts once for all of them (frames.parts_of) instead of once per viewer.
KEPT_TEXTS = 256
_kept_texts: OrderedDict[tuple[str, int, int], str] = OrderedDict()


def _shared_frame_text(run_id: str, first: int, last: int, text: str) -> str:
    key = (run_id, first, last)
    shared = _kept_texts.get(key)
    if shared is None:
        shared = _kept_texts[key] = text
        while len(_kept_texts) > KEPT_TEXTS:
            _kept_texts.popitem(last=False)
    return shared


_META_CACHE: dict[str, dict] = {}
_META_CACHE_MAX = 10_000


async def run_meta(run_id: str) -> dict | None:
    """What a viewer is told about a run; cached per process (it never changes), so 500
    viewers joining one run cost one database query, not 500 on the thread-sensitive executor."""
    meta = _META_CACHE.get(run_id)
    if meta is None:
        row = await database_sync_to_async(
            Run.objects.filter(pk=run_id)
            .values("id", "scenario_name", "document", "node_count", "lesson", "drill")
            .first
        )()
        if row is None:
            return None
        if len(_META_CACHE) >= _META_CACHE_MAX:
            _META_CACHE.clear()
        meta = {
            "id": row["id"],
            "scenario": row["scenario_name"],
            "title": row["document"].get("title") or {"en": row["scenario_name"]},
            "node_count": row["node_count"],
            "node_level": detail.is_node_level(row["node_count"]),
            "lesson": row["lesson"] or None,
            "drill": row["drill"] or None,
        }
        _META_CACHE[run_id] = meta
    return meta


def _clock_from_state(state: dict) -> dict:
    if "t" in state:
        return {"t": round(float(state["t"]), 6), "speed": float(state["speed"]), "paused": state.get("paused") == "1"}
    return {}


def _rebuilt_snapshot(run_id: str) -> str:
    """The run's snapshot at the time the database says it reached, replayed in the replay process."""
    run = Run.objects.get(pk=run_id)
    t = round(run.t_reached, 6)
    if not run.simulated:  # a real cluster's (docs/observe.md): nothing to replay; the log's events follow
        replays.restore_if_forgotten(run)  # a replayed audit log past Redis's retention: its kept copy
        stored = snapshot_and_frames.read_snapshot_text(run.id)
        if stored is not None:
            return stored
        return frames.dumps(frames.snapshot_body({"t": t, "objects": {}}, {"t": t, "speed": 1.0, "paused": True},
                                                 run.last_seq))
    return replay_process.replay(seek.snapshot_text, run, t, t, detail.is_node_level(run.node_count), run.paused, t=t)
