"""``GET /api/runs/<id>/kubeconfig``: a read-only kubeconfig for the run's Kubernetes API
(one cluster, one context, namespace ``default``, no credentials: a viewer may have it)."""

from __future__ import annotations

import yaml
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt

from heartbeat_site.live.service import ApiError, base_url, get_run_or_404


def server_url(request: HttpRequest, run_id: str) -> str:
    return f"{base_url(request)}/k8s/runs/{run_id}"


def kubeconfig_text(server: str, run_id: str) -> str:
    name = f"heartbeat-{run_id}"
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": server}}],
        "users": [{"name": f"{name}-viewer", "user": {}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": f"{name}-viewer", "namespace": "default"}}],
        "current-context": name,
    }
    return yaml.safe_dump(config, sort_keys=False)


@csrf_exempt  # as every view under /api/: no cookie, and a JSON 405 for another method (live/api/dispatch.py)
def kubeconfig(request: HttpRequest, run_id: str) -> HttpResponse:
    """Its errors are ``ApiError``, rendered as JSON by the middleware of every path under /api/
    (``live/api/errors.py``)."""
    if request.method != "GET":
        raise ApiError(405, "method-not-allowed", f"{request.method} is not allowed here; use GET", allowed=["GET"])
    run = get_run_or_404(run_id)
    response = HttpResponse(kubeconfig_text(server_url(request, run.id), run.id), content_type="application/yaml")
    response["Content-Disposition"] = f'attachment; filename="heartbeat-{run.id}.kubeconfig"'
    return response

