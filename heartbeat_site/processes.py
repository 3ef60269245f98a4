"""Start the service's processes: a Celery worker and an ASGI server (Daphne or uvicorn).

Shared by ``manage.py runstack`` (make run), the live tests and the fan-out benchmark, so
all three run the same commands a production deployment would.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
ASGI_APP = "heartbeat_site.asgi:application"


def _spawn(command: list[str], env: Mapping[str, str], log_path: Path | None) -> subprocess.Popen:
    out = open(log_path, "ab") if log_path else None  # noqa: SIM115 - handed to the child
    return subprocess.Popen(
        command,
        cwd=BASE_DIR,
        env={**os.environ, **env},
        stdout=out,
        stderr=subprocess.STDOUT if out else None,
        start_new_session=True,  # Ctrl-C in a terminal reaches us; we stop the children ourselves
    )


def start_worker(
    env: Mapping[str, str], *, concurrency: int = 16, name: str = "worker", log_path: Path | None = None,
    quiet: bool = False,
) -> subprocess.Popen:
    """A Celery worker with a thread pool: drivers mostly wait on Redis, so threads are cheap. ``quiet``: no banner
    and warnings only, for a terminal whose last lines are the room's URL and QR code."""
    command = [
        sys.executable, "-m", "celery", "-A", "heartbeat_site", *(["--quiet"] if quiet else []), "worker",
        "--pool", "threads", "--concurrency", str(concurrency), "--queues", "heartbeat",
        "--hostname", f"{name}@%h", "--without-gossip", "--without-mingle",
        "--loglevel", "WARNING" if quiet else "INFO",
    ]  # fmt: skip
    return _spawn(command, env, log_path)


def start_asgi(
    server: str, port: int, env: Mapping[str, str], *, log_path: Path | None = None, host: str = "127.0.0.1",
    quiet: bool = False,
) -> subprocess.Popen:
    """``host``: the address to listen on; ``0.0.0.0`` for a class (every address the machine has, now or after
    its network changes). ``quiet``: Daphne writes no access log (a room's phones joining would scroll the room's
    URL and QR code out of the terminal)."""
    if server == "daphne":
        command = [sys.executable, "-m", "daphne", "-b", host, "-p", str(port), *(["-v", "0"] if quiet else []),
                   ASGI_APP]
    elif server == "uvicorn":
        command = [
            sys.executable, "-m", "uvicorn", "--host", host, "--port", str(port),
            "--no-access-log", "--log-level", "warning", ASGI_APP,
        ]  # fmt: skip
    else:
        raise ValueError(f"unknown ASGI server {server!r} (daphne or uvicorn)")
    return _spawn(command, env, log_path)


def wait_http(url: str, process: subprocess.Popen, timeout: float = 30.0) -> None:
    """Wait until ``url`` answers (any HTTP status) or the process exits."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except urllib.error.HTTPError:
            return
        except OSError:
            if process.poll() is not None:
                command = process.args[:4] if isinstance(process.args, list) else process.args
                raise RuntimeError(f"{command!r} exited with {process.returncode} before answering {url}") from None
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer within {timeout} s") from None
            time.sleep(0.1)


def stop(process: subprocess.Popen, timeout: float = 15.0) -> None:
    """SIGTERM (graceful: drivers hand their runs over), then SIGKILL if it lingers."""
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
