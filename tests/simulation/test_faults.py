"""The rest of the fault vocabulary and workload features, each observed as a user would."""

import ipaddress
import json

import pytest

from simulation import builtin_scenarios
from simulation.cli import main

from .trace import EPS, NLC, Trace, scenario, seconds

UNREACHABLE = "node.kubernetes.io/unreachable"


def test_custom_tolerations_first_match_minimum_and_forever():
    """4.2: first matching toleration per taint; minimum of the picked ones; none -> forever."""
    trap = [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 600},
            {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]
    wl = [
        {"name": "short", "replicas": 1, "nodeSelector": {"kubernetes.io/hostname": "node-2"},
         "tolerations": [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}]},
        {"name": "trap", "replicas": 1, "nodeSelector": {"kubernetes.io/hostname": "node-2"}, "tolerations": trap},
        {"name": "forever", "replicas": 1, "nodeSelector": {"kubernetes.io/hostname": "node-2"},
         "tolerations": [{"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"}]},
    ]
    tr = Trace.run(scenario("1.33", workloads=wl, services=False,
                            faults=[{"at": "60s", "action": "stop-kubelet", "node": "node-2"}]), until=900)
    (x, _), = tr.taint_times("node-2", UNREACHABLE, "NoExecute")
    deletes = {r["objectRef"]["name"].split("-")[0]: seconds(r["stageTimestamp"])
               for r in tr.pod_writes(user=NLC, verb="delete")}
    assert deletes["short"] == pytest.approx(x + 30, abs=EPS)
    assert deletes["trap"] == pytest.approx(x + 600, abs=EPS)  # not 60: the first match wins
    assert "forever" not in deletes
    # the short pod's replacement cannot go anywhere: its nodeSelector pins node-2 (tainted)
    failed = [e for e in tr.k8s_events("FailedScheduling") if e["involvedObject"]["name"].startswith("short-")]
    assert failed and "had untolerated taint {node.kubernetes.io/unreachable: }" in failed[0]["message"]


def test_without_default_toleration_seconds_pods_go_at_once():
    tr = Trace.run(scenario("1.33", apiServer={"defaultTolerationSeconds": False},
                            faults=[{"at": "60s", "action": "stop-kubelet", "node": "node-2"}]), until=200)
    (x, _), = tr.taint_times("node-2", UNREACHABLE, "NoExecute")
    deletes = [seconds(r["stageTimestamp"]) for r in tr.pod_writes(user=NLC, verb="delete")]
    assert deletes and all(x <= t <= x + EPS for t in deletes)


def test_admission_adds_default_tolerations():
    tr = Trace.run(scenario("1.33"), until=30)
    pod = next(r["responseObject"] for r in tr.pod_writes(verb="create") if r["objectRef"]["name"].startswith("web-"))
    assert pod["spec"]["tolerations"] == [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]
    agent = next(r["responseObject"] for r in tr.pod_writes(verb="create")
                 if r["objectRef"]["name"].startswith("agent-"))
    assert {"key": UNREACHABLE, "operator": "Exists", "effect": "NoExecute"} in agent["spec"]["tolerations"]


def test_cordon_adds_unschedulable_taint_and_status():
    tr = Trace.run(scenario("1.33", faults=[{"at": "30s", "action": "cordon", "node": "node-1", "for": "60s"}]),
                   until=120)
    (added, removed), = tr.taint_times("node-1", "node.kubernetes.io/unschedulable", "NoSchedule")
    assert 30 <= added <= 30 + EPS and 90 <= removed <= 90 + EPS


def test_instance_terminated_node_deleted_lease_collected_pods_gc():
    tr = Trace.run(scenario("1.33", faults=[{"at": "60s", "action": "delete-node", "node": "node-2"}]), until=400)
    u = tr.first_status("node-2", "Unknown")
    deleted = [r for r in tr.writes("nodes", "node-2") if r["verb"] == "delete"]
    assert len(deleted) == 1
    t_del = seconds(deleted[0]["stageTimestamp"])
    assert u <= t_del <= u + 5 + EPS
    assert deleted[0]["user"]["username"].endswith("cloud-node-lifecycle-controller")
    lease_del = [r for r in tr.writes("leases", "node-2") if r["verb"] == "delete"]
    assert lease_del and lease_del[0]["user"]["username"].endswith("generic-garbage-collector")
    gc = [r for r in tr.pod_writes(verb="delete") if r["user"]["username"].endswith("pod-garbage-collector")]
    orphans = tr.pods_on("node-2") - {
        r["objectRef"]["name"] for r in tr.pod_writes(verb="delete")
        if r["responseObject"]["metadata"].get("deletionGracePeriodSeconds") == 0
        and not r["user"]["username"].endswith("pod-garbage-collector")}
    assert len(orphans) == 3  # node-2's two web pods and its DaemonSet pod, none deleted by anyone else
    assert sorted(r["objectRef"]["name"] for r in gc) == sorted(orphans)
    assert all(t_del + 40 <= seconds(r["stageTimestamp"]) <= t_del + 60 + EPS for r in gc)


