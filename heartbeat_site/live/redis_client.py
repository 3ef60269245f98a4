"""One Redis connection pool per process (thread-safe), from settings.REDIS_URL."""

from __future__ import annotations

import threading

import redis
from django.conf import settings

# A read this long means Redis hangs. It must outlast the longest blocking wait of this code (a driver's
# objects, 15 s: heartbeat_site/k8sapi/cluster.py; a command's ack, HEARTBEAT_COMMAND_ACK_SECONDS, at most
# 30 s): redis-py's own default, 5 s, cuts every longer BLPOP short with a TimeoutError.
SOCKET_TIMEOUT = 60.0

_lock = threading.Lock()
_clients: dict[tuple[str, bool], redis.Redis] = {}


def get_redis(*, binary: bool = False) -> redis.Redis:
    """The process's client; ``binary``: replies stay bytes (a run's checkpoint is not text)."""
    url = settings.REDIS_URL
    client = _clients.get((url, binary))
    if client is None:
        with _lock:
            client = _clients.get((url, binary))
            if client is None:
                client = redis.Redis.from_url(
                    url, decode_responses=not binary, health_check_interval=30, socket_connect_timeout=2,
                    socket_timeout=SOCKET_TIMEOUT,
                )
                _clients[(url, binary)] = client
    return client


def ping() -> bool:
    """Whether Redis answers: checked before a command is stored, so none is stored that no driver can be told of."""
    return bool(get_redis().ping())
