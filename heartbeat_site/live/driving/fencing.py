"""A driver's database writes, fenced by the epoch at which it took its run (docs/architecture.md §9.2).

The Redis lease fences what a driver publishes (``runstore/ownership.py``). The database needs a fence of its own:
a driver whose process was starved of CPU past its lease wakes up with a command to take and writes before it learns
that another driver has the run; its claim would then mark the command applied at a time no viewer saw, and
every replay would show a fault the live stream never did. So each driver that takes a run bumps ``Run.driver_epoch``
first thing (before it reads the command log or the published position) and keeps the number, and each of its
later writes holds the run's row at that epoch. A successor's bump waits for a write in flight: that write
committed before the successor read the run (its rebuild includes it, and it shows in the successor's stream),
or it finds another epoch, writes nothing and raises ``Deposed``, and the driver stops without publishing or
acknowledging anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import F

from heartbeat_site.live.models import Run


class Deposed(Exception):
    """Another driver has taken the run since this one did: it writes and publishes nothing more."""


def take(run_id: str) -> Fence | None:
    """This driver's fence for the run, with a new epoch (None when the database has no such run)."""
    with transaction.atomic():  # the bump holds the row until the new value is read back: no other bump between
        if not Run.objects.filter(pk=run_id).update(driver_epoch=F("driver_epoch") + 1):
            return None
        epoch = Run.objects.filter(pk=run_id).values_list("driver_epoch", flat=True).get()
    return Fence(run_id, epoch)


@dataclass(frozen=True)
class Fence:
    """The epoch a driver took its run at: every database write of the driver goes through here."""

    run_id: str
    epoch: int

    def _mine(self):
        return Run.objects.filter(pk=self.run_id, driver_epoch=self.epoch)

    def update_run(self, **fields: Any) -> None:
        """Update the run's row while the run is still this driver's; ``Deposed`` otherwise (nothing written)."""
        if not self._mine().update(**fields):
            raise Deposed(f"run {self.run_id}: another driver took it (epoch {self.epoch} is over)")

    @contextmanager
    def held(self) -> Iterator[None]:
        """A transaction that holds the run's row at this driver's epoch: the writes made in it (a command's
        claim, a lesson's question) commit only if no other driver took the run before; ``Deposed`` otherwise.

        Holding is a write of the epoch onto itself, not ``select_for_update``: it locks the row on PostgreSQL
        and the database on SQLite, where ``select_for_update`` locks nothing."""
        with transaction.atomic():
            self.update_run(driver_epoch=self.epoch)
            yield
