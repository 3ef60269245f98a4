"""`python -m simulation compare`: one scenario twice with one seed, each side with its own settings."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from simulation import Simulation
from simulation.builtins import get_builtin
from simulation.cli import main
from simulation.comparison import KeyTransitions, Pairing, compare, rows, side_scenarios
from simulation.scenario import ScenarioError


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out, err


def compare_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out, err = run_cli(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def test_131_against_133_moves_only_node_2s_chain_by_the_grace_periods_10_s(capsys):
    # docs/kubernetes-node-health.md §1: --node-monitor-grace-period is 40 s up to 1.31, 50 s since 1.32
    result = compare_json(capsys, "kubelet-crash", "--a", "kubernetesVersion=1.31", "--b", "kubernetesVersion=1.33")
    assert result["a"]["document"]["controllerManager"]["nodeMonitorGracePeriod"] == "40s"
    assert result["b"]["document"]["controllerManager"]["nodeMonitorGracePeriod"] == "50s"
    unknown = [row for row in result["rows"] if row["label"] == "node-2 Ready=Unknown"]
    assert len(unknown) == 1 and unknown[0]["differs"]
    assert unknown[0]["b"] - unknown[0]["a"] == pytest.approx(10, abs=0.5)
    eviction = next(row for row in result["rows"] if row["kind"] == "pods-terminating")
    before = [row for row in result["differences"] if min(row["a"], row["b"]) < min(eviction["a"], eviction["b"])]
    # before the eviction only node-2's own chain differs (Unknown, its pods NotReady, its two taints), each by
    # the same 10 s; nothing about another node, no zone state, no fault
    assert {row["label"] for row in before} == {
        "node-2 Ready=Unknown", "node-2: pods NotReady",
        "node-2 taint +node.kubernetes.io/unreachable:NoSchedule",
        "node-2 taint +node.kubernetes.io/unreachable:NoExecute"}
    assert all(row["b"] - row["a"] == pytest.approx(10, abs=0.5) for row in before)
    same = [row for row in result["rows"] if not row["differs"]]
    assert [row["label"] for row in same] == ["fault: stop-kubelet node-2"]


def test_the_text_shows_both_columns_and_marks_the_lines_that_differ(capsys):
    code, out, _err = run_cli(capsys, "kubelet-crash", "--a", "kubernetesVersion=1.31",
                              "--b", "kubernetesVersion=1.33", "--until", "3m")
    assert code == 0
    lines = out.splitlines()
    unknown = next(line for line in lines if "node-2 Ready=Unknown" in line)
    assert unknown.startswith("*")
    times = [float(word.rstrip("s")) for word in unknown[1:].split()[:2]]
    assert times[1] - times[0] == pytest.approx(10, abs=0.5)
    fault = next(line for line in lines if "fault: stop-kubelet node-2" in line)
    assert fault.startswith(" ") and fault.split()[0] == fault.split()[1] == "60.000s"
    assert not any("Terminating" in line for line in lines)  # --until 3m: before the eviction
    assert any(line.startswith("# A (kubernetesVersion=1.31) Kubernetes 1.31, nodeMonitorGracePeriod 40s")
               for line in lines)


def test_two_settings_that_change_nothing_give_no_difference(capsys):
    # 1.32 and 1.33 share every default the chain depends on (simulation/profiles.py), and a grace period
    # written out as the default is the default
    result = compare_json(capsys, "kubelet-crash", "--a", "kubernetesVersion=1.32",
                          "--b", "controllerManager.nodeMonitorGracePeriod=50s")
    assert result["rows"] and result["differences"] == []


def test_a_shorter_toleration_evicts_sooner_and_only_that(capsys):
    result = compare_json(capsys, "kubelet-crash", "--a", "workloads.web.tolerationSeconds=30")
    assert [row["label"] for row in result["differences"]] == ["node-2: pods Terminating"]
    row = result["differences"][0]
    assert row["b"] - row["a"] == pytest.approx(270, abs=1)  # 300 s against 30 s after the NoExecute taint


def test_a_side_without_the_eviction_says_never(capsys):
    result = compare_json(capsys, "kubelet-crash", "--a", "apiServer.defaultUnreachableTolerationSeconds=3600")
    row = next(row for row in result["differences"] if row["kind"] == "pods-terminating")
    assert row["a"] is None and row["b"] is not None


def test_zone_sizes(capsys):
    result = compare_json(capsys, "zone-outage-small-zones", "--a", "zones.zone-a.nodes=4", "--until", "2m")
    assert result["a"]["document"]["cluster"]["zones"][0] == {"name": "zone-a", "nodes": 4}


@pytest.mark.parametrize(("args", "field"), [
    (["--a", "controllerManager.nodeMonitorGracePeriod=0s"], "a.controllerManager.nodeMonitorGracePeriod"),
    (["--b", "controllerManager.nodeMonitorGracePerid=20s"], "b.controllerManager.nodeMonitorGracePerid"),
    (["--b", "kubernetesVersion=1.20"], "b.kubernetesVersion"),
    (["--a", "workloads.web.tolerationSeconds=-1"], "a.workloads.web.tolerationSeconds"),
    (["--a", "workloads.nope.tolerationSeconds=30"], "a.workloads.nope.tolerationSeconds"),
    (["--a", "workloads.web.tolerations=[{effect: NoExecute, tolerationSeconds: x}]"],
     "a.cluster.workloads[0].tolerations[0]"),
    (["--a", "zones.nope.nodes=3"], "a.zones.nope.nodes"),
    (["--a", "nodeMonitorGracePeriod=20s"], "a.nodeMonitorGracePeriod"),
    (["--b", "kubelet"], "b: expected KEY=VALUE"),
])
def test_a_bad_setting_is_refused_naming_its_side_and_field(capsys, args, field):
    code, out, err = run_cli(capsys, "kubelet-crash", *args)
    assert code == 2 and out == ""
    assert field in err


def test_both_sides_errors_at_once():
    document = get_builtin("kubelet-crash").document
    with pytest.raises(ScenarioError) as caught:
        side_scenarios(document, {"kubelet.nodeLeaseDurationSeconds": 0}, {"kubernetesVersion": "2.0"})
    assert [path for path, _ in caught.value.errors] == ["a.kubelet.nodeLeaseDurationSeconds", "b.kubernetesVersion"]


def test_a_grace_period_the_document_sets_stays_with_a_new_version():
    document = {**get_builtin("kubelet-crash").document}
    document["controllerManager"] = {**document["controllerManager"], "nodeMonitorGracePeriod": "20s"}
    a, b = side_scenarios(document, {"kubernetesVersion": "1.31"}, {})
    assert a.document["controllerManager"]["nodeMonitorGracePeriod"] == "20s"
    assert compare(a, b, 150).differences == []


def test_the_module_runs_as_a_program():
    proc = subprocess.run([sys.executable, "-m", "simulation", "compare", "kubelet-crash", "--a",
                           "kubernetesVersion=1.31", "--until", "2m"], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "node-2 Ready=Unknown" in proc.stdout


def test_a_live_pairing_sends_only_the_rows_that_changed_and_ends_with_the_rows_of_a_whole_comparison():
    # a zone outage: every node of the zone Unknown 10 s later on B (grace 40 s against 50 s), a row each
    a, b = side_scenarios(get_builtin("zone-outage-small-zones").document, {"kubernetesVersion": "1.31"},
                          {"kubernetesVersion": "1.33"})
    sims = [Simulation(scenario, seed=a.seed) for scenario in (a, b)]
    logs = [KeyTransitions(sim.startup_done_at) for sim in sims]
    pairing = Pairing()
    updates = []
    for t in range(1, 601):
        for sim, log in zip(sims, logs, strict=True):
            log.feed(sim.run_until(float(t)))
        updates.append(pairing.update(*logs))
    whole = rows(logs[0].transitions, logs[1].transitions)
    assert len(whole) > 20 and any(row.differs for row in whole)
    assert [row.as_dict() for _, row in pairing.ordered()] == [row.as_dict() for row in whole]
    # each second's update holds the rows that second changed, not every row so far
    assert sum(len(update) for update in updates) < 2 * len(whole)
    assert max(len(update) for update in updates) < len(whole) / 2
    # a row keeps its name from the update that made it to the last one
    named = {name for update in updates for name in update}
    assert named == set(pairing.rows)
