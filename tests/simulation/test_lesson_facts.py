"""What the lessons, drills, myths and docs say is what Kubernetes does, and what the run shows.

Each test pins one statement that was once wrong or imprecise: it checks the corrected text in both
languages and, where the statement is about a run, checks it against the simulation's own events.
The Kubernetes source each fix rests on is named in docs/kubernetes-node-health.md and, where the
simulation simplifies, in docs/simulation-model.md ("Where the simulation picks or simplifies").
"""

from __future__ import annotations

import copy
import re
from functools import cache
from pathlib import Path

import pytest

from simulation import Simulation, get_builtin, load_scenario
from simulation.lessons import LessonRun, builtin_lessons, drill_simulation, get_drill, get_lesson, run_lesson
from simulation.lessons.myths import builtin_myths

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("en", "zh")


@cache
def events(scenario: str, until: float, seed: int | None = None) -> tuple[dict, ...]:
    return tuple(e.to_dict() for e in Simulation(get_builtin(scenario), seed=seed).run_until(until))


def step_text(lesson: str, step: str) -> dict[str, str]:
    lsn = get_lesson(lesson)
    assert lsn is not None
    return next(s["text"] for s in lsn.document["steps"] if s["id"] == step)


def myth(entry_id: str):
    book = builtin_myths()
    return next(e for e in [*book.myths, *book.questions] if e.id == entry_id)


def doc(name: str) -> str:
    return (ROOT / "docs" / name).read_text(encoding="utf-8")


def section(markdown: str, heading: str) -> str:
    """The text under a heading that starts with `heading`, up to the next heading of any level."""
    start = markdown.index(heading)
    end = re.compile(r"^#", re.MULTILINE).search(markdown, start + len(heading))
    return markdown[start:end.start() if end else None]


def terminating(evs, node: str) -> dict[str, float]:
    """The first moment each workload's pod on `node` was deleted (pod-terminating), by workload name."""
    out: dict[str, float] = {}
    for e in evs:
        if e["type"] == "transition" and e.get("kind") == "pod-terminating" and e.get("node") == node:
            out.setdefault(e["pod"].rsplit("-", 2)[0], e["t"])
    return out


# -- taints and tolerations: three moments and never, not five -----------------------------------------------------


def test_taints_lesson_claims_the_moments_its_run_shows():
    lsn = get_lesson("taints-and-tolerations")
    for lang in LANGS:
        summary = lsn.document["summary"][lang]
        assert not re.search(r"\b(five|\d+) (different )?moments", summary), summary
        assert "个不同的时刻" not in summary, summary
    gone = terminating(events("custom-tolerations", 800), "node-2")
    assert set(gone) == {"quick", "web", "patient", "first-match"}  # sticky never leaves
    moments = sorted({round(t) for t in gone.values()})
    assert moments == [145, 415, 715]  # three moments, then never
    assert round(gone["first-match"]) == round(gone["patient"])
    end = step_text("taints-and-tolerations", "the-end")
    assert "first-match and patient leave together" in end["en"] and "一起离开" in end["zh"]


def test_myth_of_the_node_owned_300s_names_only_pods_its_run_has():
    entry = myth("node-owns-the-300s")
    evs = events("custom-tolerations", 800)
    workloads = {e["pod"].rsplit("-", 2)[0] for e in evs if e.get("pod") and e.get("node") == "node-2"}
    for lang in LANGS:
        assert ("DaemonSet" in entry.fact[lang]) == ("agent" in workloads), entry.fact[lang]
    gone = terminating(evs, "node-2")
    for name, t in gone.items():  # "quick ... at t≈145 s", "web ... at t≈415 s", ...
        assert f"t≈{round(t)} s" in entry.fact["en"], (name, t)
    assert "sticky never" in entry.fact["en"] and "sticky 永远不走" in entry.fact["zh"]


# -- the toleration rule: "without seconds" means forever only if no used toleration sets seconds ------------------


def test_forever_needs_every_used_toleration_without_seconds():
    answer = myth("taint-manager").answer
    assert "a match without tolerationSeconds keeps it for ever" not in answer["en"]
    assert "only if none of them sets tolerationSeconds" in answer["en"]
    assert "只有它们都没有设 tolerationSeconds 时" in answer["zh"]
    explain = next(s["question"]["explain"] for s in get_lesson("taints-and-tolerations").document["steps"]
                   if s.get("question", {}) and s["question"]["id"] == "first-match-when")
    assert "if none of them sets seconds" in explain["en"] and "如果它们都没设秒数" in explain["zh"]
    rule = section(doc("kubernetes-node-health.md"), "### 4.2")
    assert "no chosen toleration sets tolerationSeconds -> tolerated forever" in rule


# -- endpoints: gone with a terminal pod, while the object stays ----------------------------------------------------


def endpoint_gone_while_pod_exists(evs, pod_prefix: str = "web-") -> list[str]:
    """Pods whose endpoint left the slice while the pod object still existed (deleted later, or never)."""
    removed = {e["pod"]: e["t"] for e in evs if e["type"] == "transition" and e.get("kind") == "endpoint"
               and e.get("to") is None and e["pod"].startswith(pod_prefix)}
    deleted = {e["pod"]: e["t"] for e in evs if e["type"] == "transition" and e.get("kind") == "pod-deleted"}
    return [pod for pod, t in removed.items() if deleted.get(pod, float("inf")) > t + 1]


