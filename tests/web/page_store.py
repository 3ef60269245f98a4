"""The run page's object store as an oracle: the real static/js/store.js under node (tests/web/store_view.mjs),
fed the messages a viewer received, so a test compares the server with what the page itself would hold."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

HARNESS = Path(__file__).with_name("store_view.mjs")
NODE = shutil.which("node") or "/usr/bin/node"


def store_view(messages: list[dict], tmp_path: Path) -> dict:
    """What the page's store holds after ``messages``: {objects: {resource: [object]}, podCounts, lastSeq,
    detailNode}."""
    path = tmp_path / "messages.json"
    path.write_text(json.dumps({"messages": messages}))
    done = subprocess.run([NODE, str(HARNESS), str(path)], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)
