"""kubectl's ages on the API side (heartbeat_site/k8sapi/tables.py) answer the vectors the panels' printer answers
too (tests/js/kubectl.test.js): HumanDuration at each of its boundaries."""

import json
from pathlib import Path

import pytest

from heartbeat_site.k8sapi.tables import human_duration

VECTORS = json.loads((Path(__file__).resolve().parent.parent / "vectors" / "human-duration.json").read_text())


@pytest.mark.parametrize(("seconds", "printed"), VECTORS["cases"])
def test_human_duration(seconds, printed):
    assert human_duration(seconds) == printed