def test_endpoints_myth_says_terminal_pods_lose_their_endpoints():
    fact = myth("endpoints-removed").fact
    assert "goes only when its pod object is gone" not in fact["en"]
    assert "terminal (Failed or Succeeded) or has no IP" in fact["en"]
    assert "终止态（Failed 或 Succeeded）或者没有 IP" in fact["zh"]
    shutdown = events("graceful-shutdown", 365)
    gone = endpoint_gone_while_pod_exists(shutdown)
    assert len(gone) == 2  # node-2's two web pods, Failed at t≈61 s
    for pod in gone:
        removed = next(e["t"] for e in shutdown if e.get("kind") == "endpoint" and e.get("pod") == pod
                       and e.get("to") is None)
        deleted = next(e["t"] for e in shutdown if e.get("kind") == "pod-deleted" and e.get("pod") == pod)
        assert round(removed) == 61 and round(deleted) == 360  # the times the fact gives
    assert "t≈61 s" in fact["en"] and "t≈360 s" in fact["en"]
    assert endpoint_gone_while_pod_exists(events("memory-pressure", 80))  # the evicted pod stays Failed


# -- memory pressure: admission rejects BestEffort pods only ---------------------------------------------------------


def test_memory_pressure_texts_say_best_effort():
    texts = [step_text("pressure-is-not-notready", "evicted"), get_drill("pods-bounce").document["explanation"]]
    for text in texts:
        assert "BestEffort" in text["en"] and "BestEffort" in text["zh"], text["en"]
    web = next(w for w in get_builtin("memory-pressure").document["cluster"]["workloads"] if w["name"] == "web")
    assert not web.get("resources")  # requests nothing: BestEffort, the only kind rejected under memory pressure
    rejected = [e for e in events("memory-pressure", 80) if e["type"] == "transition" and e.get("kind") == "pod-phase"
                and e.get("from") == "Pending" and e.get("to") == "Failed"]
    assert len(rejected) == 7  # "7 bounce here"
    assert "BestEffort" in section(doc("kubernetes-node-health.md"), "### 2.3")
    assert "BestEffort" in doc("simulation-model.md")


def test_one_eviction_per_pressure_episode_is_the_simulations_choice():
    evictions = [e for e in events("memory-pressure", 240) if e["type"] == "decision"
                 and e["rule"] == "kubelet.evict-pressure"]
    assert len(evictions) == 1  # pressure from t=60 s to t=240 s, one eviction
    text = step_text("pressure-is-not-notready", "evicted")
    assert "This simulation evicts once per pressure episode" in text["en"]
    assert "本模拟每次压力只驱逐一次" in text["zh"]
    assert "**One eviction per pressure episode.**" in doc("simulation-model.md")
    assert "one per synchronize while the threshold is met" in section(doc("kubernetes-node-health.md"), "### 6.3")


# -- the NoExecute queue: name order is the simulation's ------------------------------------------------------------


def test_queue_order_is_said_to_be_the_simulations_choice():
    taints = [(round(e["t"]), e["node"]) for e in events("zone-outage-large-zones", 420)
              if e["type"] == "transition" and e.get("kind") == "taint-added" and e.get("effect") == "NoExecute"
              and e["t"] > 60]
    assert taints == [(105, "node-25"), (210, "node-1"), (310, "node-10"), (410, "node-11")]
    text = step_text("large-zones", "queue")
    assert "come out in name order" not in text["en"] and "按名字顺序出队" not in text["zh"]
    assert "the simulation's choice" in text["en"] and "本模拟的选择" in text["zh"]
    watch = get_builtin("zone-outage-large-zones").document["watch"]
    assert "the simulation's choice" in watch["en"] and "本模拟的选择" in watch["zh"]
    model = doc("simulation-model.md")
    assert "markNodeForTainting" in model and "rate_limited_queue.go" in model
    assert "markNodeForTainting" in section(doc("kubernetes-node-health.md"), "### 3.8")


# -- graceful shutdown: the leftover pods' deadline dates from the not-ready NoExecute taint ---------------------------


def test_shutdown_deadline_dates_from_the_noexecute_taint():
    evs = events("graceful-shutdown", 365)
    noexecute = next(e["t"] for e in evs if e["type"] == "transition" and e.get("kind") == "taint-added"
                     and e.get("node") == "node-2" and e.get("key") == "node.kubernetes.io/not-ready"
                     and e.get("effect") == "NoExecute" and e["t"] > 59)
    deleted = [e["t"] for e in evs if e["type"] == "transition" and e.get("kind") == "pod-deleted"
               and e.get("node") == "node-2" and e["pod"].startswith("web-")]
    assert deleted and all(abs(t - noexecute - 300) < 0.5 for t in deleted)
    text = step_text("shutdown-vs-power-off", "swap")
    assert "first not-ready taint" not in text["en"]
    assert f"not-ready:NoExecute taint of the pass at t≈{noexecute:.1f} s" in text["en"]
    assert f"约第 {noexecute:.1f} 秒那轮巡检打上 not-ready:NoExecute 污点" in text["zh"]


# -- versions and flags --------------------------------------------------------------------------------------------


