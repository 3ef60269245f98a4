"""``?watch=1``: a stream of JSON watch events (``ADDED``, ``MODIFIED``, ``DELETED``) that follows
the live run in virtual time (``k8s.io/apiserver/pkg/endpoints/handlers/watch.go``).

A watch joins the run's feed in this process (``heartbeat_site/live/delivery/fanout.py``), like a websocket
viewer, and counts as one. Each message of the run (a frame, a clock tick, the end) means the
event log may have grown: the process's ``RunObjects`` is brought up to date once for all its
watches (``_Refresher``) and each watch sends the changes after its own resourceVersion that its
selection matches. As on a real server, a Table watch carries the column definitions in its first
event only, a resourceVersion older than what is kept ends with an ``ERROR`` event (410 Expired),
and ``allowWatchBookmarks`` gets a ``BOOKMARK`` now and then.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator

import orjson
from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse

from heartbeat_site.k8sapi import reads, tables
from heartbeat_site.k8sapi.cluster import API_THREADS, Change, RunObjects, find_run, objects_of
from heartbeat_site.k8sapi.resources import Resource
from heartbeat_site.k8sapi.status import K8sError, status_body
from heartbeat_site.live.service import Run, fanout, viewer_presence

BOOKMARK_SECONDS = 10.0
MAX_TIMEOUT_SECONDS = 3600.0
RUN_MESSAGES = ("run.frame", "run.clock", "run.status", "run.snapshot")


class _Refresher:
    """Brings one run's objects up to date at most once per run message, for all of a process's watches."""

    def __init__(self, run: Run) -> None:
        self.run = run
        self.task: asyncio.Future | None = None
        self.done_at = 0.0

    async def refresh(self, asked_at: float) -> RunObjects:
        while True:
            if self.task is not None and self.task.done() and self.done_at >= asked_at:
                return self.task.result()
            if self.task is None or self.task.done():
                self.task = asyncio.ensure_future(self._refresh(time.monotonic()))
            await asyncio.shield(self.task)

    async def _refresh(self, started: float) -> RunObjects:
        objs = await sync_to_async(objects_of, thread_sensitive=False, executor=API_THREADS)(self.run)
        self.done_at = max(self.done_at, started)
        return objs


_REFRESHERS: dict[str, _Refresher] = {}


def _refresher(run: Run) -> _Refresher:
    found = _REFRESHERS.get(run.id)
    if found is None:
        found = _REFRESHERS[run.id] = _Refresher(run)
    found.run = run
    return found


async def stream(request: HttpRequest, run_id: str, resource: Resource, namespace: str, name: str) -> HttpResponse:
    """The watch response; errors found before streaming are answered as a Status."""
    run = await sync_to_async(find_run)(run_id)
    selection = reads.Selection.of(request, resource, namespace)
    if name:
        plain = selection.matches

        def named(obj: dict) -> bool:  # a watch of one object (kubectl get node node-2 -w)
            return plain(obj) and (obj.get("metadata") or {}).get("name") == name

        selection.matches = named  # type: ignore[method-assign]
    since = request.GET.get("resourceVersion", "")
    if since not in ("", "0") and not since.isdigit():
        raise K8sError(400, f"resourceVersion: not a resource version: {since!r}")
    timeout = MAX_TIMEOUT_SECONDS
    if request.GET.get("timeoutSeconds", "").isdigit():
        timeout = min(float(request.GET["timeoutSeconds"]), MAX_TIMEOUT_SECONDS)
    watch = Watch(run, selection, reads.wants_table(request), reads.is_true(request.GET.get("allowWatchBookmarks", "")))
    return StreamingHttpResponse(watch.lines(int(since or 0), timeout), content_type="application/json")


class Watch:
    def __init__(self, run: Run, selection: reads.Selection, table: bool, bookmarks: bool) -> None:
        self.run = run
        self.selection = selection
        self.table = table
        self.bookmarks = bookmarks
        self.headers_sent = False

    async def lines(self, since: int, timeout: float) -> AsyncIterator[bytes]:
        inbox: fanout.Inbox = fanout.Inbox()
        viewer_id = f"kubectl-{uuid.uuid4().hex}"
        await fanout.join(self.run.id, viewer_id, inbox)
        await asyncio.to_thread(viewer_presence.add_viewers, self.run.id, [viewer_id])
        refresher = _refresher(self.run)
        deadline = time.monotonic() + timeout
        try:
            objs = await refresher.refresh(time.monotonic())
            if since:
                cursor = since
            else:  # "0" or none: the current state as ADDED events, then what follows
                cursor = objs.rv
                for obj in reads.all_objects(objs, self.selection.resource, self.selection.namespace):
                    if self.selection.matches(obj):
                        yield self._line("ADDED", obj, objs)
            ended = False
            last_bookmark = time.monotonic()
            store = self.selection.resource.store
            while not ended:
                changes = objs.changes_after(cursor, store)
                if changes is None:
                    oldest = objs.changes[store].oldest_rv
                    yield _error_line(410, f"too old resource version: {cursor} ({oldest})", "Expired")
                    return
                for change in changes:
                    if self.selection.matches(change.obj):
                        yield self._change_line(change, objs)
                cursor = max(cursor, objs.rv)
                if self.bookmarks and time.monotonic() - last_bookmark >= BOOKMARK_SECONDS:
                    last_bookmark = time.monotonic()
                    yield self._bookmark(cursor)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return
                try:
                    message = await asyncio.wait_for(inbox.get(), min(remaining, BOOKMARK_SECONDS))
                except TimeoutError:
                    continue
                if message is fanout.FEED_LOST:
                    return  # the client watches again, from its last resourceVersion
                if message.get("type") not in RUN_MESSAGES:
                    continue
                ended = message["type"] == "run.status"
                objs = await refresher.refresh(time.monotonic())
        finally:
            await fanout.leave(self.run.id, viewer_id)
            await asyncio.to_thread(viewer_presence.remove_viewer, self.run.id, viewer_id)

    def _change_line(self, change: Change, objs: RunObjects) -> bytes:
        """The line of a change, encoded once for all the process's watches that print it alike."""
        if self.table and not self.headers_sent:
            return self._line(change.type, change.obj, objs)
        key = (self.selection.resource.group, self.table, objs.t)
        line = change.lines.get(key)
        if line is None:
            if len(change.lines) > 4:  # older clocks' lines: no watch will ask for them again
                change.lines.clear()
            line = change.lines[key] = self._line(change.type, change.obj, objs)
        return line

    def _line(self, kind: str, obj: dict, objs: RunObjects) -> bytes:
        if self.table:
            body = tables.table(self.selection.resource.name, [obj], objs.now,
                                {"resourceVersion": (obj.get("metadata") or {}).get("resourceVersion", "")},
                                headers=not self.headers_sent)
            self.headers_sent = True
        else:
            body = reads.served(self.selection.resource, obj)
        return orjson.dumps({"type": kind, "object": body}) + b"\n"

    def _bookmark(self, rv: int) -> bytes:
        resource = self.selection.resource
        body = {"kind": resource.kind, "apiVersion": resource.api_version, "metadata": {"resourceVersion": str(rv)}}
        return (json.dumps({"type": "BOOKMARK", "object": body}) + "\n").encode()


def _error_line(code: int, message: str, reason: str) -> bytes:
    return (json.dumps({"type": "ERROR", "object": status_body(code, message, reason)}) + "\n").encode()
