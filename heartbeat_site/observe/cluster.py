"""A real cluster read through the official Kubernetes Python client: the five resources an observation watches,
each listed, then watched from the list's resourceVersion, listed again when the watch is too old (410 Gone),
with a growing pause after errors (the informer pattern of client-go, tools/cache/reflector.go in
kubernetes/client-go). Read-only: the client is only ever asked to list and watch.

Objects travel as the API's own JSON (``_preload_content=False``), never as the client's model classes: they go
to the pages as they are.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import queue
import socket
import tempfile
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.watch.watch import iter_resp_lines

from heartbeat_site.live.errors import ApiError
from heartbeat_site.observe.access import Target
from heartbeat_site.observe.changes import LEASE_NAMESPACE, RESOURCES
from heartbeat_site.observe.problems import Problem

log = logging.getLogger(__name__)

CONNECT_SECONDS = 5.0
READ_SECONDS = 30.0
WATCH_SECONDS = 45  # the server ends each watch after this (timeoutSeconds), and the watch starts again
PAGE = 500  # objects per list page (limit and continue)
FIRST_BACKOFF = 0.5
MAX_BACKOFF = 30.0

class Expired(Exception):
    """The watch's resourceVersion is older than the server keeps (410 Gone): list again."""


@dataclass
class Seen:
    """What a resource's watcher saw: ``kind`` is "listed" (``objects``: all of them now), "changed" (``obj``;
    ``deleted`` when it is gone) or "problem" (``problem``: why)."""

    kind: str
    resource: str
    wall: float
    objects: list[dict] | None = None
    obj: dict | None = None
    deleted: bool = False
    problem: Problem | None = None


