"""The websocket consumer in-process against the real Redis (the run's feed, its event log).

A stand-in publisher writes what a driver writes (log, state, snapshot, frames) so each
delivery rule can be provoked on purpose: lost frames, duplicates, resumes, bad input.
"""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
import pytest_asyncio
from autobahn.exception import Disconnected
from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.testing import WebsocketCommunicator

from heartbeat_site.asgi import application
from heartbeat_site.live.delivery import fanout, frames, publisher
from heartbeat_site.live.delivery.consumers import RunConsumer
from heartbeat_site.live.models import Run
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore import naming, ownership, viewer_presence
from simulation import Simulation, load_scenario

from .conftest import reached_run

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

ORIGIN = (b"origin", b"http://127.0.0.1:8000")
CLOCK = {"t": 1.0, "speed": 1.0, "paused": False}


class FakeDriver:
    """Publishes like heartbeat_site.live.driving.driver.RunDriver, without a simulation."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.lease = ownership.Lease(run_id, uuid.uuid4().hex, ttl=30)
        assert self.lease.acquire()

    @staticmethod
    def events(first: int, last: int) -> list[dict]:
        return [{"seq": s, "t": float(s), "type": "transition", "node": "node-2"} for s in range(first, last + 1)]

    def log(self, first: int, last: int, t: float | None = None) -> list[dict]:
        events = self.events(first, last)
        state = {
            "t": repr(t if t is not None else float(last)),
            "last_seq": last,
            "speed": 1.0,
            "paused": 0,
            "status": "running",
        }
        assert self.lease.publish(frames.encode_events(events), state)
        return events

    def pause(self, t: float, last_seq: int) -> None:
        """What a driver publishes when a trainer pauses: no event, the run's state paused."""
        state = {"t": repr(t), "last_seq": last_seq, "speed": 1.0, "paused": 1, "status": "running"}
        assert self.lease.publish([], state, resume_from=last_seq)

    def snapshot(self, last_seq: int) -> None:
        assert self.lease.store_snapshot(
            frames.dumps(frames.snapshot_body({"last_seq": last_seq, "objects": {}}, CLOCK, last_seq))
        )

    async def frame(self, first: int, last: int) -> None:
        message = frames.frame(self.events(first, last), CLOCK)
        text = frames.dumps(message)
        publisher.publish(self.run_id, {"type": "run.frame", "text": text, "first": first, "last": last})


@pytest_asyncio.fixture
async def run_id():
    run = await database_sync_to_async(Run.objects.create)(
        scenario_name="x",
        document={"name": "x", "title": {"en": "X"}},
        seed=1,
        version="1.33",
        duration=300,
        control_token_hash="0" * 64,
    )
    yield run.id
    client = get_redis()
    for key in client.keys(f"hb:run:{{{run.id}}}:*"):
        client.delete(key)


async def connect(path: str, origin: tuple[bytes, bytes] = ORIGIN) -> tuple[WebsocketCommunicator, bool]:
    communicator = WebsocketCommunicator(application, path, headers=[origin, (b"host", b"127.0.0.1:8000")])
    connected, _ = await communicator.connect(timeout=5)
    return communicator, connected


async def receive(communicator: WebsocketCommunicator, kind: str | None = None, timeout: float = 3.0) -> dict:
    """The next message (of ``kind`` if given; presence messages are skipped unless asked for)."""
    while True:
        message = json.loads(await communicator.receive_from(timeout=timeout))
        if kind is None and message["type"] == "presence":
            continue
        if kind is None or message["type"] == kind:
            return message


async def seqs_until(communicator: WebsocketCommunicator, last: int) -> list[int]:
    seen: list[int] = []
    while not seen or seen[-1] < last:
        message = await receive(communicator, "frame")
        assert message["seq"] == [message["events"][0]["seq"], message["events"][-1]["seq"]]
        seen.extend(event["seq"] for event in message["events"])
    return seen


