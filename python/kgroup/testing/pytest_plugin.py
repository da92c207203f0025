"""The pytest plugin of kgroup.testing (registered through the ``pytest11`` entry point, so
installing kgroup is all a project needs).

Fixtures:

- ``kgroup_broker``: a :class:`kgroup.testing.Broker` for the test, started fresh for each test
  by default (a few milliseconds), its faults undone at the end. Its scope is ``session`` on
  request: ``--kgroup-broker-scope=session`` or the ini option ``kgroup_broker_scope =
  session``, or ``@pytest.mark.kgroup_broker(scope="session")`` on a test, a class or a module;
  then the tests share one broker per session (per pytest-xdist worker: each worker is a
  session), and each still gets its faults undone when it ends.
- ``kgroup_session_broker``: that shared broker itself.
- ``kgroup_broker_options``: the keyword arguments of every broker these fixtures make
  (``process``, ``storage``, ``config``...); override it in a ``conftest.py`` to change them
  for a whole suite. ``@pytest.mark.kgroup_broker(process=True, config={...})`` changes them for
  one test, which then gets a broker of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kgroup.testing import Broker

SCOPES = ("function", "session")


#: UNREWRITTEN are the wheel's top-level packages: pytest marks every package of a distribution
#: with a pytest11 entry point for assertion rewriting, which would recompile kgroup's broker
#: and client on import (slower where bytecode cannot be cached) and change what their own
#: asserts do under test. Only test code is rewritten.
UNREWRITTEN = ("kgroup", "spark_udfs", "pyspark_kgroup")


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    """Called as the plugin registers, before any broker module is imported: take kgroup's
    packages off the rewrite list (pytest has no public call for it; if its internals change,
    rewriting simply stays on)."""
    must_rewrite = getattr(getattr(pluginmanager, "rewrite_hook", None), "_must_rewrite", None)
    if isinstance(must_rewrite, set):
        must_rewrite.difference_update(UNREWRITTEN)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kgroup", "kgroup.testing: a Kafka broker per test")
    group.addoption(
        "--kgroup-broker-scope",
        choices=SCOPES,
        default=None,
        help="one kgroup broker per test (function, the default) or per session",
    )
    parser.addini(
        "kgroup_broker_scope",
        "one kgroup broker per test (function, the default) or per session",
        default="function",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kgroup_broker(scope=None, **options): this test's kgroup broker: scope 'session' "
        "shares the session's; options (process, storage, config...) give it one of its own",
    )


def _scope(config: pytest.Config) -> str:
    scope = config.getoption("--kgroup-broker-scope") or config.getini("kgroup_broker_scope")
    if scope not in SCOPES:
        raise pytest.UsageError(f"kgroup_broker_scope must be one of {SCOPES}, not {scope!r}")
    return str(scope)


@pytest.fixture(scope="session")
def kgroup_broker_options() -> dict[str, Any]:
    """The keyword arguments of :class:`kgroup.testing.Broker` for every broker the fixtures
    start; override this fixture to change them."""
    return {}


@pytest.fixture(scope="session")
def kgroup_session_broker(kgroup_broker_options: dict[str, Any]) -> Iterator[Broker]:
    """One broker for the session (for the pytest-xdist worker)."""
    with Broker(**kgroup_broker_options) as broker:
        yield broker


@pytest.fixture
def kgroup_broker(
    request: pytest.FixtureRequest, kgroup_broker_options: dict[str, Any]
) -> Iterator[Broker]:
    """A running kgroup broker for this test; every fault it armed is undone at the end."""
    marker = request.node.get_closest_marker("kgroup_broker")
    options = dict(marker.kwargs) if marker is not None else {}
    scope = options.pop("scope", None) or _scope(request.config)
    if scope not in SCOPES:
        raise pytest.UsageError(f"kgroup_broker scope must be one of {SCOPES}, not {scope!r}")
    if scope == "session" and not options:
        broker: Broker = request.getfixturevalue("kgroup_session_broker")
        try:
            yield broker
        finally:
            if broker.running:
                broker.clear_faults()
            else:
                # The test killed it: the next test gets it back, on its data.
                broker.restart()
        return
    with Broker(**{**kgroup_broker_options, **options}) as broker:
        yield broker
