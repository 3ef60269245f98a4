"""One Redis subscription per ASGI process and run, shared by that process's viewers.

A subscription per viewer would cost, for one frame to 500 viewers, 500 Redis-side deliveries
into 500 sockets, 500 decodes and about 1,000 task wake-ups before the 500 websocket writes, and
a Redis SUBSCRIBE per join. A ``RunFeed`` subscribes (redis-py's asyncio client) to the run's
feed channel (``naming.feed_channel``, written by ``publisher.py``), decodes each message once
and puts the same (read-only) dict into every local viewer's inbox. Each viewer still handles
its inbox in its own task, in order, with the seq checks of ``consumers.py`` (exactly once,
holes filled from the event log), so a slow socket delays only itself.

The feed also keeps its viewers registered in Redis (``viewer_presence.add_viewers``): one call per
process every ``VIEWER_REFRESH_SECONDS`` instead of one thread hop per viewer.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref

import redis.asyncio as aioredis
from django.conf import settings

from heartbeat_site.live.delivery import publisher
from heartbeat_site.live.runstore import naming, viewer_presence

log = logging.getLogger(__name__)

VIEWER_REFRESH_SECONDS = 30.0  # well inside viewer_presence.VIEWER_STALE_SECONDS
SILENCE_CHECK_SECONDS = 2.0  # a feed silent this long checks that Redis answers
PING_TIMEOUT_SECONDS = 10.0  # ... and gives up on it after this long
FEED_LOST = {"type": "run.feed.lost"}  # what viewers get if the subscription itself fails

Inbox = asyncio.Queue


class RunFeed:
    """The run's messages for this process's viewers (one event loop)."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.inboxes: dict[str, Inbox] = {}  # viewer id -> that viewer's inbox
        self.last_refresh = time.monotonic()
        self.subscribed = asyncio.get_running_loop().create_future()
        self.task = asyncio.create_task(self._pump(), name=f"feed {run_id}")

    async def _pump(self) -> None:
        """Receive the run's feed on a Redis connection of the feed's own.

        A broken connection, a message that is not the feed's, or a run silent for
        SILENCE_CHECK_SECONDS (a running run says something every second) whose Redis then does
        not answer a ping, ends the feed: the viewers are told and closed (``FEED_LOST``) so that
        their pages show it and reconnect with ``?after=``, which fills what the feed missed.
        """
        client = aioredis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2)
        pubsub = client.pubsub(ignore_subscribe_messages=True)
        try:
            await pubsub.subscribe(naming.feed_channel(self.run_id))
            self.subscribed.set_result(None)
            while True:
                received = await pubsub.get_message(timeout=SILENCE_CHECK_SECONDS)
                if received is None:
                    # silent: is Redis still there? (a busy Redis may take a while to answer)
                    await asyncio.wait_for(client.ping(), PING_TIMEOUT_SECONDS)
                    continue
                message = publisher.decode(received["data"])
                for inbox in self.inboxes.values():
                    inbox.put_nowait(message)
                self._refresh_registrations()
        except Exception as exc:  # Redis gone (or a message we cannot read): the pages reconnect
            log.warning("feed for run %s ended: %s: %s", self.run_id, type(exc).__name__, exc)
            await _close(pubsub, client)
            if not self.subscribed.done():
                self.subscribed.set_exception(exc)
            self._lost()
        finally:
            await _close(pubsub, client)

    def _refresh_registrations(self) -> None:
        """Riding on the run's messages (frames, or a clock message each quiet second)."""
        now = time.monotonic()
        if now - self.last_refresh >= VIEWER_REFRESH_SECONDS and self.inboxes:
            self.last_refresh = now
            task = asyncio.create_task(asyncio.to_thread(viewer_presence.add_viewers, self.run_id, list(self.inboxes)))
            task.add_done_callback(_log_failure)

    def _lost(self) -> None:
        _forget(self)
        for inbox in self.inboxes.values():
            inbox.put_nowait(FEED_LOST)


_FEEDS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, RunFeed]] = weakref.WeakKeyDictionary()


def _feeds() -> dict[str, RunFeed]:
    return _FEEDS.setdefault(asyncio.get_running_loop(), {})


def _forget(feed: RunFeed) -> None:
    feeds = _feeds()
    if feeds.get(feed.run_id) is feed:
        del feeds[feed.run_id]


async def join(run_id: str, viewer_id: str, inbox: Inbox) -> None:
    """Deliver the run's messages to ``inbox`` from now on (returns once subscribed)."""
    feeds = _feeds()
    feed = feeds.get(run_id)
    if feed is None:
        feed = feeds[run_id] = RunFeed(run_id)
    feed.inboxes[viewer_id] = inbox
    await asyncio.shield(feed.subscribed)


async def leave(run_id: str, viewer_id: str) -> None:
    """Stop delivering to the viewer; the last one to leave ends the process's subscription
    (and returns once it has ended)."""
    feed = _feeds().get(run_id)
    if feed is None or feed.inboxes.pop(viewer_id, None) is None:
        return
    if not feed.inboxes:
        _forget(feed)
        feed.task.cancel()
        await asyncio.wait([feed.task])  # its UNSUBSCRIBE; a cancel of the caller still propagates


async def _close(pubsub: aioredis.client.PubSub, client: aioredis.Redis) -> None:
    with contextlib.suppress(Exception):  # Redis may be what failed
        await asyncio.shield(pubsub.aclose())
        await asyncio.shield(client.aclose())


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.warning("could not refresh viewer registrations: %s", task.exception())
