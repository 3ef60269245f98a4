"""``GET /api/runs/<id>/kubeconfig``: a read-only kubeconfig for the run's Kubernetes API
(one cluster, one context, namespace ``default``, no credentials: a viewer may have it)."""

from __future__ import annotations

import yaml
from django.http import HttpRequest, HttpResponse

from heartbeat_site.live.api import links
from heartbeat_site.live.api.dispatch import methods
from heartbeat_site.live.api.runs import get_run_or_404


def server_url(request: HttpRequest, run_id: str) -> str:
    return f"{links.base_url(request)}/k8s/runs/{run_id}"


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


def _kubeconfig(request: HttpRequest, run_id: str) -> HttpResponse:
    run = get_run_or_404(run_id)
    response = HttpResponse(kubeconfig_text(server_url(request, run.id), run.id), content_type="application/yaml")
    response["Content-Disposition"] = f'attachment; filename="heartbeat-{run.id}.kubeconfig"'
    return response


kubeconfig = methods(GET=_kubeconfig)
