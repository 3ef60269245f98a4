"""The live feed is this project's own transport (redis-py, a channel and a format of the project's): no
module of the site reaches into channels_redis, rebuilds its channel or group names or decodes its messages, and
nothing reads a private name of Channels. An upgrade of a library must not cut viewers off."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[2] / "heartbeat_site"
SOURCES = sorted(SITE.rglob("*.py"))
# Whatever would tie the feed to channels_redis' internals: its package, its group channels'
# "<prefix>__group__<group>" names, its msgpack framing.
FORBIDDEN_TEXT = ("channels_redis", "channels-redis", "__group__", "msgpack")
OTHER_LIBRARIES = ("channels", "channels_redis", "daphne", "redis", "asgiref")


def test_the_sources_are_found():
    assert {SITE / "live" / "delivery" / "fanout.py", SITE / "live" / "delivery" / "publisher.py"} <= set(SOURCES)


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(SITE)))
def test_no_module_names_channels_redis_or_its_group_channels(path):
    text = path.read_text(encoding="utf-8")
    found = [word for word in FORBIDDEN_TEXT if word in text]
    assert not found, f"{path.relative_to(SITE.parent)} mentions {found}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(SITE)))
def test_no_module_imports_a_private_name_of_another_library(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    private = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in OTHER_LIBRARIES:
            parts = node.module.split(".") + [alias.name for alias in node.names]
            private += [f"{node.module}.{alias.name}" for alias in node.names if any(p.startswith("_") for p in parts)]
        elif isinstance(node, ast.Import):
            private += [alias.name for alias in node.names
                        if alias.name.split(".")[0] in OTHER_LIBRARIES and any(
                            p.startswith("_") for p in alias.name.split("."))]
    assert not private, f"{path.relative_to(SITE.parent)} imports {private}"


def test_the_site_configures_no_channel_layer(settings):
    """A channel layer would give every consumer a channel of its own (a Redis subscription per viewer with the
    pub/sub layer): the consumers take their run's messages from the process's feed instead."""
    from channels.layers import get_channel_layer

    from heartbeat_site.live.delivery.consumers import RunConsumer

    assert get_channel_layer(RunConsumer.channel_layer_alias) is None
    assert not getattr(settings, "CHANNEL_LAYERS", None)
