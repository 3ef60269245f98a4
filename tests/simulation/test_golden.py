"""Every built-in's timeline is the checked-in one (``make golden`` rewrites them after a
deliberate change of behaviour; the diff is then the review), and the kubelet crash on every Kubernetes version."""

from __future__ import annotations

import difflib

import pytest

from simulation import builtin_scenarios, get_builtin

from .golden import GOLDEN_DIR, golden_path, timeline, timeline_on
from .trace import GRACE

NAMES = [scenario.name for scenario in builtin_scenarios()]


@pytest.mark.parametrize("name", NAMES)
def test_timeline_is_the_golden_one(name):
    same_as_golden(name, golden_path(name).read_text() if golden_path(name).exists() else None, timeline(name))


# The kubelet crash on the versions no built-in names. Its timeline differs between versions only by the grace
# period (docs/kubernetes-node-health.md §7): each is the golden one of the built-in with the same grace, apart from
# the heading. The rest of §7 (the Ready message, the evictions' event source) is in the objects and events the
# timeline does not print: test_timeline_kubelet_crash.py checks those on every version.
@pytest.mark.parametrize("version", ["1.27", "1.28", "1.29", "1.30", "1.32"])
def test_kubelet_crash_on_every_version_is_a_golden_one(version):
    like = "kubelet-crash-1-31" if GRACE[version] == 40.0 else "kubelet-crash"
    assert GRACE[get_builtin(like).version] == GRACE[version]
    expected = golden_path(like).read_text().split("\n", 1)[1]
    actual = timeline_on("kubelet-crash", version)
    assert actual.startswith(f"# kubelet-crash: Kubelet crash (Kubernetes {version}, ")
    same_as_golden(f"kubelet-crash on {version} (as {like})", expected, actual.split("\n", 1)[1])


def same_as_golden(name: str, expected: str | None, actual: str) -> None:
    assert expected is not None, f"no golden timeline for {name}: run `make golden`"
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True), "golden", "now", n=1))
        pytest.fail(
            f"{name} behaves differently than its golden timeline "
            f"(run `make golden` if that is intended):\n{diff[:6000]}"
        )


def test_every_golden_timeline_belongs_to_a_builtin():
    assert sorted(p.stem for p in GOLDEN_DIR.glob("*.txt")) == sorted(NAMES)
