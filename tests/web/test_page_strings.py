"""The run page explains every decision a run makes and labels every trainer button, in English and
Chinese: each rule id the StatefulSet built-ins emit has a title and an explanation in the pages'
strings (the Why? panel and the sequence diagram show them), each fault action a button, and the
Chinese catalogue translates them."""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from heartbeat_site.observe.problems import SENTENCES, WHAT
from heartbeat_site.pages.strings import ACTIONS, RULES, ui_strings
from simulation import FAULT_ACTIONS, Simulation, builtin_scenarios

STATEFUL = ("statefulset-node-lost", "statefulset-force-delete", "non-graceful-shutdown")


def emitted_rules(name: str) -> set[str]:
    scenario = next(s for s in builtin_scenarios() if s.name == name)
    events = Simulation(scenario).run_until(scenario.duration)
    return {e.fields["rule"] for e in events if e.type == "decision"}


@pytest.mark.parametrize("name", STATEFUL)
def test_every_decision_of_the_statefulset_built_ins_has_its_texts(name):
    rules = emitted_rules(name)
    assert {"statefulset.create-pod", "attachdetach.attach", "kubelet.volume-mount"} <= rules, rules
    missing = sorted(rules - set(RULES))
    assert missing == [], missing


def test_every_fault_action_has_a_button_label():
    assert sorted(set(FAULT_ACTIONS) - set(ACTIONS)) == []


def test_the_chinese_pages_translate_the_new_texts():
    with translation.override("zh-hans"):
        strings = ui_strings()
    with translation.override("en"):
        english = ui_strings()
    new = [k for k in strings if k.startswith(("rule.attachdetach", "rule-explain.attachdetach", "rule.statefulset",
                                               "rule.podgc", "pod-why.", "volume.", "volume-state.", "lane."))]
    assert len(new) > 30
    untranslated = [k for k in new if strings[k] == english[k] and not k.startswith("lane.") and k != "volume.head"]
    assert untranslated == [], untranslated


def test_the_chinese_pages_say_every_problem_of_a_watched_cluster_in_chinese():
    """An observation's failures come as kinds (heartbeat_site/observe/problems.py): each has a Chinese sentence
    with the same placeholders, and each resource a Chinese name."""
    with translation.override("zh-hans"):
        strings = ui_strings()
    for kind, english in SENTENCES.items():
        if kind == "other":
            continue  # an unforeseen error's own words
        chinese = strings[f"observed.why.{kind}"]
        assert chinese != english and sorted(re.findall(r"\{\w+\}", chinese)) == sorted(
            re.findall(r"\{\w+\}", english)), kind
    assert all(strings[f"observed.what.{resource}"] != english for resource, english in WHAT.items())
