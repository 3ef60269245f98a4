"""The names a scenario or a command gives: of the scenario, its nodes, zones and workloads."""

from __future__ import annotations

import re

# A DNS-1123 label (IsDNS1123Label in k8s.io/apimachinery/pkg/util/validation): lowercase
# letters, digits and '-', starting and ending with a letter or digit, at most 63 characters.
SLUG = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")
