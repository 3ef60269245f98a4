"""kube-controller-manager's node-lifecycle-controller (reference section 3)."""

from .controller import NodeLifecycleController

__all__ = ["NodeLifecycleController"]
