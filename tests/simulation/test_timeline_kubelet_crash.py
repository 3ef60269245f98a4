"""Reference 6.1: the kubelet process dies; the node, its network and its containers stay up. Played on every
Kubernetes version the simulation offers, 1.27 to 1.33, each checked for what docs/kubernetes-node-health.md §7
says differs in it."""

import pytest

from .trace import EPS, GRACE, NLC, Trace, scenario, seconds

T = 60.0

VERSIONS = ["1.27", "1.28", "1.29", "1.30", "1.31", "1.32", "1.33"]


@pytest.fixture(scope="module", params=VERSIONS)
def crash(request):
    version = request.param
    doc = scenario(version, faults=[{"at": "60s", "action": "stop-kubelet", "node": "node-2"}])
    return version, Trace.run(doc, until=T + 480)

def test_lease_stops_and_ready_goes_unknown_within_the_grace_window(crash):
    version, tr = crash
    grace = GRACE[version]
    last = tr.last_renewal_before("node-2", T)
    assert T - 10.4 <= last <= T
    assert all(x <= T for x in tr.renewals("node-2"))  # nothing after the crash
    assert max(tr.renewals("node-1")) > T + 400  # the other kubelets keep renewing
    unknown = tr.first_status("node-2", "Unknown")
    assert unknown is not None
    assert last + grace < unknown <= last + grace + 10
    t, status, message, writer = next(c for c in tr.condition_changes("node-2") if c[1] == "Unknown")
    assert (message, writer) == ("Kubelet stopped posting node status.", NLC)

def test_all_four_conditions_unknown_and_heartbeat_kept(crash):
    _version, tr = crash
    u = tr.first_status("node-2", "Unknown")
    node = next(obj for t, obj in tr.node_versions("node-2") if t == u)
    conds = {c["type"]: c for c in node["status"]["conditions"]}
    for ctype in ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure"):
        assert conds[ctype]["status"] == "Unknown"
        assert conds[ctype]["reason"] == "NodeStatusUnknown"
    # lastHeartbeatTime keeps the kubelet's last post, long before the Unknown write

    assert seconds(conds["Ready"]["lastHeartbeatTime"]) <= T
    assert seconds(conds["Ready"]["lastTransitionTime"]) == pytest.approx(u, abs=1)

def test_same_pass_marks_pods_not_ready_and_emits_node_not_ready(crash):
    _version, tr = crash
    u = tr.first_status("node-2", "Unknown")
    marked = tr.pod_writes(user=NLC, verb="update", subresource="status")
    on_node2 = tr.pods_on("node-2")
    assert len(on_node2) == 3  # two web pods and the agent DaemonSet's
    assert {r["objectRef"]["name"] for r in marked} == on_node2

    for r in marked:
        assert u <= seconds(r["stageTimestamp"]) <= u + EPS
        ready = next(c for c in r["responseObject"]["status"]["conditions"] if c["type"] == "Ready")
        assert ready["status"] == "False"
    ev = [e for e in tr.k8s_events("NodeNotReady") if e["involvedObject"]["kind"] == "Node"]
    assert [e["source"]["component"] for e in ev] == ["node-controller"]
    assert ev[0]["message"] == "Node node-2 status is now: NodeNotReady"

def test_endpoints_stay_with_ready_false(crash):
    _version, tr = crash
    u = tr.first_status("node-2", "Unknown")

    slices = [r for r in tr.writes("endpointslices") if seconds(r["stageTimestamp"]) > u]
    first = slices[0]["responseObject"]
    node2 = [e for e in first["endpoints"] if e["nodeName"] == "node-2"]
    assert node2, "NotReady endpoints are not removed"
    assert all(e["conditions"] == {"ready": False, "serving": False, "terminating": False} for e in node2)
    assert seconds(slices[0]["stageTimestamp"]) <= u + EPS

def test_taints_no_schedule_at_once_no_execute_one_pass_later(crash):
    _version, tr = crash
    u = tr.first_status("node-2", "Unknown")
    (ns_added, _), = tr.taint_times("node-2", "node.kubernetes.io/unreachable", "NoSchedule")
    (x, _), = tr.taint_times("node-2", "node.kubernetes.io/unreachable", "NoExecute")
    assert u <= ns_added <= u + EPS
    assert u + 5 <= x <= u + 5.2 + EPS

def test_pods_deleted_after_300s_and_replaced_elsewhere(crash):
    _version, tr = crash
    (x, _), = tr.taint_times("node-2", "node.kubernetes.io/unreachable", "NoExecute")

    deletes = tr.pod_writes(user=NLC, verb="delete")
    web_on_2 = {p for p in tr.pods_on("node-2") if p.startswith("web-")}
    assert len(web_on_2) == 2
    assert {r["objectRef"]["name"] for r in deletes} == web_on_2
    for r in deletes:
        assert x + 300 <= seconds(r["stageTimestamp"]) <= x + 300 + EPS
        assert r["responseObject"]["metadata"]["deletionTimestamp"]  # graceful: Terminating, not gone
        dt = next(c for c in r["responseObject"]["status"]["conditions"] if c["type"] == "DisruptionTarget")
        assert (dt["reason"], dt["message"]) == ("DeletionByTaintManager",
                                                 "Taint manager: deleting due to NoExecute taint")
    marking = tr.k8s_events("TaintManagerEviction")
    assert len(marking) == len(web_on_2)
    assert all(m["message"].startswith("Marking for deletion Pod default/web-") for m in marking)
    # ReplicaSet replacements are created at once and land on the healthy nodes
    t_del = min(seconds(r["stageTimestamp"]) for r in deletes)
    created = [r for r in tr.pod_writes(verb="create") if r["objectRef"].get("subresource") == "binding"
               and seconds(r["stageTimestamp"]) >= t_del]
    assert len(created) == len(web_on_2)
    assert all(r["responseObject"]["spec"]["nodeName"] != "node-2" for r in created)
    assert all(seconds(r["stageTimestamp"]) <= t_del + EPS for r in created)

def test_old_pods_stay_terminating_and_daemonset_pod_is_never_deleted(crash):
    _version, tr = crash
    on_node_2 = tr.pods_on("node-2")
    web = {p for p in on_node_2 if p.startswith("web-")}
    assert len(web) == 2
    deletes = [r for r in tr.writes("pods") if r["verb"] == "delete"]
    # the eviction deleted node-2's web pods gracefully: they are Terminating ...
    graceful = {r["objectRef"]["name"] for r in deletes
                if r["responseObject"]["metadata"].get("deletionGracePeriodSeconds")}
    assert graceful == web
    # ... and stay so: no kubelet is left to finish them (a delete with grace 0 would remove them)
    removed = {r["objectRef"]["name"] for r in deletes
               if r["responseObject"]["metadata"].get("deletionGracePeriodSeconds") == 0}
    assert not (removed & on_node_2)
    agent = {p for p in tr.pods_on("node-2") if p.startswith("agent-")}
    assert len(agent) == 1
    assert not [r for r in tr.pod_writes(verb="delete") if r["objectRef"]["name"] in agent]

def test_end_to_end_eviction_time_matches_reference(crash):
    version, tr = crash

    first_delete = min(seconds(r["stageTimestamp"]) for r in tr.pod_writes(user=NLC, verb="delete"))
    shift = 50.0 - GRACE[version]
    assert 345 - shift <= first_delete - T <= 367 - shift  # ~5m45s..6m06s after the failure (v1.33)


def test_what_the_version_changes(crash):
    """§7's table: the kubelet's version, the Ready message (". AppArmor enabled" until AppArmor went GA in 1.30),
    and who records the evictions (the taint manager inside the node lifecycle controller until 1.28, the
    taint eviction controller of its own from 1.29). The grace period is checked above, through GRACE."""
    version, tr = crash
    minor = int(version.split(".")[1])
    before = next(obj for t, obj in reversed(tr.node_versions("node-2")) if t < T)
    assert before["status"]["nodeInfo"]["kubeletVersion"] == f"v{version}.0"
    ready = next(c for c in before["status"]["conditions"] if c["type"] == "Ready")
    expected = "kubelet is posting ready status" + (". AppArmor enabled" if minor <= 29 else "")
    assert (ready["status"], ready["message"]) == ("True", expected)
    marking = tr.k8s_events("TaintManagerEviction")
    assert len(marking) == 2
    component = "taint-controller" if minor <= 28 else "taint-eviction-controller"
    assert {m["source"]["component"] for m in marking} == {component}
