"""The fault vocabulary the trainer's buttons offer: the simulation's own list."""

from __future__ import annotations

from simulation import FAULT_ACTIONS


def fault_actions() -> tuple[str, ...]:
    return tuple(FAULT_ACTIONS)