def test_pod_eviction_timeout_had_no_effect_with_default_settings_only():
    fact = myth("pod-eviction-timeout").fact
    assert "With default settings" in fact["en"] and "--enable-taint-manager=false" in fact["en"]
    assert "在默认设置下" in fact["zh"] and "--enable-taint-manager=false" in fact["zh"]
    answer = myth("grace-period-vs-eviction-timeout").answer
    assert "With default settings" in answer["en"] and "在默认设置下" in answer["zh"]
    node_health = doc("kubernetes-node-health.md")
    assert "with the\ndefault settings" in section(node_health, "### 4.6")
    assert "It had no effect since 1.13" not in node_health


def test_node_lease_history():
    for entry_id in ("one-heartbeat", "why-a-lease"):
        entry = myth(entry_id)
        text = entry.fact if hasattr(entry, "fact") else entry.answer
        for lang in LANGS:
            assert "1.13/1.14" not in text[lang]
            assert all(v in text[lang] for v in ("1.12", "1.14", "1.17")), text[lang]
        assert "pkg/features/kube_features.go" in entry.sources


def test_node_monitor_period_names_its_own_source():
    bullet = next(line for line in section(doc("kubernetes-node-health.md"), "## 1.").split("\n- ")
                  if line.startswith("`--node-monitor-period`"))
    assert "staging/src/k8s.io/cloud-provider/options/kubecloudshared.go" in bullet


# -- a dead runtime: running containers usually keep serving ----------------------------------------------------------


def test_a_dead_runtime_does_not_stop_running_containers_in_the_texts():
    texts = [step_text("kubelet-says-notready", "evicted"), step_text("half-heartbeats", "compare"),
             get_builtin("status-writes-fail").document["watch"]]
    for text in texts:
        assert not re.search(r"cannot run (a )?containers?|no longer run containers", text["en"]), text["en"]
        assert "跑不了容器" not in text["zh"], text["zh"]
    evicted = step_text("kubelet-says-notready", "evicted")
    assert "usually keep running and serving" in evicted["en"] and "通常照常运行、照常响应" in evicted["zh"]
    served = [e["to"] for e in events("container-runtime-down", 395) if e["type"] == "transition"
              and e.get("kind") == "endpoint" and e.get("node") == "node-2"]
    assert served and served[-1] == {"ready": False, "serving": True, "terminating": True}
    assert all(to["ready"] for to in served[:-2])  # ready until the deletion: traffic kept coming


# -- the doubtful ones, decided from the source ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 42, 63, 65])  # in 42, 63 and 65 one node is tainted before the others go
def test_every_zone_down_holds_for_any_seed(seed):
    """No web pod is deleted while the whole cluster is dark, whichever node went Unknown first."""
    tr = run_lesson(get_lesson("all-zones-down"), until=200, seed=seed)
    assert tr.question("evict-all")["consistent"] is True
    dark = [e for e in events("whole-cluster-down", 470, seed) if e["t"] > 60]
    assert not [e for e in dark if e["type"] == "transition" and e.get("kind") == "pod-terminating"]


def question(lesson: str, qid: str) -> dict:
    lsn = get_lesson(lesson)
    assert lsn is not None
    return next(s["question"] for s in lsn.document["steps"] if s.get("question") and s["question"]["id"] == qid)


def choice(q: dict, cid: str) -> dict[str, str]:
    return next(c["text"] for c in q["choices"] if c["id"] == cid)


@pytest.mark.parametrize("seed", [1, 2, 5, 7, 11])
def test_who_reacts_first_to_memory_pressure_holds_for_any_seed(seed):
    """The question asks what the kubelet does (evict in the same check, not wait for the API), which has
    one answer; "what happens first" also allowed the condition, which the kubelet notes before evicting."""
    q = question("pressure-is-not-notready", "who-first")
    assert "What does the kubelet do first?" in q["text"]["en"] and "kubelet 最先做的是什么" in q["text"]["zh"]
    assert "without waiting for the control plane" in choice(q, "kubelet-evicts")["en"]
    tr = run_lesson(get_lesson("pressure-is-not-notready"), until=80, seed=seed)
    assert tr.question("who-first")["consistent"] is True


@pytest.mark.parametrize("seed", [1, 2, 5, 7, 11])
def test_how_shut_down_pods_go_holds_for_any_seed(seed):
    """The taint eviction controller does delete the leftover Failed objects later, so the choices are told
    apart by who ends the pods first and when the replacements come."""
    q = question("shutdown-vs-power-off", "how-pods-go")
    assert "replacements follow at once" in choice(q, "kubelet")["en"]
    assert "replacements only then" in choice(q, "taint")["en"] and "替身到那时才出现" in choice(q, "taint")["zh"]
    tr = run_lesson(get_lesson("shutdown-vs-power-off"), until=70, seed=seed)
    assert tr.question("how-pods-go")["consistent"] is True


def test_a_restarted_kubelet_posts_ready_true_first_as_since_1_31():
    after = [e for e in events("kubelet-crash-recovery", 260) if e["t"] >= 240 and e["type"] == "transition"
             and e.get("kind") == "node-ready" and e.get("node") == "node-2"]
    assert after and after[0]["from"] == "Unknown" and after[0]["to"] == "True"
    text = step_text("recovery-before-deadline", "restart")
    assert "before 1.31" in text["en"] and "1.31 之前" in text["zh"]
    assert "kubernetes/kubernetes#124430" in section(doc("kubernetes-node-health.md"), "### 2.5")


