"""Every benchmark script starts: `make bench` runs them rarely, so an import a change broke (a moved helper, a
model imported before Django is set up) would otherwise wait for the next measurement to be found."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.mark.parametrize("script", sorted(path.name for path in BENCH.glob("*_bench.py")))
def test_the_bench_script_starts_and_explains_its_options(script):
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], capture_output=True, text=True,
                          timeout=120, check=False, cwd=BENCH.parent)
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout
