"""What can go wrong watching a real cluster, as data: a kind and its fields, said in English here (the API's
answers, the log, an ended observation's reason) and in each page's language by the page (its strings
``observed.why.<kind>`` and ``observed.what.<resource>``, made from these in heartbeat_site/pages/strings.py).
docs/observe.md "Errors" lists them."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext_noop

# How each resource is named in the sentences
WHAT = {
    "nodes": gettext_noop("nodes"),
    "leases": gettext_noop("leases in namespace kube-node-lease"),  # LEASE_NAMESPACE
    "pods": gettext_noop("pods (all namespaces)"),
    "endpointslices": gettext_noop("endpointslices (discovery.k8s.io, all namespaces)"),
    "events": gettext_noop("events (all namespaces)"),
}

SENTENCES = {
    "certificate": gettext_noop("the certificate of {server} could not be verified ({detail}); give the cluster's "
                                "CA certificate as \"ca\" (PEM) or in the kubeconfig"),
    "unauthorized": gettext_noop("the API server at {server} did not accept the token (401 Unauthorized) when "
                                 "listing {what}"),
    "forbidden": gettext_noop("the token may not list or watch {what} (403 Forbidden from the API server); an "
                              "observation needs list and watch on nodes, leases in kube-node-lease, pods, "
                              "endpointslices and events"),
    "not-found": gettext_noop("the API server at {server} has no {what} (404): is it a Kubernetes API server?"),
    "answered": gettext_noop("the API server answered {status} ({detail}) for {what}"),
    "unreachable": gettext_noop("cannot reach the API server at {server}: {detail}"),
    "not-kubernetes": gettext_noop("the API server at {server} answered something that is not Kubernetes JSON "
                                   "({detail})"),
    "other": "{detail}",  # an error nobody foresaw: its own words
}


@dataclass(frozen=True)
class Problem:
    """Why listing or watching ``resource`` failed: ``kind`` (a key of SENTENCES) with its fields; ``fatal`` when
    retrying cannot help (a refusal, a certificate), so the observation ends."""

    kind: str
    server: str
    resource: str
    fatal: bool
    status: int = 0
    detail: str = ""

    @property
    def sentence(self) -> str:
        return SENTENCES[self.kind].format(server=self.server, what=WHAT[self.resource], status=self.status,
                                           detail=self.detail)

    def as_message(self) -> dict:
        """The fields a page needs to say it (docs/websocket-protocol.md, observations)."""
        return {"kind": self.kind, "server": self.server, "resource": self.resource, "status": self.status,
                "detail": self.detail}
