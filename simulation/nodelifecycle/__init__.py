"""kube-controller-manager's node-lifecycle-controller (docs/kubernetes-node-health.md §3)."""

from .controller import NodeLifecycleController

__all__ = ["NodeLifecycleController"]
