"""``POST /api/observations`` before any watching (docs/observe.md): the operator's settings are checked before any
connection, the credentials cross Redis sealed, and the errors a trainer meets name the problem."""

from __future__ import annotations

import datetime
import ipaddress
import json
import queue
import socket
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from heartbeat_site.live.models import Run
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.observe import sealed
from heartbeat_site.observe.access import Target
from heartbeat_site.observe.changes import RESOURCES, Change, ChangeMapper
from heartbeat_site.observe.cluster import Connection, Seen, Watcher
from heartbeat_site.observe.snapshot import grace_of
from simulation import Simulation, load_scenario

from .conftest import small_document

pytestmark = pytest.mark.django_db

TOKEN = "observe-test-token-3f9a1c"


def observe(api, body: dict):
    return api.post("/api/observations", json.dumps(body), content_type="application/json")


@pytest.fixture
def observing(settings):
    """Watching enabled for this machine's loopback only."""
    settings.HEARTBEAT = {**settings.HEARTBEAT, "OBSERVE": True, "OBSERVE_HOSTS": ["127.0.0.1", "cluster.example"]}
    return settings


@contextmanager
def listening() -> Iterator[tuple[int, queue.Queue]]:
    """A TCP socket on loopback that reports every connection made to it (the peer's address), in order."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.05)
    accepted: queue.Queue[tuple] = queue.Queue()
    done = threading.Event()

    def accept() -> None:
        while not done.is_set():
            try:
                conn, address = server.accept()
            except TimeoutError:
                continue
            accepted.put(address)
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], accepted
    finally:
        done.set()
        thread.join()
        server.close()


@pytest.mark.parametrize(("conf", "setting"), [
    ({"OBSERVE": False, "OBSERVE_HOSTS": ["127.0.0.1"]}, "HEARTBEAT_OBSERVE=1"),
    ({"OBSERVE": True, "OBSERVE_HOSTS": ["10.0.0.0/8", "cluster.example"]}, "HEARTBEAT_OBSERVE_HOSTS"),
])
def test_a_target_the_operator_did_not_allow_is_refused_before_any_connection(api, settings, conf, setting):
    settings.HEARTBEAT = {**settings.HEARTBEAT, **conf}
    with listening() as (port, accepted):
        response = observe(api, {"server": f"https://127.0.0.1:{port}", "token": TOKEN})
        assert response.status_code == 403
        assert setting in response.json()["message"]
        # a connection of our own: the first the socket accepts, so the refusal made none before it
        with socket.create_connection(("127.0.0.1", port)) as probe:
            assert accepted.get(timeout=10) == probe.getsockname()
    assert accepted.empty()
    assert not Run.objects.exists()


class FakeApiServer(BaseHTTPRequestHandler):
    """A Kubernetes API server's reads, empty: /version and the five lists; ``refuse`` answers 403 to one path."""

    refuse: str = ""
    redirect: str = ""

    def do_GET(self) -> None:
        path = self.path.split("?")[0].rstrip("/")
        if self.redirect:
            self.send_response(302)
            self.send_header("Location", f"{self.redirect}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif path == "/version":
            self._send(200, {"major": "1", "minor": "31", "gitVersion": "v1.31.4"})
        elif self.refuse and path == self.refuse:
            self._send(403, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden",
                             "code": 403, "message": "forbidden"})
        else:
            self._send(200, {"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "7"}, "items": []})

    def _send(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def fake_cluster(refuse: str = "", tls: ssl.SSLContext | None = None, redirect: str = "") -> Iterator[str]:
    handler = type("Handler", (FakeApiServer,), {"refuse": refuse, "redirect": redirect})
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        if tls is not None:
            server.socket = tls.wrap_socket(server.socket, server_side=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}"
        finally:
            server.shutdown()


def test_an_allowed_server_cannot_redirect_the_watch_elsewhere(api, observing):
    with listening() as (port, accepted), fake_cluster(redirect=f"http://127.0.0.1:{port}") as server:
        response = observe(api, {"server": server, "token": TOKEN})
        with socket.create_connection(("127.0.0.1", port)) as probe:
            assert accepted.get(timeout=10) == probe.getsockname()  # the first connection it saw: ours
    assert response.status_code in (400, 502)
    assert "302" in response.json()["message"]
    assert not Run.objects.exists()


def test_an_allowed_cluster_is_observed_with_its_token_sealed(api, observing, dispatched):
    with fake_cluster() as server:
        response = observe(api, {"server": server, "token": TOKEN, "nodeMonitorGracePeriod": "1m"})
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["kind"] == "observation" and body["run"]["kind"] == "observation"
    assert dispatched == [body["id"]]
    run = Run.objects.get(pk=body["id"])
    assert (run.kind, run.version) == ("observation", "1.31")
    assert grace_of(run) == 60.0  # the trainer's, not 1.31's default 40 s
    assert TOKEN not in json.dumps(body) and TOKEN not in json.dumps(run.document)
    stored = get_redis().get(f"hb:run:{{{run.id}}}:sealed")
    assert stored and TOKEN not in stored  # encrypted on its way to the worker
    target = sealed.unseal(run.id)
    assert target is not None and target.token == TOKEN
    assert sealed.unseal(run.id) is None  # read once


def test_a_kubeconfig_gives_the_server_and_the_token(api, observing, dispatched):
    with fake_cluster() as server:
        config = {"apiVersion": "v1", "kind": "Config", "current-context": "lab",
                  "clusters": [{"name": "lab", "cluster": {"server": server}}],
                  "users": [{"name": "reader", "user": {"token": TOKEN}}],
                  "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "reader"}}]}
        response = observe(api, {"kubeconfig": yaml.safe_dump(config)})
        assert response.status_code == 201, response.json()
        certificates = {**config, "users": [{"name": "reader", "user": {"client-certificate-data": "eA=="}}]}
        refused = observe(api, {"kubeconfig": yaml.safe_dump(certificates)})
    assert (refused.status_code, refused.json()["error"]) == (400, "unsupported-credentials")
    assert sealed.unseal(response.json()["id"]).token == TOKEN


def test_a_token_that_may_not_list_a_resource_names_it(api, observing, dispatched):
    with fake_cluster(refuse="/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases") as server:
        response = observe(api, {"server": server, "token": TOKEN})
    assert response.status_code == 400
    assert "may not list or watch leases in namespace kube-node-lease (403 Forbidden" in response.json()["message"]
    assert not dispatched and not Run.objects.exists()


def test_an_unreachable_server_is_said_so(api, observing):
    with listening() as (port, _):
        pass  # closed again: nothing listens on the port now
    response = observe(api, {"server": f"http://127.0.0.1:{port}"})
    assert response.status_code == 502
    assert response.json()["message"].startswith(f"cannot reach the API server at http://127.0.0.1:{port}: ")
    assert "refused" in response.json()["message"]


def test_a_certificate_that_cannot_be_verified_asks_for_the_ca(api, observing, dispatched, tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cluster.example")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .sign(key, hashes.SHA256()))
    pem = certificate.public_bytes(serialization.Encoding.PEM).decode()
    (tmp_path / "cert.pem").write_text(pem)
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                         serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    with fake_cluster(tls=tls) as server:
        response = observe(api, {"server": server})
        assert response.status_code == 502
        assert "could not be verified" in response.json()["message"]
        assert 'give the cluster\'s CA certificate as "ca"' in response.json()["message"]
        trusted = observe(api, {"server": server, "ca": pem})  # the same server, its CA given
    assert trusted.status_code == 201, trusted.json()


@pytest.mark.parametrize(("body", "error"), [
    ({"server": "ftp://127.0.0.1"}, "bad-server"),
    ({"server": "https://user:pw@127.0.0.1"}, "bad-server"),
    ({"server": "https://127.0.0.1", "token": "two words"}, "bad-token"),
    ({"server": "https://127.0.0.1", "ca": "not a certificate"}, "bad-ca"),
    ({"token": TOKEN}, "missing-field"),
    ({"kubeconfig": "- a list"}, "bad-kubeconfig"),
    ({"server": "https://127.0.0.1", "nodeMonitorGracePeriod": "soon"}, "bad-grace-period"),
    ({"server": "https://127.0.0.1", "nodeMonitorGracePeriod": 0}, "bad-grace-period"),
])
def test_bad_targets_are_named(api, observing, body, error):
    response = observe(api, body)
    assert (response.status_code, response.json()["error"]) == (400, error)
    assert TOKEN not in response.content.decode()


def test_the_objects_of_a_run_alone_give_its_transitions_and_say_who_is_inferred():
    """What a watch sees of a simulated run (each write's object, nothing else) mapped as an observation maps it:
    the run's own transitions, but the node lifecycle controller's zone states, which no object holds."""
    sim = Simulation(load_scenario({**small_document(), "duration": "7m"}))
    sim.schedule_command({"action": "stop-kubelet", "node": "node-2"}, 25)
    events = [event.to_dict() for event in sim.run_until(400)]
    mapper = ChangeMapper()
    observed = []
    for event in events:
        if event["type"] == "write" and event["code"] < 400 and event["resource"] in RESOURCES:
            new = None if event["removed"] else event["object"]
            observed += mapper.apply(Change(event["resource"], event["namespace"], event["name"], new, event["t"],
                                            event["time"]))

    def transitions(of: list[dict]) -> list[tuple]:
        return [(e["kind"], e["node"], e["key"], e["effect"], json.dumps(e["to"]), e["pod"]) for e in of
                if e["type"] == "transition" and e["kind"] != "zone-state"]

    assert transitions(observed) == transitions(events)
    assert all(e["inferred"] == ["component", "user", "verb"] for e in observed if e["type"] == "write")
    unreachable = [e for e in observed if e["type"] == "transition" and e["kind"] == "taint-added"
                   and e["node"] == "node-2" and e["key"] == "node.kubernetes.io/unreachable"]
    assert len(unreachable) == 2 and {e["component"] for e in unreachable} == {"node-lifecycle-controller"}


class WatchedApiServer(FakeApiServer):
    """Lists and watches as a real API server: nodes' first watch delivers a change then expires (410 Gone), pods
    fail once (500), events are forbidden (403), every other list is empty and every other watch ends at once."""

    calls: list[str]

    def do_GET(self) -> None:
        path, _, query = self.path.partition("?")
        watching = "watch=true" in query.lower() or "watch=1" in query
        self.calls.append(f"{'watch' if watching else 'list'} {path}")
        count = self.calls.count(self.calls[-1])
        if path == "/api/v1/events":
            self._send(403, {"kind": "Status", "code": 403, "reason": "Forbidden", "message": "forbidden"})
        elif path == "/api/v1/pods" and not watching and count == 1:
            self._send(500, {"kind": "Status", "code": 500, "message": "etcdserver: request timed out"})
        elif watching:
            lines = []
            if path == "/api/v1/nodes" and count == 1:
                node = {"metadata": {"name": "node-b", "resourceVersion": "6"}, "status": {"conditions": []}}
                lines = [{"type": "ADDED", "object": node},
                         {"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old"}}]
            data = b"".join(json.dumps(line).encode() + b"\n" for line in lines)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        else:
            items = [{"metadata": {"name": "node-a", "resourceVersion": "5"}}] if path == "/api/v1/nodes" else []
            self._send(200, {"kind": "List", "metadata": {"resourceVersion": "5"}, "items": items})


def test_the_watcher_lists_watches_lists_again_when_expired_and_backs_off():
    handler = type("Handler", (WatchedApiServer,), {"calls": []})
    seen: list[Seen] = []
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        stop = threading.Event()
        target = Target(server=f"http://127.0.0.1:{server.server_address[1]}", token=TOKEN, ca=None,
                        host="127.0.0.1")
        watcher = Watcher(Connection(target), stop)
        watcher.start()
        try:
            while not (sum(1 for s in seen if s.kind == "listed" and s.resource == "nodes") >= 2
                       and any(s.kind == "listed" and s.resource == "pods" for s in seen)
                       and any(s.resource == "events" for s in seen)):
                seen.append(watcher.seen.get(timeout=10))
        finally:
            stop.set()
            server.shutdown()
    nodes = [s for s in seen if s.resource == "nodes"]
    assert [s.kind for s in nodes[:3]] == ["listed", "changed", "listed"]  # 410 Gone: listed again
    assert nodes[1].obj["metadata"]["name"] == "node-b"
    pods = [s for s in seen if s.resource == "pods"]
    assert pods[0].problem is not None and pods[1].kind == "listed"  # retried after a pause
    assert (pods[0].problem.kind, pods[0].problem.status, pods[0].problem.fatal) == ("answered", 500, False)
    assert "answered 500" in pods[0].problem.sentence
    events = next(s for s in seen if s.resource == "events").problem
    assert events is not None and (events.kind, events.fatal) == ("forbidden", True)
    assert "may not list or watch events (all namespaces)" in events.sentence


class QuietApiServer(FakeApiServer):
    """Lists empty, and watches that send nothing until the client goes (a quiet resource on a real server):
    ``watches`` says when each opened and ended."""

    watches: queue.Queue

    def do_GET(self) -> None:
        if "watch=" not in self.path:
            super().do_GET()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.flush()
        self.watches.put("opened")
        self.connection.recv(1)  # b"" once the client has closed the connection
        self.watches.put("ended")


def test_closing_the_connection_ends_its_quiet_watches_at_once():
    handler = type("Handler", (QuietApiServer,), {"watches": queue.Queue()})
    with ThreadingHTTPServer(("127.0.0.1", 0), handler) as server:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        stop = threading.Event()
        connection = Connection(Target(server=f"http://127.0.0.1:{server.server_address[1]}", token=TOKEN, ca=None,
                                       host="127.0.0.1"))
        watcher = Watcher(connection, stop)
        watcher.start()
        try:
            assert [handler.watches.get(timeout=10) for _ in RESOURCES] == ["opened"] * len(RESOURCES)
            stop.set()
            connection.close()
            assert watcher.join(5), "a watching thread outlived its connection"
            assert [handler.watches.get(timeout=5) for _ in RESOURCES] == ["ended"] * len(RESOURCES)
        finally:
            stop.set()
            server.shutdown()
    assert not [s for s in watcher.seen.queue if s.kind == "problem"]  # an ended watch is no problem to report
