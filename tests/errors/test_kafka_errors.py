"""Kafka error codes as exceptions: one class per code, with Kafka's names and retriability
(Errors.java in Kafka 3.9, and whether each code's exception is a RetriableException)."""

from __future__ import annotations

import pytest

import kgroup
from kgroup import errors
from kgroup._native import errors as _native_errors
from kgroup.errors import KafkaError, KGroupError, error_for_code, raise_for_code


@pytest.mark.parametrize(
    ("code", "cls", "name", "retriable"),
    [
        (-1, errors.UnknownServerError, "UNKNOWN_SERVER_ERROR", False),
        (3, errors.UnknownTopicOrPartition, "UNKNOWN_TOPIC_OR_PARTITION", True),
        (6, errors.NotLeaderOrFollower, "NOT_LEADER_OR_FOLLOWER", True),
        (14, errors.CoordinatorLoadInProgress, "COORDINATOR_LOAD_IN_PROGRESS", True),
        (15, errors.CoordinatorNotAvailable, "COORDINATOR_NOT_AVAILABLE", True),
        (16, errors.NotCoordinator, "NOT_COORDINATOR", True),
        (22, errors.IllegalGeneration, "ILLEGAL_GENERATION", False),
        (25, errors.UnknownMemberId, "UNKNOWN_MEMBER_ID", False),
        (27, errors.RebalanceInProgress, "REBALANCE_IN_PROGRESS", False),
        (35, errors.UnsupportedVersion, "UNSUPPORTED_VERSION", False),
        (79, errors.MemberIdRequired, "MEMBER_ID_REQUIRED", False),
        (82, errors.FencedInstanceId, "FENCED_INSTANCE_ID", False),
        (88, errors.UnstableOffsetCommit, "UNSTABLE_OFFSET_COMMIT", True),
        (127, errors.VoterNotFound, "VOTER_NOT_FOUND", False),
    ],
)
def test_codes_map_to_classes(code: int, cls: type, name: str, retriable: bool) -> None:
    assert error_for_code(code) is cls
    assert (cls.code, cls.name, cls.retriable) == (code, name, retriable)
    e = cls()
    assert isinstance(e, KafkaError) and isinstance(e, KGroupError)
    assert (e.code, e.name, e.retriable, str(e)) == (code, name, retriable, name)


def test_every_code_has_one_class() -> None:
    classes = [c for c in KafkaError.__subclasses__() if c.__module__ == "kgroup.errors"]
    codes = sorted(c.code for c in classes)
    # -1 and 1..133 except 99, which Kafka leaves unused.
    assert codes == [-1, *[c for c in range(1, 134) if c != 99]]
    assert len({c.name for c in classes}) == len(classes)
    for c in classes:
        assert c.__name__ in errors.__all__
        assert c.__name__ == "".join(p.capitalize() for p in c.name.split("_"))


def test_none_and_unknown_codes() -> None:
    assert error_for_code(0) is None
    raise_for_code(0)
    # Kafka's Errors.forCode maps a code it does not know to UNKNOWN_SERVER_ERROR.
    assert error_for_code(9999) is errors.UnknownServerError
    with pytest.raises(errors.NotCoordinator, match="moved"):
        raise_for_code(16, "moved")
    assert kgroup.KafkaError is KafkaError


def test_the_classes_are_the_rust_table() -> None:
    # kgroup.errors takes each class's name, retriability and message from the Rust core's
    # table, and declares one class per code: the two cover exactly the same codes.
    table = {row[0]: row for row in _native_errors.ERROR_CODES if row[0] != 0}
    classes = {c.code: c for c in KafkaError.__subclasses__() if c.__module__ == errors.__name__}
    assert sorted(classes) == sorted(table)
    for code, (_, name, class_name, retriable, message) in table.items():
        cls = classes[code]
        assert (cls.__name__, cls.name, cls.retriable, cls.message) == (
            class_name,
            name,
            retriable,
            message,
        )
        assert message in (cls.__doc__ or "")
    # Kafka's own text, from Errors.java.
    assert errors.NotCoordinator.message == "This is not the correct coordinator."


def test_a_class_for_a_code_kafka_lacks_is_refused() -> None:
    with pytest.raises(TypeError):

        class Unused(KafkaError, code=99):  # Kafka leaves 99 unused
            pass

    with pytest.raises(TypeError):

        class NotTheName(KafkaError, code=27):
            pass

    # A subclass of a code's class keeps the code.
    class MyRebalance(errors.RebalanceInProgress):
        pass

    assert MyRebalance.code == 27 and error_for_code(27) is errors.RebalanceInProgress
