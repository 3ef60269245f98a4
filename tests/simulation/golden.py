"""Golden timelines: the CLI's timeline of every built-in scenario, checked in under
``tests/golden/<name>.txt`` so that any change of behaviour shows as a readable diff.

``make golden`` (``python -m tests.simulation.golden``) writes them anew; ``test_golden.py``
fails on any difference.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
from pathlib import Path

import yaml

from simulation import builtin_scenarios
from simulation.builtins import BUILTIN_DIR
from simulation.cli import main

GOLDEN_DIR = Path(__file__).resolve().parent.parent / "golden"


def timeline(name: str) -> str:
    """What ``python -m simulation run <name>`` prints."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["run", name])
    return out.getvalue()


def golden_path(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.txt"


def timeline_on(name: str, version: str) -> str:
    """What ``python -m simulation run`` prints for the built-in ``name`` with ``kubernetesVersion: <version>``."""
    document = yaml.safe_load((BUILTIN_DIR / f"{name}.yaml").read_text())
    document["kubernetesVersion"] = version
    with tempfile.NamedTemporaryFile("w", suffix=".yaml") as file:
        yaml.safe_dump(document, file, allow_unicode=True)
        file.flush()
        return timeline(file.name)


def write_all() -> list[str]:
    GOLDEN_DIR.mkdir(exist_ok=True)
    names = [scenario.name for scenario in builtin_scenarios()]
    for name in names:
        golden_path(name).write_text(timeline(name))
    for stale in set(GOLDEN_DIR.glob("*.txt")) - {golden_path(name) for name in names}:
        stale.unlink()
    return names


if __name__ == "__main__":
    written = write_all()
    print(f"wrote {len(written)} golden timelines to {GOLDEN_DIR}", file=sys.stderr)
