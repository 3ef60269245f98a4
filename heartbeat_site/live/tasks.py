"""Celery tasks and worker hooks: drive runs, and take over runs whose lease lapsed."""

from __future__ import annotations

import gc
import logging
import os
import threading

from celery import shared_task
from celery.signals import worker_ready, worker_shutting_down

log = logging.getLogger(__name__)

# Set when this worker shuts down: drivers release their lease so another worker continues.
STOP = threading.Event()


_driving = 0  # drivers running in this process
_driving_lock = threading.Lock()


@shared_task(name="heartbeat.drive_run", ignore_result=True)
def drive_run(run_id: str) -> str:
    from heartbeat_site.live.driving.comparison_driver import ComparisonDriver
    from heartbeat_site.live.driving.driver import RunDriver
    from heartbeat_site.live.models import Run, RunKind
    from heartbeat_site.observe.driver import ObservationDriver

    global _driving
    with _driving_lock:
        _driving += 1
    try:
        # a comparison's side: one driver drives both sides on one clock (comparison_driver.py)
        comparison, kind = Run.objects.filter(pk=run_id).values_list("comparison_id", "kind").first() or (None, None)
        if kind == RunKind.OBSERVATION:  # a real cluster watched (docs/observe.md)
            outcome = ObservationDriver(run_id, stop=STOP).drive()
        elif comparison:
            outcome = ComparisonDriver(comparison, stop=STOP).drive()
        else:
            outcome = RunDriver(run_id, stop=STOP).drive()
    finally:
        with _driving_lock:
            _driving -= 1
            if _driving == 0:
                _thaw()
    log.info("run %s: driver returned %s", run_id, outcome)
    return outcome


def _thaw() -> None:
    """No simulation left in this process: give its frozen objects back to the collector.

    Drivers keep their simulations' objects in the permanent generation (``Simulation.
    keep_frozen``) so that a full collection never stops this worker's threads for seconds;
    whatever cycles other code left among them are collected here, when that walk is cheap.
    """
    gc.unfreeze()
    gc.collect()


@worker_shutting_down.connect
def _stop_drivers(**_: object) -> None:
    STOP.set()


@worker_ready.connect
def _freeze_simulation_objects(**_: object) -> None:
    from simulation import Simulation

    Simulation.keep_frozen = True


@worker_ready.connect
def _start_watchdog(sender: object = None, **_: object) -> None:
    from heartbeat_site.live.driving.watchdog import start_watchdog_thread

    name = getattr(sender, "hostname", None) or f"worker-{os.getpid()}"
    start_watchdog_thread(STOP, name, dispatch=drive_run.delay)
