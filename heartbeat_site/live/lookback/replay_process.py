"""Replays in a process of their own: a run's seeks, replayed event pages, exports, rebuilt snapshots.

A replay is pure CPU in the interpreter: a seek of a 5,000-node run simulates its start-up again,
about ten seconds. In the web process that thread holds the interpreter's lock against the event
loop that sends every viewer's frames, so every run served by that process stutters meanwhile
(bench/replay_bench.py measures the loop's lag). Here the work goes to one child process per web
process, which keeps the parked simulations (``seek.py``) and the pager's cursors (``rebuilding.py``)
between requests, as the web process did; the web process only waits for the answer.

The child is given everything it needs (the run and its applied commands, read by the caller), so it
opens no database connection and reads no setting that a request may change; it reads the run's checkpoints
from Redis itself (from_checkpoints.py: tens of megabytes for a large run, not worth a trip through the web process).
It is started on first use (``spawn``: nothing of the parent's threads or connections is copied), started
again when it dies, and exits when its parent has gone. ``HEARTBEAT_REPLAY_PROCESS=0`` replays in the calling thread, as
short replays always are (``call``).
"""

from __future__ import annotations

import logging
import math
import os
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from typing import TypeVar

from django.conf import settings

from heartbeat_site.live.lookback import replay_process_start
from heartbeat_site.live.lookback.rebuilding import applied_fault_commands
from heartbeat_site.live.models import Run

log = logging.getLogger(__name__)

T = TypeVar("T")

_lock = threading.Lock()
_executor: ProcessPoolExecutor | None = None


def call(function: Callable[..., T], *args: object, work: float) -> T:
    """``function(*args)`` in the replay process (a module-level function: it is sent by name).

    ``work``: what the replay may simulate, in node-seconds (nodes x virtual seconds, what a replay's
    cost grows with). One under ``HEARTBEAT_REPLAY_PROCESS_FROM`` (3,000 by default: about a tenth
    of a second) is done in the calling thread: it holds the loop up less than sending it away costs,
    and a first one would wait for the replay process to start (a second or two).
    """
    conf = settings.HEARTBEAT
    if not conf["REPLAY_PROCESS"] or work < conf["REPLAY_PROCESS_FROM"]:
        return function(*args)
    executor = _get_executor()
    try:
        return executor.submit(function, *args).result()
    except BrokenProcessPool:
        # the child died (killed, out of memory): a new one replays from scratch, once
        _discard(executor)
        log.warning("the replay process died; starting a new one")
    return _get_executor().submit(function, *args).result()


def replay(function: Callable[..., T], run: Run, *args: object, t: float) -> T:
    """``function(run, its applied fault commands, *args)``, a replay of ``run`` up to virtual time ``t``,
    where ``call`` puts it. The commands are read here: the replay process opens no database."""
    return call(function, run, applied_fault_commands(run), *args, work=run.node_count * t)


def child_pid() -> int:
    """The replay process's pid (it is started if need be)."""
    return call(os.getpid, work=math.inf)


def stop() -> None:
    """End the replay process (tests; a web process ends it at exit by itself)."""
    with _lock:
        executor = _executor
    if executor is not None:
        _discard(executor)


def _get_executor() -> ProcessPoolExecutor:
    global _executor
    with _lock:
        if _executor is None:
            _executor = ProcessPoolExecutor(
                max_workers=1, mp_context=get_context("spawn"), initializer=replay_process_start.start,
                initargs=(os.getpid(),),
            )
        return _executor


def _discard(executor: ProcessPoolExecutor) -> None:
    global _executor
    with _lock:
        if _executor is executor:
            _executor = None
    executor.shutdown(wait=False, cancel_futures=True)
