"""What the replay process (replay_process.py) runs first. This module imports nothing of Django's at the top: the
child imports it to start, before Django's apps are ready."""

from __future__ import annotations

import os
import threading

PARENT_CHECK_SECONDS = 2.0


def start(parent: int) -> None:
    """Django's apps (the models of the runs the child is sent), and an end with the parent."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heartbeat_site.settings")
    import django

    django.setup()
    threading.Thread(target=_exit_with, args=(parent,), name="replay parent check", daemon=True).start()


def _exit_with(parent: int) -> None:
    """A web process killed outright cannot end its child: the child notices and ends itself."""
    while os.getppid() == parent:
        threading.Event().wait(PARENT_CHECK_SECONDS)
    os._exit(0)