async def test_snapshot_first_then_catch_up_then_live_frames(run_id):
    driver = FakeDriver(run_id)
    driver.snapshot(0)
    driver.log(1, 3)
    ws, connected = await connect(f"/ws/runs/{run_id}/")
    assert connected
    first = await receive(ws)
    assert first["type"] == "snapshot"
    assert first["last_seq"] == 0
    assert first["run"]["id"] == run_id
    assert (await receive(ws, "presence")) == {"type": "presence", "viewers": 1}  # the count follows the snapshot
    assert await seqs_until(ws, 3) == [1, 2, 3]
    driver.log(4, 6)
    await driver.frame(4, 6)
    assert await seqs_until(ws, 6) == [4, 5, 6]
    await ws.disconnect()


async def test_a_viewer_joining_a_paused_run_gets_its_clock_paused_at_once(run_id):
    """The stored snapshot is as old as its last event and its clock still runs; the state says paused."""
    driver = FakeDriver(run_id)
    driver.log(1, 3)
    driver.snapshot(3)
    driver.pause(t=7.5, last_seq=3)
    ws, _ = await connect(f"/ws/runs/{run_id}/")
    snapshot = await receive(ws, "snapshot")
    assert not snapshot["clock"]["paused"]
    clock = await receive(ws, timeout=0.5)  # the driver's own quiet-second clock would come after a second
    assert clock["type"] == "clock" and clock["clock"] == {"t": 7.5, "speed": 1.0, "paused": True}
    await ws.disconnect()


async def test_lost_frame_is_filled_from_log_and_duplicates_dropped(run_id):
    driver = FakeDriver(run_id)
    driver.snapshot(0)
    ws, _ = await connect(f"/ws/runs/{run_id}/")
    await receive(ws, "snapshot")
    driver.log(1, 4)  # the frame for 1..4 is "lost" on the feed
    driver.log(5, 6)
    await driver.frame(5, 6)
    await driver.frame(5, 6)  # duplicate delivery
    driver.log(7, 7)
    await driver.frame(7, 7)
    assert await seqs_until(ws, 7) == [1, 2, 3, 4, 5, 6, 7]
    assert await ws.receive_nothing(timeout=0.2)
    await ws.disconnect()


async def test_resume_after_sends_exactly_the_missing_events(run_id):
    driver = FakeDriver(run_id)
    driver.snapshot(0)
    driver.log(1, 9)
    ws, _ = await connect(f"/ws/runs/{run_id}/?after=6")
    resumed = await receive(ws)
    assert (resumed["type"], resumed["after"], resumed["last_seq"]) == ("resumed", 6, 9)
    assert await seqs_until(ws, 9) == [7, 8, 9]
    await ws.disconnect()


async def test_resume_older_than_log_falls_back_to_snapshot(run_id, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "EVENT_LOG_SIZE": 5}
    driver = FakeDriver(run_id)
    driver.log(1, 20)
    driver.snapshot(18)
    ws, _ = await connect(f"/ws/runs/{run_id}/?after=3")
    snapshot = await receive(ws)
    assert (snapshot["type"], snapshot["last_seq"]) == ("snapshot", 18)
    assert await seqs_until(ws, 20) == [19, 20]
    await ws.disconnect()


async def test_a_snapshot_redis_no_longer_has_is_replayed_as_the_run_was(settings):
    """An ended run older than Redis's retention (or a Redis restarted empty before a driver stored one): a
    viewer gets the run's objects at the time it reached, its fault in them, as the simulation has them."""
    run = await database_sync_to_async(reached_run)(
        50.0, "finished", {"action": "stop-kubelet", "node": "node-2"}, 30.0
    )
    ws, connected = await connect(f"/ws/runs/{run.id}/")
    assert connected
    snapshot = await receive(ws, timeout=30)
    sim = Simulation(load_scenario(run.document), seed=run.seed)
    sim.schedule_command({"action": "stop-kubelet", "node": "node-2"}, 30.0)
    sim.run_until(50.0)
    expected = json.loads(frames.dumps(sim.snapshot()))
    assert snapshot["snapshot"]["objects"] == expected["objects"] and snapshot["last_seq"] == expected["last_seq"]
    assert snapshot["clock"]["t"] == 50.0 and snapshot["run"]["status"] == "pending"  # no driver ever stored its state
    await ws.disconnect()


async def test_unknown_run_closes_with_4404(run_id):
    ws, connected = await connect("/ws/runs/nosuchrun/")
    assert connected
    error = await receive(ws)
    assert error == {"type": "error", "error": "unknown-run", "message": "no run with id 'nosuchrun'"}
    assert (await ws.receive_output(timeout=2)) == {"type": "websocket.close", "code": 4404}


