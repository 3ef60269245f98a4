"""``/healthz`` (the process answers) and ``/readyz`` (it can serve a class: Redis, the
database and at least one worker seen recently), for a load balancer or an orchestrator.

Each check says what failed in the body, so an operator reading a 503 knows where to look.
"""

from __future__ import annotations

from django.db import connection
from django.http import HttpRequest, JsonResponse

from heartbeat_site.live import redis_client
from heartbeat_site.live.driving.watchdog import seen_within
from heartbeat_site.live.runstore import activity


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def _check(probe) -> dict:
    """``probe()`` raises when the dependency fails; what it returns is added when it is a dict (details)."""
    try:
        found = probe()
        return {"ok": True, **(found if isinstance(found, dict) else {})}
    except Exception as exc:  # any failure of a dependency is the answer, not an error of ours
        return {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _workers() -> dict:
    seen = activity.live_workers(seen_within())
    if not seen:
        raise RuntimeError(
            f"no worker reported in the last {seen_within():g} s (start one: celery -A heartbeat_site worker ...)"
        )
    return {"seen": sorted(seen)}


def readyz(request: HttpRequest) -> JsonResponse:
    checks = {"redis": _check(redis_client.ping), "database": _check(_database)}
    checks["workers"] = (
        _check(_workers) if checks["redis"]["ok"] else {"ok": False, "error": "unknown: Redis cannot be reached"}
    )
    ready = all(check["ok"] for check in checks.values())
    if not checks["database"]["ok"]:
        connection.close()  # the next request opens a fresh connection
    return JsonResponse({"status": "ready" if ready else "unready", "checks": checks}, status=200 if ready else 503)
