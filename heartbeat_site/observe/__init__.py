"""A real cluster in the classroom's diagrams: watched read-only (an observation) or replayed from its audit log
(docs/observe.md). Both turn Kubernetes object changes into the event model of a simulated run (``changes.py``)."""
