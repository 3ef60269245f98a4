"""StatefulSet controller (pkg/controller/statefulset/stateful_set_control.go, stateful_pod_control.go,
stateful_set_utils.go; docs/kubernetes-node-health.md "StatefulSets and volumes").

What a learner sees of it when a node dies:
- A pod's name is its identity: `<set>-<ordinal>`. `updateStatefulSet` builds one slot per ordinal from
  the pods that exist; a slot whose pod object still exists counts as created (`isCreated`), even when
  the pod is Terminating. So the controller never creates a second pod of the same name: a pod stuck
  Terminating on a dead node blocks its ordinal until something removes the object (a force delete,
  PodGC after the out-of-service taint, the kubelet coming back).
- `podManagementPolicy: OrderedReady` (monotonic) handles the slots in order and stops at the first
  one it created, or that is Terminating, or that is not Running and Ready; `Parallel` goes on.
- Before a pod is created its claims are: one PersistentVolumeClaim per volumeClaimTemplate, named
  `<template>-<set>-<ordinal>` (getPersistentVolumeClaimName), created if missing and never deleted
  here (the default retention policy is Retain).
"""

from __future__ import annotations

import hashlib
import sys
from typing import TYPE_CHECKING, Any

from .apiserver import Actor
from .objects import ClaimTemplate, ObjectMeta, PersistentVolumeClaim, Pod, StatefulSet, Toleration
from .workloads import workload_tolerations

if TYPE_CHECKING:
    from .context import Context

LANE = "statefulset-controller"
SOURCE = "pkg/controller/statefulset/stateful_set_control.go"
POD_CONTROL = "pkg/controller/statefulset/stateful_pod_control.go"
LABEL_POD_NAME = "statefulset.kubernetes.io/pod-name"  # k8s.io/api/apps/v1 StatefulSetPodNameLabel
LABEL_REVISION = "controller-revision-hash"
LABEL_POD_INDEX = "apps.kubernetes.io/pod-index"  # k8s.io/api/apps/v1 PodIndexLabel


def claim_name(template: str, set_name: str, ordinal: int) -> str:
    """getPersistentVolumeClaimName (stateful_set_utils.go): <template>-<set>-<ordinal>."""
    return f"{template}-{set_name}-{ordinal}"


def ordinal_of(set_name: str, pod_name: str) -> int | None:
    """getParentNameAndOrdinal: the ordinal of `<set>-<n>`, None for a name that is not one of the set's."""
    prefix = set_name + "-"
    if not pod_name.startswith(prefix):
        return None
    tail = pod_name[len(prefix):]
    return int(tail) if tail.isdigit() else None


def running_and_ready(pod: Pod) -> bool:
    """isRunningAndReady: phase Running and the Ready condition True."""
    return pod.phase == "Running" and pod.is_ready()


class StatefulSetState:
    """One StatefulSet as the controller knows it: its spec and the pods of each ordinal it has seen."""

    __slots__ = ("spec", "obj", "uid", "tolerations", "pods", "waiting_reported", "revision", "attention", "starting",
                 "ready", "live")

    def __init__(self, spec: dict[str, Any], obj: StatefulSet) -> None:
        self.spec = spec
        self.obj = obj
        self.uid = obj.metadata.uid
        self.tolerations: tuple[Toleration, ...] = workload_tolerations(spec)
        self.pods: dict[int, Pod] = {}  # ordinal -> the pod of that name in the informer cache
        self.waiting_reported: set[str] = set()  # pod uids whose "waiting for the same name" was recorded
        self.revision = obj.update_revision
        # The ordinals a sync must look at, so that it does not walk every slot per pod event (1,000
        # replicas, 1,000 events): `attention`, no pod or a pod that finished or is being deleted (a
        # sync acts on them in both policies); `starting`, a live pod not yet Running and Ready (where
        # OrderedReady stops). Every other ordinal passes processReplica without doing anything.
        self.attention: set[int] = set(range(obj.replicas))
        self.starting: set[int] = set()
        self.ready = 0  # pods Running and Ready (status.readyReplicas)
        self.live = 0  # pods not being deleted

    def set_pod(self, ordinal: int, pod: Pod | None) -> None:
        """Record the pod of an ordinal (None: gone), keeping the counts and the attention set."""
        before = self.pods.get(ordinal)
        if before is not None:
            self.ready -= running_and_ready(before)
            self.live -= before.metadata.deletion_timestamp is None
        if pod is None:
            self.pods.pop(ordinal, None)
        else:
            self.pods[ordinal] = pod
            self.ready += running_and_ready(pod)
            self.live += pod.metadata.deletion_timestamp is None
        self.attention.discard(ordinal)
        self.starting.discard(ordinal)
        if ordinal >= self.obj.replicas:
            return
        if pod is None or pod.terminal or pod.metadata.deletion_timestamp is not None:
            self.attention.add(ordinal)
        elif not running_and_ready(pod):
            self.starting.add(ordinal)


