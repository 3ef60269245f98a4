"""A StatefulSet on a node that does not come back: the three built-ins and their variants, read back
from the run's events. Every number asserted is one the Kubernetes source gives (cited per test)."""

from __future__ import annotations

import copy
from functools import cache
from typing import Any

import pytest

from simulation import CommandError, Simulation, get_builtin, load_scenario
from simulation.scenario import ScenarioError

POWER_OFF = 60.0
ACT = 480.0  # the trainer acts at 8 min
TICK = 0.1  # attach/detach reconciler loop period (DefaultTimerConfig.ReconcilerLoopPeriod)
MAX_WAIT = 360.0  # DefaultTimerConfig.ReconcilerMaxWaitForUnmountDuration
PODGC_PERIOD = 20.0  # gcCheckPeriod, pkg/controller/podgc/gc_controller.go
STATUS_SYNC = 10.4  # nodeStatusUpdateFrequency 10 s + 4 % jitter: when volumesInUse is posted


def run(doc: dict[str, Any], until: float | None = None) -> tuple[Simulation, list[dict[str, Any]]]:
    scenario = load_scenario(doc)
    sim = Simulation(scenario)
    events = [e.to_dict() for e in sim.run_until(until if until is not None else scenario.duration)]
    return sim, events


@cache
def builtin_run(name: str) -> tuple[Simulation, tuple[dict[str, Any], ...]]:
    scenario = get_builtin(name)
    assert scenario is not None
    sim, events = run(scenario.document)
    return sim, tuple(events)


def decisions(events: Any, rule: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "decision" and e["rule"] == rule]


def writes(events: Any, resource: str, verb: str | None = None, name: str | None = None,
           subresource: str | None = None) -> list[dict[str, Any]]:
    """Successful writes; `subresource` None: any (pods/binding, nodes/status, ...)."""
    return [e for e in events if e["type"] == "write" and e["resource"] == resource and e["code"] < 300
            and (verb is None or e["verb"] == verb) and (name is None or e["name"] == name)
            and (subresource is None or e["subresource"] == subresource)]


def pod_on(sim: Simulation, node: str, owner: str = "db") -> str:
    return next(p.metadata.name for p in sim.pods_on_node(node).values() if p.owner_name == owner)


def doc_of(name: str, **changes: Any) -> dict[str, Any]:
    scenario = get_builtin(name)
    assert scenario is not None
    doc = copy.deepcopy(scenario.document)
    doc.update(changes)
    return doc


def test_node_lost_the_stuck_pod_keeps_its_name_and_its_volume_for_the_whole_run():
    """stateful_set_control.go: a Terminating pod's ordinal counts as created, so no second db-1;
    attachdetach/util/util.go + pkg/volume/util IsPodTerminated: a deleted pod whose container still
    'runs' stays in the desired state, so its volume is never detached."""
    sim, events = builtin_run("statefulset-node-lost")
    stuck = pod_on(sim, "node-2")
    pod = sim.api.current("pods", stuck, "default")
    assert pod is not None and pod.metadata.deletion_timestamp is not None and pod.node_name == "node-2"
    creates = writes(events, "pods", "create", stuck, subresource="")
    assert len(creates) == 1 and creates[0]["t"] < POWER_OFF  # never created again
    waited = decisions(events, "statefulset.wait-same-name")
    assert [d["pod"] for d in waited] == [stuck]
    # the Deployment's pod was replaced, on another node
    web = [e for e in writes(events, "pods", "create", subresource="")
           if e["name"].startswith("web-") and e["t"] > POWER_OFF]
    assert len(web) == 1
    # the volume: still attached to node-2, still reported there, no detach of any kind
    claim = sim.api.current("persistentvolumeclaims", f"data-{stuck}", "default")
    pv = sim.api.current("persistentvolumes", claim.volume_name)
    node = sim.api.current("nodes", "node-2")
    assert pv.unique_name in node.volumes_attached and pv.unique_name in node.volumes_in_use
    attachments = [va for va in sim.api.store["volumeattachments"].values()
                   if va.persistent_volume_name == pv.metadata.name]
    assert [(va.node_name, va.attached) for va in attachments] == [("node-2", True)]
    assert not [e for e in events if e["type"] == "decision" and e["rule"] in (
        "attachdetach.detach", "attachdetach.wait-unmount", "attachdetach.force-detach-timeout",
        "attachdetach.force-detach-out-of-service")]
    statefulset = sim.api.current("statefulsets", "db", "default")
    assert (statefulset.status_replicas, statefulset.ready_replicas) == (3, 2)


