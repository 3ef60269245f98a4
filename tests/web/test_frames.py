"""Frame building: consecutive ranges, and honest summaries for floods of routine events."""

import json

from heartbeat_site.live.delivery import frames

CLOCK = {"t": 12.0, "speed": 10.0, "paused": False}


def events(kinds):
    return [{"seq": i, "t": float(i), "type": kind} for i, kind in enumerate(kinds, start=1)]


def test_frame_carries_all_events_under_the_limit():
    batch = events(["write", "watch", "transition"])
    frame = frames.frame(batch, CLOCK, max_events=10)
    assert frame["seq"] == [1, 3]
    assert frame["events"] == batch
    assert "summarised" not in frame
    assert frame["clock"] == CLOCK and isinstance(frame["sent_at"], int)


def test_flood_is_summarised_and_says_so():
    batch = events(["write"] * 6 + ["transition", "watch", "decision", "fault", "read", "request-failed"])
    frame = frames.frame(batch, CLOCK, max_events=5)
    assert frame["summarised"] is True
    assert frame["seq"] == [1, 12]
    assert [e["type"] for e in frame["events"]] == ["transition", "decision", "fault", "request-failed"]
    assert frame["omitted"] == {"read": 1, "watch": 1, "write": 6}
    assert len(frame["events"]) + sum(frame["omitted"].values()) == len(batch)


def test_messages_are_compact_json():
    text = frames.dumps(frames.clock_message(CLOCK, 7))
    assert text.startswith('{"type":"clock","clock":{"t":12.0')
    assert frames.error_message("bad", "x") == {"type": "error", "error": "x", "message": "bad"}


def test_frame_text_from_logged_texts_is_the_same_frame():
    batch = events(["write", "transition"])
    texts = [(e["seq"], frames.dumps(e)) for e in batch]
    built = json.loads(frames.frame_text(texts, CLOCK))
    assert built["type"] == "frame" and built["seq"] == [1, 2]
    assert built["events"] == batch and built["clock"] == CLOCK


def test_a_large_text_is_split_once_for_every_viewer_and_joins_back():
    text = frames.dumps({"type": "frame", "events": [{"seq": i, "summary": "x\"y" * 40} for i in range(20_000)]})
    assert len(text.encode()) > frames.MAX_MESSAGE_BYTES
    parts = frames.parts_of(text)
    assert frames.parts_of(text) is parts  # the next viewer gets the same parts
    assert all(len(part.encode()) <= frames.MAX_MESSAGE_BYTES for part in parts) and len(parts) > 1
    decoded = [json.loads(part) for part in parts]
    assert {part["message"] for part in decoded} == {decoded[0]["message"]}
    assert "".join(part["data"] for part in decoded) == text
    other = frames.parts_of(text + " ")
    assert json.loads(other[0])["message"] != decoded[0]["message"]  # another message, another id
    small = '{"type":"clock"}'
    assert frames.parts_of(small) == [small]