class Connection:
    """An API client for the target: TLS verified (with the CA given, else the system's), no retries of its own
    (this module backs off itself), no proxy from the environment."""

    def __init__(self, target: Target) -> None:
        conf = client.Configuration()
        conf.host = target.server
        conf.verify_ssl = True
        conf.retries = False
        self.ca_file: str | None = None
        if target.ca:
            handle, self.ca_file = tempfile.mkstemp(prefix="heartbeat-ca-", suffix=".pem")  # a CA is no secret
            with os.fdopen(handle, "w") as out:
                out.write(target.ca)
            conf.ssl_ca_cert = self.ca_file
        if target.token:
            conf.api_key = {"authorization": target.token}
            conf.api_key_prefix = {"authorization": "Bearer"}
        self.api = client.ApiClient(conf)
        self.lock = threading.Lock()
        self.sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()  # the client's, which close() ends
        self.closed = False
        self._track_connections()
        core, coordination = client.CoreV1Api(self.api), client.CoordinationV1Api(self.api)
        discovery = client.DiscoveryV1Api(self.api)
        self.lists: dict[str, Callable[..., Any]] = {
            "nodes": core.list_node,
            "leases": functools.partial(coordination.list_namespaced_lease, LEASE_NAMESPACE),
            "pods": core.list_pod_for_all_namespaces,
            "endpointslices": discovery.list_endpoint_slice_for_all_namespaces,
            "events": core.list_event_for_all_namespaces,
        }
        self.server = target.server

    def version(self) -> str:
        """The server's minor version as "1.NN" (for the defaults an observation infers with)."""
        response = client.VersionApi(self.api).get_code(_preload_content=False,
                                                       _request_timeout=(CONNECT_SECONDS, READ_SECONDS))
        info = json.loads(response.data)
        if not isinstance(info, dict) or not info.get("major"):
            raise ValueError("/version does not name a Kubernetes version")
        minor = "".join(ch for ch in str(info.get("minor")) if ch.isdigit())  # "31+" on some distributions
        return f"{info.get('major')}.{minor}"

    def list(self, resource: str, limit: int | None = PAGE) -> tuple[list[dict], str]:
        """Every object of ``resource`` and the list's resourceVersion (pages of ``limit``)."""
        items: list[dict] = []
        token = None
        while True:
            kwargs: dict[str, Any] = {"_preload_content": False,
                                      "_request_timeout": (CONNECT_SECONDS, READ_SECONDS)}
            if limit:
                kwargs["limit"] = limit
            if token:
                kwargs["_continue"] = token
            body = json.loads(self.lists[resource](**kwargs).data)
            if not isinstance(body, dict):
                raise ValueError(f"a list of {resource} that is not a JSON object")
            items.extend(body.get("items") or ())
            token = (body.get("metadata") or {}).get("continue")
            if not token or not limit:
                return items, str((body.get("metadata") or {}).get("resourceVersion") or "")

    def watch(self, resource: str, version: str, stop: threading.Event, seen: Callable[[dict], None]) -> str:
        """Watch ``resource`` from ``version`` until the server ends the watch; the resourceVersion reached."""
        try:
            response = self.lists[resource](
                watch=True, resource_version=version, allow_watch_bookmarks=True, timeout_seconds=WATCH_SECONDS,
                _preload_content=False, _request_timeout=(CONNECT_SECONDS, WATCH_SECONDS + READ_SECONDS))
        except ApiException as exc:
            if exc.status == 410:
                raise Expired(str(exc.reason)) from None
            raise
        finished = False
        try:
            for line in iter_resp_lines(response):
                if stop.is_set():
                    break
                event = json.loads(line)
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    if obj.get("code") == 410:
                        raise Expired(obj.get("message", "too old resource version"))
                    raise ApiException(status=obj.get("code") or 500, reason=obj.get("message") or "watch error")
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if event.get("type") != "BOOKMARK":
                    seen(event)
            else:
                finished = not self.closed
        finally:
            if finished:  # the server ended it: the connection can serve the next request
                response.release_conn()
            else:  # a watch left mid-stream is closed, so that the server ends it too
                response.close()
        return version

    def _track_connections(self) -> None:
        """The client's pools make their connections of a class that hands each socket to ``close`` once
        connected (a response read to the connection's close keeps the socket when the connection has let it go,
        as http.client does): a watch may wait for its response's first byte as long as for its next line (a server that
        sends its headers with the first event), and only shutting its socket down ends either wait from another
        thread."""
        manager = self.api.rest_client.pool_manager
        pools = {}
        owner = self
        for scheme, pool in manager.pool_classes_by_scheme.items():
            base = pool.ConnectionCls

            def connect(conn: Any, base: Any = base) -> None:
                base.connect(conn)
                owner._connected(conn)

            tracked = type(f"Closable{base.__name__}", (base,), {"connect": connect})
            pools[scheme] = type(f"Closable{pool.__name__}", (pool,), {"ConnectionCls": tracked})
        manager.pool_classes_by_scheme = pools

    def _connected(self, conn: Any) -> None:
        sock = conn.sock
        with self.lock:
            if not self.closed:
                self.sockets.add(sock)
                return
        _shut(sock)  # closed while this request was on its way

    def close(self) -> None:
        """End the watches now rather than at their timeoutSeconds: a watch blocks in a read of its socket until
        the server sends something, which may be a minute on a quiet resource. Shutting the sockets down ends
        that read, and the watching thread closes its connection, so the API server ends the watch too."""
        with self.lock:
            self.closed = True
            sockets = list(self.sockets)
        for sock in sockets:
            _shut(sock)
        with contextlib.suppress(Exception):
            self.api.rest_client.pool_manager.clear()  # the idle connections
            self.api.close()
        if self.ca_file:
            with contextlib.suppress(OSError):
                os.unlink(self.ca_file)


