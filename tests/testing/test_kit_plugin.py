"""kgroup.testing's pytest plugin, run as a user's suite would run it (pytest's ``pytester``):
the ``kgroup_broker`` fixture's scopes, its options, and faults undone between tests."""

from __future__ import annotations

import pytest
from support.kit import plugin_args

pytestmark = pytest.mark.network


#: SHARED_TESTS are three tests that tell apart a broker per test from one per session: the
#: first creates a topic and arms one fault of each kind, the second sees the topic (or not)
#: and must find every fault undone, the third checks whether they all had the same broker.
SHARED_TESTS = """
    import time

    import confluent_kafka

    seen = []


    def test_first(kgroup_broker):
        seen.append(kgroup_broker)
        kgroup_broker.create_topic("kept")
        kgroup_broker.fail("produce", "NOT_LEADER_OR_FOLLOWER", times=None)
        kgroup_broker.fail("metadata", "UNKNOWN_SERVER_ERROR", times=None)
        kgroup_broker.delay(5.0)
        kgroup_broker.leaderless("kept")
        kgroup_broker.disconnect(after=1)
        kgroup_broker.move_coordinator(seconds=30)
        kgroup_broker.fail_disk("kept", 0, times=None)
        kgroup_broker.pause()
        assert len(kgroup_broker.faults()) >= 7


    def test_second(kgroup_broker):
        seen.append(kgroup_broker)
        assert kgroup_broker.faults() == []
        if SHARED:
            assert "kept" in kgroup_broker.topics()
        else:
            assert kgroup_broker.topics() == {}
            kgroup_broker.create_topic("kept")
        p = confluent_kafka.Producer({"bootstrap.servers": kgroup_broker.bootstrap_servers})
        start = time.monotonic()
        p.produce("kept", value=b"x")
        assert p.flush(5) == 0
        assert time.monotonic() - start < 2
        [part] = p.list_topics("kept", timeout=5).topics["kept"].partitions.values()
        assert part.leader >= 0 and part.error is None
        assert [r.value for r in kgroup_broker.records("kept")] == [b"x"]
        c = confluent_kafka.Consumer(
            {"bootstrap.servers": kgroup_broker.bootstrap_servers, "group.id": "g"}
        )
        c.commit(offsets=[confluent_kafka.TopicPartition("kept", 0, 1)], asynchronous=False)
        c.close()
        assert kgroup_broker.committed("g")[("kept", 0)].offset == 1
        assert time.monotonic() - start < 3


    def test_third(kgroup_broker):
        assert len(seen) == 2
        assert (seen[0] is seen[1] is kgroup_broker) == SHARED
"""


def shared_tests(shared: bool) -> str:
    return f"SHARED = {shared}\n" + SHARED_TESTS.replace("\n    ", "\n")


def test_function_scope_gives_each_test_a_fresh_broker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=shared_tests(False))
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(passed=3)


def test_session_scope_option_shares_one_broker_and_undoes_faults(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_inner=shared_tests(True))
    result = pytester.runpytest(*plugin_args(), "--kgroup-broker-scope=session")
    result.assert_outcomes(passed=3)


def test_session_scope_ini_option(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkgroup_broker_scope = session\n")
    pytester.makepyfile(test_inner=shared_tests(True))
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(passed=3)


def test_session_scope_marker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner="import pytest\n"
        "pytestmark = pytest.mark.kgroup_broker(scope='session')\n" + shared_tests(True)
    )
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(passed=3)


def test_marker_options_give_a_test_its_own_broker(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_inner="""
        import pytest

        shared = []


        def test_shared(kgroup_broker):
            shared.append(kgroup_broker)
            kgroup_broker.create_topic("shared")


        @pytest.mark.kgroup_broker(config={"num.partitions": 3})
        def test_own_config(kgroup_broker):
            assert kgroup_broker is not shared[0]
            assert kgroup_broker.topics() == {}
            assert kgroup_broker.config["num.partitions"] == 3
            assert kgroup_broker.config["group.initial.rebalance.delay.ms"] == 0


        @pytest.mark.kgroup_broker(process=True)
        def test_own_process(kgroup_broker):
            assert kgroup_broker is not shared[0]
            kgroup_broker.create_topic("t")
            kgroup_broker.kill()
            kgroup_broker.restart()
            assert kgroup_broker.topics() == {"t": 1}


        def test_shared_again(kgroup_broker):
            assert kgroup_broker is shared[0]
            assert "shared" in kgroup_broker.topics()
        """
    )
    result = pytester.runpytest(*plugin_args(), "--kgroup-broker-scope=session")
    result.assert_outcomes(passed=4)


def test_session_broker_killed_by_a_test_is_back_for_the_next(
    pytester: pytest.Pytester,
) -> None:
    pytester.makeconftest(
        """
        import pytest


        @pytest.fixture(scope="session")
        def kgroup_broker_options():
            return {"process": True}
        """
    )
    pytester.makepyfile(
        test_inner="""
        def test_kill(kgroup_broker):
            assert kgroup_broker.process
            kgroup_broker.create_topic("t")
            kgroup_broker.kill()


        def test_after(kgroup_broker):
            assert kgroup_broker.running
            assert kgroup_broker.topics() == {"t": 1}
        """
    )
    result = pytester.runpytest(*plugin_args(), "--kgroup-broker-scope=session")
    result.assert_outcomes(passed=2)


def test_unknown_scope_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nkgroup_broker_scope = module\n")
    pytester.makepyfile(test_inner="def test_it(kgroup_broker):\n    pass\n")
    result = pytester.runpytest(*plugin_args())
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*kgroup_broker_scope must be one of*"])


def test_kgroup_itself_is_not_rewritten(pytester: pytest.Pytester) -> None:
    """pytest rewrites the asserts of every package of a distribution with a pytest11 entry
    point; the plugin takes kgroup's off that list, so the broker runs under test as it runs in
    production, while the test's own asserts are still rewritten."""
    pytester.makepyfile(
        """
        def test_loaders(kgroup_broker):
            import kgroup.broker.server, kgroup.client.consumer
            for module in (kgroup.broker.server, kgroup.client.consumer):
                assert type(module.__loader__).__name__ == "SourceFileLoader", module

        def test_own_asserts_rewritten():
            x = 1
            assert x == 2
        """
    )
    result = pytester.runpytest_subprocess(*plugin_args(), "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*assert 1 == 2*"])
