"""EndpointSlice controller (kubernetes/endpointslice; reference 5.2).

Every non-terminal pod with an IP that matches a Service is an endpoint, terminating ones
included: serving = pod Ready; terminating = deletionTimestamp set; ready = serving and not
terminating. NotReady endpoints stay in the slice with ready: false.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .apiserver import Actor
from .objects import LABEL_ZONE, Endpoint, EndpointSlice, ObjectMeta, Pod, Service, evolve
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
        self.slices: dict[str, list[str]] = {}  # service -> slice names, in creation order
        self.slice_of: dict[tuple[str, str], str] = {}  # (service, pod) -> slice name
        self._dirty: set[str] = set()
        self._queued = False
        self.api.watch("services", LANE, self._on_service)
        self.api.watch("pods", LANE, self._on_pod)

    def _on_service(self, old: Service | None, new: Service | None) -> None:
        if new is None:
            return
        name = new.metadata.name
        self.services[name] = new
        self.members.setdefault(name, {})
        for pod in self.api.cache["pods"].values():
            self._update_member(name, new, pod)
        self._queue(name)

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        pod = new or old
        if pod is None:
            return
        for name, svc in self.services.items():
            if self._matches(svc, pod):
                if new is None:
                    if self.members[name].pop(pod.metadata.name, None) is not None:
                        self._queue(name)
                elif self._update_member(name, svc, new):
                    self._queue(name)

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

    def _queue(self, name: str) -> None:
        self._dirty.add(name)
        if not self._queued:
            self._queued = True
            self.ctx.engine.call_later(0, self._sync)

    def _sync(self) -> None:
        self._queued = False
        dirty, self._dirty = sorted(self._dirty), set()
        for name in dirty:
            self.sync_service(name)

    def sync_service(self, name: str) -> None:
        """Place endpoints into slices of at most 100, keeping each pod in its slice."""
        members = self.members[name]
        slices = self.slices.setdefault(name, [])
        wanted: dict[str, list[Endpoint]] = {s: [] for s in slices}
        for key in [k for k in self.slice_of if k[0] == name and k[1] not in members]:
            del self.slice_of[key]
        for pod_name in sorted(members):
            slice_name = self.slice_of.get((name, pod_name))
            if slice_name is None:
                slice_name = next((s for s in slices if len(wanted[s]) < MAX_ENDPOINTS_PER_SLICE), None)
                if slice_name is None:
                    slice_name = f"{name}-{random_suffix(self.rng)}"
                    slices.append(slice_name)
                    wanted[slice_name] = []
                self.slice_of[(name, pod_name)] = slice_name
            wanted[slice_name].append(members[pod_name])
        if not slices:
            slice_name = f"{name}-{random_suffix(self.rng)}"
            slices.append(slice_name)
            wanted[slice_name] = []
        for slice_name in slices:
            endpoints = tuple(wanted[slice_name])
            current = self.api.current("endpointslices", slice_name, "default")
            if current is None:
                svc = self.services[name]
                labels = {"endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
                          "kubernetes.io/service-name": name}
                es = EndpointSlice(
                    metadata=ObjectMeta(name=slice_name, namespace="default", uid="", resource_version=0, creation=0,
                                        labels=labels, generate_name=f"{name}-",
                                        owner_references=({"apiVersion": "v1", "kind": "Service", "name": name,
                                                           "uid": svc.metadata.uid, "controller": True,
                                                           "blockOwnerDeletion": True},)),
                    service_name=name, endpoints=endpoints)
                self.api.create(self.actor, es)
            elif current.endpoints != endpoints:
                self.api.update(self.actor, evolve(current, endpoints=endpoints))

    def describe(self) -> dict[str, Any]:
        return {name: len(m) for name, m in self.members.items()}
