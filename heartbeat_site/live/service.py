"""The live service as the rest of the site sees it: all that the per-run Kubernetes API (``heartbeat_site/k8sapi/``)
uses of it, so that the Kubernetes API depends on none of the service's rooms, nor on its REST API (``live/api/``),
and the REST API does not depend on the Kubernetes API ([tool.importlinter] in pyproject.toml holds these
contracts; ``make lint`` checks them).

What the Kubernetes API does with each:

- the kubeconfig (``k8sapi/kubeconfig.py``): a run looked up (``get_run_or_404``), the site's public URL
  (``base_url``, which every link handed out starts with);
- reads (``k8sapi/cluster.py``): the run's published state, snapshot, event log and its driver's answers to asks
  (``run_state``, ``snapshot_and_frames``, ``event_log``, ``detail_asks``), whether a driver holds it
  (``driven``), its node-level objects (``detail``), its objects at a past time computed in the replay process
  (``seek``, ``replay_process``);
- watches (``k8sapi/watch.py``): the run's feed in this process (``fanout``) and its viewers (``viewer_presence``);
- writes (``k8sapi/writes.py``): a fault command submitted as a trainer's (``commands``), the control token checked
  (``bearer_token``, ``token_matches``).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from heartbeat_site.live.delivery import detail, fanout
from heartbeat_site.live.errors import ApiError
from heartbeat_site.live.lookback import replay_process, seek
from heartbeat_site.live.models import Run
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runs import commands
from heartbeat_site.live.runs.tokens import bearer_token, token_matches
from heartbeat_site.live.runstore import detail_asks, event_log, run_state, snapshot_and_frames, viewer_presence
from heartbeat_site.live.runstore.ownership import lease_key

__all__ = [
    "ApiError", "Run", "base_url", "bearer_token", "commands", "detail", "detail_asks", "driven", "event_log",
    "fanout", "get_redis", "get_run_or_404", "replay_process", "run_state", "seek", "snapshot_and_frames",
    "token_matches", "viewer_presence",
]


def base_url(request: HttpRequest) -> str:
    """What links start with: the room's URL as ``make classroom`` keeps it, else ``HEARTBEAT_PUBLIC_URL``, else the
    request's own host (a trainer on ``127.0.0.1`` would otherwise hand phones a link to themselves)."""
    room = settings.PUBLIC_URL_FILE.url() if settings.PUBLIC_URL_FILE is not None else ""
    configured = room or settings.HEARTBEAT["PUBLIC_URL"].rstrip("/")
    return configured or f"{request.scheme}://{request.get_host()}"


def get_run_or_404(run_id: str) -> Run:
    """The run of that id; an ``unknown-run`` 404 when there is none (the REST API's views use it too)."""
    try:
        return Run.objects.get(pk=run_id)
    except Run.DoesNotExist:
        raise ApiError(404, "unknown-run", f"no run with id {run_id!r}") from None


def driven(run_id: str) -> bool:
    """Whether a driver holds the run's lease (docs/architecture.md §9.2): only then can it answer an ask."""
    return bool(get_redis().exists(lease_key(run_id)))
