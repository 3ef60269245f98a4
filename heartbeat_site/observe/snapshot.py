"""An observed cluster's snapshot, in the shape of a simulated run's (docs/simulation-api.md, "Snapshot"), so the
run page loads it the same way. What only a simulation knows (the controllers' own state) is either inferred from
the objects, with the defaults of the server's version, and said so (``inferred``), or left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from heartbeat_site.live.models import Run
from heartbeat_site.observe.changes import EVENTS_KEPT, ChangeMapper, event_age, meta, rfc3339
from simulation.profiles import DEFAULT_VERSION, PROFILES

if TYPE_CHECKING:
    from heartbeat_site.observe.cluster import Problem

ZONE_LABEL = "topology.kubernetes.io/zone"
# tolerationSeconds the DefaultTolerationSeconds admission plugin gives every pod for the not-ready and unreachable
# NoExecute taints (plugin/pkg/admission/defaulttolerationseconds/admission.go): the eviction countdown the page
# infers from a taint's timeAdded when the pod's own tolerations do not say otherwise
DEFAULT_TOLERATION_SECONDS = 300
# What an observation cannot see, said on its page and in its snapshot (docs/observe.md)
UNSEEN = ["the node lifecycle controller's monitor passes and their decisions",
          "the taint eviction controller's queue", "zone states and eviction rate limits",
          "requests that changed nothing (reads, failed writes)", "which component made each change"]


def grace_period(version: str) -> float:
    """--node-monitor-grace-period's default for a server version: 40 s up to 1.31, 50 s from 1.32
    (RecommendedDefaultNodeLifecycleControllerConfiguration in pkg/controller/nodelifecycle/config/v1alpha1/defaults.go,
    changed by kubernetes/kubernetes#126287; simulation/profiles.py)."""
    profile = PROFILES.get(version)
    if profile is None:
        minor = int(version.split(".")[1]) if version.count(".") == 1 and version.split(".")[1].isdigit() else 0
        profile = PROFILES["1.27"] if 0 < minor < 27 else PROFILES[DEFAULT_VERSION]
    return profile.node_monitor_grace_period


def grace_of(run: Run) -> float:
    """The grace period a real cluster's run counts with: the one its trainer stated, else the version's default."""
    stated = (run.document.get("observation") or {}).get("nodeMonitorGracePeriod")
    return float(stated) if stated else grace_period(run.version)


def observed_snapshot(mapper: ChangeMapper, *, t: float, wall: float, version: str, grace: float, title: dict,
                      server: str, problem: Problem | None = None) -> dict:
    objects = {resource: [mapper.objects[resource][key] for key in sorted(mapper.objects[resource])]
               for resource in ("nodes", "leases", "pods", "endpointslices")}
    events = sorted(mapper.objects["events"].values(), key=event_age)
    nodes = {}
    for node in objects["nodes"]:
        name = str(meta(node).get("name"))
        seen = mapper.kubelets.get(name, {})
        heard = [s for s in (seen.get("lastRenew"), seen.get("lastStatusReport")) if s is not None]
        nodes[name] = {"probeTimestamp": max(heard) if heard else None,
                       "readyTransitionTimestamp": mapper.ready_since.get(name),
                       "zone": (meta(node).get("labels") or {}).get(ZONE_LABEL, ""), "inferred": True}
    return {
        "t": t,
        "time": rfc3339(wall),
        "last_seq": mapper.seq,
        "version": version,
        "objects": {**objects, "services": [], "events": events[-EVENTS_KEPT:]},
        "nodeLifecycle": {"running": True, "nodes": nodes, "zones": {}, "nextPass": None, "gracePeriod": grace,
                          "inferred": True},
        "taintEviction": {"pods": {}, "running": True},
        "kubelets": {name: dict(seen) for name, seen in sorted(mapper.kubelets.items())},
        "scenario": {"name": "observation", "title": title},
        "watchDelay": 0.0,
        "observation": {"server": server, "gracePeriod": grace, "tolerationSeconds": DEFAULT_TOLERATION_SECONDS,
                        "unseen": UNSEEN, "problem": problem.sentence if problem else "",
                        "problemDetail": problem.as_message() if problem else None},
    }