def test_slow_apiserver_late_renewals_then_timeouts():
    """Below the client's 10 s timeout renewals land late; above it they are dropped and the node goes Unknown."""
    tr = Trace.run(scenario("1.33", faults=[
        {"at": "60s", "action": "slow-apiserver", "latency": "8s", "node": "node-2", "for": "60s"},
        {"at": "150s", "action": "slow-apiserver", "latency": "15s", "node": "node-2", "for": "120s"}]), until=400)
    late = [r for r in tr.writes("leases", "node-2") if 60 < seconds(r["requestReceivedTimestamp"]) < 120]
    assert late and all(
        seconds(r["stageTimestamp"]) - seconds(r["requestReceivedTimestamp"]) == pytest.approx(8, abs=0.01)
        for r in late)
    assert tr.first_status("node-2", "Unknown", after=60) > 150  # late renewals still count
    failed = [e for e in tr.events if e["type"] == "request-failed" and e["node"] == "node-2"]
    assert failed and "context deadline exceeded" in failed[0]["message"]
    assert not [r for r in tr.writes("leases", "node-2") if 150 < seconds(r["stageTimestamp"]) < 270]
    u = tr.first_status("node-2", "Unknown", after=150)
    assert u is not None and u < 270
    assert min(x for x in tr.renewals("node-2") if x > 270) <= 270 + 10.4 + EPS
    assert tr.first_status("node-2", "True", after=u) is not None


def test_kubelet_restores_pod_ready_after_every_not_ready_episode():
    """Each time the NLC marks pods NotReady and the node comes back, the kubelet re-asserts Ready."""
    tr = Trace.run(scenario("1.33", faults=[{"at": "60s", "action": "partition", "node": "node-2", "for": "70s"},
                                            {"at": "250s", "action": "partition", "node": "node-2", "for": "70s"}]),
                   until=400)
    pods = tr.pods_on("node-2")
    marks = tr.pod_writes(user=NLC, verb="update", subresource="status")
    restores = [r for r in tr.pod_writes(user="system:node:node-2", subresource="status")
                if seconds(r["stageTimestamp"]) > 130
                and next(c for c in r["responseObject"]["status"]["conditions"]
                         if c["type"] == "Ready")["status"] == "True"]
    assert {seconds(r["stageTimestamp"]) > 250 for r in marks} == {False, True}  # marked in both episodes
    assert {r["objectRef"]["name"] for r in restores if seconds(r["stageTimestamp"]) > 320} == pods


def test_pressure_rejects_the_replacement_pod_at_admission():
    tr = Trace.run(scenario("1.33", faults=[{"at": "60s", "action": "start-pressure", "node": "node-1",
                                            "resource": "memory"}]), until=120)
    rejected = [r for r in tr.pod_writes(user="system:node:node-1", subresource="status")
                if r["responseObject"]["status"].get("message") == "The node had condition: [MemoryPressure]. "]
    assert len(rejected) >= 10  # the ReplicaSet's replacements keep coming and are refused
    for r in rejected:
        assert r["responseObject"]["status"]["phase"] == "Failed"
        assert r["responseObject"]["status"]["reason"] == "Evicted"
    running = [r for r in tr.pod_writes(subresource="status") if seconds(r["stageTimestamp"]) > 61
               and r["responseObject"]["spec"].get("nodeName") == "node-1"
               and r["responseObject"]["status"]["phase"] == "Running"]
    assert not running  # nothing new starts on the pressured node


def test_second_instance_termination_is_handled_too():
    tr = Trace.run(scenario("1.33", nodes=4, faults=[{"at": "60s", "action": "delete-node", "node": "node-3"},
                                                     {"at": "200s", "action": "delete-node", "node": "node-4"}]),
                   until=400)
    for n in ("node-3", "node-4"):
        assert [r for r in tr.writes("nodes", n) if r["verb"] == "delete"]


def test_controller_manager_restart_postpones_eviction():
    """3.9: a restart forgets the countdowns; they start again when the new leader sees the taint."""
    tr = Trace.run(scenario("1.33", faults=[{"at": "60s", "action": "stop-kubelet", "node": "node-2"},
                                            {"at": "250s", "action": "restart-controller-manager"}]), until=900)
    spans = tr.taint_times("node-2", UNREACHABLE, "NoExecute")
    assert len(spans) == 2  # removed by the new leader's first look, then re-added through the queue
    (x1, removed), (x2, _) = spans
    assert 265 <= removed <= 266 + EPS
    deletes = [seconds(r["stageTimestamp"]) for r in tr.pod_writes(user=NLC, verb="delete")]
    assert deletes and all(t >= x2 + 300 - EPS for t in deletes)
    assert x1 + 300 < min(deletes)


