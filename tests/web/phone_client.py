"""A phone in the room, run inside its network namespace by tests/web/test_classroom_mode.py: it opens a
page as a browser would and, for a run's page, joins the run's websocket from that page's origin.

    python phone_client.py URL     prints one JSON line: what it saw
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from urllib.parse import urlsplit

from websockets.sync.client import connect


def visit(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=20) as response:
        page = response.read().decode()
        seen: dict = {"status": response.status, "url": response.url}
    origin = re.search(r'<meta name="heartbeat-origin" content="([^"]+)"', page)
    seen["origin"] = origin.group(1) if origin else None
    run = re.fullmatch(r"/runs/([^/]+)/", urlsplit(url).path)
    if run:
        seen["messages"] = join(url, run.group(1))
    return seen


def join(url: str, run_id: str) -> list[str]:
    """The types of the run's first messages: a snapshot, then frames (three of them)."""
    parts = urlsplit(url)
    types: list[str] = []
    with connect(f"ws://{parts.netloc}/ws/runs/{run_id}/", origin=f"{parts.scheme}://{parts.netloc}",
                 open_timeout=20, max_size=None) as ws:
        while types.count("frame") < 3:
            types.append(json.loads(ws.recv(timeout=20))["type"])
    return types


if __name__ == "__main__":
    print(json.dumps(visit(sys.argv[1])))
