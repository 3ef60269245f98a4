"""Every built-in's timeline is the checked-in one (``make golden`` rewrites them after a
deliberate change of behaviour; the diff is then the review)."""

from __future__ import annotations

import difflib

import pytest

from simulation import builtin_scenarios

from .golden import GOLDEN_DIR, golden_path, timeline

NAMES = [scenario.name for scenario in builtin_scenarios()]


@pytest.mark.parametrize("name", NAMES)
def test_timeline_is_the_golden_one(name):
    path = golden_path(name)
    assert path.exists(), f"no golden timeline for {name}: run `make golden`"
    expected, actual = path.read_text(), timeline(name)
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), str(path), "now", n=1))
        pytest.fail(
            f"{name} behaves differently than its golden timeline "
            f"(run `make golden` if that is intended):\n{diff[:6000]}"
        )


def test_every_golden_timeline_belongs_to_a_builtin():
    assert sorted(p.stem for p in GOLDEN_DIR.glob("*.txt")) == sorted(NAMES)
