"""Redis run state against a real Redis: lease fencing and the bounded event log."""

import json
import threading
import time
import uuid

import pytest
from django.test import override_settings

from heartbeat_site.live.delivery import frames
from heartbeat_site.live.redis_client import get_redis
from heartbeat_site.live.runstore import (
    command_inbox,
    detail_asks,
    event_log,
    ownership,
    run_state,
    snapshot_and_frames,
    viewer_presence,
)


@pytest.fixture
def run_id():
    rid = f"t{uuid.uuid4().hex[:10]}"
    yield rid
    client = get_redis()
    for key in client.keys(f"hb:run:{{{rid}}}:*"):
        client.delete(key)


def events(first, last):
    return frames.encode_events({"seq": s, "t": float(s), "type": "write"} for s in range(first, last + 1))


def test_lease_is_exclusive_until_released(run_id):
    a = ownership.Lease(run_id, "a", ttl=5)
    b = ownership.Lease(run_id, "b", ttl=5)
    assert a.acquire()
    assert not b.acquire()
    a.release()
    assert b.acquire()
    assert ownership.lease_holder(run_id) == "b"


def test_lapsed_lease_is_taken_over_and_fences_the_old_owner(run_id):
    old = ownership.Lease(run_id, "old", ttl=0.2)
    assert old.acquire()
    assert old.publish(events(1, 2), {"last_seq": 2, "t": "2.0"})
    time.sleep(0.3)  # let the TTL lapse: that is the behaviour under test
    new = ownership.Lease(run_id, "new", ttl=5)
    assert new.acquire()
    assert not old.publish(events(3, 3), {"last_seq": 3, "t": "3.0"})
    assert not old.store_snapshot("{}")
    old.release()  # must not delete the new owner's lease
    assert ownership.lease_holder(run_id) == "new"
    assert run_state.read_state(run_id)["last_seq"] == "2"
    assert [e["seq"] for e in event_log.events_after(run_id, 0, 100)] == [1, 2]



def test_a_lapsed_lease_nobody_took_is_resumed_where_its_driver_left_the_run(run_id):
    """A driver starved of CPU past its lease goes on when nobody drove the run meanwhile, and only then."""
    slow = ownership.Lease(run_id, "slow", ttl=5)
    assert slow.acquire()
    assert slow.publish(events(1, 2), {"last_seq": 2, "status": "running"}, resume_from=0)
    get_redis().delete(ownership.lease_key(run_id))  # lapsed
    assert not slow.publish(events(3, 3), {"last_seq": 3, "status": "running"})  # no resume asked
    assert not slow.publish(events(3, 3), {"last_seq": 3, "status": "running"}, resume_from=1)  # not where it was
    assert slow.publish(events(3, 3), {"last_seq": 3, "status": "running"}, resume_from=2)
    assert ownership.lease_holder(run_id) == "slow" and 0 < get_redis().pttl(ownership.lease_key(run_id)) <= 5000
    assert [e["seq"] for e in event_log.events_after(run_id, 0, 100)] == [1, 2, 3]

    # another driver took the run and published: the slow one is fenced out, even once that lease lapses too
    get_redis().delete(ownership.lease_key(run_id))
    other = ownership.Lease(run_id, "other", ttl=5)
    assert other.acquire()
    assert not slow.publish(events(4, 4), {"last_seq": 4, "status": "running"}, resume_from=3)
    assert other.publish(events(4, 5), {"last_seq": 5, "status": "running"}, resume_from=3)
    get_redis().delete(ownership.lease_key(run_id))
    assert not slow.publish(events(4, 4), {"last_seq": 4, "status": "running"}, resume_from=3)

    # an ended run is not taken back
    assert other.publish([], {"last_seq": 5, "status": "finished"}, resume_from=5)
    get_redis().delete(ownership.lease_key(run_id))
    assert not other.publish([], {"last_seq": 5, "status": "running"}, resume_from=5)
    assert ownership.lease_holder(run_id) is None and run_state.read_state(run_id)["status"] == "finished"

def test_event_log_is_bounded_and_paged(run_id):
    lease = ownership.Lease(run_id, "x", ttl=5)
    assert lease.acquire()
    with override_settings(HEARTBEAT={**_heartbeat(), "EVENT_LOG_SIZE": 10}):
        assert lease.publish(events(1, 25), {"last_seq": 25, "t": "25.0"})
    assert event_log.log_bounds(run_id) == (16, 25)
    assert [e["seq"] for e in event_log.events_after(run_id, 17, 3)] == [18, 19, 20]
    assert [e["seq"] for e in event_log.events_after(run_id, 17, 100, upto=19)] == [18, 19]
    assert event_log.log_covers(run_id, 15)
    assert not event_log.log_covers(run_id, 14)
    assert event_log.log_covers(run_id, 25)


def test_command_inbox_and_ack(run_id):
    command_inbox.notify_command(run_id, 41)
    command_inbox.notify_command(run_id, 42)
    assert command_inbox.wait_inbox(run_id, 0.5) == ["41", "42"]
    assert command_inbox.wait_inbox(run_id, 0.05) == []
    command_inbox.send_ack(run_id, 2, {"status": "applied", "at": 12.5})
    assert command_inbox.wait_ack(run_id, 2, 1) == {"status": "applied", "at": 12.5}
    assert command_inbox.wait_ack(run_id, 2, 0.05) is None


def test_an_answer_later_than_redis_pys_read_timeout_is_heard(run_id):
    """A busy driver answers a large run's objects ask after seconds (redis-py cuts reads at 5 s unless
    told otherwise: the ask failed with a 503 before)."""
    reply = f"{detail_asks.asks_key(run_id)}:objects:{uuid.uuid4().hex}"
    answering = threading.Timer(5.5, lambda: get_redis().rpush(reply, '{"type": "objects"}'))
    answering.start()
    try:
        assert detail_asks.wait_answer(reply, 15) == '{"type": "objects"}'
    finally:
        answering.cancel()


def test_viewers_counted_and_removed(run_id):
    viewer_presence.add_viewers(run_id, ["c1"])
    viewer_presence.add_viewers(run_id, ["c2", "c3"])
    viewer_presence.add_viewers(run_id, [])
    assert viewer_presence.viewer_count(run_id) == 3
    viewer_presence.remove_viewer(run_id, "c1")
    assert viewer_presence.viewer_count(run_id) == 2


def test_snapshot_roundtrip(run_id):
    lease = ownership.Lease(run_id, "x", ttl=5)
    lease.acquire()
    assert lease.store_snapshot(json.dumps({"last_seq": 3, "clock": {}, "snapshot": {}}))
    assert snapshot_and_frames.read_snapshot(run_id)["last_seq"] == 3


def _heartbeat():
    from django.conf import settings

    return settings.HEARTBEAT
