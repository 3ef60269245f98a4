"""Every bad scenario field and bad command gets an error that names the field and the problem."""

import pytest

from simulation import CommandError, ScenarioError, Simulation, load_scenario, validate_command
from simulation.cli import main

from .trace import scenario

BAD_FIELDS = [
    ({"name": "Bad Name"}, "name", "lowercase slug"),
    ({"kubernetesVersion": "1.26"}, "kubernetesVersion", "must be one of"),
    ({"kubernetesVersion": 1.3}, "kubernetesVersion", "must be one of"),
    ({"seed": -1}, "seed", ">= 0"),
    ({"seed": "seven"}, "seed", "whole number"),
    ({"duration": "soon"}, "duration", "expected a duration"),
    ({"duration": 0}, "duration", "greater than 0"),
    ({"startTime": "yesterday"}, "startTime", "RFC 3339"),
    ({"startTime": "2026-01-01T00:00:00+99:00"}, "startTime", "the time zone offset +99:00 is out of range"),
    ({"startTime": "2026-13-01T00:00:00Z"}, "startTime", "month must be in 1..12"),
    ({"faults": [{"at": None, "action": "restart-controller-manager"}]}, "faults[0].at", "is required"),
    ({"faults": {}}, "faults", "must be a list"),
    ({"colour": "red"}, "colour", "unknown field"),
    ({"cluster": {"nodes": 6000}}, "cluster.nodes", "at most 5000"),
    ({"cluster": {"nodes": 2, "zones": [{"name": "a", "nodes": 1}]}}, "cluster", "not both"),
    ({"cluster": {"zones": [{"name": "a", "nodes": 1}, {"name": "a", "nodes": 2}]}}, "cluster.zones[1].name",
     "duplicate"),
    ({"cluster": {"zones": [{"name": "a", "nodes": "two"}]}}, "cluster.zones[0].nodes", "whole number"),
    ({"cluster": {"workloads": [{"name": "w", "kind": "Job"}]}}, "cluster.workloads[0].kind",
     "Deployment, DaemonSet or StatefulSet"),
    ({"cluster": {"workloads": [{"name": "w", "replicas": -2}]}}, "cluster.workloads[0].replicas", ">= 0"),
    ({"cluster": {"workloads": [{"name": "w", "kind": "DaemonSet", "replicas": 2}]}}, "cluster.workloads[0].replicas",
     "one pod per node"),
    ({"cluster": {"workloads": [{"name": "w", "tolerations": [{"key": "k", "operator": "Maybe"}]}]}},
     "cluster.workloads[0].tolerations[0].operator", "Exists or Equal"),
    ({"cluster": {"workloads": [{"name": "w", "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule",
                                                                "tolerationSeconds": 5}]}]}},
     "cluster.workloads[0].tolerations[0].tolerationSeconds", "only applies with effect NoExecute"),
    ({"cluster": {"workloads": [{"name": "w", "nodeSelector": {"zone": 3}}]}}, "cluster.workloads[0].nodeSelector.zone",
     "strings"),
    ({"cluster": {"services": [{"name": "s"}]}}, "cluster.services[0].selector", "is required"),
    ({"kubelet": {"nodeLeaseDurationSeconds": 0}}, "kubelet.nodeLeaseDurationSeconds", ">= 1"),
    ({"kubelet": {"nodeStatusUpdateFrequency": "-5s"}}, "kubelet.nodeStatusUpdateFrequency", "negative"),
    ({"kubelet": {"shutdownGracePeriod": "10s", "shutdownGracePeriodCriticalPods": "20s"}},
     "kubelet.shutdownGracePeriodCriticalPods", "must not exceed"),
    ({"controllerManager": {"nodeEvictionRate": "fast"}}, "controllerManager.nodeEvictionRate", "number"),
    ({"controllerManager": {"unhealthyZoneThreshold": 2}}, "controllerManager.unhealthyZoneThreshold", "between"),
    ({"apiServer": {"defaultTolerationSeconds": "yes"}}, "apiServer.defaultTolerationSeconds", "true or false"),
    ({"faults": [{"action": "stop-kubelet", "node": "node-1"}]}, "faults[0].at", "is required"),
    ({"faults": [{"at": "1m", "action": "explode", "node": "node-1"}]}, "faults[0].action", "unknown action"),
    ({"faults": [{"at": "1m", "action": "stop-kubelet", "node": "node-9"}]}, "faults[0].node", "unknown node"),
    ({"faults": [{"at": "1m", "action": "stop-kubelet"}]}, "faults[0].node", "is required"),
    ({"faults": [{"at": "1m", "action": "start-pressure", "node": "node-1", "resource": "cpu"}]}, "faults[0].resource",
     "memory, disk, pid"),
    ({"faults": [{"at": "1m", "action": "delete-node", "node": "node-1", "for": "1m"}]}, "faults[0].for",
     "cannot be reversed"),
    ({"faults": [{"at": "1m", "action": "zone-outage", "zone": "nowhere"}]}, "faults[0].zone", "unknown zone"),
    ({"faults": [{"at": "1m", "action": "slow-apiserver", "latency": "10m"}]}, "faults[0].latency", "at most"),
    ({"faults": [{"at": "2h", "action": "stop-kubelet", "node": "node-1"}]}, "faults[0].at", "at most"),
    ({"faults": [{"at": "1m", "action": "stop-kubelet", "node": "node-1", "colour": 1}]}, "faults[0].colour",
     "unknown field"),
    ({"faults": "often"}, "faults", "must be a list"),
]