@pytest.mark.parametrize("after", ["minus-one", "%C2%B2"])  # the second is "²", a digit to str.isdigit()
async def test_bad_after_closes_with_4400(run_id, after):
    ws, _ = await connect(f"/ws/runs/{run_id}/?after={after}")
    assert (await receive(ws))["error"] == "bad-after"
    assert (await ws.receive_output(timeout=2))["code"] == 4400


@pytest.mark.parametrize("origin", ["http://evil.example", "http://[::1"])  # another site's; not even a URL
async def test_foreign_or_unreadable_origin_is_refused_saying_why(run_id, origin):
    FakeDriver(run_id).snapshot(0)
    ws, _ = await connect(f"/ws/runs/{run_id}/", origin=(b"origin", origin.encode()))
    error = await receive(ws)  # no snapshot: nothing of the run reaches the foreign page
    assert error["error"] == "origin-not-allowed" and repr(origin) in error["message"]
    assert (await ws.receive_output(timeout=2)) == {"type": "websocket.close", "code": 4403}


@pytest.mark.parametrize(
    ("sent", "fragment"),
    [
        ("not json", "not valid JSON"),
        ("[1]", 'string "type"'),
        ('{"type": 3}', 'string "type"'),
        ('{"type": "command", "action": "stop-kubelet"}', "commands go to POST /api/runs/<id>/commands"),
        ("x" * 5000, "too long"),
    ],
)
async def test_malformed_messages_get_error_frames_not_a_crash(run_id, sent, fragment):
    FakeDriver(run_id).snapshot(0)
    ws, _ = await connect(f"/ws/runs/{run_id}/")
    await receive(ws, "snapshot")
    await ws.send_to(text_data=sent)
    error = await receive(ws, "error")
    assert fragment in error["message"]
    await ws.send_to(bytes_data=b"\x00\x01")
    assert "binary" in (await receive(ws, "error"))["message"]
    await ws.send_to(text_data='{"type": "ping", "echo": 5}')
    assert (await receive(ws, "pong"))["echo"] == 5
    await ws.disconnect()


async def test_resync_sends_a_fresh_snapshot(run_id):
    driver = FakeDriver(run_id)
    driver.snapshot(0)
    ws, _ = await connect(f"/ws/runs/{run_id}/")
    await receive(ws, "snapshot")
    driver.log(1, 2)
    driver.snapshot(2)
    await ws.send_to(text_data='{"type": "resync"}')
    assert (await receive(ws, "snapshot"))["last_seq"] == 2
    await ws.disconnect()


async def test_viewer_count_and_presence_forwarding(run_id):
    FakeDriver(run_id).snapshot(0)
    a, _ = await connect(f"/ws/runs/{run_id}/")
    await receive(a, "snapshot")
    assert (await receive(a, "presence"))["viewers"] == 1
    b, _ = await connect(f"/ws/runs/{run_id}/")
    await receive(b, "snapshot")
    assert (await receive(b, "presence"))["viewers"] == 2
    await b.disconnect()
    assert viewer_presence.viewer_count(run_id) == 1
    text = frames.dumps({"type": "presence", "viewers": 1})
    publisher.publish(run_id, {"type": "run.presence", "text": text})
    assert (await receive(a, "presence")) == {"type": "presence", "viewers": 1}
    await a.disconnect()


async def test_live_frames_do_not_queue_on_the_thread_sensitive_executor(run_id, monkeypatch):
    """Channels' default dispatch hops to the one sync thread before every message; a big
    room would queue thousands of hops a second there, ahead of the trainer's POST."""
    hops: list[str] = []

    async def counting_close() -> None:
        hops.append("close_old_connections")

    monkeypatch.setattr("channels.consumer.aclose_old_connections", counting_close)
    driver = FakeDriver(run_id)
    driver.snapshot(0)
    ws, _ = await connect(f"/ws/runs/{run_id}/")
    await receive(ws, "snapshot")
    for seq in range(1, 6):
        driver.log(seq, seq)
        await driver.frame(seq, seq)
    assert await seqs_until(ws, 5) == [1, 2, 3, 4, 5]
    assert hops == []
    await ws.disconnect()


