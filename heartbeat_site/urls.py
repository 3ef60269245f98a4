"""Root URLs: the REST API first, then the per-run Kubernetes API (``/k8s/``, and each run's kubeconfig under
``/api/``), then the pages app (owned by the front-end) when it exists."""

from django.conf import settings
from django.urls import include, path

from heartbeat_site import health
from heartbeat_site.live.api import errors

urlpatterns = [
    path("api/", include("heartbeat_site.live.api.urls")),
    path("", include("heartbeat_site.k8sapi.urls")),  # /k8s/runs/<id>/... and /api/runs/<id>/kubeconfig
    path("healthz", health.healthz),
    path("readyz", health.readyz),
]
if settings.HAS_PAGES:
    urlpatterns.append(path("", include(f"{settings.PAGES_APP}.urls")))

handler404 = errors.not_found_handler
handler500 = errors.server_error_handler