def test_partition_heals_and_lease_returns_quickly():
    tr = Trace.run(scenario("1.33", faults=[{"at": "60s", "action": "partition", "node": "node-2", "for": "120s"}]),
                   until=300)
    assert tr.first_status("node-2", "Unknown") is not None
    back = min(x for x in tr.renewals("node-2") if x > 180)
    assert back <= 180 + 10.4 + 1
    assert tr.first_status("node-2", "True", after=180) <= 180 + 10.4 + 13 + EPS


def test_zone_outage_partitions_the_zone_and_heal_returns_it():
    zones = [{"name": "zone-a", "nodes": 2}, {"name": "zone-b", "nodes": 2}]
    tr = Trace.run(scenario("1.33", zones=zones, faults=[{"at": "60s", "action": "zone-outage", "zone": "zone-b",
                                                          "for": "100s"}]), until=300)
    for n in ("node-3", "node-4"):
        assert tr.first_status(n, "Unknown") is not None
        assert tr.first_status(n, "True", after=160) is not None
    for n in ("node-1", "node-2"):
        assert tr.first_status(n, "Unknown") is None


def test_pressure_kinds_have_their_own_taints():
    for resource, key, ctype in (("disk", "node.kubernetes.io/disk-pressure", "DiskPressure"),
                                 ("pid", "node.kubernetes.io/pid-pressure", "PIDPressure")):
        tr = Trace.run(scenario("1.33", faults=[{"at": "60s", "action": "start-pressure", "node": "node-1",
                                                "resource": resource}]), until=120)
        assert tr.first_status("node-1", "True", ctype=ctype) <= 60 + 20.4 + EPS
        assert tr.taint_times("node-1", key, "NoSchedule")


@pytest.mark.parametrize("scenario_obj", builtin_scenarios(), ids=lambda s: s.name)
def test_every_builtin_runs_from_the_cli_with_an_audit_log(scenario_obj, tmp_path, capsys):
    out = tmp_path / "audit.jsonl"
    assert main(["run", scenario_obj.name, "--audit-log", str(out)]) == 0
    lines = out.read_text().splitlines()
    assert lines
    first = json.loads(lines[0])
    assert first["apiVersion"] == "audit.k8s.io/v1" and first["stage"] == "ResponseComplete"
    printed = capsys.readouterr().out
    assert printed.startswith(f"# {scenario_obj.name}:") and "# done at" in printed


def test_pod_ips_are_addresses_in_the_node_pod_cidr():
    tr = Trace.run(scenario("1.33"), until=40)
    ips = {}
    for r in tr.pod_writes(subresource="status"):
        status, spec = r["responseObject"]["status"], r["responseObject"]["spec"]
        if status.get("podIP"):
            ips[r["objectRef"]["name"]] = (status["podIP"], spec["nodeName"])
    assert ips and len({ip for ip, _n in ips.values()}) == len(ips)
    cidrs = {r["objectRef"]["name"]: r["responseObject"]["spec"]["podCIDR"]
             for r in tr.writes("nodes") if r["verb"] == "create"}
    for ip, node in ips.values():
        octets = ip.split(".")
        assert len(octets) == 4 and all(o.isdigit() for o in octets)
        assert ipaddress.ip_address(ip) in ipaddress.ip_network(cidrs[node])


def test_kubelet_retries_pod_status_until_the_api_answers():
    """2.5: the status manager re-checks every 10 s, so a restore that timed out is sent again."""
    tr = Trace.run(scenario("1.33", faults=[{"at": "60s", "action": "slow-apiserver", "latency": "15s",
                                             "for": "240s"}]), until=400)
    assert tr.pod_writes(user=NLC, verb="update", subresource="status"), "pods were marked NotReady"
    last_ready: dict[str, bool] = {}
    for e in tr.events:
        if e["type"] == "transition" and e["kind"] == "pod-ready":
            last_ready[e["pod"]] = e["to"]
    assert last_ready and all(last_ready.values()), {p: r for p, r in last_ready.items() if not r}


def test_a_partitioned_kubelet_does_not_see_the_controllers_writes():
    """Its Node informer is cut off too: no status post is attempted before the report is due."""
    tr = Trace.run(scenario("1.33", faults=[{"at": "60s", "action": "partition", "node": "node-2", "for": "200s"}]),
                   until=300)
    assert tr.first_status("node-2", "Unknown") is not None
    failed = [e for e in tr.events if e["type"] == "request-failed" and e["component"] == "kubelet-status"]
    assert not failed
