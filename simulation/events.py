"""The run's event stream: every write, notable read, decision, transition and fault.

Each event gets the next sequence number. Objects are serialised lazily (`to_dict`), so a
benchmark that never looks at events pays only for a small slotted record per event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .clock import US, WallClock
from .objects import to_k8s

# An event's fields: a dict, a function that builds it when first asked, or None for a
# subclass that builds them itself (apiserver.WriteEvent)
Fields = dict[str, Any] | Callable[[], dict[str, Any]] | None


class SimEvent:
    __slots__ = ("seq", "t", "type", "component", "node", "_fields", "obj", "clock")

    def __init__(self, seq: int, t: int, type_: str, component: str, node: str | None,
                 fields: Fields, obj: Any, clock: WallClock) -> None:
        self.seq = seq
        self.t = t
        self.type = type_
        self.component = component
        self.node = node
        self._fields = fields
        self.obj = obj
        self.clock = clock

    @property
    def fields(self) -> dict[str, Any]:
        fields = self._fields
        if callable(fields):
            fields = self._fields = fields()
        if fields is None:
            raise TypeError(f"{type(self).__name__} must build its own fields")
        return fields

    def __getstate__(self) -> tuple[None, dict[str, Any]]:
        """For a checkpoint (events not taken yet are part of it): fields that are still a
        function are built first, so no function is pickled."""
        self.fields  # noqa: B018 (builds them)
        return None, {name: getattr(self, name) for cls in type(self).__mro__
                      for name in getattr(cls, "__slots__", ()) if hasattr(self, name)}

    @property
    def seconds(self) -> float:
        return self.t / US

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seq": self.seq,
            "t": self.t / US,
            "time": self.clock.micro(self.t),
            "type": self.type,
            "component": self.component,
            "node": self.node,
        }
        out.update(self.fields)
        if self.type == "write":
            out["object"] = to_k8s(self.obj, self.clock) if self.obj is not None else None
            out["requestReceivedTimestamp"] = self.clock.micro(self.fields["received"])
            del out["received"]
        return out

    def __repr__(self) -> str:  # for test failure messages
        fields = self.fields
        what = fields.get("summary") or fields.get("kind") or fields.get("rule") or ""
        return f"<{self.seq} t={self.t / US:.6f} {self.type} {self.component} {self.node} {what}>"


class Recorder:
    """Collects events in order; the Simulation hands them out slice by slice."""

    def __init__(self, clock: WallClock) -> None:
        self.clock = clock
        self.seq = 0
        self.pending: list[SimEvent] = []
        self.timebase: Any = None  # the engine: events take its `now` (set by the Simulation)

    def emit(self, type_: str, component: str, node: str | None, fields: dict[str, Any] | Callable[[], dict[str, Any]],
             obj: Any = None) -> SimEvent:
        self.seq += 1
        ev = SimEvent(self.seq, self.timebase.now, type_, component, node, fields, obj, self.clock)
        self.pending.append(ev)
        return ev

    def emit_as(self, cls: type[SimEvent], type_: str, component: str, node: str | None, obj: Any = None) -> Any:
        """An event of a subclass that builds its own fields (see apiserver.WriteEvent)."""
        self.seq += 1
        ev = cls(self.seq, self.timebase.now, type_, component, node, None, obj, self.clock)
        self.pending.append(ev)
        return ev

    def decision(self, component: str, rule: str, node: str | None, inputs: dict[str, Any], outcome: str,
                 explain: str, source: str, pod: str | None = None) -> SimEvent:
        return self.emit("decision", component, node, {
            "rule": rule, "inputs": inputs, "outcome": outcome, "explain": explain, "source": source, "pod": pod,
        })

    def transition(self, component: str, kind: str, node: str | None, before: Any, after: Any, *,
                   pod: str | None = None, key: str | None = None, effect: str | None = None) -> SimEvent:
        return self.emit("transition", component, node, {
            "kind": kind, "from": before, "to": after, "pod": pod, "key": key, "effect": effect,
        })

    def take(self) -> list[SimEvent]:
        out, self.pending = self.pending, []
        return out
