"""The kubelet's node lease controller (k8s.io/component-helpers/apimachinery/lease/controller.go).

Renews `kube-node-lease/<node>` every 0.25 x nodeLeaseDurationSeconds (sliding, 4 % jitter):
five immediate PUT tries with the cached Lease, then "ensure" (GET, CREATE when missing) in a
backoff of 0.2, 0.4, ... 7 s with no attempt limit. Independent of the runtime and status sync.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..clock import MS, US
from ..context import jitter
from ..objects import Lease, ObjectMeta

if TYPE_CHECKING:
    from ..apiserver import Actor, APIServer, Response
    from ..engine import Engine

MAX_UPDATE_RETRIES = 5
MAX_BACKOFF = 7 * US
LANE = "kubelet-lease"
NAMESPACE = "kube-node-lease"

# newLeasePostProcessFunc: completes a Lease before it is written (the kubelet sets the Node
# as its owner); a generator, as it may make requests. None: it failed.
LeasePostProcess = Callable[[Lease], Generator[int, Any, "Lease | None"]]


@dataclass(eq=False)
class NodeLeaseController:
    """NewController: like the real one, it gets a client (the API server and the identity it
    writes as), a clock (the engine), the holder identity, the lease duration and renew
    interval, and a post-process function; it knows nothing else of the kubelet."""

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

    def run(self) -> Generator[int, Any, None]:
        """sync() every period. The usual renewal (a cached Lease with its owner, a request that
        goes straight through) is retryUpdateLease's first try, written out here: no generator
        of its own and no `yield from` level on its two wake-ups, 1.8 M renewals an hour at
        5,000 nodes. Everything else goes through retry_update_lease."""
        period = self.renew_interval
        api, engine, actor = self.api, self.clock, self.actor
        while True:
            base = self.latest
            latency = api.direct_latency(actor) if base is not None and base.metadata.owner_references else None
            if base is None:
                yield from self.ensure_and_renew()
            elif latency is not None:
                received = engine.now
                to_update = base.evolve(renew_time=received)
                yield latency  # what api.call does for a request that goes straight through
                resp = api.update(actor, to_update, received=received)
                if resp.ok:
                    self.latest = resp.obj
                elif not (yield from self.retry_update_lease(base, first=resp)):
                    yield from self.ensure_and_renew()
            elif not (yield from self.retry_update_lease(base)):
                yield from self.ensure_and_renew()
            yield jitter(self.rng, period)

    def ensure_and_renew(self) -> Generator[int, Any, None]:
        """The rest of sync(): no cached Lease, or its update failed five times."""
        lease, created = yield from self.backoff_ensure_lease()
        self.latest = lease
        if not created and lease is not None:
            yield from self.retry_update_lease(lease)

    def retry_update_lease(self, base: Lease, first: Response | None = None) -> Generator[int, Any, bool]:
        """Up to five PUTs of `base` renewed; `first`: the answer to a first try already made."""
        api, engine, actor = self.api, self.clock, self.actor
        for attempt in range(MAX_UPDATE_RETRIES):
            if attempt == 0 and first is not None:
                resp = first
            else:
                to_update: Lease | None
                if base.metadata.owner_references:  # the usual renewal: no Node GET needed
                    to_update = base.evolve(renew_time=engine.now)
                else:
                    to_update = yield from self.new_lease(base)
                if to_update is None:
                    return False
                def update(received: int, obj: Lease = to_update) -> Response:
                    return api.update(actor, obj, received=received)

                resp = yield from api.call(actor, "update", "leases", self.holder_identity, update, namespace=NAMESPACE)
            if resp.ok:
                self.latest = resp.obj
                return True
            if resp.code == 409:
                ensured, _created = yield from self.backoff_ensure_lease()
                if ensured is None:
                    return False
                base = ensured
        return False

    def backoff_ensure_lease(self) -> Generator[int, Any, tuple[Lease | None, bool]]:
        sleep = 100 * MS
        while True:
            ok, lease, created = yield from self.ensure_lease()
            if ok:
                return lease, created
            sleep = min(2 * sleep, MAX_BACKOFF)
            yield sleep

    def ensure_lease(self) -> Generator[int, Any, tuple[bool, Lease | None, bool]]:
        api, actor, name = self.api, self.actor, self.holder_identity
        resp = yield from api.call(actor, "get", "leases", name, lambda _r: api.get(actor, "leases", name, NAMESPACE),
                                   namespace=NAMESPACE)
        if resp.code == 404:
            to_create = yield from self.new_lease(None)
            if to_create is None:
                return True, None, False  # no Node UID yet: skip this round
            created = yield from api.call(actor, "create", "leases", name,
                                          lambda received: api.create(actor, to_create, received),
                                          namespace=NAMESPACE)
            if not created.ok:
                return False, None, False
            return True, created.obj, True
        if not resp.ok:
            return False, None, False
        return True, resp.obj, False

    def new_lease(self, base: Lease | None) -> Generator[int, Any, Lease | None]:
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
        completed = yield from self.new_lease_post_process(lease)
        if completed is None:
            if base is None or not self.renews_without_owner:
                return None  # "failed to prepare lease" (1.29+), or nothing to create yet
            completed = lease
        return completed.evolve(renew_time=self.clock.now)
