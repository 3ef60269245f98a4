"""Runs on the web side: creating them (caps, control tokens, saved scenarios, recipes, comparisons, the
builder's preview) and taking a trainer's commands to the run's driver (``commands.py``, each read by its model in
``command_bodies.py``). Runs in the web process (Daphne), called by the REST API (``live/api/``), the websocket
consumer and the Kubernetes API."""
