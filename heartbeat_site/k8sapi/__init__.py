"""A read-mostly Kubernetes API per run, rooted at ``/k8s/runs/<id>/``, for a learner's own kubectl.

docs/kubectl.md says what it serves. The objects are the simulation's own Kubernetes JSON
(``simulation/objects.py``), kept current per process from the run's stored snapshot and event
log (``cluster.py``); the Table columns follow ``pkg/printers/internalversion/printers.go``.
"""
