"""What a trainer's command may hold (docs/architecture.md §6.5), as pydantic models, one per kind, told apart by
their action: ``commands.py`` reads every command with them (from the REST API or the Kubernetes API's writes),
and the API's OpenAPI document shows them (api/contract.py). What depends on the run (its nodes, its scenario's
faults) ``commands.for_run`` checks after."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import ConfigDict, Field, RootModel, model_validator
from pydantic_core import PydanticCustomError

from heartbeat_site.live.driving.pacing import MAX_SPEED, MIN_SPEED
from heartbeat_site.live.runs.fields import Body, Tagged
from simulation import FAULT_ACTIONS
from simulation.lessons.documents import TABS

# reveal, next: lessons and drills; stop: the trainer ends the run (status finished)
CONTROL_ACTIONS = ("pause", "resume", "speed", "step", "reveal", "next", "stop")
# "Viewers follow me": the trainer's page says where it looks (a node, a panel); the web process dates and
# broadcasts these itself, since they change nothing in the simulation (docs/websocket-protocol.md, "follow").
FOLLOW_ACTIONS = ("follow", "focus")
# The panels a trainer's page can turn to: a lesson step's tabs (simulation/lessons/documents.py) and the side
# panel's "diagrams" (templates/pages/run.html, data-tab).
PANELS = (*TABS, "diagrams")
MAX_NODE_NAME = 253  # a Kubernetes object name


Speed = Annotated[float, Field(ge=MIN_SPEED, le=MAX_SPEED, description="virtual seconds per wall second")]


# Commands (docs/architecture.md §6.5), one model per kind, told apart by their action; the API's document shows
# them (api/contract.py).
class SpeedCommand(Body):
    action: Literal["speed"]
    value: Speed


class ControlCommand(Body):
    """pause, resume, step, stop (ends the run), reveal and next (a lesson's or drill's)."""

    action: Literal[tuple(a for a in CONTROL_ACTIONS if a != "speed")]  # type: ignore[valid-type]


class FaultCommand(Body):
    """A fault from the simulation's vocabulary with the fields of the scenario document's faults but ``at``, e.g.
    ``{"action": "stop-kubelet", "node": "node-2", "for": "2m"}``: the simulation checks them against the run."""

    model_config = ConfigDict(extra="allow")
    action: Literal[FAULT_ACTIONS]  # type: ignore[valid-type]


class FollowCommand(Body):
    """Viewers' pages follow the trainer's focus (or stop)."""

    action: Literal["follow"]
    on: bool = Field(description="whether viewers' pages follow the trainer's")


class FocusCommand(Body):
    """The node and panel the trainer looks at, for the viewers who follow."""

    action: Literal["focus"]
    node: str | None = Field(None, min_length=1, max_length=MAX_NODE_NAME)
    tab: Literal[PANELS] | None = None  # type: ignore[valid-type]
    together = {"anyOf": [{"required": ["node"]}, {"required": ["tab"]}]}

    @model_validator(mode="after")
    def _node_or_tab(self) -> FocusCommand:
        if self.node is None and self.tab is None:
            raise PydanticCustomError("missing-field", 'a focus command needs "node", "tab" or both')
        return self


class Command(RootModel[Annotated[SpeedCommand | ControlCommand | FaultCommand | FollowCommand | FocusCommand,
                                  Field(discriminator="action")]], Tagged):
    """A command for a run or both sides of a comparison: a fault, pacing, a lesson's step, or follow and focus."""

    model_config = ConfigDict(strict=True)
    tag: ClassVar[str] = "action"

    @staticmethod
    def tag_problem(body: object) -> tuple[str, str, str]:
        action = body.get("action") if isinstance(body, dict) else None
        if not isinstance(action, str):
            return ("missing-action", "action",
                    'a command needs an "action" string, e.g. {"action": "stop-kubelet", "node": "node-2"}')
        known = ", ".join((*CONTROL_ACTIONS, *FAULT_ACTIONS, *FOLLOW_ACTIONS))
        return ("unknown-action", "action", f"unknown action {action!r}; known actions: {known}")
