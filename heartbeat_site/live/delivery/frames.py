"""The messages viewers receive (docs/architecture.md §7, docs/websocket-protocol.md).

Frames are JSON text built once by the driver and forwarded verbatim by every consumer,
so fan-out to hundreds of viewers costs no re-serialisation.
"""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter, OrderedDict
from collections.abc import Iterable, Sequence

import orjson

# Routine traffic that may be left out of a live frame when a huge cluster floods it;
# state changes (transitions, decisions, faults, failed requests) are always carried.
ROUTINE_TYPES = frozenset({"write", "read", "watch"})


def wall_ms() -> int:
    return int(time.time() * 1000)


def dumps(message: dict) -> str:
    """Compact JSON (as ``json.dumps`` with separators and ``ensure_ascii=False``), by orjson: the
    driver encodes every event of a run for the log and every frame, which with the standard
    library cost it nearly as much as simulating them."""
    return orjson.dumps(message, option=orjson.OPT_NON_STR_KEYS).decode()


def encode_events(events: Iterable[dict]) -> list[tuple[int, str]]:
    """Each event as (seq, its JSON text), as the run's event log keeps them (``runstore/ownership.py``
    ``Lease.publish``)."""
    return [(int(event["seq"]), dumps(event)) for event in events]


def frame(events: Sequence[dict], clock: dict, *, max_events: int | None = None) -> dict:
    """A frame carrying ``events`` (consecutive seqs); summarised when over ``max_events``.

    A summarised frame says so (``summarised: true``), keeps every non-routine event and
    counts the routine ones it left out by type; they stay available from
    ``GET /api/runs/<id>/events`` and a viewer can ask for a fresh snapshot (``resync``).
    """
    message: dict = {
        "type": "frame",
        "seq": [events[0]["seq"], events[-1]["seq"]],
        "events": list(events),
        "clock": clock,
        "sent_at": wall_ms(),
    }
    if max_events is not None and len(events) > max_events:
        kept = [event for event in events if event.get("type") not in ROUTINE_TYPES]
        omitted = Counter(event.get("type") for event in events if event.get("type") in ROUTINE_TYPES)
        message["events"] = kept
        message["summarised"] = True
        message["omitted"] = dict(sorted(omitted.items()))
    return message


def snapshot_body(snapshot: dict, clock: dict, last_seq: int) -> dict:
    """What is stored per run and sent after ``{"type": "snapshot", "run": ...}``.

    ``last_seq`` comes first so a consumer can read it without parsing a large snapshot.
    """
    return {"last_seq": last_seq, "clock": clock, "snapshot": snapshot}


def snapshot_last_seq(text: str) -> int:
    match = _LAST_SEQ.match(text)
    if match is None:
        raise ValueError("stored snapshot does not start with last_seq")
    return int(match.group(1))


_LAST_SEQ = re.compile(r'\{"last_seq":(\d+),')


def frame_text(events: Sequence[tuple[int, str]], clock: dict) -> str:
    """A frame built from logged event texts by concatenation (catch-up for a joining viewer)."""
    head = f'{{"type":"frame","seq":[{events[0][0]},{events[-1][0]}],"events":['
    return f'{head}{",".join(text for _, text in events)}],"clock":{dumps(clock)},"sent_at":{wall_ms()}}}'


def clock_message(clock: dict, last_seq: int) -> dict:
    return {"type": "clock", "clock": clock, "last_seq": last_seq, "sent_at": wall_ms()}


def status_message(status: str, reason: str, clock: dict, last_seq: int) -> dict:
    return {
        "type": "status",
        "status": status,
        "reason": reason,
        "clock": clock,
        "last_seq": last_seq,
        "sent_at": wall_ms(),
    }


def error_message(message: str, code: str = "bad-message") -> dict:
    return {"type": "error", "error": code, "message": message}


# Daphne (autobahn) refuses to send a websocket message over 1 MiB and closes the connection
# with 1011; no message of ours may be larger, whatever the cluster.
MAX_MESSAGE_BYTES = 1 << 20
# A part carries this many characters of the message: at most 4 bytes each in UTF-8, and JSON
# escaping turns one character into at most two ASCII ones, so a part stays under 1 MiB.
PART_CHARS = 200_000


def split_message(text: str, message_id: int) -> list[str]:
    """``text`` as one message, or as ``part`` messages when it is over MAX_MESSAGE_BYTES.

    Each part is ``{"type": "part", "message": id, "part": i, "parts": n, "data": "..."}``;
    a client joins the ``data`` of parts 0..n-1 of one ``message`` id and parses the result
    as the message it stands for. Parts of one message are sent together, in order.
    """
    if len(text) * 4 <= MAX_MESSAGE_BYTES or len(text.encode()) <= MAX_MESSAGE_BYTES:
        return [text]
    count = -(-len(text) // PART_CHARS)
    return [
        dumps(
            {
                "type": "part",
                "message": message_id,
                "part": i,
                "parts": count,
                "data": text[i * PART_CHARS : (i + 1) * PART_CHARS],
            }
        )
        for i in range(count)
    ]


# The parts of the texts sent lately, per process. A frame or snapshot goes to every viewer of the
# process as one str object: split (and JSON-escaped) once, not once per viewer, which at 100
# viewers of a 5,000-node run was half of the server's time. Parts carry a process-wide message id.
PARTED_KEPT = 16
_parted: OrderedDict[int, tuple[str, list[str]]] = OrderedDict()
_message_ids = itertools.count(1)


def parts_of(text: str) -> list[str]:
    """``split_message(text)`` for this very str object, computed once while it is recent."""
    if len(text) * 4 <= MAX_MESSAGE_BYTES:
        return [text]
    entry = _parted.get(id(text))
    if entry is not None and entry[0] is text:
        _parted.move_to_end(id(text))
        return entry[1]
    pieces = split_message(text, next(_message_ids))
    _parted[id(text)] = (text, pieces)  # holding the text keeps its id from being reused
    while len(_parted) > PARTED_KEPT:
        _parted.popitem(last=False)
    return pieces
