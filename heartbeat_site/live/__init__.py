"""Live runs: persistence, run drivers (Celery), websocket delivery and the REST API."""
