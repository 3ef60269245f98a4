"""The kubelet's node lease controller (k8s.io/component-helpers/apimachinery/lease/controller.go).

Renews `kube-node-lease/<node>` every 0.25 x nodeLeaseDurationSeconds (sliding, 4 % jitter):
five immediate PUT tries with the cached Lease, then "ensure" (GET, CREATE when missing) in a
backoff of 0.2, 0.4, ... 7 s with no attempt limit. Independent of the runtime and status sync.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from ..clock import MS, US
from ..context import jitter
from ..engine import Process
from ..objects import Lease, ObjectMeta

if TYPE_CHECKING:
    from ..apiserver import Actor, APIServer, Response
    from ..engine import Engine

MAX_UPDATE_RETRIES = 5
JITTER_FACTOR = 0.04  # wait.JitterUntil(..., 0.04, ...)
MAX_BACKOFF = 7 * US
LANE = "kubelet-lease"
NAMESPACE = "kube-node-lease"

# newLeasePostProcessFunc: completes a Lease before it is written (the kubelet sets the Node as
# its owner). It may make requests, so it continues the given process with `then(lease)` (None:
# it failed) instead of returning.
LeasePostProcess = Callable[["Process", Lease, Callable[["Lease | None"], None]], None]


@dataclass(eq=False)
class NodeLeaseController(Process):
    """NewController: like the real one, it gets a client (the API server and the identity it
    writes as), a clock (the engine), the holder identity, the lease duration and renew
    interval, and a post-process function; it knows nothing else of the kubelet.

    It is one process (engine.Process): each method below is a point where controller.go's
    goroutine would continue after a request or a sleep; a method that waits hands the next one
    (`then`) to the request or the sleep. `then` gets one value, what the Go function returns."""

    api: APIServer
    actor: Actor
    clock: Engine
    holder_identity: str
    lease_duration_seconds: int
    renew_interval: int
    rng: random.Random
    new_lease_post_process: LeasePostProcess
    # a post-process error is ignored (before 1.29) instead of failing the renewal ("failed to prepare lease")
    renews_without_owner: bool
    latest: Lease | None = None  # the Lease last written or read

    def __post_init__(self) -> None:
        Process.__init__(self)

    def run(self) -> NodeLeaseController:
        """Run: wait.JitterUntil(sync, renewInterval, 0.04, sliding), from now. The controller is
        the process (the kubelet kills it)."""
        self.clock.sleep(self, 0, self.sync)
        return self

    def sync(self) -> None:
        """sync(). The usual renewal (a cached Lease with its owner, a request that goes straight
        through) is retryUpdateLease's first try, written out here and in `_renewed`: no request
        object and no continuation of its own, 1.8 M renewals an hour at 5,000 nodes. Everything
        else goes through retry_update_lease."""
        api, actor = self.api, self.actor
        base = self.latest
        latency = api.direct_latency(actor) if base is not None and base.metadata.owner_references else None
        if base is None:
            self.ensure_and_renew(self._synced)
        elif latency is not None:
            received = self.clock.now
            # what api.request does for a request that goes straight through
            self.clock.sleep(self, latency, self._renewed, base, base.evolve(renew_time=received), received)
        else:
            self.retry_update_lease(base, None, self._retried)

    def _renewed(self, base: Lease, to_update: Lease, received: int) -> None:
        resp = self.api.update(self.actor, to_update, received=received)
        if resp.ok:
            self.latest = resp.obj
            # _synced written out: wait.Jitter(renewInterval, 0.04) (context.jitter), then sync again
            period = self.renew_interval
            self.clock.sleep(self, period + int(period * JITTER_FACTOR * self.rng.random()), self.sync)
        else:
            self.retry_update_lease(base, resp, self._retried)

    def _retried(self, ok: bool) -> None:
        if ok:
            self._synced(None)
        else:
            self.ensure_and_renew(self._synced)

    def _synced(self, _result: None) -> None:
        self.clock.sleep(self, jitter(self.rng, self.renew_interval, JITTER_FACTOR), self.sync)

    def ensure_and_renew(self, then: Callable[[None], None]) -> None:
        """The rest of sync(): no cached Lease, or its update failed five times."""
        self.backoff_ensure_lease(partial(self._ensured_for_renewal, then))

    def _ensured_for_renewal(self, then: Callable[[None], None], ensured: tuple[Lease | None, bool]) -> None:
        lease, created = ensured
        self.latest = lease
        if not created and lease is not None:
            self.retry_update_lease(lease, None, partial(_ignore_result, then))
        else:
            then(None)

    def retry_update_lease(self, base: Lease, first: Response | None, then: Callable[[bool], None]) -> None:
        """retryUpdateLease: up to five PUTs of `base` renewed; `first`: the answer to a first
        try already made. `then(ok)`."""
        self._try_update(base, first, then, 0)

    def _try_update(self, base: Lease, first: Response | None, then: Callable[[bool], None], attempt: int) -> None:
        if attempt >= MAX_UPDATE_RETRIES:
            then(False)
        elif attempt == 0 and first is not None:
            self._updated(base, then, attempt, first)
        elif base.metadata.owner_references:  # the usual renewal: no Node GET needed
            self._update(base, then, attempt, base.evolve(renew_time=self.clock.now))
        else:
            self.new_lease(base, partial(self._update, base, then, attempt))

    def _update(self, base: Lease, then: Callable[[bool], None], attempt: int, to_update: Lease | None) -> None:
        if to_update is None:
            then(False)
            return
        api, actor = self.api, self.actor
        api.request(self, actor, "update", "leases", self.holder_identity, partial(api.update, actor, to_update),
                    partial(self._updated, base, then, attempt), namespace=NAMESPACE)

    def _updated(self, base: Lease, then: Callable[[bool], None], attempt: int, resp: Response) -> None:
        if resp.ok:
            self.latest = resp.obj
            then(True)
        elif resp.code == 409:
            self.backoff_ensure_lease(partial(self._ensured_after_conflict, then, attempt))
        else:
            self._try_update(base, None, then, attempt + 1)

    def _ensured_after_conflict(self, then: Callable[[bool], None], attempt: int,
                                ensured: tuple[Lease | None, bool]) -> None:
        if ensured[0] is None:
            then(False)
        else:
            self._try_update(ensured[0], None, then, attempt + 1)

    def backoff_ensure_lease(self, then: Callable[[tuple[Lease | None, bool]], None], sleep: int = 100 * MS) -> None:
        """backoffEnsureLease: ensureLease until it works, sleeping 0.2, 0.4, ... 7 s between
        tries. `then((lease, created))`."""
        self.ensure_lease(partial(self._backoff_tried, then, sleep))

    def _backoff_tried(self, then: Callable[[tuple[Lease | None, bool]], None], sleep: int,
                       result: tuple[bool, Lease | None, bool]) -> None:
        ok, lease, created = result
        if ok:
            then((lease, created))
            return
        sleep = min(2 * sleep, MAX_BACKOFF)
        self.clock.sleep(self, sleep, self.backoff_ensure_lease, then, sleep)

    def ensure_lease(self, then: Callable[[tuple[bool, Lease | None, bool]], None]) -> None:
        """ensureLease: GET the Lease, CREATE it when missing. `then((ok, lease, created))`."""
        api, actor, name = self.api, self.actor, self.holder_identity
        api.request(self, actor, "get", "leases", name, partial(api.get, actor, "leases", name, NAMESPACE),
                    partial(self._ensure_got, then), namespace=NAMESPACE)

    def _ensure_got(self, then: Callable[[tuple[bool, Lease | None, bool]], None], resp: Response) -> None:
        if resp.code == 404:
            self.new_lease(None, partial(self._ensure_create, then))
        elif not resp.ok:
            then((False, None, False))
        else:
            then((True, resp.obj, False))

    def _ensure_create(self, then: Callable[[tuple[bool, Lease | None, bool]], None], to_create: Lease | None) -> None:
        if to_create is None:
            then((True, None, False))  # no Node UID yet: skip this round
            return
        api, actor = self.api, self.actor
        api.request(self, actor, "create", "leases", self.holder_identity, partial(api.create, actor, to_create),
                    partial(self._ensure_created, then), namespace=NAMESPACE)

    def _ensure_created(self, then: Callable[[tuple[bool, Lease | None, bool]], None], created: Response) -> None:
        if not created.ok:
            then((False, None, False))
        else:
            then((True, created.obj, True))

    def new_lease(self, base: Lease | None, then: Callable[[Lease | None], None]) -> None:
        """newLease: a copy of `base` (or a new Lease) completed by the post-process, renewed now."""
        if base is None:
            lease = Lease(
                metadata=ObjectMeta(name=self.holder_identity, namespace=NAMESPACE, uid="", resource_version=0,
                                    creation=0),
                holder_identity=self.holder_identity,
                lease_duration_seconds=self.lease_duration_seconds,
                renew_time=None,
            )
        else:
            lease = base
        self.new_lease_post_process(self, lease, partial(self._new_lease_completed, base, lease, then))

    def _new_lease_completed(self, base: Lease | None, lease: Lease, then: Callable[[Lease | None], None],
                             completed: Lease | None) -> None:
        if completed is None:
            if base is None or not self.renews_without_owner:
                then(None)  # "failed to prepare lease" (1.29+), or nothing to create yet
                return
            completed = lease
        then(completed.evolve(renew_time=self.clock.now))


def _ignore_result(then: Callable[[None], None], _result: object) -> None:
    then(None)
