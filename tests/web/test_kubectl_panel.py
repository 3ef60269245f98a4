"""The run page's kubectl panel against the real kubectl (v1.32): the panel's printers (static/js/kubectl/) run
under node on what a viewer of a paused run received, kubectl against the same run's Kubernetes API, at the same
moment; the texts are the same. On Daphne with a Celery worker and Redis."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from heartbeat_site.live.runstore import run_state

from .conftest import small_document
from .kubectl import Kubectl, broken_run, command, pause, statefulset_run
from .live import Viewer
from .test_kubectl_reads import stack  # noqa: F401 (the module's Daphne, worker and Redis)

pytestmark = [pytest.mark.live, pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

HARNESS = Path(__file__).with_name("kubectl_panel.mjs")
NODE = shutil.which("node") or "/usr/bin/node"
FOCUS = "node-2"
# The panel's commands (static/js/kubectl-panel.js COMMANDS) as kubectl arguments.
COMMANDS = {
    "get-nodes": ("get", "nodes"),
    "get-pods": ("get", "pods", "-o", "wide"),
    "get-endpointslices": ("get", "endpointslices"),
    "get-lease": ("get", "lease", "-n", "kube-node-lease", FOCUS, "-o", "yaml"),
    "describe-node": ("describe", "node", FOCUS),
    "get-statefulsets": ("get", "statefulsets", "-o", "wide"),
    "get-pvc": ("get", "pvc"),
    "get-pv": ("get", "pv"),
    "get-volumeattachments": ("get", "volumeattachments"),
    "get-statefulsets-yaml": ("get", "statefulsets", "-o", "yaml"),
    "get-pvc-yaml": ("get", "pvc", "-o", "yaml"),
    "get-pv-yaml": ("get", "pv", "-o", "yaml"),
    "get-volumeattachments-yaml": ("get", "volumeattachments", "-o", "yaml"),
}
TABLES = tuple(name for name in COMMANDS if name != "describe-node")


async def viewer_messages(ws_url: str) -> list[dict]:
    """What a page opening the paused run receives: its snapshot and whatever follows it until the line is quiet
    (a paused driver publishes nothing; a second without a message is the quiet)."""
    viewer = await Viewer.open(ws_url, "panel")
    messages = [viewer.first_message]
    try:
        while True:
            messages.append(await viewer.next(timeout=1.0))
    except TimeoutError:
        pass
    await viewer.close()
    return messages


def panel_texts(messages: list[dict]) -> dict:
    done = subprocess.run([NODE, str(HARNESS)], input=json.dumps({"messages": messages, "commands": list(COMMANDS),
                                                                   "node": FOCUS}),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def terminal(kubectl: Kubectl, args: tuple[str, ...]) -> str:
    """What a terminal shows of a command that succeeds: kubectl writes "No resources found in default
    namespace." to stderr (get.go), with nothing on stdout."""
    done = await kubectl.arun(*args)
    return done.stdout or done.stderr


async def same_moment(run: dict, kubectl: Kubectl) -> tuple[dict, dict[str, str]]:
    """The panel's texts and kubectl's, read while the run's published state did not move (a paused driver may
    still publish what it had simulated before the pause: then read again)."""
    for _ in range(10):
        before = run_state.read_state(run["id"])
        panel = panel_texts(await viewer_messages(run["ws_url"]))
        printed = {name: await terminal(kubectl, args) for name, args in COMMANDS.items()}
        if run_state.read_state(run["id"]) == before:
            return panel, printed
    raise AssertionError("the run's published state kept moving after the pause")


def without_client_ages(described: str) -> list[list[str]]:
    """``kubectl describe``'s lines as cells (split where two spaces or more align them), the cells of its Age
    columns blanked. kubectl computes those ages on the client from its own clock (describe.go,
    translateTimestampSince), which is not the run's virtual clock: the panel prints them at the run's time."""
    rows: list[list[str]] = []
    age_column: int | None = None
    for line in described.rstrip("\n").split("\n"):
        cells = re.split(r"(?<=\S)\s{2,}", line)
        if "Age" in [cell.strip() for cell in cells]:
            age_column = [cell.strip() for cell in cells].index("Age")
        elif age_column is not None and not line.startswith("  "):
            age_column = None
        elif age_column is not None and len(cells) > age_column and not set(line.strip()) <= {"-", " "}:
            cells[age_column] = "<age>"
        rows.append([cell.rstrip() for cell in cells])
    return rows


def assert_same(panel: dict, printed: dict[str, str]) -> None:
    assert panel["paused"]
    texts = panel["texts"]
    for name in TABLES:
        assert texts[name] == printed[name], f"{name}:\n--- panel\n{texts[name]}--- kubectl\n{printed[name]}"
    assert without_client_ages(texts["describe-node"]) == without_client_ages(printed["describe-node"]), (
        f"describe-node:\n--- panel\n{texts['describe-node']}--- kubectl\n{printed['describe-node']}"
    )


async def test_the_panels_print_what_kubectl_prints(stack, tmp_path):  # noqa: F811
    """Two moments of a stopped kubelet: node-2 just gone Unknown, then its pods evicted and replaced."""
    run, kubectl = await broken_run(stack.base, {**small_document(), "duration": "10m"}, tmp_path)
    panel, printed = await same_moment(run, kubectl)
    assert "NotReady" in printed["get-nodes"] and "node.kubernetes.io/unreachable" in printed["describe-node"]
    assert_same(panel, printed)

    viewer = await Viewer.open(run["ws_url"], "follower")
    await command(stack.base, run, "resume")
    await viewer.until(lambda e: e["type"] == "transition" and e.get("kind") == "pod-terminating", timeout=120)
    await pause(stack.base, run, viewer)
    panel, printed = await same_moment(run, kubectl)
    assert "Terminating" in printed["get-pods"] and "NoExecute" in printed["describe-node"]
    assert printed["get-pvc"] == "No resources found in default namespace.\n"
    assert printed["get-pv"] == printed["get-volumeattachments"] == "No resources found\n"
    assert printed["get-pvc-yaml"] == 'apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: ""\n'
    assert_same(panel, printed)


async def test_the_panels_print_a_statefulsets_storage_as_kubectl_does(stack, tmp_path):  # noqa: F811
    """statefulset-node-lost past the taint eviction (~410 s): node-2's db pod Terminating, its claim bound and its
    volume still attached to the dead node."""
    run, kubectl, viewer = await statefulset_run(stack.base, tmp_path, until=430)
    await pause(stack.base, run, viewer)
    panel, printed = await same_moment(run, kubectl)
    stuck = next(line.split()[0] for line in printed["get-pods"].splitlines()
                 if line.startswith("db-") and "Terminating" in line)
    assert f"data-{stuck}" in printed["get-pvc"] and f"default/data-{stuck}" in printed["get-pv"]
    assert printed["get-statefulsets"].splitlines()[1].split()[:2] == ["db", "2/3"]
    assert [line.split()[3:5] for line in printed["get-volumeattachments"].splitlines()
            if " node-2 " in line] == [["node-2", "true"]]
    assert "kind: VolumeAttachment" in printed["get-volumeattachments-yaml"]
    assert f"name: data-{stuck}" in printed["get-pv-yaml"] and "kind: StatefulSet" in printed["get-statefulsets-yaml"]
    assert_same(panel, printed)
