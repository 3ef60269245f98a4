"""Websocket routes (wrapped in the Origin check of heartbeat_site/websocket_origin.py by heartbeat_site.asgi)."""

from django.urls import re_path

from heartbeat_site.live.delivery.consumers import RunConsumer

websocket_urlpatterns = [
    re_path(r"^ws/runs/(?P<run_id>[^/]{1,64})/$", RunConsumer.as_asgi()),
]
