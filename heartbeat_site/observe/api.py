"""``POST /api/observations``: watch a real cluster read-only, as a run (docs/observe.md).

The order matters: the operator's settings are checked before anything reaches the network (a 403 naming
HEARTBEAT_OBSERVE or HEARTBEAT_OBSERVE_HOSTS), then the server is reached and the token tried on each resource (a
clear 400 or 502 otherwise), and only then is the observation created and its worker sent the credentials, sealed.
"""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse

from heartbeat_site.live.api import contract, links, runs
from heartbeat_site.live.api.bodies import json_object
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.models import Run, RunKind
from heartbeat_site.live.runs.caps import check_run_caps, check_worker_capacity, client_key
from heartbeat_site.live.runs.tokens import hash_token, new_token
from heartbeat_site.observe import sealed
from heartbeat_site.observe.access import check_allowed, target_from
from heartbeat_site.observe.cluster import preflight
from simulation.clock import parse_duration

MAX_GRACE = 3600.0  # as a scenario document's controllerManager.nodeMonitorGracePeriod (simulation/scenario.py)
# An observation has no set length: it ends when its trainer stops it or nobody watches (HEARTBEAT_IDLE_SECONDS)
OPEN_ENDED = 7 * 24 * 3600.0


def observation_document(server: str, host: str, grace: float | None) -> dict:
    """What an observation's run row says about it (never a credential): its title, server, and the grace period
    the trainer stated (None: the version's default is inferred)."""
    return {"name": "observation", "title": {"en": f"Observed cluster: {host}", "zh": f"观察中的集群：{host}"},
            "observation": {"server": server, "nodeMonitorGracePeriod": grace}}


def stated_grace(body: dict) -> float | None:
    """``nodeMonitorGracePeriod``: the cluster's --node-monitor-grace-period when the trainer knows it (90, "40s")."""
    value = body.get("nodeMonitorGracePeriod")
    if value is None:
        return None
    try:
        seconds = parse_duration(value)
    except ValueError as exc:
        raise ApiError(400, "bad-grace-period", f"nodeMonitorGracePeriod: {exc}") from None
    if not 0 < seconds <= MAX_GRACE:
        raise ApiError(400, "bad-grace-period", f"nodeMonitorGracePeriod: must be above 0 s and at most "
                                                f"{MAX_GRACE:g} s, got {seconds:g} s")
    return seconds


def create(request: HttpRequest) -> JsonResponse:
    body = json_object(request)
    contract.parse(contract.ObservationCreate, body)  # its form; what the server, token and kubeconfig hold, below
    target = target_from(body)
    grace = stated_grace(body)
    check_allowed(target)  # before any connection
    client = client_key(request)
    check_run_caps(client)
    check_worker_capacity(0)
    version = preflight(target)
    token = new_token()
    document = observation_document(target.server, target.host, grace)
    run = Run.objects.create(
        kind=RunKind.OBSERVATION, scenario_name="observation", document=document, seed=0, version=version,
        node_count=0, duration=OPEN_ENDED, speed=1.0, control_token_hash=hash_token(token), client_key=client,
    )
    sealed.seal(run.id, target)
    try:
        runs.start_driver(run)
    except Exception:
        sealed.discard(run.id)
        raise
    return JsonResponse({
        "id": run.id,
        "kind": run.kind,
        "viewer_url": links.viewer_url(request, run.id),
        "control_url": links.control_url(request, run.id, token),
        "ws_url": links.ws_url(request, run.id),
        "control_token": token,
        "run": runs.run_body(request, run),
    }, status=201)
