"""Celery tasks and worker hooks: drive runs, and take over runs whose lease lapsed."""

from __future__ import annotations

import logging
import os
import threading

from celery import shared_task
from celery.signals import worker_ready, worker_shutting_down

log = logging.getLogger(__name__)

# Set when this worker shuts down: drivers release their lease so another worker continues.
STOP = threading.Event()


@shared_task(name="heartbeat.drive_run", ignore_result=True)
def drive_run(run_id: str) -> str:
    from heartbeat_site.live.driver import RunDriver

    outcome = RunDriver(run_id, stop=STOP).drive()
    log.info("run %s: driver returned %s", run_id, outcome)
    return outcome


@worker_shutting_down.connect
def _stop_drivers(**_: object) -> None:
    STOP.set()


@worker_ready.connect
def _start_watchdog(sender: object = None, **_: object) -> None:
    from heartbeat_site.live.watchdog import start_watchdog_thread

    name = getattr(sender, "hostname", None) or f"worker-{os.getpid()}"
    start_watchdog_thread(STOP, name)