class StatefulSetController:
    """All StatefulSets of a run: a pod watch and a sync per set, queued on changes."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.api = ctx.api
        self.actor = Actor("system:serviceaccount:kube-system:statefulset-controller", LANE)
        self.sets: dict[str, StatefulSetState] = {}
        self._dirty: set[str] = set()
        self._queued = False
        self.api.watch("pods", LANE, self._on_pod)

    def add(self, spec: dict[str, Any]) -> None:
        """`kubectl apply` of one StatefulSet: create the object and sync it."""
        name = spec["name"]
        templates = tuple(ClaimTemplate(t["name"], t["storage"], tuple(t["accessModes"]), t["storageClassName"])
                          for t in spec.get("volumeClaimTemplates", []))
        revision = f"{name}-{hashlib.sha256(name.encode()).hexdigest()[:10]}"
        obj = StatefulSet(
            metadata=ObjectMeta(name=name, namespace="default", uid="", resource_version=0, creation=0,
                                labels={"app": name}),
            replicas=spec["replicas"], pod_management_policy=spec["podManagementPolicy"], service_name=name,
            claim_templates=templates,
            termination_grace_period_seconds=spec.get("terminationGracePeriodSeconds", 30),
            update_revision=revision)
        resp = self.api.create(Actor("kubernetes-admin", "trainer"), obj)
        if resp.ok:
            self.sets[name] = StatefulSetState(spec, resp.obj)
            self._queue(name)

    # -- informer handlers -------------------------------------------------------------------

    def _on_pod(self, old: Pod | None, new: Pod | None) -> None:
        pod = new or old
        if pod is None or pod.owner_kind != "StatefulSet":
            return
        state = self.sets.get(pod.owner_name)
        if state is None:
            return
        ordinal = ordinal_of(pod.owner_name, pod.metadata.name)
        if ordinal is None:
            return
        if new is None:
            known = state.pods.get(ordinal)
            if known is not None and old is not None and known.metadata.uid == old.metadata.uid:
                state.set_pod(ordinal, None)
        else:
            state.set_pod(ordinal, new)
        self._queue(pod.owner_name)

    def _queue(self, name: str) -> None:
        self._dirty.add(name)
        if not self._queued:
            self._queued = True
            self.ctx.engine.call_later(0, self.sync)

    # -- sync --------------------------------------------------------------------------------

    def sync(self) -> None:
        self._queued = False
        dirty, self._dirty = sorted(self._dirty), set()
        for name in dirty:
            state = self.sets.get(name)
            if state is not None:
                self.update_stateful_set(state)
                self.update_status(state)

    def update_stateful_set(self, state: StatefulSetState) -> None:
        """updateStatefulSet / processReplica, for ordinals 0..replicas-1 (no scale-down, no rolling update).
        Only the ordinals needing attention are visited: in OrderedReady the walk stops at the first of them
        anyway, and the others are Running and Ready pods on which processReplica does nothing."""
        obj = state.obj
        name = obj.metadata.name
        monotonic = obj.pod_management_policy != "Parallel"
        rec = self.ctx.recorder
        if monotonic:
            first = min(state.attention | state.starting, default=None)
            ordinals = [] if first is None else [first]
        else:
            ordinals = sorted(state.attention)
        for ordinal in ordinals:
            pod = state.pods.get(ordinal)
            pod_name = f"{name}-{ordinal}"
            if pod is not None and pod.terminal:
                # Delete and recreate pods which finished running (a Failed pod is replaced)
                if pod.metadata.deletion_timestamp is None:
                    self.api.delete(self.actor, "pods", pod_name, namespace="default")
                if monotonic:
                    return
                continue
            if pod is None:
                if not self.create_stateful_pod(state, ordinal):
                    if monotonic:
                        return
                    continue
                if monotonic:
                    return
                continue
            if pod.metadata.deletion_timestamp is not None:
                if pod.metadata.uid not in state.waiting_reported:
                    state.waiting_reported.add(pod.metadata.uid)
                    rec.decision(LANE, "statefulset.wait-same-name", pod.node_name or None,
                                 {"statefulSet": name, "ordinal": ordinal, "podManagementPolicy":
                                  obj.pod_management_policy,
                                  "deletionTimestamp": pod.metadata.deletion_timestamp / 1e6},
                                 "waiting: the Terminating pod still holds the name",
                                 f"Pod {pod_name} is Terminating but its object still exists. The StatefulSet "
                                 "controller counts that ordinal as created and never makes a second pod of the "
                                 "same name: it waits until the object is gone. On a node whose kubelet is dead "
                                 "nobody finishes the deletion.", SOURCE, pod=pod_name)
                if monotonic:
                    return
                continue
            if monotonic:  # created, not Running and Ready: OrderedReady waits for it
                return

    def create_stateful_pod(self, state: StatefulSetState, ordinal: int) -> bool:
        """CreateStatefulPod: the pod's claims first (createPersistentVolumeClaims), then the pod."""
        obj = state.obj
        name = obj.metadata.name
        pod_name = f"{name}-{ordinal}"
        if self.api.current("pods", pod_name, "default") is not None:
            # the informer has not shown the delete yet; a create would get 409 AlreadyExists
            return False
        volumes = []
        for template in obj.claim_templates:
            cname = claim_name(template.name, name, ordinal)
            volumes.append((template.name, cname))
            if self.api.cached("persistentvolumeclaims", cname, "default") is not None:
                continue
            claim = PersistentVolumeClaim(
                metadata=ObjectMeta(name=cname, namespace="default", uid="", resource_version=0, creation=0,
                                    labels={"app": name}),
                storage=template.storage, access_modes=template.access_modes,
                storage_class_name=template.storage_class_name)
            resp = self.api.create(self.actor, claim)
            if resp.ok:
                self.api.record_event(self.actor, obj, "SuccessfulCreate",
                                      f"create Claim {cname} Pod {pod_name} in StatefulSet {name} success",
                                      source_component=LANE)
        labels = {"app": name, LABEL_POD_NAME: pod_name, LABEL_REVISION: state.revision}
        if self.ctx.profile.pod_index_label:
            # interned: str() makes a one-character string of its own, where a restore gives back the
            # interpreter's shared one, and a checkpoint writes one string per object (checkpoint.py)
            labels[LABEL_POD_INDEX] = sys.intern(str(ordinal))
        owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name, "uid": state.uid, "controller": True,
                 "blockOwnerDeletion": True}
        pod = Pod(
            metadata=ObjectMeta(name=pod_name, namespace="default", uid="", resource_version=0, creation=0,
                                labels=labels, owner_references=(owner,)),
            tolerations=state.tolerations,
            node_selector=dict(state.spec.get("nodeSelector", {})),
            termination_grace_period_seconds=obj.termination_grace_period_seconds,
            priority_class_name=state.spec.get("priorityClassName", ""),
            owner_kind="StatefulSet", owner_name=name, volumes=tuple(volumes),
        )
        resp = self.api.create(self.actor, pod)
        if not resp.ok:
            return False
        state.set_pod(ordinal, resp.obj)  # seen at once: the watch only confirms it
        self.api.record_event(self.actor, obj, "SuccessfulCreate",
                              f"create Pod {pod_name} in StatefulSet {name} successful", source_component=LANE)
        self.ctx.recorder.decision(LANE, "statefulset.create-pod", None,
                                   {"statefulSet": name, "ordinal": ordinal,
                                    "podManagementPolicy": obj.pod_management_policy,
                                    "claims": [c for _v, c in volumes]},
                                   f"created {pod_name}",
                                   f"No object named {pod_name} exists, so the StatefulSet controller creates the "
                                   "pod of that ordinal, after making sure its claims exist"
                                   + (" (OrderedReady: the ordinals before it are Running and Ready)."
                                      if obj.pod_management_policy != "Parallel" else "."),
                                   POD_CONTROL, pod=pod_name)
        return True

    def update_status(self, state: StatefulSetState) -> None:
        """The status counts (updateStatefulSetStatus): replicas counts every pod object, Terminating ones too."""
        obj = state.obj
        replicas, ready, live = len(state.pods), state.ready, state.live
        counts = (replicas, ready, live, live, ready)
        current = (obj.status_replicas, obj.ready_replicas, obj.current_replicas, obj.updated_replicas,
                   obj.available_replicas)
        if counts == current and obj.observed_generation == 1:
            return
        new = obj.evolve(status_replicas=replicas, ready_replicas=ready, current_replicas=live, updated_replicas=live,
                         available_replicas=ready, observed_generation=1)
        resp = self.api.update(self.actor, new, subresource="status")
        if resp.ok:
            state.obj = resp.obj

    def describe(self) -> dict[str, Any]:
        return {name: {"replicas": s.obj.replicas, "podManagementPolicy": s.obj.pod_management_policy,
                       "pods": {str(o): p.metadata.name for o, p in sorted(s.pods.items())}}
                for name, s in sorted(self.sets.items())}