def test_an_overloaded_api_server_is_not_said_to_leave_no_error():
    explanation = get_drill("everyone-at-once").document["explanation"]
    assert "no error in the audit log" not in explanation["en"] and "审计日志里也没有错误" not in explanation["zh"]
    assert "429" in explanation["en"] and "429" in explanation["zh"]
    assert "priority-and-fairness.go" in doc("simulation-model.md")


# -- lessons 14-20 and drills 8-10, checked line by line against the source --------------------------------------------


def lesson_events(name: str, until: float) -> list[dict]:
    """Every event of a lesson's run up to `until`, its steps' fault actions applied as a live driver would."""
    lsn = get_lesson(name)
    assert lsn is not None
    sim = Simulation(lsn.scenario)
    run = LessonRun(lsn)
    out: list[dict] = []

    def apply(starts) -> None:
        for start in starts:
            for command in start.commands:
                sim.schedule_command(command, start.t)

    apply(run.start(0.0))
    t = 0.0
    while t < until:
        stop = run.next_stop()
        t = min(until, t + 1.0, stop if stop is not None and stop > t else until)
        batch = sim.run_until(t)
        out += [e.to_dict() for e in batch]
        apply(run.feed(batch, t))
    return out


def first(evs, **fields) -> dict:
    return next(e for e in evs if all(matches_field(e.get(k), v) for k, v in fields.items()))


def matches_field(value, wanted) -> bool:
    if isinstance(wanted, str) and wanted.endswith("*"):
        return isinstance(value, str) and value.startswith(wanted[:-1])
    return value == wanted


def variant(scenario: str, change) -> tuple[dict, ...]:
    """The events of a built-in scenario changed by `change` (a function editing a copy of its document)."""
    document = copy.deepcopy(get_builtin(scenario).document)
    change(document)
    changed = load_scenario(document)
    return tuple(e.to_dict() for e in Simulation(changed).run_until(changed.duration))


def test_the_chain_to_eviction_has_four_links_from_three_controllers():
    evs = lesson_events("cause-and-effect", 420)
    links = [
        first(evs, type="transition", kind="node-ready", node="node-2", to="Unknown"),
        first(evs, type="transition", kind="endpoint", node="node-2", key="web"),
        first(evs, type="transition", kind="taint-added", node="node-2", effect="NoExecute"),
        first(evs, type="write", verb="delete", resource="pods", node="node-2"),
    ]
    assert {e["component"] for e in links} == {
        "node-lifecycle-controller", "endpointslice-controller", "taint-eviction-controller"}
    text = step_text("cause-and-effect", "evicted")
    assert "four controllers" not in text["en"] and "四个控制器" not in text["zh"]
    assert "three controllers" in text["en"] and "三个控制器" in text["zh"]


def test_the_comeback_chain_is_the_kubelets_as_much_as_a_controllers():
    back = next(s.at for s in get_lesson("cause-and-effect").steps if s.id == "back")
    assert back is not None
    evs = [e for e in lesson_events("cause-and-effect", back + 5) if e["t"] >= back]
    assert first(evs, type="transition", kind="node-ready", node="node-2", to="True")["component"] == "kubelet-status"
    assert first(evs, type="transition", kind="pod-deleted", node="node-2", pod="web-*")["component"] == "kubelet"
    text = step_text("cause-and-effect", "settled")
    assert "was a controller reading" not in text["en"] and "都是某个控制器读到了" not in text["zh"]
    assert "the kubelet" in text["en"] and "kubelet" in text["zh"]


def test_a_restart_just_before_the_deadline_postpones_by_more_than_a_toleration_period():
    def restart_late(document: dict) -> None:
        document["faults"][1]["at"] = "410s"  # 5 s before the pods of node-2 were due
        document["duration"] = "13m"

    gone = terminating(variant("controller-manager-restart", restart_late), "node-2")["web"]
    due = terminating(events("kubelet-crash", 450), "node-2")["web"]
    assert gone - due > 300
    texts = [step_text("controller-manager-restart", "evicted"),
             question("controller-manager-restart", "eviction-after-crash")["explain"],
             get_builtin("controller-manager-restart").watch]
    for text in texts:
        assert "up to a whole toleration" not in text["en"] and "最多可能" not in text["zh"], text
    assert "plus the new leader's start" in section(doc("kubernetes-node-health.md"), "### 3.9")


def noexecute_spans(evs, node: str) -> list[float]:
    """How long each NoExecute taint stayed on `node`, in order."""
    spans, added = [], None
    for e in evs:
        if e["type"] == "transition" and e.get("node") == node and e.get("effect") == "NoExecute":
            if e["kind"] == "taint-added":
                added = e["t"]
            elif e["kind"] == "taint-removed" and added is not None:
                spans.append(e["t"] - added)
                added = None
    return spans