feed_channel = naming.feed_channel


def group_subscribers(run_id: str) -> int:
    return dict(get_redis().pubsub_numsub(feed_channel(run_id)))[feed_channel(run_id)]


async def subscribers_drop_to_zero(run_id: str, timeout: float = 10.0) -> bool:
    """Redis forgets a closed connection's subscriptions when it reads the close, which may come
    after another connection's PUBSUB NUMSUB on a loaded machine: no event to await, so ask again."""
    deadline = asyncio.get_running_loop().time() + timeout
    while group_subscribers(run_id) != 0:
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def test_viewers_in_one_process_share_one_feed_and_each_get_every_frame_once(run_id):
    driver = FakeDriver(run_id)
    driver.snapshot(0)
    viewers = [(await connect(f"/ws/runs/{run_id}/"))[0] for _ in range(3)]
    for ws in viewers:
        await receive(ws, "snapshot")
    assert group_subscribers(run_id) == 1
    driver.log(1, 2)
    await driver.frame(1, 2)
    driver.log(3, 5)
    await driver.frame(3, 5)
    for ws in viewers:
        assert await seqs_until(ws, 5) == [1, 2, 3, 4, 5]
    await viewers[0].disconnect()
    driver.log(6, 6)
    await driver.frame(6, 6)
    for ws in viewers[1:]:
        assert await seqs_until(ws, 6) == [6]
        await ws.disconnect(timeout=10)  # returns once the consumer has ended (a loaded machine may take a while)
    assert await subscribers_drop_to_zero(run_id)  # the last viewer to leave ends the subscription


async def test_the_feed_keeps_viewers_registered_while_only_frames_flow(run_id, monkeypatch):
    """A busy run sends frames, never a quiet-second clock message: registrations must not lapse."""
    monkeypatch.setattr("heartbeat_site.live.delivery.fanout.VIEWER_REFRESH_SECONDS", 0.0)
    driver = FakeDriver(run_id)
    driver.snapshot(0)
    ws, _ = await connect(f"/ws/runs/{run_id}/")
    await receive(ws, "snapshot")
    registered = get_redis().zrange(viewer_presence.viewers_key(run_id), 0, -1, withscores=True)
    assert len(registered) == 1
    viewer, since = registered[0]
    driver.log(1, 1)
    await driver.frame(1, 1)
    await seqs_until(ws, 1)
    for _ in range(200):  # the refresh runs in a thread after the frame was handed out
        if get_redis().zscore(viewer_presence.viewers_key(run_id), viewer) > since:
            break
        await asyncio.sleep(0.01)
    assert get_redis().zscore(viewer_presence.viewers_key(run_id), viewer) > since
    await ws.disconnect()


async def test_viewers_are_closed_to_reconnect_when_the_feed_fails(run_id):
    """A message the run's feed cannot read ends the feed: its viewers are told, then closed
    with 4503 (pages reconnect with ?after=) rather than left waiting on a feed that is gone.
    (Daphne sends only 1000 and 3000-4999 as close codes.)"""
    FakeDriver(run_id).snapshot(0)
    ws, _ = await connect(f"/ws/runs/{run_id}/")
    await receive(ws, "snapshot")
    get_redis().publish(feed_channel(run_id), b"\xc1")  # not a feed message
    told = await receive(ws, "error")
    assert told["error"] == "live-service-unavailable" and "reconnect" in told["message"]
    assert await ws.receive_output(timeout=3) == {"type": "websocket.close", "code": 4503}
    assert await subscribers_drop_to_zero(run_id)


async def test_a_run_message_that_fails_closes_its_viewer_to_reconnect(run_id, monkeypatch):
    """The run's messages are handled by a task of the viewer's own (beside Channels' loop): a handler that
    raises closes the viewer with 4503, as a lost feed does, rather than leaving it silent; the others go on."""
    async def broken(self, message: dict) -> None:
        raise RuntimeError("broken on purpose")

    FakeDriver(run_id).snapshot(0)
    ws, _ = await connect(f"/ws/runs/{run_id}/")
    await receive(ws, "snapshot")
    monkeypatch.setattr(RunConsumer, "run_clock", broken)
    publisher.publish(run_id, {"type": "run.clock", "text": frames.dumps({"type": "clock"})})
    while (output := await ws.receive_output(timeout=3))["type"] == "websocket.send":
        pass  # what came before (the presence after the snapshot)
    assert output == {"type": "websocket.close", "code": 4503}
    assert await subscribers_drop_to_zero(run_id)  # its only viewer left the feed


