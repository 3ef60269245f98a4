"""Root URLs: the API first, then the pages app (owned by the front-end) when it exists."""

from django.conf import settings
from django.urls import include, path

from heartbeat_site import health
from heartbeat_site.live.api import errors

urlpatterns = [
    path("api/", include("heartbeat_site.live.api.urls")),
    path("k8s/", include("heartbeat_site.k8sapi.urls")),
    path("healthz", health.healthz),
    path("readyz", health.readyz),
]
if settings.HAS_PAGES:
    urlpatterns.append(path("", include(f"{settings.PAGES_APP}.urls")))

handler404 = errors.not_found_handler
handler500 = errors.server_error_handler
