"""Send channel-layer messages from a driver thread.

Each driver keeps its own event loop for its whole life: channels-redis keeps its Redis
connections per loop, so ``async_to_sync`` (a fresh loop per call) would reconnect on
every frame.
"""

from __future__ import annotations

import asyncio
import contextlib

from channels.layers import get_channel_layer


class Publisher:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.layer = get_channel_layer()

    def group_send(self, group: str, message: dict) -> None:
        self.loop.run_until_complete(self.layer.group_send(group, message))

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()