@pytest.mark.parametrize("gone", [Disconnected("Attempt to send on a closed protocol"), ConnectionResetError()],
                         ids=["daphne", "uvicorn"])
async def test_a_viewer_gone_while_a_message_is_on_its_way_ends_its_consumer_quietly(gone):
    """The server raises on a send to a closed socket; the consumer ends (no 'Exception inside application')."""
    consumer = RunConsumer()

    async def closed(message: dict) -> None:
        raise gone

    consumer.base_send = closed
    with pytest.raises(StopConsumer):
        await consumer.send(text_data='{"type": "clock"}')
    with pytest.raises(StopConsumer):
        await consumer.send(text_data="x" * frames.MAX_MESSAGE_BYTES)  # in parts


async def test_one_redis_subscription_per_process_and_run_whatever_the_viewer_count(run_id):
    """PUBSUB NUMSUB on the run's feed channel stays 1 from the first viewer to the fortieth (websockets and a
    kubectl watch alike: fanout.join), a second run on the page (a comparison) gets one of its own, and each
    viewer still gets every frame once."""
    other = await database_sync_to_async(Run.objects.create)(
        scenario_name="y", document={"name": "y", "title": {"en": "Y"}}, seed=1, version="1.33", duration=300,
        control_token_hash="0" * 64,
    )
    driver, beside = FakeDriver(run_id), FakeDriver(other.id)
    driver.snapshot(0)
    beside.snapshot(0)
    viewers = []
    try:
        for count in range(1, 41):
            ws, connected = await connect(f"/ws/runs/{run_id}/")
            assert connected
            await receive(ws, "snapshot")
            viewers.append(ws)
            if count in (1, 2, 10, 40):
                assert group_subscribers(run_id) == 1, f"{count} viewers"
        watch_inbox = fanout.Inbox()
        await fanout.join(run_id, "a-watch", watch_inbox)  # how a kubectl watch follows the run
        assert group_subscribers(run_id) == 1
        compared = [(await connect(f"/ws/runs/{other.id}/"))[0] for _ in range(3)]
        for ws in compared:
            await receive(ws, "snapshot")
        assert (group_subscribers(run_id), group_subscribers(other.id)) == (1, 1)
        driver.log(1, 3)
        await driver.frame(1, 3)
        beside.log(1, 1)
        await beside.frame(1, 1)
        for ws in viewers:
            assert await seqs_until(ws, 3) == [1, 2, 3]
        for ws in compared:
            assert await seqs_until(ws, 1) == [1]
        assert (await asyncio.wait_for(watch_inbox.get(), 3))["first"] == 1
        await fanout.leave(run_id, "a-watch")
        for ws in [*viewers, *compared]:
            await ws.disconnect(timeout=10)
        viewers = []
        assert await subscribers_drop_to_zero(run_id)
        assert await subscribers_drop_to_zero(other.id)
    finally:
        for ws in viewers:
            await ws.disconnect(timeout=10)
        client = get_redis()
        for key in client.keys(f"hb:run:{{{other.id}}}:*"):
            client.delete(key)


@pytest.mark.parametrize(
    "message",
    [
        {"type": "run.frame", "first": 3, "last": 9, "text": '{"type":"frame","events":[]}'},
        {"type": "run.snapshot"},
        {"type": "run.notice", "text": 'two\nlines and ünïcödé, "quoted"'},
        {"type": "run.clock", "text": ""},
    ],
)
async def test_feed_messages_come_back_as_they_were_published(message):
    encoded = publisher.encode(message).encode()
    assert publisher.decode(encoded) == message
    if "text" in message:  # the page's text rides as it is, never escaped into the JSON head
        assert encoded.endswith(message["text"].encode())


@pytest.mark.parametrize("data", [b"\xc1", b"[1, 2]\ntext", b'{"first": 1}\n{}', b""])
async def test_what_is_not_a_feed_message_is_refused(data):
    with pytest.raises(ValueError):
        publisher.decode(data)
