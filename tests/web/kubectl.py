"""Running the real kubectl against a run's API (``/k8s/runs/<id>``) in the live tests."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from .live import Viewer, ahttp, is_ready_change

BUILTIN = Path(__file__).resolve().parents[2] / "simulation" / "builtin"

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


@dataclass
class Kubectl:
    """kubectl with a home of its own (no user kubeconfig, a fresh discovery cache)."""

    server: str
    home: Path

    def command(self, *args: str, token: str | None = None) -> list[str]:
        auth = [f"--token={token}"] if token else []
        return [KUBECTL, f"--server={self.server}", f"--cache-dir={self.home / 'cache'}", *auth, *args]

    def env(self) -> dict[str, str]:
        return {"PATH": os.environ.get("PATH", ""), "HOME": str(self.home), "KUBECONFIG": str(self.home / "none")}

    def run(self, *args: str, token: str | None = None, check: bool = True,
            timeout: float = 30) -> subprocess.CompletedProcess:
        done = subprocess.run(self.command(*args, token=token), capture_output=True, text=True, timeout=timeout,
                              env=self.env())
        if check:
            assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.returncode}\n{done.stderr}"
        return done

    async def arun(self, *args: str, token: str | None = None, check: bool = True,
                   timeout: float = 30) -> subprocess.CompletedProcess:
        return await asyncio.to_thread(self.run, *args, token=token, check=check, timeout=timeout)

    async def out(self, *args: str, token: str | None = None, timeout: float = 30) -> str:
        return (await self.arun(*args, token=token, timeout=timeout)).stdout

    async def start(self, *args: str) -> asyncio.subprocess.Process:
        """A long-running kubectl (``get -w``), its output read line by line."""
        return await asyncio.create_subprocess_exec(*self.command(*args), stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE, env=self.env())


async def new_run(base: str, document: dict, speed: float) -> dict:
    status, run = await ahttp("POST", f"{base}/api/runs", {"document": document, "speed": speed})
    assert status == 201, run
    return run


async def command(base: str, run: dict, action: str, **fields: str) -> dict:
    """A command with the run's control token, applied by its driver."""
    url = f"{base}/api/runs/{run['id']}/commands"
    status, body = await ahttp("POST", url, {"action": action, **fields}, token=run["control_token"])
    assert (status, body.get("status")) == (202, "applied"), body
    return body


def lines(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


async def pause(base: str, run: dict, viewer: Viewer) -> None:
    """Pause the run, read on until its clock says so, and close the viewer."""
    await command(base, run, "pause")
    while not (await viewer.next_of_type("clock"))["clock"]["paused"]:
        pass
    await viewer.close()


async def broken_run(base: str, document: dict, home: Path, speed: float = 50) -> tuple[dict, Kubectl]:
    """A run of ``document`` whose node-2 kubelet was stopped at t > 20 s (``run["stopped_at"]``: when, in
    virtual seconds; at 50x a loaded machine's latency is minutes of them), paused once node-2 went Unknown."""
    run = await new_run(base, document, speed=speed)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > 20)
    run["stopped_at"] = (await command(base, run, "stop-kubelet", node="node-2"))["at"]
    await viewer.until(is_ready_change("node-2", "Unknown"))
    await pause(base, run, viewer)
    return run, Kubectl(f"{base}/k8s/runs/{run['id']}", home)


async def read_until(process: asyncio.subprocess.Process, predicate, timeout: float = 30.0) -> list[str]:
    """Lines of a running kubectl up to the first that matches ``predicate``."""
    seen: list[str] = []
    async with asyncio.timeout(timeout):
        while True:
            line = (await process.stdout.readline()).decode()
            assert line, f"kubectl ended: {seen}\n{(await process.stderr.read()).decode()}"
            seen.append(line.rstrip("\n"))
            if predicate(seen[-1]):
                return seen


async def statefulset_run(base: str, home: Path, until: float, speed: float = 50) -> tuple[dict, Kubectl, Viewer]:
    """A run of the built-in ``statefulset-node-lost`` (node-2 powers off at 60 s, nobody acts), read until its
    virtual time passed ``until`` (its viewer still open, the run going on)."""
    document = yaml.safe_load((BUILTIN / "statefulset-node-lost.yaml").read_text())
    run = await new_run(base, document, speed=speed)
    viewer = await Viewer.open(run["ws_url"], "viewer")
    await viewer.until(lambda e: e["t"] > until)
    return run, Kubectl(f"{base}/k8s/runs/{run['id']}", home), viewer
