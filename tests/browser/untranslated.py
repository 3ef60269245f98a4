"""Finds English left on a page that should be Chinese.

Technical identifiers stay as they are in a Chinese Kubernetes text (object kinds, field names,
condition values, component names, kubectl output). Everything else in Latin letters is an
untranslated string. Elements marked translate="no" (kubectl output, object names, the sequence
diagram's request lines), the language switch (lang="en") and the scenario, lesson and drill texts
the simulation library writes in both languages (data-source="scenario" or "lesson", compared with
its zh fields instead) are skipped.
"""

from __future__ import annotations

import re

# Words a Chinese Kubernetes course keeps in English.
TECHNICAL = {
    "kubelet", "lease", "leases", "pod", "pods", "node", "nodes", "kubectl", "taint", "taints", "api", "apiserver",
    "endpointslice", "endpointslices", "replicaset", "daemonset", "podgc", "notready", "utc", "mermaid", "mmd",
    "kubernetes", "informer", "spec", "etcd", "yaml", "watch", "true", "false",
    "tolerationseconds", "noexecute", "noschedule", "disruptiontarget", "pid", "cpu", "deletionbytaintmanager",
    "evicted", "markpodsnotready", "monitornodehealth", "syncnodestatus", "probetimestamp", "renewtime", "timeadded",
    "lastheartbeattime", "nodestatusunknown", "leasedurationseconds", "shutdowngraceperiod", "memorypressure",
    "diskpressure", "pidpressure", "partialdisruption", "fulldisruption", "processtaintbaseeviction",
    "defaulttolerationseconds", "toleration", "tolerations", "zone", "tokens", "cordon", "uncordon", "drain", "probe",
    "unreachable",
}

# Values and verbs that are also plain English: kept only as Kubernetes writes them (a phase or a
# condition status capitalised, an HTTP verb in capitals), so that an untranslated "failed" or
# "status" label is still found.
AS_WRITTEN = {
    "Ready", "Unknown", "True", "False", "Terminating", "Pending", "Running", "Succeeded", "Failed", "Initial",
    "Normal", "Warning", "GET", "PUT", "PATCH", "DELETE", "POST", "WATCH", "LIST",
}

TOKEN = re.compile(r"[A-Za-z0-9_.:/+\-]+")


def english_words(text: str) -> list[str]:
    """Latin-letter words in `text` that are neither identifiers nor technical terms."""
    found = []
    for token in TOKEN.findall(text):
        if token.startswith("."):
            continue  # a field path (.status, .spec.taints)
        word = token.strip(".:/+-_")
        if len(word) < 3 or not word.isalpha():
            continue  # numbers, names like node-2, paths, flags and keys
        if any(c.isupper() for c in word[1:]):
            continue  # camelCase or CamelCase identifiers (NoExecute, syncNodeStatus)
        if word.lower() in TECHNICAL or word in AS_WRITTEN:
            continue
        found.append(word)
    return found


# Collects visible text and labelling attributes outside translate="no" / lang="en" elements, in
# the whole page or (given a selector) in one part of it.
COLLECT_JS = """
(selector) => {
  const out = [];
  const root = selector ? document.querySelector(selector) : document.body;
  const skip = (el) => el.closest('[translate="no"], [lang="en"], [data-source], script, style, code, pre, noscript');
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const el = node.parentElement;
    if (!el || skip(el)) continue;
    const text = node.textContent.trim();
    if (!text) continue;
    if (el.closest('[hidden]') && !el.closest('[data-panel]')) continue;
    out.push(text);
  }
  for (const el of root.querySelectorAll('[title], [aria-label], [placeholder]')) {
    if (skip(el)) continue;
    for (const attr of ['title', 'aria-label', 'placeholder']) {
      const v = el.getAttribute(attr);
      if (v) out.push(v);
    }
  }
  return out;
}
"""
