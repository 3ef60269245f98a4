"""Caps on concurrent runs: one for the whole site and one per client (address)."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from heartbeat_site.live.api.errors import ApiError
from heartbeat_site.live.models import ACTIVE_STATUSES, Run


def client_key(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"


def check_run_caps(client: str) -> None:
    conf = settings.HEARTBEAT
    active = Run.objects.filter(status__in=ACTIVE_STATUSES)
    total = active.count()
    if total >= conf["MAX_RUNS"]:
        raise ApiError(503, "too-many-runs", f"the server is running its maximum of {conf['MAX_RUNS']} runs; try again when one ends")
    mine = active.filter(client_key=client).count()
    if mine >= conf["MAX_RUNS_PER_CLIENT"]:
        raise ApiError(
            429,
            "too-many-runs-for-client",
            f"you already have {mine} active runs (limit {conf['MAX_RUNS_PER_CLIENT']}); let one end or stop watching it",
        )
