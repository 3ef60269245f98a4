"""``GET /api/runs/<id>/qr.svg``: the viewer link as a QR code, drawn here so a classroom needs no outside service.

The trainer shows it large on the projector; phones in the room open the run as viewers. A viewer link carries no
control token (api/links.py), so the code gives nobody control of the run.
"""

from __future__ import annotations

import io

import segno
from django.http import HttpRequest, HttpResponse

from heartbeat_site.live.api import links
from heartbeat_site.live.api.runs import get_run_or_404

MODULE_PIXELS = 10  # a version 3-4 code is then about 400 px: sharp when the dialog scales it up
QUIET_ZONE = 4  # modules of white around the code, what ISO/IEC 18004 asks for


def viewer_qr_svg(url: str) -> bytes:
    """The SVG of ``url``'s QR code (error correction M: still read from the back of a room with some glare)."""
    out = io.BytesIO()
    segno.make(url, error="m", micro=False).save(
        out, kind="svg", scale=MODULE_PIXELS, border=QUIET_ZONE, title=f"Viewer link: {url}", dark="#000",
        light="#fff", xmldecl=True, svgns=True,
    )
    return out.getvalue()


def viewer_qr(request: HttpRequest, run_id: str) -> HttpResponse:
    run = get_run_or_404(run_id)
    response = HttpResponse(viewer_qr_svg(links.viewer_url(request, run.id)), content_type="image/svg+xml")
    response["Cache-Control"] = "private, max-age=3600"
    return response
