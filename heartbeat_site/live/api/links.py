"""The links handed out for a run: viewer page, control page (with the token) and websocket.

The control token travels in the URL fragment (``#control=``, the pages read it from there), which browsers never send
to the server, so it does not end up in access logs or Referer headers.
"""

from __future__ import annotations

from django.http import HttpRequest

from heartbeat_site.live.service import base_url


def scenario_url(request: HttpRequest, scenario_id: str) -> str:
    """A saved scenario's page: ``/s/<id>`` opens the document the id was derived from."""
    return f"{base_url(request)}/s/{scenario_id}"


def recipe_url(request: HttpRequest, recipe_id: str) -> str:
    """A recipe link: ``/r/<id>`` plays the captured session again."""
    return f"{base_url(request)}/r/{recipe_id}"


def viewer_url(request: HttpRequest, run_id: str) -> str:
    return f"{base_url(request)}/runs/{run_id}/"


def control_url(request: HttpRequest, run_id: str, token: str) -> str:
    return f"{base_url(request)}/runs/{run_id}/#control={token}"


def ws_url(request: HttpRequest, run_id: str) -> str:
    base = base_url(request)
    scheme, _, rest = base.partition("://")
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/ws/runs/{run_id}/"


def public_origin(request: HttpRequest) -> dict[str, str]:
    """Template context: the pages' scripts build the links they show (viewer, control, kubectl) on it."""
    return {"public_origin": base_url(request)}


def comparison_url(request: HttpRequest, comparison_id: str) -> str:
    """A comparison's page for viewers: both sides on one clock, no control."""
    return f"{base_url(request)}/compare/{comparison_id}/"


def comparison_control_url(request: HttpRequest, comparison_id: str, token: str) -> str:
    return f"{comparison_url(request, comparison_id)}#control={token}"
