"""Frames to viewers: the messages a driver builds once (``frames.py``, ``detail.py`` for node level), the run's
feed it publishes them on (``publisher.py``), and in each web process the one subscription per run
(``fanout.py``) that hands them to every viewer's websocket (``consumers.py``, routed by ``routing.py``)."""
