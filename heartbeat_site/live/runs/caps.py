"""Caps on concurrent runs: one for the whole site, one per client (address), and the nodes
the live workers can simulate at once."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Sum
from django.http import HttpRequest

from heartbeat_site.live.driving.watchdog import seen_within
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import ACTIVE_STATUSES, Run
from heartbeat_site.live.runstore import activity


def client_key(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"


def check_run_caps(client: str) -> None:
    conf = settings.HEARTBEAT
    active = Run.objects.filter(status__in=ACTIVE_STATUSES)
    total = active.count()
    if total >= conf["MAX_RUNS"]:
        raise ApiError(
            503,
            "too-many-runs",
            f"the server is running its maximum of {conf['MAX_RUNS']} runs; try again when one ends",
        )
    mine = active.filter(client_key=client).count()
    if mine >= conf["MAX_RUNS_PER_CLIENT"]:
        raise ApiError(
            429,
            "too-many-runs-for-client",
            f"you already have {mine} active runs (limit {conf['MAX_RUNS_PER_CLIENT']}); "
            "let one end or stop watching it",
        )


def check_worker_capacity(node_count: int) -> None:
    """Refuse a run the live workers cannot simulate without starving the runs they drive.

    Each worker process takes ``HEARTBEAT_NODES_PER_WORKER`` nodes of live runs (its threads
    share one core: the simulation's cost grows with the nodes). With no worker seen yet (one
    is starting) the run is accepted and waits for it.
    """
    workers = len(activity.live_workers(seen_within()))
    if not workers:
        return
    capacity = workers * settings.HEARTBEAT["NODES_PER_WORKER"]
    live = Run.objects.filter(status__in=ACTIVE_STATUSES).aggregate(n=Sum("node_count"))["n"] or 0
    if live + node_count > capacity:
        raise ApiError(
            503,
            "workers-full",
            f"the workers are simulating {live:,} nodes of live runs; {node_count:,} more would pass their capacity of "
            f"{capacity:,} nodes ({workers} worker(s) x HEARTBEAT_NODES_PER_WORKER "
            f"{settings.HEARTBEAT['NODES_PER_WORKER']:,}); "
            "try again when a run ends, or start another worker",
        )
