"""Which cluster an observation may watch, and with what: checked before any connection is made.

A server that connects where a visitor tells it is a way into the operator's network, so watching is off unless
``HEARTBEAT_OBSERVE=1``, and only the hosts and networks named in ``HEARTBEAT_OBSERVE_HOSTS`` (host names and
CIDRs, comma separated) may be reached; anything else is a 403 naming the setting (docs/observe.md).
"""

from __future__ import annotations

import base64
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

import yaml
from django.conf import settings

from heartbeat_site.live.errors import ApiError

MAX_TOKEN = 16_384  # a service account token is about 1 KB; an OIDC one a few
NO_SERVER = ('server: the API server URL is needed, e.g. "https://10.0.0.1:6443" (or a kubeconfig whose current '
             "context names one)")


@dataclass(frozen=True)
class Target:
    """The cluster to watch: its API server URL, a bearer token, and the CA to verify it with (PEM), if given."""

    server: str
    token: str | None
    ca: str | None
    host: str

    def public(self) -> dict:
        """What may be shown and stored about it: never the token."""
        return {"server": self.server, "ca": self.ca is not None, "token": self.token is not None}


def target_from(body: dict) -> Target:
    """The target a POST body names (``server``, ``token``?, ``kubeconfig``?, ``ca``?), or a 400 naming the
    field. A kubeconfig gives its current context's server, CA and token; the body's own fields win."""
    server, token, ca = body.get("server"), body.get("token"), body.get("ca")
    if body.get("kubeconfig") is not None:
        from_config = _kubeconfig(body["kubeconfig"])
        server = server or from_config[0]
        ca = ca or from_config[1]
        token = token or from_config[2]
    for name, value in (("server", server), ("token", token), ("ca", ca)):
        if value is not None and not isinstance(value, str):
            raise ApiError(400, "wrong-type", f"{name}: must be a string")
    if not server:
        raise ApiError(400, "missing-field", NO_SERVER)
    if token is not None and (len(token) > MAX_TOKEN or not token.isascii() or any(c.isspace() for c in token)):
        raise ApiError(400, "bad-token", f"token: a bearer token is one line of at most {MAX_TOKEN} ASCII characters")
    if ca is not None and "BEGIN CERTIFICATE" not in ca:
        raise ApiError(400, "bad-ca", "ca: must be PEM certificates (-----BEGIN CERTIFICATE-----)")
    parts = urlsplit(server)
    if parts.scheme not in ("https", "http") or not parts.hostname:
        raise ApiError(400, "bad-server", f"server: must be an http(s) URL with a host, got {server!r}")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ApiError(400, "bad-server", "server: no user, query or fragment in the URL; give a token instead")
    return Target(server=server.rstrip("/"), token=token or None, ca=ca, host=parts.hostname)


def _kubeconfig(text: object) -> tuple[str | None, str | None, str | None]:
    """(server, CA PEM, token) of a kubeconfig's current context; only bearer tokens are supported."""
    if not isinstance(text, str):
        raise ApiError(400, "wrong-type", "kubeconfig: must be the kubeconfig's text (YAML)")
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError:
        raise ApiError(400, "bad-kubeconfig", "kubeconfig: not YAML") from None
    if not isinstance(config, dict):
        raise ApiError(400, "bad-kubeconfig", "kubeconfig: not a kubeconfig (a mapping with clusters and contexts)")

    def named(section: str, name: object) -> dict:
        for entry in config.get(section) or ():
            if isinstance(entry, dict) and entry.get("name") == name:
                return entry.get(section[:-1]) or {}
        raise ApiError(400, "bad-kubeconfig", f"kubeconfig: no {section[:-1]} named {name!r}")

    context = named("contexts", config.get("current-context"))
    cluster = named("clusters", context.get("cluster"))
    user = named("users", context.get("user")) if context.get("user") else {}
    if user.get("client-certificate-data") or user.get("client-certificate") or user.get("exec"):
        raise ApiError(400, "unsupported-credentials",
                       "kubeconfig: only a bearer token (users[].user.token) is supported, not client certificates "
                       "or exec plugins; give a read-only service account's token")
    ca = cluster.get("certificate-authority-data")
    try:
        pem = base64.b64decode(ca).decode() if ca else None
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "bad-kubeconfig", "kubeconfig: certificate-authority-data is not base64 PEM") from None
    return cluster.get("server"), pem, user.get("token")


def check_allowed(target: Target) -> None:
    """A 403 naming the setting unless the operator enabled watching and allows this host (no connection made:
    a name not listed is resolved, and each of its addresses must lie in an allowed network)."""
    conf = settings.HEARTBEAT
    if not conf["OBSERVE"]:
        raise ApiError(403, "observe-disabled",
                       "watching a real cluster is off on this server; its operator enables it with "
                       "HEARTBEAT_OBSERVE=1 and names the hosts it may reach in HEARTBEAT_OBSERVE_HOSTS")
    names, networks = allowed()
    host = target.host.lower().rstrip(".")
    if host in names:
        return
    addresses = _addresses(host)
    if addresses and networks and all(any(address in network for network in networks) for address in addresses):
        return
    raise ApiError(403, "host-not-allowed",
                   f"server: {target.host} is not among the hosts this server may watch; its operator lists them "
                   "in HEARTBEAT_OBSERVE_HOSTS (host names and CIDRs, comma separated)")


def allowed() -> tuple[set[str], list[ipaddress.IPv4Network | ipaddress.IPv6Network]]:
    """HEARTBEAT_OBSERVE_HOSTS as host names and networks."""
    names: set[str] = set()
    networks = []
    for item in settings.HEARTBEAT["OBSERVE_HOSTS"]:
        try:
            networks.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            names.add(item.lower().rstrip("."))
    return names, networks


def _addresses(host: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The host's addresses: itself when it is one, else what the resolver says (no connection to it)."""
    try:
        return [ipaddress.ip_address(host.strip("[]"))]
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in found]
