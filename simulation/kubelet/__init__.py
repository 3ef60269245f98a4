"""The kubelet of one node: lease controller, syncNodeStatus, runtime/PLEG/eviction state,
pod lifecycle and graceful shutdown (docs/kubernetes-node-health.md §2)."""

from .kubelet import Kubelet

__all__ = ["Kubelet"]
