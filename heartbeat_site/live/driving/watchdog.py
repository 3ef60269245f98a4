"""Every worker watches for active runs that nobody drives and re-dispatches them.

A driver renews its lease every slice; when its worker dies (SIGKILL, machine gone) the
lease lapses after ``HEARTBEAT_LEASE_TTL`` and the next watchdog pass (every TTL/2) sends
a new ``drive_run`` task, so a run is taken over within 2 x TTL.

The watchdog knows nothing of Celery: the worker hands it ``dispatch``, the one thing it
needs (send a driver for this run id), so this module and ``heartbeat_site/live/tasks.py``
do not import each other.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import close_old_connections

from heartbeat_site.live.models import ACTIVE_STATUSES, Run
from heartbeat_site.live.runstore import activity, ownership

log = logging.getLogger(__name__)

Dispatch = Callable[[str], object]  # sends a driver for the run with this id


def recover_active_runs() -> int:
    """Re-register runs the database says are active (Redis may have been restarted)."""
    ids = list(Run.objects.filter(status__in=ACTIVE_STATUSES).values_list("id", flat=True))
    for run_id in ids:
        activity.mark_active(run_id)
    return len(ids)


def watch_once(dispatch: Dispatch) -> list[str]:
    """Dispatch a driver for every active run without a lease holder; return their ids.

    An empty set of active runs may be a Redis that restarted empty: the runs the database
    says are active are listed again, and dispatched at the next pass if nobody drives them
    by then (their drivers, if alive, take their leases back within a second or two).
    """
    ttl = settings.HEARTBEAT["LEASE_TTL"]
    active = activity.active_runs()
    if not active:
        recover_active_runs()
        return []
    dispatched = []
    for run_id in sorted(active):
        if ownership.lease_holder(run_id) is None and ownership.claim_takeover(run_id, ttl):
            dispatch(run_id)
            dispatched.append(run_id)
    if dispatched:
        log.info("watchdog dispatched drivers for %s", ", ".join(dispatched))
    return dispatched


def seen_within() -> float:
    """How recently a worker's watchdog must have reported for the worker to count as live."""
    return max(3.0, 3 * settings.HEARTBEAT["LEASE_TTL"])


def start_watchdog_thread(stop: threading.Event, name: str, dispatch: Dispatch) -> threading.Thread:
    """Every TTL/2: say this worker is alive (``activity.live_workers``), dispatch orphans."""
    interval = settings.HEARTBEAT["LEASE_TTL"] / 2

    def loop() -> None:
        try:
            recover_active_runs()
        except Exception:
            log.exception("watchdog could not recover active runs")
        while not stop.wait(interval):
            try:
                activity.worker_seen(name)
                watch_once(dispatch)
            except Exception:  # Redis briefly away: try again next pass
                log.exception("watchdog pass failed")
            finally:
                close_old_connections()
        try:
            activity.worker_gone(name)
        except Exception:
            log.warning("could not unregister worker %s", name)

    thread = threading.Thread(target=loop, name="heartbeat-watchdog", daemon=True)
    thread.start()
    return thread
