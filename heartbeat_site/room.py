"""The room's address when a class is hosted on one laptop (``make classroom``).

Phones on the room's Wi-Fi reach the laptop at one of its network addresses, never at
``127.0.0.1`` (on a phone that is the phone itself). ``find_room`` picks that address: the one
the laptop's default route leaves from, or the one the trainer names (an interface, an address or
a host name). The command that serves the class writes the room's URL to a file, and every
process of the site reads it from there (``public_url``), so the links the site hands out, and the
host names it accepts, follow the laptop when its address changes, without a restart.
"""

from __future__ import annotations

import io
import ipaddress
import os
import socket
import tempfile
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import segno

# A documentation address (RFC 5737, TEST-NET-3): connecting a UDP socket to it sends nothing,
# it only asks the kernel which local address its route (the default one) would leave from.
_ROUTE_PROBE = ("203.0.113.1", 9)


class RoomNotFound(ValueError):
    """The room's address cannot be found; the message says what to do."""


def default_route_address() -> str | None:
    """The IPv4 address the default route leaves from, or None without one (no network)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(_ROUTE_PROBE)
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if ipaddress.ip_address(address).is_loopback or address == "0.0.0.0" else address


def interface_addresses() -> dict[str, list[str]]:
    """The IPv4 addresses of each network interface that is up, loopback and link-local ones left out."""
    stats = psutil.net_if_stats()
    found: dict[str, list[str]] = {}
    for name, addresses in psutil.net_if_addrs().items():
        if name in stats and not stats[name].isup:
            continue
        usable = [
            a.address for a in addresses
            if a.family == socket.AF_INET and not ipaddress.ip_address(a.address).is_loopback
            and not ipaddress.ip_address(a.address).is_link_local
        ]  # fmt: skip
        if usable:
            found[name] = usable
    return found


def find_room(spec: str = "") -> str:
    """The host name or address phones will use: ``spec`` is empty (the default route's address), an
    interface name (its first IPv4 address), an IP address or a host name (used as it is, e.g.
    ``laptop.local``)."""
    spec = spec.strip()
    if not spec:
        address = default_route_address() or next(iter(sum(interface_addresses().values(), [])), None)
        if address is None:
            raise RoomNotFound("this machine has no network address: join the room's Wi-Fi, or set ROOM=<address>")
        return address
    interfaces = interface_addresses()
    if spec in interfaces:
        return interfaces[spec][0]
    if spec in psutil.net_if_addrs():
        raise RoomNotFound(f"ROOM={spec}: the interface has no IPv4 address (is it up and connected?)")
    try:
        return str(ipaddress.ip_address(spec.strip("[]")))
    except ValueError:
        pass
    try:
        socket.getaddrinfo(spec, None)
    except OSError:
        raise RoomNotFound(
            f"ROOM={spec}: not an interface of this machine ({', '.join(sorted(interfaces)) or 'none is up'}), "
            "an IP address or a host name that resolves"
        ) from None
    return spec


def room_url(host: str, port: int) -> str:
    """``http://host:port``, an IPv6 address in brackets."""
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    shown = f"[{host}]" if literal is not None and literal.version == 6 else host
    return f"http://{shown}:{port}"


def write_public_url(path: Path, url: str) -> None:
    """Replace the file's content at once: a reader sees the old URL or the new one, never half of it."""
    with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, encoding="utf-8") as out:
        out.write(url + "\n")
    os.replace(out.name, path)


class PublicUrlFile:
    """The URL in a file the serving command keeps up to date, read again only when the file changed."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._stamp: tuple[int, int] | None = None
        self._url = ""

    def url(self) -> str:
        try:
            stat = os.stat(self.path)
        except OSError:
            return self._url  # being replaced, or gone at shutdown: keep the last one
        stamp = (stat.st_mtime_ns, stat.st_ino)
        if stamp != self._stamp:
            try:
                self._url = Path(self.path).read_text(encoding="utf-8").strip().rstrip("/")
            except OSError:
                return self._url
            self._stamp = stamp
        return self._url


class HostsWithPublicUrl(list):
    """``ALLOWED_HOSTS``: the configured names, and the host of the public URL as it is now.

    Django (``validate_host``) and Channels' origin check iterate the setting on every request, so
    the host a network change brings is accepted at once and the old one no longer is.
    """

    def __init__(self, hosts: list[str], public_url: PublicUrlFile) -> None:
        super().__init__(hosts)
        self.public_url = public_url

    def __iter__(self):
        yield from super().__iter__()
        host = _host_of(self.public_url.url())
        if host:
            yield host


def _host_of(url: str) -> str:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return f"[{host}]" if ":" in host else host


def terminal_qr(url: str) -> str:
    """``url``'s QR code in text, two modules a character (light blocks on a dark terminal), as phones scan it."""
    out = io.StringIO()
    segno.make(url, error="m", micro=False).terminal(out=out, compact=True, border=2)
    return out.getvalue()


class RoomWatch:
    """The room's URL, found again on every ``check``: the laptop may re-join the Wi-Fi with another address."""

    def __init__(self, spec: str, port: int, path: Path) -> None:
        self.spec = spec
        self.port = port
        self.path = path
        self.url = ""

    def check(self) -> str | None:
        """The new URL when it changed (written to the file first), else None. A laptop without a network
        keeps its last URL: the pages come back when it does."""
        try:
            url = room_url(find_room(self.spec), self.port)
        except RoomNotFound:
            if not self.url:
                raise
            return None
        if url == self.url:
            return None
        write_public_url(self.path, url)
        self.url = url
        return url