def _shut(sock: socket.socket) -> None:
    """Shut a socket down (both ways), which wakes a thread blocked reading it; one closed already is left."""
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def problem(error: Exception, resource: str, server: str) -> Problem:
    """What ``error`` means for a trainer, and whether retrying cannot help."""
    said = functools.partial(Problem, server=server, resource=resource)
    if isinstance(error, AttributeError) and isinstance(error.__context__, ApiException):
        error = error.__context__  # the client fails on its own TLS error (api_client.py decodes a body of None)
    if isinstance(error, ApiException) and error.status == 0:  # the client wraps TLS failures so (client/rest.py)
        return said("certificate", fatal=True, detail=_short(str(error.reason)))
    if isinstance(error, ApiException):
        if error.status in (401, 403, 404):
            kind = {401: "unauthorized", 403: "forbidden", 404: "not-found"}[error.status]
            return said(kind, fatal=True, status=error.status)
        return said("answered", fatal=False, status=error.status, detail=str(error.reason))
    text = str(error)
    if isinstance(error, urllib3.exceptions.MaxRetryError) and error.reason is not None:
        error = error.reason
        text = str(error)
    if isinstance(error, urllib3.exceptions.SSLError) or "CERTIFICATE_VERIFY_FAILED" in text:
        return said("certificate", fatal=True, detail=_short(text))
    if isinstance(error, urllib3.exceptions.HTTPError | OSError):
        return said("unreachable", fatal=False, detail=_short(text))
    if isinstance(error, ValueError):
        return said("not-kubernetes", fatal=True, detail=_short(text))
    return said("other", fatal=False, detail=f"{type(error).__name__}: {_short(text)}")


def _short(text: str) -> str:
    """The end of a urllib3 error's message, where the cause is, without the pool's repr."""
    for marker in ("Caused by ", "Failed to establish a new connection: "):
        if marker in text:
            text = text.split(marker)[-1]
    return text.strip("()'\" ")[:300]


def preflight(target: Target) -> str:
    """Before an observation is created: reach the server, verify it, and check the token may list each
    resource (one object each); the server's version. A 502 (unreachable, bad certificate) or a 400 (what the
    token may not do) with a sentence naming the problem."""
    connection = Connection(target)
    try:
        try:
            version = connection.version()
        except Exception as exc:
            raise ApiError(502 if not isinstance(exc, ApiException) else 400, "cluster-unavailable",
                           problem(exc, "nodes", target.server).sentence) from None
        for resource in RESOURCES:
            try:
                connection.list(resource, limit=1)
            except Exception as exc:
                raise ApiError(400 if isinstance(exc, ApiException) else 502, "cluster-refused",
                               problem(exc, resource, target.server).sentence) from None
        return version
    finally:
        connection.close()


class Watcher:
    """One thread per resource: list, watch from the list's version, list again on 410, back off on errors.
    What each sees goes into ``seen`` (a queue the observation's driver drains)."""

    def __init__(self, connection: Connection, stop: threading.Event) -> None:
        self.connection = connection
        self.stop = stop
        self.seen: queue.Queue[Seen] = queue.Queue()
        self.threads = [threading.Thread(target=self._run, args=(resource,), name=f"observe {resource}",
                                         daemon=True) for resource in RESOURCES]

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def _run(self, resource: str) -> None:
        delay = FIRST_BACKOFF
        version = None
        while not self.stop.is_set():
            try:
                if version is None:
                    objects, version = self.connection.list(resource)
                    self.seen.put(Seen("listed", resource, time.time(), objects=objects))
                    delay = FIRST_BACKOFF
                version = self.connection.watch(resource, version, self.stop, functools.partial(self._changed,
                                                                                                resource))
            except Expired:
                version = None
            except Exception as exc:  # the cluster's or the network's: said to viewers, then retried
                if self.stop.is_set():  # the watch was ended by closing its connection
                    return
                failure = problem(exc, resource, self.connection.server)
                self.seen.put(Seen("problem", resource, time.time(), problem=failure))
                if failure.fatal:
                    return
                log.info("observation of %s: %s; retrying in %g s", self.connection.server, failure.sentence, delay)
                version = None
                if self.stop.wait(delay):
                    return
                delay = min(2 * delay, MAX_BACKOFF)

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds in all for the threads to end; whether they all did."""
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self.threads)

    def _changed(self, resource: str, event: dict) -> None:
        self.seen.put(Seen("changed", resource, time.time(), obj=event.get("object") or {},
                           deleted=event.get("type") == "DELETED"))