def test_force_delete_replacement_at_once_multi_attach_then_force_detach_after_six_minutes():
    """reconciler.go: the detach is first wanted in the pass after the pod left the desired state;
    force detach in the first pass with elapsed > maxWaitForUnmountDuration on a not-Ready node;
    reportMultiAttachError's message for a volume no pod on the other node uses."""
    sim, events = builtin_run("statefulset-force-delete")
    (removed,) = [e for e in writes(events, "pods", "delete", "db-1") if e["user"] == "kubernetes-admin"]
    assert removed["t"] == ACT and removed["removed"]
    (created,) = [e for e in writes(events, "pods", "create", "db-1", subresource="") if e["t"] > POWER_OFF]
    assert ACT < created["t"] <= ACT + 0.01  # the watch delivers the delete after 5 ms, then the sync
    (wait,) = decisions(events, "attachdetach.wait-unmount")
    requested = wait["inputs"]["detachRequestedAt"]
    assert ACT < requested <= ACT + TICK + 1e-9 and wait["node"] == "node-2"
    assert wait["inputs"]["mountedByNode"] and not wait["inputs"]["nodeReady"]
    (multi,) = decisions(events, "attachdetach.multi-attach")
    pv = multi["inputs"]["persistentVolume"]
    (warning,) = [e for e in writes(events, "events", "create") if e["object"]["reason"] == "FailedAttachVolume"]
    assert warning["object"]["type"] == "Warning" and warning["object"]["involvedObject"]["name"] == "db-1"
    assert warning["object"]["message"] == (f'Multi-Attach error for volume "{pv}" Volume is already exclusively '
                                            "attached to one node and can't be attached to another")
    (force,) = decisions(events, "attachdetach.force-detach-timeout")
    assert force["t"] == pytest.approx(requested + MAX_WAIT + TICK)  # elapsed > 6 min, on the 100 ms grid
    new_node = sim.api.current("pods", "db-1", "default").node_name
    assert new_node != "node-2"
    (attach,) = [d for d in decisions(events, "attachdetach.attach") if d["t"] > ACT]
    assert attach["node"] == new_node and force["t"] < attach["t"] <= force["t"] + 3
    running = [e for e in events if e["type"] == "transition" and e["kind"] == "pod-phase" and e["pod"] == "db-1"
               and e["to"] == "Running" and e["t"] > ACT]
    assert running and attach["t"] < running[0]["t"] <= attach["t"] + 2 + STATUS_SYNC + 2
    assert "node-2" not in [va.node_name for va in sim.api.store["volumeattachments"].values()
                            if va.persistent_volume_name == pv]


