"""The kit's own tests start their brokers with kgroup.testing.Broker directly (the pytest
plugin is tested apart, with pytester, in test_kit_plugin.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgroup.testing import Broker


@pytest.fixture
def broker() -> Iterator[Broker]:
    """A fresh in-process broker (memory storage, the kit's test defaults)."""
    with Broker() as b:
        yield b
