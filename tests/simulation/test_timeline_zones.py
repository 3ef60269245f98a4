"""Reference 6.7-6.9: zones, disruption states and the per-zone token bucket."""

import pytest

from .trace import EPS, NLC, Trace, scenario, seconds

T = 60.0
UNREACHABLE = "node.kubernetes.io/unreachable"


def zone_nodes(tr: Trace, names: list[str]) -> dict[str, list[tuple[float, float | None]]]:
    return {n: tr.taint_times(n, UNREACHABLE, "NoExecute") for n in names}


def zone_states(tr: Trace, zone: str) -> list[tuple[float, str]]:
    return [(e["t"], e["to"]) for e in tr.events
            if e["type"] == "transition" and e["kind"] == "zone-state" and e["key"] == zone]


VERSIONS = ["1.31", "1.33"]


def outage(zone_size: int, failing: int, until: float, version: str) -> Trace:
    zones = [{"name": z, "nodes": zone_size} for z in ("zone-a", "zone-b", "zone-c")]
    faults = [{"at": "60s", "action": "partition", "node": f"node-{i}"} for i in range(1, failing + 1)]
    return Trace.run(scenario(version, zones=zones, faults=faults,
                              workloads=[{"name": "web", "replicas": zone_size * 3}]), until=until)


@pytest.mark.parametrize("version", VERSIONS)
def test_small_zone_partial_disruption_stops_tainting(version):
    """6.7: 6 of 10 nodes in zone-a: PartialDisruption, limiter 0, at most 2 nodes get NoExecute."""
    tr = outage(10, 6, T + 700, version)
    failing = [f"node-{i}" for i in range(1, 7)]
    for n in failing:
        assert tr.first_status(n, "Unknown") is not None
        assert tr.taint_times(n, UNREACHABLE, "NoSchedule")
    states = zone_states(tr, "zone-a")
    assert ("PartialDisruption" in [s for _t, s in states])
    # Four nodes turn Unknown in one pass and two more in the next. A node joins the taint queue
    # in the pass after it turned Unknown (processTaintBaseEviction reads the Ready condition the
    # pass started with), which is the pass that switches the zone to PartialDisruption and its
    # limiter to 0: no node of this zone gets NoExecute, so no pod is evicted.
    tainted = [n for n, spans in zone_nodes(tr, failing).items() if spans]
    assert tainted == []
    assert not tr.pod_writes(verb="delete")
    for n in [f"node-{i}" for i in range(11, 31)]:
        assert tr.first_status(n, "Unknown") is None
    assert zone_states(tr, "zone-b") == [(pytest.approx(5, abs=5), "Normal")]


@pytest.mark.parametrize("version", VERSIONS)
def test_large_zone_partial_disruption_uses_secondary_rate(version):
    """6.7 with 3 x 60 nodes, 36 failing in zone-a: 0.01/s after the switch (one node per 100 s)."""
    tr = outage(60, 36, T + 500, version)
    failing = [f"node-{i}" for i in range(1, 37)]
    switch = next(t for t, s in zone_states(tr, "zone-a") if s == "PartialDisruption")
    times = sorted(spans[0][0] for spans in zone_nodes(tr, failing).values() if spans)
    before = [t for t in times if t <= switch]
    after = [t for t in times if t > switch]
    assert len(before) <= 2
    assert len(after) >= 3, f"tainting continues, slowly: {after}"  # at least two gaps to check
    gaps = [b - a for a, b in zip(after, after[1:], strict=False)]
    assert all(g >= 100 - 0.1 for g in gaps)
    assert len(after) <= 1 + (T + 500 - switch) // 100
    limiter = [d for d in tr.decisions("nlc.swap-limiter") if d["inputs"]["zone"] == "zone-a"]
    assert limiter[0]["inputs"]["rate"] == 0.01


@pytest.mark.parametrize("version", VERSIONS)
def test_whole_zone_down_is_evacuated_at_the_normal_rate(version):
    """6.8: zone-a fully down, the others healthy: FullDisruption keeps 0.1/s (one node per 10 s)."""
    zones = [{"name": z, "nodes": 3} for z in ("zone-a", "zone-b", "zone-c")]
    tr = Trace.run(scenario(version, zones=zones, faults=[{"at": "60s", "action": "zone-outage", "zone": "zone-a"}]),
                   until=T + 200)
    assert "FullDisruption" in [s for _t, s in zone_states(tr, "zone-a")]
    times = sorted(spans[0][0] for spans in zone_nodes(tr, ["node-1", "node-2", "node-3"]).values() if spans)
    assert len(times) == 3
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert all(10 - 0.1 <= g <= 15 + EPS for g in gaps)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_node_down_stops_eviction_until_one_returns(version):
    """6.9: all zones FullDisruption: NoExecute taints removed, no eviction; one node back at Q:
    the rest are tainted about Q+10, Q+20."""
    faults = [{"at": "60s", "action": "power-off", "node": n} for n in ("node-1", "node-2", "node-3")]
    faults.append({"at": "250s", "action": "power-on", "node": "node-1"})
    tr = Trace.run(scenario(version, faults=faults), until=700)
    enter = tr.decisions("nlc.enter-master-disruption")
    assert len(enter) == 1
    t_enter = enter[0]["t"]
    for n in ("node-1", "node-2", "node-3"):
        for added, removed in tr.taint_times(n, UNREACHABLE, "NoExecute"):
            if added < t_enter:
                assert removed is not None and removed <= t_enter + EPS
    assert not [r for r in tr.pod_writes(user=NLC, verb="delete") if seconds(r["stageTimestamp"]) < 250 + 300]
    exit_ = tr.decisions("nlc.exit-master-disruption")
    assert len(exit_) == 1
    q = exit_[0]["t"]
    assert tr.first_status("node-1", "True", after=250) <= q
    later = sorted(spans[-1][0] for spans in zone_nodes(tr, ["node-2", "node-3"]).values()
                   if spans and spans[-1][0] > q)
    assert len(later) == 2
    assert q + 10 - 0.1 <= later[0] <= q + 10 + 5 + EPS
    assert later[1] - later[0] >= 10 - 0.1
