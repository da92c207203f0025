"""kgroup's broker for the client tests: one per module, on a free 127.0.0.1 port, with no
initial rebalance delay so that groups form at once (tansu comes from tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.kgroup_broker import run_broker

from kgroup.broker import Broker


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(
        tmp_path_factory.mktemp("client"), {"group.initial.rebalance.delay.ms": 0}
    ) as b:
        yield b
