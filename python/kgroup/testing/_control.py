"""What the test kit does inside the broker's process: one ``Control`` per broker, whose
methods run on the broker's event loop (``call``), whether the broker is a thread of the test
process or a child process (``_child``) that receives the calls over a pipe. Every answer is
plain picklable data."""

from __future__ import annotations

import errno as errno_codes
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from kgroup import errors, protocol
from kgroup import log as klog

if TYPE_CHECKING:
    from kgroup.broker import Broker
    from kgroup.broker.faults import Faults
    from kgroup.broker.state import BrokerState

__all__ = ["Control", "api_key", "error_code"]


def api_key(api: int | str | protocol.ApiKey) -> int:
    """An api as its key: ``protocol.ApiKey.PRODUCE``, ``0``, ``"produce"``, ``"Produce"``,
    ``"ListOffsets"`` or ``"LIST_OFFSETS"``."""
    if isinstance(api, int):
        return int(protocol.ApiKey(api))
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", api.strip()).upper()
    try:
        return int(protocol.ApiKey[name])
    except KeyError:
        raise ValueError(f"unknown api {api!r}") from None


def error_code(error: int | str | type[errors.KafkaError] | errors.KafkaError) -> int:
    """An error as its code: ``6``, ``"NOT_LEADER_OR_FOLLOWER"``, ``errors.NotLeaderOrFollower``
    or an instance of it."""
    if isinstance(error, errors.KafkaError) or (
        isinstance(error, type) and issubclass(error, errors.KafkaError)
    ):
        return int(error.code)
    if isinstance(error, int):
        if error != 0 and errors.error_for_code(error) is errors.UnknownServerError and error != -1:
            raise ValueError(f"unknown Kafka error code {error}")
        return error
    name = error.strip().upper()
    for cls in _error_classes():
        if cls.name == name or cls.__name__.upper() == name.replace("_", ""):
            return int(cls.code)
    raise ValueError(f"unknown Kafka error {error!r}")


def _error_classes() -> list[type[errors.KafkaError]]:
    out: list[type[errors.KafkaError]] = []
    stack: list[type[errors.KafkaError]] = [errors.KafkaError]
    while stack:
        cls = stack.pop()
        out.append(cls)
        stack.extend(cls.__subclasses__())
    return out


class Control:
    """Control acts on one running broker; every method runs on the broker's event loop."""

    def __init__(self, broker: Broker) -> None:
        self.broker = broker
        #: disk_faults: whether this broker armed storage faults (cleared with the others).
        self.disk_faults = False

    @property
    def faults(self) -> Faults:
        """The broker's fault engine (installed by the Broker as it starts)."""
        # Imported here: the plugin imports this module before pytest is told to leave
        # kgroup's modules unrewritten, so it must not import the broker.
        from kgroup.broker.faults import Faults

        faults = self.state.faults
        assert isinstance(faults, Faults)
        return faults

    @property
    def state(self) -> BrokerState:
        state = self.broker.state
        if state is None:
            raise RuntimeError("the broker is not running")
        return state

    async def call(self, name: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        method: Callable[..., Any] | None = getattr(self, "op_" + name, None)
        if method is None:
            raise AttributeError(f"no broker operation {name!r}")
        return method(*args, **kwargs)

    # -- topics ------------------------------------------------------------------------------

    def op_create_topic(
        self, name: str, partitions: int = 1, config: Mapping[str, Any] | None = None
    ) -> None:
        from kgroup.broker.handlers import create_topics

        configs = [(k, None if v is None else _config_text(v)) for k, v in (config or {}).items()]
        count, parsed = create_topics.check(self.state, name, partitions, 1, [], configs)
        create_topics.create(self.state, name, count, parsed)

    def op_delete_topic(self, name: str) -> None:
        topic = self.state.topics.by_name.get(name)
        if topic is None:
            raise errors.UnknownTopicOrPartition(f"Topic '{name}' does not exist.")
        self.state.topics.delete(topic)

    def op_topics(self) -> dict[str, int]:
        return {
            name: len(t.partitions)
            for name, t in self.state.topics.by_name.items()
            if not name.startswith("__")
        }

    # -- faults ------------------------------------------------------------------------------

    def op_fail(self, api: int, error: int, **kwargs: Any) -> int:
        return int(self.faults.fail(api, error, **kwargs))

    def op_delay(self, seconds: float, api: int | None = None, **kwargs: Any) -> int:
        return int(self.faults.delay(seconds, api, **kwargs))

    def op_disconnect(self, after: int = 0, api: int | None = None) -> int:
        return int(self.faults.disconnect(after, api))

    def op_pause(self) -> None:
        self.faults.pause()

    def op_resume(self) -> None:
        self.faults.resume()

    def op_leaderless(self, topic: str, partition: int | None, seconds: float | None) -> int:
        return int(self.faults.leaderless(topic, partition, seconds))

    def op_move_coordinator(self, group: str | None, seconds: float) -> int:
        return int(self.faults.move_coordinator(group, seconds=seconds))

    def op_remove_fault(self, fault_id: int) -> None:
        self.faults.remove(fault_id)

    def op_faults(self) -> list[dict[str, Any]]:
        return list(self.faults.active())

    def op_fail_disk(
        self, topic: str, partition: int | None, times: int | None, op: str, errno: int
    ) -> None:
        t = self.state.topics.by_name.get(topic)
        if t is None:
            raise errors.UnknownTopicOrPartition(f"Topic '{topic}' does not exist.")
        parts = t.partitions if partition is None else [t.partitions[partition]]
        for p in parts:
            # The partition's folder, with its separator: "t-1/" never matches "t-10/".
            where = str(p.dir.path / p.name) + "/"
            klog.inject_fault(op, where, errno, times)
        self.disk_faults = True

    def op_clear_faults(self) -> bool:
        """Undo every fault; whether a log went offline (only a restart brings it back)."""
        self.faults.clear()
        if self.disk_faults:
            klog.clear_faults()
            self.disk_faults = False
        return any(p.offline for p in self.state.topics.partitions())

    def op_expire_member(self, group: str, member_id: str | None) -> None:
        from kgroup.broker import inspect

        inspect.expire_member(self.state, group, member_id)

    # -- inspection --------------------------------------------------------------------------

    def op_records(self, topic: str, partition: int | None, committed_only: bool) -> Any:
        from kgroup.broker import inspect

        return inspect.records(self.state, topic, partition, committed_only=committed_only)

    def op_group(self, group: str) -> Any:
        from kgroup.broker import inspect

        return inspect.group(self.state, group)

    def op_groups(self) -> list[str]:
        from kgroup.broker import inspect

        return list(inspect.groups(self.state))

    def op_committed(self, group: str) -> Any:
        from kgroup.broker import inspect

        return inspect.committed(self.state, group)

    def op_transactions(self) -> Any:
        from kgroup.broker import inspect

        return inspect.transactions(self.state)

    def op_producers(self, topic: str, partition: int) -> Any:
        from kgroup.broker import inspect

        return inspect.producers(self.state, topic, partition)

    def op_end_offsets(self, topic: str) -> dict[int, int]:
        t = self.state.topics.by_name.get(topic)
        if t is None:
            raise errors.UnknownTopicOrPartition(f"Topic '{topic}' does not exist.")
        return {p.index: p.high_watermark for p in t.partitions}


def _config_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


#: EIO is the default error of a disk fault (an I/O error, as a failing disk gives).
EIO = errno_codes.EIO
