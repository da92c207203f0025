"""Consumer groups on kgroup's broker: one broker per module, on a free 127.0.0.1 port, with
the settings that keep group tests fast (no initial rebalance delay; clients use 6 s sessions
and sub-second heartbeats)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.kgroup_broker import run_broker

from kgroup.broker import Broker

#: GROUP_CONFIG is the broker's side of fast group tests: a group's first rebalance starts at
#: once instead of waiting 3 s for more members.
GROUP_CONFIG = {"group.initial.rebalance.delay.ms": 0}


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("groups"), GROUP_CONFIG) as b:
        yield b
