"""Heartbeat Classroom: the Django site, run drivers and live delivery around `simulation/`."""

from heartbeat_site.celery_app import app as celery_app

__all__ = ["celery_app"]
