"""ASGI entry point for Daphne or uvicorn: HTTP through Django (WhiteNoise serves static
files as middleware, so it works under any ASGI server), websockets through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heartbeat_site.settings")
django_asgi_app = get_asgi_application()  # must run before importing consumers (app registry)

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from heartbeat_site.live.delivery.routing import websocket_urlpatterns  # noqa: E402
from heartbeat_site.websocket_origin import allowed_hosts_or_no_origin  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": allowed_hosts_or_no_origin(URLRouter(websocket_urlpatterns)),
    }
)