@pytest.mark.parametrize(("patch", "path", "words"), BAD_FIELDS, ids=[b[1] + ":" + b[2] for b in BAD_FIELDS])
def test_bad_field_is_named(patch, path, words):
    doc = scenario("1.33")
    for key, value in patch.items():
        if key == "cluster":
            doc["cluster"] = {k: v for k, v in doc["cluster"].items() if k not in ("nodes",)} | value
            if "zones" in value and "nodes" not in value:
                doc["cluster"].pop("nodes", None)
        else:
            doc[key] = value
    with pytest.raises(ScenarioError) as info:
        load_scenario(doc)
    assert any(p == path and words in m for p, m in info.value.errors), info.value.errors
    assert path in str(info.value)


def test_all_errors_reported_at_once():
    with pytest.raises(ScenarioError) as info:
        load_scenario({"name": "x", "seed": "a", "duration": "never", "kubelet": {"nodeLeaseDurationSeconds": -1}})
    assert {p for p, _m in info.value.errors} == {"seed", "duration", "kubelet.nodeLeaseDurationSeconds"}


@pytest.mark.parametrize("source", ["- just\n- a list", "name: [unclosed", "", 42])
def test_not_a_document(source):
    with pytest.raises(ScenarioError):
        load_scenario(source)


def test_missing_name():
    with pytest.raises(ScenarioError, match="name: is required"):
        load_scenario({"duration": "1m"})


def test_defaults_fill_in():
    sc = load_scenario({"name": "tiny"})
    assert sc.node_count == 3 and sc.version == "1.33"
    assert sc.document["controllerManager"]["nodeMonitorGracePeriod"] == "50s"
    sc = load_scenario({"name": "old", "kubernetesVersion": "1.31"})
    assert sc.document["controllerManager"]["nodeMonitorGracePeriod"] == "40s"
    # pkg/kubelet/apis/config/v1beta1/defaults.go: an explicit update frequency without a report
    # frequency makes them equal
    sc = load_scenario({"name": "k", "kubelet": {"nodeStatusUpdateFrequency": "20s"}})
    assert sc.document["kubelet"]["nodeStatusReportFrequency"] == "20s"


BAD_COMMANDS = [
    ({}, "action: is required"),
    ({"action": "reboot-everything"}, "unknown action 'reboot-everything'"),
    ({"action": "stop-kubelet"}, "node: is required"),
    ({"action": "stop-kubelet", "node": "node-42"}, "unknown node 'node-42'"),
    ({"action": "stop-kubelet", "node": 7}, "node: must be a node name"),
    ({"action": "start-pressure", "node": "node-1", "resource": "gpu"}, "resource: must be one of memory, disk, pid"),
    ({"action": "slow-apiserver", "latency": "fast"}, "latency: expected a duration"),
    ({"action": "create-node", "name": "node-1"}, "name: node 'node-1' already exists"),
    ({"action": "create-node", "name": "Node X"}, "name: must be a lowercase node name"),
    ({"action": "stop-kubelet", "node": "node-1", "for": "soon"}, "for: expected a duration"),
    ({"action": "restart-controller-manager", "node": "node-1"}, "node: unknown field"),
    ("stop-kubelet", "must be an object"),
]


@pytest.mark.parametrize(("cmd", "words"), BAD_COMMANDS, ids=[w for _c, w in BAD_COMMANDS])
def test_bad_command_is_refused_with_a_clear_message(cmd, words):
    sc = load_scenario(scenario("1.33"))
    with pytest.raises(CommandError) as info:
        validate_command(cmd, sc)
    assert words in str(info.value)
    sim = Simulation(sc)
    with pytest.raises(CommandError) as info:
        sim.schedule_command(cmd, at=1.0)
    assert words in str(info.value)


def test_cli_reports_bad_file(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\ncluster: {nodes: many}\n")
    assert main(["validate", str(bad)]) == 2
    assert "cluster.nodes: must be a whole number" in capsys.readouterr().err
    assert main(["run", "no-such-scenario"]) == 2
    assert "no file and no built-in scenario named 'no-such-scenario'" in capsys.readouterr().err


def test_cli_timeline_reads_like_reference_6_1(capsys):
    assert main(["run", "kubelet-crash"]) == 0
    lines = capsys.readouterr().out.splitlines()
    steps = ["FAULT      stop-kubelet node-2", "node-2     Ready True -> Unknown",
             "nlc.mark-unknown: Ready=Unknown (last Lease renewTime",
             "nlc.mark-pods-not-ready: 3 pods Ready=False", "taint +node.kubernetes.io/unreachable:NoSchedule",
             "ready=false serving=false terminating=false", "taint +node.kubernetes.io/unreachable:NoExecute",
             ": delete at +300s", "DisruptionTarget=True (DeletionByTaintManager)",
             "Terminating (DELETE)  [taint-eviction-controller]",
             "created  [replicaset-controller]", "scheduled  [kube-scheduler]"]
    at = 0
    for step in steps:
        found = next((i for i in range(at, len(lines)) if step in lines[i]), None)
        assert found is not None, f"{step!r} missing after line {at}:\n" + "\n".join(lines[at:at + 15])
        at = found