def test_a_flapping_node_keeps_pods_whose_toleration_is_shorter_than_an_outage():
    spans = noexecute_spans(events("flapping-network", 780), "node-3")
    assert len(spans) == 4 and all(65 <= s <= 75.5 for s in spans), spans

    def pinned(document: dict) -> None:
        for seconds in (90, 60):
            document["cluster"]["workloads"].append({
                "name": f"t{seconds}", "replicas": 1, "nodeSelector": {"kubernetes.io/hostname": "node-3"},
                "tolerations": [{"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                                 "effect": "NoExecute", "tolerationSeconds": seconds}]})

    gone = terminating(variant("flapping-network", pinned), "node-3")
    assert "t60" in gone and "t90" not in gone  # 90 s is shorter than a 2-minute outage, yet never runs out
    for text in (step_text("flapping-network", "end"), get_builtin("flapping-network").watch):
        assert "shorter than one outage" not in text["en"] and "比单次断网更短" not in text["zh"], text
        assert "65" in text["en"] and "75" in text["en"] and "65" in text["zh"], text


def test_the_step_before_the_new_pod_question_does_not_announce_its_countdown():
    """The countdown is decided 5 ms after the binding that starts the step, so every page shows it
    ("evicted in 1m") when the question comes: the question asks who started it, not whether."""
    text = step_text("scheduling-onto-tainted-nodes", "probe-bound")
    assert "own countdown" not in text["en"] and "自己的倒计时" not in text["zh"]
    q = question("scheduling-onto-tainted-nodes", "new-pod-countdown")
    assert "Which component" in q["text"]["en"] and "哪个组件" in q["text"]["zh"]
    assert "What will the taint eviction controller do" not in q["text"]["en"]
    evs = events("tainted-node-scheduling", 180)
    tainted = first(evs, type="transition", kind="taint-added", node="node-2", effect="NoExecute")["t"]
    bound = next(e for e in evs if e["type"] == "transition" and e.get("kind") == "pod-scheduled"
                 and e.get("pod", "").startswith("probe-") and e["t"] > tainted)
    assert round(bound["t"] - tainted) == 60  # "a minute old"
    countdown = first(evs, type="decision", pod=bound["pod"])
    assert countdown["component"] == "taint-eviction-controller" and countdown["t"] - bound["t"] < 0.01
    assert "a minute old" in text["en"] and "一分钟" in text["zh"]


def test_the_scheduler_binds_to_a_node_whose_kubelet_is_dead():
    evs = events("tainted-node-scheduling", 180)
    unknown = first(evs, type="transition", kind="node-ready", node="node-2", to="Unknown")["t"]
    assert any(e["type"] == "transition" and e.get("kind") == "pod-scheduled" and e.get("node") == "node-2"
               and e["t"] > unknown for e in evs)
    explain = question("scheduling-onto-tainted-nodes", "probe-replacement")["explain"]
    assert "are all it sees" not in explain["en"] and "of a node's health" in explain["en"]
    assert "关于节点的健康" in explain["zh"]


def test_disk_pressure_evicts_at_the_first_check_as_the_simulation_has_no_images():
    evs = events("disk-pressure", 110)
    evicted = first(evs, type="decision", rule="kubelet.evict-pressure", node="node-3")["t"]
    assert 90 < evicted <= 100.5  # the first eviction-manager check after the onset
    text = step_text("disk-and-pid-pressure", "bounce")
    assert "unused images" in text["en"] and "镜像" in text["zh"]
    assert "reclaimNodeLevelResources" in doc("simulation-model.md")
    assert "reclaimNodeLevelResources" in section(doc("kubernetes-node-health.md"), "### 2.3")
    watch = get_builtin("disk-pressure").watch
    assert "unused" in watch["en"] and "镜像" in watch["zh"]


def status_patches(evs, node: str) -> list[float]:
    return [e["t"] for e in evs if e["type"] == "write" and e.get("resource") == "nodes"
            and e.get("subresource") == "status" and e.get("verb") == "patch" and e.get("node") == node]


def test_a_shorter_report_frequency_multiplies_status_posts_not_lease_traffic():
    tuned = status_patches(events("tuned-defaults", 300), "node-1")
    usual = status_patches(events("kubelet-crash", 700), "node-1")
    tuned_gap, usual_gap = tuned[-1] - tuned[-2], usual[-1] - usual[-2]
    assert 120 <= tuned_gap <= 131 and 300 <= usual_gap <= 311
    assert 2.2 < usual_gap / tuned_gap < 2.6  # "two and a half times as many status posts"
    explain = question("tuning-the-defaults", "status-interval")["explain"]
    assert "the default traffic" not in explain["en"] and "status posts" in explain["en"]
    assert "状态上报的次数" in explain["zh"]


def test_a_registering_kubelet_posts_conditions_with_its_node():
    evs = events("kubelet-crash", 20)
    created = [e for e in evs if e["type"] == "transition" and e.get("kind") == "node-ready" and e.get("from") is None]
    assert created and all(e["component"] == "kubelet-status" and e["to"] == "False" for e in created)
    explanation = get_drill("status-never-came").document["explanation"]
    assert "usually Ready=False at first" in explanation["en"] and "通常先是 Ready=False" in explanation["zh"]


def test_the_name_order_of_a_pass_is_said_to_be_the_simulations():
    source = (ROOT / "simulation" / "nodelifecycle" / "controller.py").read_text(encoding="utf-8")
    assert "the informer cache, in name order\n" not in source
    assert "simulation's choice" in source and "rate_limited_queue.go" in source


def test_the_new_leaders_exact_15_s_is_said_to_be_the_simulations():
    evs = events("controller-manager-restart", 260)
    first_pass = next(e["t"] for e in evs if e["type"] == "decision" and e.get("rule") == "nlc.monitor-pass"
                      and e["t"] > 240)
    assert first_pass == pytest.approx(255.0, abs=0.1)
    explain = question("controller-manager-restart", "node-3-unknown")["explain"]
    assert "the simulation takes exactly the 15 s lease duration" in explain["en"]
    assert "本模拟正好等满 15 秒" in explain["zh"]


# A question whose evidence is on the pages when it is asked (a countdown bar, a Failed pod, a taint) is
# answered by the screen. Only a recap (since: start) asks about what was seen, and one question asks
# about the cause of what every page shows (lesson 18: who started the countdown it shows).
SHOWN_PREMISE = {("scheduling-onto-tainted-nodes", "new-pod-countdown")}


@cache
def transcript(lesson: str):
    return run_lesson(get_lesson(lesson))


@pytest.mark.parametrize("lesson", [lsn.name for lsn in builtin_lessons()])
def test_no_prediction_is_asked_after_its_evidence_happened(lesson):
    steps = {s["question"]["id"]: s["question"] for s in get_lesson(lesson).document["steps"] if s.get("question")}
    for asked in transcript(lesson).questions:
        if steps[asked["id"]].get("since") == "start" or (lesson, asked["id"]) in SHOWN_PREMISE:
            continue
        assert asked["evidence"]["t"] >= asked["asked_at"], (asked["id"], asked["evidence"], asked["asked_at"])


def test_the_eviction_after_a_restart_is_asked_before_the_new_countdown_shows():
    asked = transcript("controller-manager-restart").question("eviction-after-crash")["asked_at"]
    retainted = [e["t"] for e in lesson_events("controller-manager-restart", 260) if e["type"] == "transition"
                 and e.get("kind") == "taint-added" and e.get("node") == "node-2" and e.get("effect") == "NoExecute"]
    assert asked < retainted[-1]  # before the taint eviction controller counts again


def test_the_noexecute_taint_waits_for_the_next_pass_after_a_posted_ready_false():
    evs = [e for e in events("status-writes-fail", 500) if e["t"] >= 480]
    posted = first(evs, type="transition", kind="node-ready", node="node-2", to="False")
    passes = [e["t"] for e in evs if e["type"] == "decision" and e.get("rule") == "nlc.monitor-pass"
              and e["t"] > posted["t"]]
    tainted = first(evs, type="transition", kind="taint-added", node="node-2", effect="NoExecute")["t"]
    assert passes[0] <= tainted <= passes[0] + 0.2  # queued at the first pass after the post, then the tokens
    watch = get_builtin("status-writes-fail").watch
    assert "NoExecute one at the controller's next pass" in watch["en"] and "下一轮巡检时打上" in watch["zh"]


def test_disk_pressure_is_said_to_differ_by_image_garbage_collection():
    watch = get_builtin("pid-pressure").watch
    assert "the one difference" not in watch["en"] and "唯一的区别" not in watch["zh"]
    assert "unused images" in watch["en"] and "镜像" in watch["zh"]


def test_summaries_do_not_hint_at_what_a_return_or_a_taint_does():
    """'which taints come and go' told lesson 16's first question (the admission taint is removed);
    'what each return undoes' told lesson 19's (the countdowns are cancelled)."""
    for lesson, en, zh in (("node-without-status", "come and go", "来了又走"), ("flapping-network", "undoes", "撤销")):
        summary = get_lesson(lesson).document["summary"]
        assert en not in summary["en"] and zh not in summary["zh"], summary
    removed = [e for e in events("node-without-status", 62) if e["type"] == "transition"
               and e.get("kind") == "taint-removed" and e.get("node") == "node-4"]
    assert removed and removed[0]["key"] == "node.kubernetes.io/not-ready"  # what the first question asks


# -- lessons 21-22, drill 11 and the StatefulSet myths: a node that does not come back -----------------------------


def pod_events(evs, pod: str, kind: str, **fields) -> list[dict]:
    return [e for e in evs if e["type"] == "transition" and e.get("kind") == kind and e.get("pod") == pod
            and all(e.get(k) == v for k, v in fields.items())]


def decisions(evs, rule: str, **fields) -> list[dict]:
    return [e for e in evs if e["type"] == "decision" and e.get("rule") == rule
            and all(e.get(k) == v for k, v in fields.items())]


def test_dead_node_lesson_answers_are_what_its_run_shows():
    tr = transcript("statefulset-on-a-dead-node")
    assert not tr.missing_steps
    chain = tr.question("chain")
    assert chain["order"] == ["unknown", "noexecute", "db-terminating", "web-running"]
    assert chain["happened"]["db-terminating"]["t"] < chain["happened"]["web-running"]["t"]
    assert tr.question("statefulset-decides")["evidence_choices"] == ["wait"]
    back = tr.question("back-after-taint")
    assert back["consistent"] and 12 <= back["measured"] <= 20  # the PodGC pass, detach, attach, mount, Ready


@pytest.mark.parametrize("seed", [1, 2, 5, 7, 11])  # the kubelet's status sync on the new node moves by up to 10 s
def test_the_statefulset_lessons_hold_for_any_seed(seed):
    for name in ("statefulset-on-a-dead-node", "force-delete-or-taint"):
        tr = run_lesson(get_lesson(name), seed=seed)
        assert not tr.missing_steps, (name, seed)
        assert [q["consistent"] for q in tr.questions] == [True] * len(tr.questions), (name, seed, tr.questions)


def test_a_dead_nodes_statefulset_pod_keeps_its_name_and_volume_while_web_moves():
    """Lesson 21's steps `eviction-due` and `stuck`: both pods deleted together with a 30 s grace period, web
    replaced within milliseconds, db-1 never, and its volume never detached until the taint at 890 s."""
    evs = lesson_events("statefulset-on-a-dead-node", 930)
    db = pod_events(evs, "db-1", "pod-terminating")[0]
    web = first(evs, type="transition", kind="pod-terminating", node="node-2", pod="web-*")
    assert db["t"] == web["t"] and db["to"] == pytest.approx(db["t"] + 30)  # the same countdown, 30 s grace
    new_web = first([e for e in evs if e["t"] > web["t"] - 1e-9], type="transition", kind="pod-created", pod="web-*")
    assert new_web["t"] - web["t"] < 0.01
    before_taint = [e for e in evs if 60 < e["t"] < 890]
    assert not [e for e in before_taint if e["type"] == "transition" and e.get("kind") == "pod-created"
                and e.get("pod") == "db-1"]
    assert not [e for e in before_taint if e["type"] == "decision" and str(e.get("rule")).startswith("attachdetach.")]
    waits = decisions(before_taint, "statefulset.wait-same-name", pod="db-1")
    assert len(waits) == 1 and waits[0]["t"] - db["t"] < 0.01
    # the step `back`: Pod GC at its 20 s pass t=900 s, db-1 again 5 ms later, the detach within 100 ms
    gc = decisions(evs, "podgc.terminating-out-of-service", pod="db-1")[0]
    assert gc["t"] == pytest.approx(900.0)
    created = [e for e in pod_events(evs, "db-1", "pod-created") if e["t"] > 890][0]
    assert created["t"] - gc["t"] == pytest.approx(0.005, abs=1e-6)
    detach = decisions(evs, "attachdetach.force-detach-out-of-service", node="node-2")[0]
    assert 0 < detach["t"] - gc["t"] <= 0.1 + 1e-9
    for lang, words in (("en", ("30 s grace period", "t=900 s", "5 ms later", "within 100 ms")),
                        ("zh", ("30 秒的宽限期", "第 900 秒", "5 毫秒后", "100 毫秒"))):
        said = step_text("statefulset-on-a-dead-node", "stuck")[lang] + step_text(
            "statefulset-on-a-dead-node", "back")[lang]
        assert all(w in said for w in words), (lang, words)


def test_nobody_acting_leaves_db1_terminating_and_attached_for_the_whole_run():
    """The built-in statefulset-node-lost, which lesson 21, drill 11 and a myth build on."""
    evs = events("statefulset-node-lost", 1200)
    late = [e for e in evs if e["t"] > 411]
    assert not pod_events(late, "db-1", "pod-created") and not pod_events(late, "db-1", "pod-deleted")
    assert not [e for e in evs if e["type"] == "decision" and e.get("rule") in (
        "attachdetach.multi-attach", "attachdetach.detach", "attachdetach.force-detach-timeout")]


def test_at_the_end_of_a_run_nobody_acts_in_db1_is_terminating_2_of_3_ready_and_attached_to_node_2():
    """What the drill's brief says kubectl shows, and lesson 21's "nothing would change": the objects at 20 min."""
    sim = Simulation(get_builtin("statefulset-node-lost"))
    list(sim.run_until(1200))
    objects = sim.snapshot()["objects"]
    db = next(s for s in objects["statefulsets"] if s["metadata"]["name"] == "db")
    assert (db["status"]["readyReplicas"], db["spec"]["replicas"]) == (2, 3)  # READY 2/3
    db1 = [p for p in objects["pods"] if p["metadata"]["name"] == "db-1"]
    assert len(db1) == 1 and db1[0]["metadata"].get("deletionTimestamp") and db1[0]["spec"]["nodeName"] == "node-2"
    claim = next(c for c in objects["persistentvolumeclaims"] if c["metadata"]["name"] == "data-db-1")
    attachment = [a for a in objects["volumeattachments"]
                  if a["spec"]["source"]["persistentVolumeName"] == claim["spec"]["volumeName"]]
    assert [a["spec"]["nodeName"] for a in attachment] == ["node-2"] and attachment[0]["status"]["attached"]
    brief = get_drill("database-does-not-come-back").document["brief"]
    assert "2/3 ready" in brief["en"] and "2/3 就绪" in brief["zh"]


def test_force_delete_lesson_answers_and_numbers_are_what_its_run_shows():
    tr = transcript("force-delete-or-taint")
    assert tr.question("after-force")["evidence_choices"] == ["create-now"]
    assert tr.question("detach-wait")["measured"] == pytest.approx(360.1, abs=0.05)  # 6 min + the 100 ms pass
    assert tr.question("who-removes")["evidence_choices"] == ["podgc"]
    evs = lesson_events("force-delete-or-taint", 905)
    deleted = first(evs, type="fault", action="force-delete-pod")["t"]
    created = [e for e in pod_events(evs, "db-1", "pod-created") if e["t"] >= deleted][0]
    assert created["t"] - deleted == pytest.approx(0.005, abs=1e-6)  # "5 ms after the delete"
    assert first(evs, type="transition", kind="pod-scheduled", pod="db-1", to="node-3")["t"] > deleted
    multi = decisions(evs, "attachdetach.multi-attach", pod="db-1")
    assert len(multi) == 1 and multi[0]["node"] == "node-3"  # reported once, on the waiting pod's node
    assert decisions(evs, "attachdetach.wait-unmount", node="node-2")[0]["t"] == multi[0]["t"]  # the same pass
    force = decisions(evs, "attachdetach.force-detach-timeout", node="node-2")[0]
    assert round(force["t"]) == 840  # "at t≈840 s"
    ready = [e for e in pod_events(evs, "db-1", "pod-ready", to=True) if e["t"] > deleted][0]
    assert 0 < ready["t"] - force["t"] < 10  # "a few seconds later"
    assert 12.5 * 60 < ready["t"] - 60 < 13.5 * 60  # "about 13 minutes after the power loss"
    gc = decisions(evs, "podgc.terminating-out-of-service")
    assert [e["t"] for e in gc] == [900.0] and gc[0]["pod"].startswith("web-")  # the next 20 s pass after 890 s
    text = step_text("force-delete-or-taint", "force-detached")
    assert "t≈840 s" in text["en"] and "about 13 minutes" in text["en"] and "大约 13 分钟" in text["zh"]


def test_the_taint_gets_db1_running_27_s_later_as_lesson_22_says():
    evs = events("non-graceful-shutdown", 600)
    taint = first(evs, type="fault", action="taint-out-of-service")["t"]
    ready = [e for e in pod_events(evs, "db-1", "pod-ready", to=True) if e["t"] > taint][0]
    assert round(ready["t"] - taint) == 27
    assert not decisions(evs, "attachdetach.multi-attach") and not decisions(evs, "attachdetach.force-detach-timeout")
    text = step_text("force-delete-or-taint", "compare")
    assert "27 s" in text["en"] and "27 秒" in text["zh"]
    assert "GA since 1.28" in text["en"] and "1.28 起 GA" in text["zh"]  # pkg/features/kube_features.go


def test_the_drills_right_cause_and_safe_action_are_what_its_run_shows():
    """Drill 11: db-1 holds its name on node-2 (no second db-1, no Multi-Attach, no toleration left), and the
    out-of-service taint it recommends brings db-1 back; none of the look-alike choices happens."""
    drill = get_drill("database-does-not-come-back")
    assert drill is not None and drill.answer == "name-held" and drill.node == "node-2"
    sim = drill_simulation(drill)
    evs = [e.to_dict() for e in sim.run_until(890)]
    assert decisions(evs, "tec.process-pod", pod="db-1", node="node-2")[0]["outcome"] == "delete at +300s"
    assert pod_events(evs, "db-1", "pod-terminating") and decisions(evs, "statefulset.wait-same-name", pod="db-1")
    assert len(pod_events(evs, "db-1", "pod-created")) == 1  # only the first, at start-up
    assert not decisions(evs, "attachdetach.multi-attach")
    sim.schedule_command({"action": "taint-out-of-service", "node": "node-2"}, 890)
    later = [e.to_dict() for e in sim.run_until(960)]
    ready = pod_events(later, "db-1", "pod-ready", to=True)
    assert ready and ready[0]["t"] - 890 < 30 and ready[0]["node"] != "node-2"
    explanation = drill.document["explanation"]
    assert "next 20 s pass" in explanation["en"] and "20 秒一轮" in explanation["zh"]
    assert "waits 6 minutes" in explanation["en"] and "6 分钟" in explanation["zh"]


def test_the_statefulset_myths_give_the_runs_times():
    lost = events("statefulset-node-lost", 420)
    db = pod_events(lost, "db-1", "pod-terminating")[0]
    web_new = first([e for e in lost if e["t"] >= db["t"]], type="transition", kind="pod-created", pod="web-*")
    assert round(db["t"], 1) == 410.3 and round((web_new["t"] - db["t"]) * 1000) == 5
    fact = myth("statefulset-moves-after-5-minutes").fact
    assert "t≈410.3 s" in fact["en"] and "5 ms later" in fact["en"] and "第 410.3 秒" in fact["zh"]
    forced = events("statefulset-force-delete", 850)
    created = [e for e in pod_events(forced, "db-1", "pod-created") if e["t"] >= 480][0]
    force = decisions(forced, "attachdetach.force-detach-timeout")[0]
    assert created["t"] == pytest.approx(480.005) and force["t"] == pytest.approx(840.2)
    fact = myth("force-delete-is-safe").fact
    assert "t≈480.005 s" in fact["en"] and "t≈840.2 s" in fact["en"]
    assert "第 480.005 秒" in fact["zh"] and "第 840.2 秒" in fact["zh"]
