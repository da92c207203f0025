"""A kgroup broker for the broker tests: one per module, on a free 127.0.0.1 port, its data in
a temporary folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.kgroup_broker import run_broker

from kgroup.broker import Broker


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Broker]:
    with run_broker(tmp_path_factory.mktemp("broker")) as b:
        yield b
