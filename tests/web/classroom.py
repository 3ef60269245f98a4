"""Helpers for the tests of ``make classroom``: a phone on the room's network (a network namespace this
test makes, joined to this machine by a veth pair), the classroom command as a real process, and its
terminal QR code read back by a QR decoder.

Only addresses of the namespaces made here are used (10.213.x.y/30, private), and the phone's
namespace has no route but its /30: it cannot reach anything else.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import zxingcpp

from heartbeat_site import processes
from heartbeat_site.embedded_redis import free_port

from .conftest import small_document
from .live import database_url, http

PHONE_CLIENT = Path(__file__).with_name("phone_client.py")
PRINTED = re.compile(r"The room (?:now )?joins at (http://\S+)")


def netns_unavailable() -> str | None:
    """Why the test cannot make a network namespace here, or None."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed"
    if os.geteuid() != 0:
        return "making a network namespace needs root"
    probe = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return None if probe.returncode == 0 else f"`ip netns` fails here: {probe.stderr.strip()}"


def ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


@dataclass
class Phone:
    """A namespace with one end of a veth pair; this machine holds the other end (``interface``)."""

    namespace: str
    interface: str
    subnet: int  # the third byte of 10.213.<subnet>.0/24, from which the /30s are taken

    def laptop_address(self, net: int = 0) -> str:
        return f"10.213.{self.subnet}.{4 * net + 1}"

    def phone_address(self, net: int = 0) -> str:
        return f"10.213.{self.subnet}.{4 * net + 2}"

    def join(self, net: int) -> None:
        """Both ends take addresses in the /30 number ``net`` (the laptop re-joining another network)."""
        ip("addr", "add", f"{self.laptop_address(net)}/30", "dev", self.interface)
        ip("-n", self.namespace, "addr", "add", f"{self.phone_address(net)}/30", "dev", "phone0")

    def leave(self, net: int) -> None:
        ip("addr", "del", f"{self.laptop_address(net)}/30", "dev", self.interface)
        ip("-n", self.namespace, "addr", "del", f"{self.phone_address(net)}/30", "dev", "phone0")

    def run(self, *args: str, timeout: float = 60) -> str:
        """``phone_client.py`` run inside the phone's namespace; its standard output."""
        done = subprocess.run(
            ["ip", "netns", "exec", self.namespace, sys.executable, str(PHONE_CLIENT), *args],
            capture_output=True, text=True, timeout=timeout,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    def routes(self) -> str:
        return subprocess.run(
            ["ip", "-n", self.namespace, "route"], check=True, capture_output=True, text=True
        ).stdout


def free_subnet() -> int:
    """A 10.213.<n>.0/24 no interface of this machine has an address in (tests may run side by side)."""
    used = subprocess.run(["ip", "-4", "-o", "addr"], check=True, capture_output=True, text=True).stdout
    taken = {int(n) for n in re.findall(r"inet 10\.213\.(\d+)\.", used)}
    return next(n for n in range(os.getpid() % 250, os.getpid() % 250 + 250) if n % 250 not in taken) % 250


def make_phone() -> Phone:
    tag = os.getpid() % 100_000
    phone = Phone(namespace=f"hb-phone-{tag}", interface=f"hbroom{tag}", subnet=free_subnet())
    ip("netns", "add", phone.namespace)
    try:
        ip("link", "add", phone.interface, "type", "veth", "peer", "name", "phone0", "netns", phone.namespace)
        ip("link", "set", phone.interface, "up")
        ip("-n", phone.namespace, "link", "set", "phone0", "up")
        ip("-n", phone.namespace, "link", "set", "lo", "up")
        phone.join(0)
    except BaseException:
        remove_phone(phone)
        raise
    return phone


def remove_phone(phone: Phone) -> None:
    """Deleting the namespace deletes its veth end and so the pair; the other end is deleted if it lingers."""
    subprocess.run(["ip", "netns", "del", phone.namespace], capture_output=True)
    subprocess.run(["ip", "link", "del", phone.interface], capture_output=True)


@dataclass
class Classroom:
    """``manage.py runstack`` in classroom mode, its terminal output in ``log``."""

    process: subprocess.Popen
    log: Path
    port: int

    @property
    def local(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def printed_urls(self) -> list[str]:
        return PRINTED.findall(self.output())

    def wait_printed(self, count: int, timeout: float = 60.0) -> str:
        """The ``count``-th room URL the command printed, once it has."""
        deadline = time.monotonic() + timeout
        while len(urls := self.printed_urls()) < count:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"no room URL number {count} printed:\n{self.output()[-4000:]}")
            time.sleep(0.1)
        return urls[count - 1]

    def terminal_qr(self, count: int) -> list[str]:
        """What a QR decoder reads in the ``count``-th QR code the command printed."""
        blocks = [block for block in re.findall(r"((?:^[█▀▄ ]+\n)+)", self.output(), re.MULTILINE) if "█" in block]
        return decode_text_qr(blocks[count - 1])

    def stop(self) -> None:
        processes.stop(self.process, timeout=20)


def start_classroom(logdir: Path, room: str, **extra_env: str) -> Classroom:
    port = free_port()
    log = logdir / "classroom.log"
    env = {
        "HEARTBEAT_CLASSROOM": "1",
        "ROOM": room,
        "DATABASE_URL": database_url(),
        "REDIS_URL": os.environ["REDIS_URL"],
        "HEARTBEAT_LEASE_TTL": "1.5",
        "HEARTBEAT_MAX_RUNS_PER_CLIENT": "100",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "PYTHONUNBUFFERED": "1",
        "HEARTBEAT_STATIC_ROOT": str(logdir / "staticfiles"),  # not the checkout's: other runs may collect there
        **extra_env,
    }
    env.pop("DJANGO_DEBUG", None)
    command = [sys.executable, "manage.py", "runstack", "--port", str(port), "--workers", "4"]
    process = subprocess.Popen(
        command, cwd=processes.BASE_DIR, env={**os.environ, **env}, stdout=open(log, "ab"),  # noqa: SIM115
        stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    return Classroom(process=process, log=log, port=port)


def decode_text_qr(block: str, pixels: int = 4) -> list[str]:
    """A QR code printed two modules a character (light blocks on a dark terminal), read back as a phone's camera
    sees that terminal."""
    lit = {"█": (True, True), "▀": (True, False), "▄": (False, True), " ": (False, False)}
    rows: list[list[bool]] = []
    for line in block.splitlines():
        pairs = [lit[char] for char in line]
        rows += [[top for top, _ in pairs], [bottom for _, bottom in pairs]]
    width, height = max(len(row) for row in rows), len(rows)
    margin = 4  # a dark terminal around the code
    size_x, size_y = (width + 2 * margin) * pixels, (height + 2 * margin) * pixels
    grey = bytearray(size_x * size_y)
    for y, row in enumerate(rows):
        for x, light in enumerate(row):
            if light:
                for py in range((y + margin) * pixels, (y + margin + 1) * pixels):
                    start = py * size_x + (x + margin) * pixels
                    grey[start:start + pixels] = b"\xff" * pixels
    image = memoryview(bytes(grey)).cast("B", (size_y, size_x))
    return [code.text for code in zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)]


@contextmanager
def phone_on_room_network() -> Iterator[Phone]:
    """A phone for a module's tests; the test is skipped, naming why, where no namespace can be made."""
    reason = netns_unavailable()
    if reason:
        pytest.skip(f"no phone on a room network: {reason}")
    made = make_phone()
    try:
        yield made
    finally:
        remove_phone(made)


@contextmanager
def classroom_serving(phone: Phone, logdir: Path) -> Iterator[Classroom]:
    """The classroom command, told to use the veth end's interface as the room's (``ROOM=<interface>``), and
    to look for a new address five times a second."""
    room = start_classroom(logdir, phone.interface, HEARTBEAT_ROOM_POLL_SECONDS="0.2")
    try:
        room.wait_printed(1)
        yield room
    except BaseException:
        print(room.output()[-6000:])
        raise
    finally:
        room.stop()


def start_run(classroom: Classroom, speed: float = 10) -> dict:
    """A run started by the trainer's browser on the laptop itself (127.0.0.1)."""
    status, body = http("POST", f"{classroom.local}/api/runs", {"document": small_document(), "speed": speed})
    assert status == 201, body
    return body
