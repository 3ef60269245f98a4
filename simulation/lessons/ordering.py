"""Order questions (docs/lessons.md, "order"): the run's order of a question's events, whether
an answer fits it, and the shuffled order pages show the items in.

An item's time is the virtual time of the first event in the question's window that fits its
`match`. The run orders the items by that time (by seq between items of the same instant, so
that the order shown is stable). An answer fits the run when no item in it comes after an item
that happened strictly later: items that happened at the same virtual instant are a tie, and
either order of them is right.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from typing import Any


def run_order(happened: Mapping[str, Mapping[str, Any] | None]) -> list[str]:
    """The ids of the items that happened, earliest first (`happened`: id -> {seq, t} or None)."""
    seen = [(ref["t"], ref["seq"], item) for item, ref in happened.items() if ref is not None]
    return [item for _t, _seq, item in sorted(seen)]


def order_fits(order: Sequence[str], times: Mapping[str, float]) -> bool:
    """Whether `order` (every item id once) never puts an item before one that happened
    strictly earlier; items of the same instant may come in either order."""
    return sorted(order) == sorted(times) and all(times[a] <= times[b] for a, b in zip(order, order[1:], strict=False))


def in_place(order: Sequence[str], times: Mapping[str, float]) -> list[bool]:
    """Per position of `order`: whether its item may stand there in the run's order (an item
    tied with others may stand at any of the places their group covers)."""
    places = []
    for position, item in enumerate(order):
        t = times.get(item)
        if t is None:
            places.append(False)
            continue
        before = sum(1 for other, u in times.items() if other != item and u < t)
        ties = sum(1 for other, u in times.items() if other != item and u == t)
        places.append(before <= position <= before + ties)
    return places


def shuffled(ids: Sequence[str], key: str, avoid: Sequence[Sequence[str]] = ()) -> list[str]:
    """`ids` in an order fixed by `key` (the same for every page and every run of a lesson),
    never one of `avoid` (the order written in the document, the right one)."""
    banned = {tuple(ids), *(tuple(a) for a in avoid)}
    rng = random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))
    out = list(ids)
    for _ in range(100):
        rng.shuffle(out)
        if tuple(out) not in banned:
            return out
    return out[1:] + out[:1]  # (three items and every other order banned: cannot happen with 3+ items)


def shown_order(question: Mapping[str, Any]) -> list[str]:
    """The item ids of an order question (its normalised document) as pages list them: fixed
    per question, never the order the document writes them in, nor its `answer`."""
    ids = [item["id"] for item in question["items"]]
    avoid = [question["answer"]] if question.get("answer") else []
    return shuffled(ids, f"{question['id']}:{','.join(ids)}", avoid=avoid)