def test_out_of_service_taint_podgc_deletes_at_its_next_pass_and_the_volume_is_detached_at_once():
    """gc_controller.go gcTerminating (20 s gcCheckPeriod; not Ready + out-of-service: phase Failed, grace 0);
    reconciler.go: hasOutOfServiceTaint skips the wait for the unmount."""
    sim, events = builtin_run("non-graceful-shutdown")
    gc = decisions(events, "podgc.terminating-out-of-service")
    assert {d["pod"] for d in gc} >= {"db-1"} and all(d["node"] == "node-2" for d in gc)
    first_tick_after_taint = (ACT // PODGC_PERIOD + 1) * PODGC_PERIOD  # the taint reaches the informer after 5 ms
    assert all(d["t"] == first_tick_after_taint for d in gc)
    failed = [e for e in writes(events, "pods", "patch", "db-1") if e["user"].endswith("pod-garbage-collector")]
    assert failed and failed[0]["object"]["status"]["phase"] == "Failed"
    (detach,) = decisions(events, "attachdetach.force-detach-out-of-service")
    assert first_tick_after_taint < detach["t"] <= first_tick_after_taint + TICK + 0.01
    assert not decisions(events, "attachdetach.multi-attach")
    assert not decisions(events, "attachdetach.wait-unmount")
    running = [e for e in events if e["type"] == "transition" and e["kind"] == "pod-phase" and e["pod"] == "db-1"
               and e["to"] == "Running" and e["t"] > ACT]
    assert running and running[0]["t"] - first_tick_after_taint < 2 + 1 + STATUS_SYNC + 2  # within seconds


def test_containers_start_only_after_the_volume_is_reported_in_use_attached_and_mounted():
    """volumemanager: VerifyControllerAttachedVolume needs ReportedInUse and the node's volumesAttached."""
    sim, events = builtin_run("statefulset-node-lost")
    for mount in decisions(events, "kubelet.volume-mount"):
        node, pod = mount["node"], mount["pod"]
        in_use = [e for e in writes(events, "nodes", "patch", node)
                  if e["user"] == f"system:node:{node}" and e["object"]["status"].get("volumesInUse")]
        attached = [e for e in writes(events, "nodes", "patch", node)
                    if e["user"].endswith("attachdetach-controller") and e["object"]["status"].get("volumesAttached")]
        assert in_use and attached and in_use[0]["t"] < mount["t"] and attached[0]["t"] < mount["t"]
        running = [e for e in events if e["type"] == "transition" and e["kind"] == "pod-phase" and e["pod"] == pod
                   and e["to"] == "Running"]
        assert running[0]["t"] > mount["t"]
    # OrderedReady: each ordinal is created only after the previous one is Running and Ready
    created = {d["pod"]: d["t"] for d in decisions(events, "statefulset.create-pod")}
    ready = {e["pod"]: e["t"] for e in events if e["type"] == "transition" and e["kind"] == "pod-ready" and e["to"]
             and e["pod"].startswith("db-")}
    assert ready["db-0"] < created["db-1"] and ready["db-1"] < created["db-2"]


def test_parallel_creates_every_ordinal_at_once():
    doc = doc_of("statefulset-node-lost", faults=[])
    doc["cluster"]["workloads"][0]["podManagementPolicy"] = "Parallel"
    _sim, events = run(doc, until=40)
    created = [d["t"] for d in decisions(events, "statefulset.create-pod")]
    assert len(created) == 3 and max(created) - min(created) < 0.001


def test_disable_force_detach_on_timeout_keeps_the_volume_attached():
    """--disable-force-detach-on-timeout (1.30+, kubernetes#120344): no force detach after 6 min."""
    doc = doc_of("statefulset-force-delete", kubernetesVersion="1.30")
    doc["controllerManager"]["disableForceDetachOnTimeout"] = True
    _sim, events = run(doc)
    assert decisions(events, "attachdetach.wait-unmount")
    assert not decisions(events, "attachdetach.force-detach-timeout")
    assert not [e for e in events if e["type"] == "transition" and e["kind"] == "pod-phase" and e["pod"] == "db-1"
                and e["to"] == "Running" and e["t"] > ACT]


@pytest.mark.parametrize("version", ["1.27", "1.29"])
def test_the_flag_does_not_exist_before_1_30(version):
    doc = doc_of("statefulset-force-delete", kubernetesVersion=version)
    doc["controllerManager"]["disableForceDetachOnTimeout"] = True
    with pytest.raises(ScenarioError) as err:
        load_scenario(doc)
    assert [p for p, _m in err.value.errors] == ["controllerManager.disableForceDetachOnTimeout"]


@pytest.mark.parametrize("version", ["1.27", "1.28", "1.33"])
def test_non_graceful_shutdown_works_in_every_version(version):
    """NodeOutOfServiceVolumeDetach: beta and on by default in 1.27, GA from 1.28 (pkg/features/kube_features.go)."""
    sim, events = run(doc_of("non-graceful-shutdown", kubernetesVersion=version))
    assert sim.profile.out_of_service_stage == ("beta" if version == "1.27" else "GA")
    assert decisions(events, "podgc.terminating-out-of-service")
    assert decisions(events, "attachdetach.force-detach-out-of-service")


@pytest.mark.parametrize(("workload", "path", "words"), [
    ({"name": "db", "kind": "StatefulSet", "volumeClaimTemplates": [{"name": "data"}]},
     "cluster.workloads[0].volumeClaimTemplates[0].storage", "is required"),
    ({"name": "db", "kind": "StatefulSet", "volumeClaimTemplates": [{"name": "data", "storage": "lots"}]},
     "cluster.workloads[0].volumeClaimTemplates[0].storage", "a size such as 1Gi"),
    ({"name": "db", "kind": "StatefulSet", "volumeClaimTemplates": [
        {"name": "data", "storage": "1Gi", "accessModes": ["ReadWriteMany"]}]},
     "cluster.workloads[0].volumeClaimTemplates[0].accessModes", "ReadWriteOnce"),
    ({"name": "db", "kind": "StatefulSet", "podManagementPolicy": "Random"},
     "cluster.workloads[0].podManagementPolicy", "OrderedReady or Parallel"),
    ({"name": "db", "podManagementPolicy": "Parallel"}, "cluster.workloads[0].podManagementPolicy",
     "only a StatefulSet"),
])
def test_bad_statefulsets_are_named_by_field(workload, path, words):
    with pytest.raises(ScenarioError) as err:
        load_scenario({"name": "t", "cluster": {"nodes": 3, "workloads": [workload]}})
    assert [(p, words in m) for p, m in err.value.errors] == [(path, True)]


def test_a_statefulset_named_like_a_deployment_is_refused():
    with pytest.raises(ScenarioError) as err:
        load_scenario({"name": "t", "cluster": {"nodes": 3, "workloads": [
            {"name": "db", "replicas": 2}, {"name": "db", "kind": "StatefulSet", "replicas": 3}]}})
    ((path, message),) = err.value.errors
    assert path == "cluster.workloads[1].name" and "a Deployment already has this name" in message


def test_force_delete_of_a_pod_that_cannot_exist_is_refused():
    doc = doc_of("statefulset-force-delete", faults=[{"at": "8m", "action": "force-delete-pod", "pod": "db-7"}])
    with pytest.raises(ScenarioError) as err:
        load_scenario(doc)
    ((path, message),) = err.value.errors
    assert path == "faults[0].pod" and "db-0, db-1, db-2" in message


def test_live_commands_name_the_missing_pod_or_node():
    sim = Simulation(get_builtin("statefulset-node-lost"))
    sim.run_until(30)
    with pytest.raises(CommandError, match=r"^pod: unknown pod 'db-9'"):  # a command for now
        sim.schedule_command({"action": "force-delete-pod", "pod": "db-9"}, at=30)
    with pytest.raises(CommandError, match=r"node: unknown node 'node-9'"):
        sim.schedule_command({"action": "taint-out-of-service", "node": "node-9"}, at=31)
    with pytest.raises(CommandError, match=r"pod: is required"):
        sim.schedule_command({"action": "force-delete-pod"}, at=31)
    record = sim.schedule_command({"action": "force-delete-pod", "pod": "db-0"}, at=31)
    assert record["pod"] == "db-0"


def test_runs_without_a_statefulset_have_no_storage_and_no_volume_fields():
    sim = Simulation(get_builtin("kubelet-crash"))
    sim.run_until(120)
    assert sim.storage is None
    assert all(not n.volumes_in_use and not n.volumes_attached for n in sim.api.store["nodes"].values())
    snapshot = sim.snapshot()
    assert "storage" not in snapshot and "statefulsets" not in snapshot["objects"]


def test_storage_runs_are_deterministic():
    scenario = get_builtin("statefulset-force-delete")
    one = [e.to_dict() for e in Simulation(scenario).run_until(900)]
    two = [e.to_dict() for e in Simulation(scenario).run_until(900)]
    assert one == two


def test_a_rebooted_node_mounts_again_and_restarts_its_statefulset_pod():
    """tryUpdateNodeStatus marks volumesInUse reported after every successful update: a restarted kubelet's
    first status post lets it mount again (the volume never left volumesAttached)."""
    doc = doc_of("statefulset-node-lost", faults=[{"at": "60s", "action": "power-off", "node": "node-2"},
                                                  {"at": "90s", "action": "power-on", "node": "node-2"}])
    sim, events = run(doc, until=200)
    stuck = pod_on(sim, "node-2")
    pod = sim.api.current("pods", stuck, "default")
    assert pod.phase == "Running" and pod.is_ready() and pod.restart_count == 1
    mounts = [d for d in decisions(events, "kubelet.volume-mount") if d["pod"] == stuck]
    assert len(mounts) == 2 and 100 < mounts[1]["t"] < 100 + STATUS_SYNC + 2
    assert not decisions(events, "attachdetach.attach")[3:]  # nothing was attached again


@pytest.mark.parametrize("version", ["1.27", "1.29", "1.31", "1.32"])
def test_force_detach_six_minutes_after_the_first_pass_in_every_version(version):
    """maxWaitForUnmountDuration is 6 min in every version (DefaultTimerConfig); the eviction moves with
    the version's grace period, the force detach only with the force delete."""
    _sim, events = run(doc_of("statefulset-force-delete", kubernetesVersion=version))
    (wait,) = decisions(events, "attachdetach.wait-unmount")
    (force,) = decisions(events, "attachdetach.force-detach-timeout")
    assert ACT < wait["inputs"]["detachRequestedAt"] <= ACT + TICK + 1e-9
    assert force["t"] == pytest.approx(wait["inputs"]["detachRequestedAt"] + MAX_WAIT + TICK)


def test_a_deleted_node_frees_the_name_after_podgc_quarantine_and_the_volume_after_six_more_minutes():
    """The instance is gone: the cloud node lifecycle controller deletes the Node, PodGC's gcOrphaned
    deletes its pods after the 40 s quarantine (gc_controller.go), the StatefulSet makes a new pod, and
    the volume, still 'in use' on a Node that no longer exists, is force-detached after 6 min."""
    doc = doc_of("statefulset-node-lost", faults=[{"at": "60s", "action": "delete-node", "node": "node-2"}])
    sim, events = run(doc, until=900)
    (orphaned,) = decisions(events, "podgc.orphaned")
    removed = [e for e in writes(events, "pods", "delete", "db-1") if e["user"].endswith("pod-garbage-collector")]
    assert removed and removed[0]["t"] == orphaned["t"]
    node_gone = next(e["t"] for e in writes(events, "nodes", "delete", "node-2"))
    assert orphaned["t"] == ((node_gone + 40) // PODGC_PERIOD + 1) * PODGC_PERIOD
    (multi,) = decisions(events, "attachdetach.multi-attach")
    (force,) = decisions(events, "attachdetach.force-detach-timeout")
    assert not force["inputs"]["nodeReady"] and multi["t"] == force["inputs"]["detachRequestedAt"]
    assert force["t"] == pytest.approx(force["inputs"]["detachRequestedAt"] + MAX_WAIT + TICK)
    pod = sim.api.current("pods", "db-1", "default")
    assert pod.node_name != "node-2" and pod.phase == "Running"


def test_a_controller_manager_restart_starts_the_six_minutes_over():
    """The attach/detach controller's caches are memory: a new leader rebuilds the actual state from the
    Nodes' volumesAttached with no detach requested (populateActualStateOfWorld), so the wait for
    maxWaitForUnmountDuration counts again from its first pass."""
    faults = [*get_builtin("statefulset-force-delete").document["faults"],
              {"at": "600s", "action": "restart-controller-manager"}]
    _sim, events = run(doc_of("statefulset-force-delete", faults=faults, duration="25m"))
    waits = decisions(events, "attachdetach.wait-unmount")
    assert len(waits) == 2 and waits[1]["t"] > 615  # 15 s for the leader election (docs: §3.9)
    restarted_at = waits[1]["inputs"]["detachRequestedAt"]
    assert 615 < restarted_at <= 615 + TICK + 1e-9
    (force,) = decisions(events, "attachdetach.force-detach-timeout")
    assert force["t"] == pytest.approx(restarted_at + MAX_WAIT + TICK)
    assert len(decisions(events, "attachdetach.multi-attach")) == 2  # the new leader reports it again


def test_the_snapshot_shows_the_force_detach_countdown_while_it_runs():
    sim = Simulation(get_builtin("statefulset-force-delete"))
    sim.run_until(600)
    (waiting,) = [a for a in sim.snapshot()["storage"]["attachDetach"]["attached"] if a["node"] == "node-2"]
    assert waiting["mountedByNode"] and waiting["forceDetachAt"] == pytest.approx(
        waiting["detachRequestedAt"] + MAX_WAIT)
    others = [a for a in sim.snapshot()["storage"]["attachDetach"]["attached"] if a["node"] != "node-2"]
    assert others and all(a["forceDetachAt"] is None for a in others)


def test_a_rebuilt_run_replays_a_live_force_delete_byte_for_byte():
    """A worker rebuilding a run schedules its applied commands from time zero
    (heartbeat_site/live/lookback/rebuilding.py): the force delete of a pod that exists only later must be accepted
    then and give the same run."""
    scenario = get_builtin("statefulset-node-lost")
    live = Simulation(scenario)
    events = [e.to_dict() for e in live.run_until(ACT)]
    live.schedule_command({"action": "force-delete-pod", "pod": "db-1"}, at=ACT)
    events += [e.to_dict() for e in live.run_until(900)]
    rebuilt = Simulation(scenario)
    rebuilt.schedule_command({"action": "force-delete-pod", "pod": "db-1"}, at=ACT)
    assert [e.to_dict() for e in rebuilt.run_until(900)] == events


def test_a_kubelet_restarted_while_a_pod_waits_for_its_volume_still_starts_it():
    doc = doc_of("statefulset-node-lost", faults=[{"at": "16s", "action": "stop-kubelet", "node": "node-1"},
                                                  {"at": "30s", "action": "start-kubelet", "node": "node-1"}])
    sim, events = run(doc, until=90)
    db0 = sim.api.current("pods", "db-0", "default")
    assert db0.node_name == "node-1" and db0.phase == "Running"
    (mount,) = [d for d in decisions(events, "kubelet.volume-mount") if d["pod"] == "db-0"]
    assert 30 < mount["t"] < 30 + STATUS_SYNC + 2


@pytest.mark.parametrize(("version", "labelled"), [("1.27", False), ("1.28", True), ("1.33", True)])
def test_statefulset_pods_carry_their_index_label_from_1_28(version, labelled):
    """PodIndexLabel: beta and on in 1.28, GA in 1.32 (pkg/features/kube_features.go)."""
    sim, _events = run(doc_of("statefulset-node-lost", kubernetesVersion=version, faults=[]), until=30)
    labels = sim.api.current("pods", "db-0", "default").metadata.labels
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-0"
    assert (labels.get("apps.kubernetes.io/pod-index") == "0") is labelled
