"""The Celery application: workers drive runs (heartbeat_site.live.tasks)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heartbeat_site.settings")

app = Celery("heartbeat_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["heartbeat_site.live"])
