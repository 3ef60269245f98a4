"""EndpointSlice controller (kubernetes/endpointslice; docs/kubernetes-node-health.md §5.2).

Every non-terminal pod with an IP that matches a Service is an endpoint, terminating ones
included: serving = pod Ready; terminating = deletionTimestamp set; ready = serving and not
terminating. NotReady endpoints stay in the slice with ready: false.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .apiserver import Actor
from .objects import LABEL_ZONE, Endpoint, EndpointSlice, ObjectMeta, Pod, Service
from .workloads import random_suffix

if TYPE_CHECKING:
    from .context import Context

LANE = "endpointslice-controller"
MAX_ENDPOINTS_PER_SLICE = 100


class EndpointSliceController:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.actor = Actor("system:serviceaccount:kube-system:endpointslice-controller", LANE)
        self.rng = ctx.rng("endpointslice")
        self.services: dict[str, Service] = {}
        self.members: dict[str, dict[str, Endpoint]] = {}  # service -> pod name -> endpoint
        self.slices: dict[str, dict[str, list[str]]] = {}  # service -> slice name -> pod names, in creation order
        self.slice_of: dict[tuple[str, str], str] = {}  # (service, pod) -> slice name
        self._changed: dict[str, set[str]] = {}  # service -> pods whose endpoint changed since the last sync
        self._queued = False
        self.api.watch("services", LANE, self._on_service)
        self.api.watch("pods", LANE, self._on_pod)

    def _on_service(self, old: Service | None, new: Service | None) -> None:
        if new is None:
            return
        name = new.metadata.name
        self.services[name] = new
        self.members.setdefault(name, {})
        self._changed.setdefault(name, set())
        for pod in self.api.cache["pods"].values():
            if self._update_member(name, new, pod):
                self._changed[name].add(pod.metadata.name)
        self._queue()

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        pod = new or old
        if pod is None:
            return
        for name, svc in self.services.items():
            if not self._matches(svc, pod):
                continue
            changed = (self.members[name].pop(pod.metadata.name, None) is not None if new is None
                       else self._update_member(name, svc, new))
            if changed:
                self._changed[name].add(pod.metadata.name)
                self._queue()

    @staticmethod
    def _matches(svc: Service, pod: Pod) -> bool:
        labels = pod.metadata.labels
        return all(labels.get(k) == v for k, v in svc.selector.items())

    def _update_member(self, name: str, svc: Service, pod: Pod) -> bool:
        if not self._matches(svc, pod):
            return False
        members = self.members[name]
        if pod.terminal or not pod.pod_ip or not pod.node_name:
            return members.pop(pod.metadata.name, None) is not None
        node = self.api.cached("nodes", pod.node_name)
        zone = node.metadata.labels.get(LABEL_ZONE, "") if node else ""
        serving = pod.is_ready()
        terminating = pod.metadata.deletion_timestamp is not None
        ep = Endpoint(pod.pod_ip, serving and not terminating, serving, terminating, pod.node_name, zone,
                      pod.metadata.name, pod.metadata.uid)
        if members.get(pod.metadata.name) == ep:
            return False
        members[pod.metadata.name] = ep
        return True

    def _queue(self) -> None:
        if not self._queued:
            self._queued = True
            self.ctx.engine.call_later(0, self._sync)

    def _sync(self) -> None:
        self._queued = False
        for name in sorted(self._changed):
            self.sync_service(name)

    def sync_service(self, name: str) -> None:
        """Write the slices (at most 100 endpoints each) that hold a changed endpoint; a pod keeps
        its slice, a new one goes to the first slice with room."""
        changed, self._changed[name] = self._changed[name], set()
        members = self.members[name]
        slices = self.slices.setdefault(name, {})
        dirty: set[str] = set()
        for pod_name in sorted(changed):
            slice_name = self.slice_of.get((name, pod_name))
            if pod_name not in members:
                if slice_name is not None:
                    slices[slice_name].remove(pod_name)
                    del self.slice_of[(name, pod_name)]
                    dirty.add(slice_name)
                continue
            if slice_name is None:
                slice_name = next((s for s, pods in slices.items() if len(pods) < MAX_ENDPOINTS_PER_SLICE), None)
                if slice_name is None:
                    slice_name = self._new_slice_name(name)
                    slices[slice_name] = []
                slices[slice_name].append(pod_name)
                self.slice_of[(name, pod_name)] = slice_name
            dirty.add(slice_name)
        if not slices:  # a Service always has at least one (possibly empty) slice
            slice_name = self._new_slice_name(name)
            slices[slice_name] = []
            dirty.add(slice_name)
        for slice_name in [s for s in slices if s in dirty]:
            self._write(name, slice_name, tuple(members[p] for p in slices[slice_name]))

    def _new_slice_name(self, service: str) -> str:
        return f"{service}-{random_suffix(self.rng)}"

    def _write(self, service: str, slice_name: str, endpoints: tuple[Endpoint, ...]) -> None:
        current = self.api.current("endpointslices", slice_name, "default")
        if current is None:
            svc = self.services[service]
            labels = {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                      "kubernetes.io/service-name": service}
            es = EndpointSlice(
                metadata=ObjectMeta(name=slice_name, namespace="default", uid="", resource_version=0, creation=0,
                                    labels=labels, generate_name=f"{service}-",
                                    owner_references=({"apiVersion": "v1", "kind": "Service", "name": service,
                                                       "uid": svc.metadata.uid, "controller": True,
                                                       "blockOwnerDeletion": True},)),
                service_name=service, endpoints=endpoints)
            self.api.create(self.actor, es)
        elif current.endpoints != endpoints:
            self.api.update(self.actor, current.evolve(endpoints=endpoints))
