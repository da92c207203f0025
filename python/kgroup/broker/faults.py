"""Faults: failures a test arms on a running broker, to see how its clients cope (issue 23's
``kgroup.testing``): error answers, slow answers, dropped connections, a stalled broker, a
partition without a leader, a group coordinator that moves away and back.

One ``Faults`` per broker (``BrokerState.faults``). Every method runs on the broker's event
loop thread. The server asks it about a request only while something is armed (``armed``, one
attribute read per request); otherwise it costs nothing.

Error answers are what Kafka sends for that api and version. Each api has a layout
(:data:`LAYOUTS`): where its request and response keep their topics, partitions, groups or
transactional ids (the *levels*), where the error goes at each level and what else an entry in
error holds (Kafka's ``getErrorResponse`` and ``partitionResponse`` values: a Produce partition
``base_offset`` -1, a FindCoordinator v4+ key with ``Node.noNode()`` and the error's message).
A request is split: the entries a fault matches get the error, the rest go to the api's handler
as a request of their own, and both answers are merged in the request's order
(``handled=True``: the whole request is handled first and the matching entries' answers are
replaced). A test (``tests/broker/test_faults.py``) checks every layout against the message
definitions, and some answers against Apache Kafka's.

Where the error goes: at the level of the deepest filter given, or deeper where that level has
no error field (a topic filter on Produce errs in each of its partitions). A fault with no
filter errs where Kafka's ``getErrorResponse`` puts a whole request's error: at the top for the
apis that have one there (OffsetFetch v2-7, AddPartitionsToTxn v4+, JoinGroup ...), else in
every entry (each partition of a Produce, Fetch or OffsetCommit; each key of FindCoordinator
v4+; each group of DescribeGroups; each group of OffsetFetch v8+). Metadata is always handled
and its answer changed (a topic refused from v0's list would leave it empty, which asks for
every topic). A Fetch with a partition in error is answered at once, as Kafka answers it. An
acks=0 Produce gets no answer; its connection is closed, as Kafka closes it on an error.

While a moved coordinator's partition loads, the coordinator answers as Kafka's classic one:
COORDINATOR_LOAD_IN_PROGRESS, but a Heartbeat blindly (no error).
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kgroup import errors, protocol
from kgroup.broker.context import RequestContext
from kgroup.broker.handlers import HANDLERS
from kgroup.broker.topics import LEADER_EPOCH

if TYPE_CHECKING:
    from kgroup.broker.server import Connection
    from kgroup.broker.state import BrokerState

__all__ = ["LAYOUTS", "Faults", "Layout", "Level"]

log = logging.getLogger("kgroup.broker")

K = protocol.ApiKey
#: LEADERLESS_APIS answer NOT_LEADER_OR_FOLLOWER for a partition without a leader.
LEADERLESS_APIS = (
    K.PRODUCE,
    K.FETCH,
    K.LIST_OFFSETS,
    K.OFFSET_FOR_LEADER_EPOCH,
    K.DELETE_RECORDS,
)
_NIL = uuid.UUID(int=0)


@dataclasses.dataclass(frozen=True)
class _Site:
    """What an entry in error is built from: the broker, the error, the request's version and
    the request's entry (None at the top level, or when the entry is a bare key)."""

    state: BrokerState
    code: int
    version: int
    request: Any


#: Value is an entry field's value in error: a constant, or computed from the site.
Value = Any


@dataclasses.dataclass(frozen=True)
class Level:
    """Level is one list of a request and its answer's list: topics, partitions, groups.

    ``request`` and ``response`` name the lists' fields; ``key`` and ``response_key`` the
    fields that name an entry (several: the first set one; empty: the entry is the name
    itself, an ``[]int32`` of partitions); ``filter`` is the fault filter that selects
    entries (``topic``, ``partition``, ``group``, ``transactional_id``), or several, of which
    ``choose(body, entry)`` gives an entry's (a FindCoordinator key is a group's or a
    transactional id's by the request's key type). ``error`` is the response entry's error
    field, None when the error goes deeper; ``stop``: a fault with no filter below this level
    errs here, rather than in every entry below. ``entry`` are an entry's other fields in
    error."""

    request: str
    key: tuple[str, ...]
    response: str
    response_key: str
    filter: str | tuple[str, ...]
    error: str | None = "error_code"
    stop: bool = False
    entry: Mapping[str, Value] = dataclasses.field(default_factory=dict)
    choose: Callable[[Any, Any], str | None] | None = None

    @property
    def filters(self) -> tuple[str, ...]:
        return (self.filter,) if isinstance(self.filter, str) else self.filter


@dataclasses.dataclass(frozen=True)
class Layout:
    """Layout is where an api's request and answer keep what faults filter on, for a range of
    versions. ``top`` maps a filter to the request's top-level field it reads (``group`` ->
    ``group_id``); ``error`` is the answer's top-level error field and ``stop`` whether a fault
    with no filter on the levels errs there; ``entry`` are the answer's other top-level fields
    then."""

    versions: tuple[int, int]
    levels: tuple[Level, ...] = ()
    top: Mapping[str, str] = dataclasses.field(default_factory=dict)
    error: str | None = "error_code"
    stop: bool = True
    entry: Mapping[str, Value] = dataclasses.field(default_factory=dict)


def _message(site: _Site) -> str | None:
    cls = errors.error_for_code(site.code)
    return cls.message if cls is not None else None


def _copy(field: str) -> Callable[[_Site], Any]:
    return lambda site: site.request[field] if site.request is not None else None


def _node(site: _Site) -> list[int]:
    return [site.state.node_id]


def _key_type(body: Any, entry: Any = None) -> str | None:
    """What a FindCoordinator key names, by the request's key type (v0: groups)."""
    return {0: "group", 1: "transactional_id"}.get(body.get("key_type", 0))


def _resource_type(body: Any, entry: Any) -> str | None:
    """What a DescribeConfigs resource's name names (Kafka's ConfigResource.Type)."""
    return {2: "topic", 32: "group"}.get(entry.get("resource_type"))


_TOPIC = ("name",)

#: LAYOUTS maps an api key to its layouts, by version. The values of an entry in error are
#: Kafka's: its requests' getErrorResponse, FetchResponse.partitionResponse,
#: ProduceResponse.PartitionResponse(error), DescribeGroupsResponse.groupError,
#: FindCoordinatorResponse.prepareErrorResponse (Node.noNode() and the error's message).
LAYOUTS: dict[int, tuple[Layout, ...]] = {
    K.PRODUCE: (
        Layout(
            (0, 11),
            (
                Level("topic_data", _TOPIC, "responses", "name", "topic", error=None),
                Level(
                    "partition_data",
                    ("index",),
                    "partition_responses",
                    "index",
                    "partition",
                    entry={"base_offset": -1, "log_append_time_ms": -1, "log_start_offset": -1},
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.FETCH: (
        Layout(
            (0, 17),
            (
                Level("topics", ("topic", "topic_id"), "responses", "topic", "topic", error=None),
                Level(
                    "partitions",
                    ("partition",),
                    "partitions",
                    "partition_index",
                    "partition",
                    entry={
                        "high_watermark": -1,
                        "last_stable_offset": -1,
                        "log_start_offset": -1,
                        "aborted_transactions": [],
                        "preferred_read_replica": -1,
                        "records": b"",
                    },
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.LIST_OFFSETS: (
        Layout(
            (0, 9),
            (
                Level("topics", _TOPIC, "topics", "name", "topic", error=None),
                Level(
                    "partitions",
                    ("partition_index",),
                    "partitions",
                    "partition_index",
                    "partition",
                    entry={"timestamp": -1, "offset": -1, "leader_epoch": -1},
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.METADATA: (
        Layout(
            (0, 12),
            (
                Level(
                    "topics",
                    ("name", "topic_id"),
                    "topics",
                    "name",
                    "topic",
                    stop=True,
                    entry={"is_internal": False, "partitions": []},
                ),
                Level(
                    "",  # partitions are not in the request: see _Plan
                    (),
                    "partitions",
                    "partition_index",
                    "partition",
                    entry={
                        "leader_id": -1,
                        "leader_epoch": LEADER_EPOCH,
                        "replica_nodes": _node,
                        "isr_nodes": _node,
                        "offline_replicas": [],
                    },
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.OFFSET_COMMIT: (
        Layout(
            (0, 9),
            (
                Level("topics", _TOPIC, "topics", "name", "topic", error=None),
                Level(
                    "partitions", ("partition_index",), "partitions", "partition_index", "partition"
                ),
            ),
            top={"group": "group_id"},
            error=None,
            stop=False,
        ),
    ),
    K.OFFSET_FETCH: (
        # v0-1: no top-level error: each partition asked for gets it.
        Layout(
            (0, 1),
            (
                Level("topics", _TOPIC, "topics", "name", "topic", error=None),
                Level(
                    "partition_indexes",
                    (),
                    "partitions",
                    "partition_index",
                    "partition",
                    entry={"committed_offset": -1, "committed_leader_epoch": -1, "metadata": ""},
                ),
            ),
            top={"group": "group_id"},
            error=None,
            stop=False,
        ),
        Layout(
            (2, 7),
            (
                Level("topics", _TOPIC, "topics", "name", "topic", error=None),
                Level(
                    "partition_indexes",
                    (),
                    "partitions",
                    "partition_index",
                    "partition",
                    entry={"committed_offset": -1, "committed_leader_epoch": -1, "metadata": ""},
                ),
            ),
            top={"group": "group_id"},
            entry={"topics": []},
        ),
        Layout(
            (8, 9),
            (
                Level("groups", ("group_id",), "groups", "group_id", "group", stop=True),
                Level("topics", _TOPIC, "topics", "name", "topic", error=None),
                Level(
                    "partition_indexes",
                    (),
                    "partitions",
                    "partition_index",
                    "partition",
                    entry={"committed_offset": -1, "committed_leader_epoch": -1, "metadata": ""},
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.FIND_COORDINATOR: (
        Layout(
            (0, 3),
            top={"group": "key", "transactional_id": "key"},
            entry={"error_message": _message, "node_id": -1, "host": "", "port": -1},
        ),
        Layout(
            (4, 6),
            (
                Level(
                    "coordinator_keys",
                    (),
                    "coordinators",
                    "key",
                    ("group", "transactional_id"),
                    choose=_key_type,
                    entry={"error_message": _message, "node_id": -1, "host": "", "port": -1},
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.JOIN_GROUP: (
        Layout(
            (0, 6),
            top={"group": "group_id"},
            entry={"generation_id": -1, "protocol_name": "", "leader": "", "member_id": ""},
        ),
        Layout(
            (7, 9),
            top={"group": "group_id"},
            entry={"generation_id": -1, "protocol_name": None, "leader": "", "member_id": ""},
        ),
    ),
    K.SYNC_GROUP: (Layout((0, 5), top={"group": "group_id"}, entry={"assignment": b""}),),
    K.HEARTBEAT: (Layout((0, 4), top={"group": "group_id"}),),
    K.LEAVE_GROUP: (Layout((0, 5), top={"group": "group_id"}),),
    K.DESCRIBE_GROUPS: (
        Layout(
            (0, 6),
            (
                Level(
                    "groups",
                    (),
                    "groups",
                    "group_id",
                    "group",
                    entry={"group_state": "", "protocol_type": "", "protocol_data": ""},
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.LIST_GROUPS: (Layout((0, 5)),),
    K.CONSUMER_GROUP_HEARTBEAT: (Layout((0, 1), top={"group": "group_id"}),),
    K.CONSUMER_GROUP_DESCRIBE: (
        Layout(
            (0, 1),
            (Level("group_ids", (), "groups", "group_id", "group"),),
            error=None,
            stop=False,
        ),
    ),
    K.DELETE_GROUPS: (
        Layout(
            (0, 2),
            (Level("groups_names", (), "results", "group_id", "group"),),
            error=None,
            stop=False,
        ),
    ),
    K.INIT_PRODUCER_ID: (
        Layout(
            (0, 5),
            top={"transactional_id": "transactional_id"},
            entry={"producer_id": -1, "producer_epoch": -1},
        ),
    ),
    K.ADD_PARTITIONS_TO_TXN: (
        Layout(
            (0, 3),
            (
                Level(
                    "v3_and_below_topics",
                    _TOPIC,
                    "results_by_topic_v3_and_below",
                    "name",
                    "topic",
                    error=None,
                ),
                Level(
                    "partitions",
                    (),
                    "results_by_partition",
                    "partition_index",
                    "partition",
                    error="partition_error_code",
                ),
            ),
            top={"transactional_id": "v3_and_below_transactional_id"},
            error=None,
            stop=False,
        ),
        Layout(
            (4, 5),
            (
                Level(
                    "transactions",
                    ("transactional_id",),
                    "results_by_transaction",
                    "transactional_id",
                    "transactional_id",
                    error=None,
                ),
                Level("topics", _TOPIC, "topic_results", "name", "topic", error=None),
                Level(
                    "partitions",
                    (),
                    "results_by_partition",
                    "partition_index",
                    "partition",
                    error="partition_error_code",
                ),
            ),
            # A fault on no transaction: the top-level error (getErrorResponse, v4+).
            stop=True,
        ),
    ),
    K.ADD_OFFSETS_TO_TXN: (
        Layout((0, 4), top={"transactional_id": "transactional_id", "group": "group_id"}),
    ),
    K.END_TXN: (Layout((0, 4), top={"transactional_id": "transactional_id"}),),
    K.TXN_OFFSET_COMMIT: (
        Layout(
            (0, 4),
            (
                Level("topics", _TOPIC, "topics", "name", "topic", error=None),
                Level(
                    "partitions", ("partition_index",), "partitions", "partition_index", "partition"
                ),
            ),
            top={"transactional_id": "transactional_id", "group": "group_id"},
            error=None,
            stop=False,
        ),
    ),
    K.CREATE_TOPICS: (
        Layout(
            (0, 7),
            (
                Level(
                    "topics",
                    _TOPIC,
                    "topics",
                    "name",
                    "topic",
                    entry={
                        "error_message": _message,
                        "num_partitions": -1,
                        "replication_factor": -1,
                        "configs": None,
                    },
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.DELETE_TOPICS: (
        Layout(
            (0, 5),
            (Level("topic_names", (), "responses", "name", "topic"),),
            error=None,
            stop=False,
        ),
        Layout(
            (6, 6),
            (
                Level(
                    "topics",
                    ("name", "topic_id"),
                    "responses",
                    "name",
                    "topic",
                    entry={"topic_id": _copy("topic_id"), "error_message": _message},
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.API_VERSIONS: (
        Layout(
            (0, 4),
            entry={
                "api_keys": lambda site: (
                    [
                        {
                            "api_key": K.API_VERSIONS,
                            "min_version": HANDLERS[K.API_VERSIONS].VERSIONS[0],
                            "max_version": HANDLERS[K.API_VERSIONS].VERSIONS[1],
                        }
                    ]
                    if site.code == errors.UnsupportedVersion.code
                    else []
                )
            },
        ),
    ),
    K.OFFSET_FOR_LEADER_EPOCH: (
        Layout(
            (0, 4),
            (
                Level("topics", ("topic",), "topics", "topic", "topic", error=None),
                Level(
                    "partitions",
                    ("partition",),
                    "partitions",
                    "partition",
                    "partition",
                    entry={"leader_epoch": -1, "end_offset": -1},
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.DELETE_RECORDS: (
        Layout(
            (0, 2),
            (
                Level("topics", _TOPIC, "topics", "name", "topic", error=None),
                Level(
                    "partitions",
                    ("partition_index",),
                    "partitions",
                    "partition_index",
                    "partition",
                    entry={"low_watermark": -1},
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
    K.DESCRIBE_CONFIGS: (
        Layout(
            (0, 4),
            (
                Level(
                    "resources",
                    ("resource_name",),
                    "results",
                    "resource_name",
                    ("topic", "group"),
                    choose=_resource_type,
                    entry={
                        "error_message": _message,
                        "resource_type": _copy("resource_type"),
                        "configs": [],
                    },
                ),
            ),
            error=None,
            stop=False,
        ),
    ),
}


def layout_for(api_key: int, version: int) -> Layout | None:
    """The layout of ``api_key`` at ``version``, or None."""
    for layout in LAYOUTS.get(api_key, ()):
        if layout.versions[0] <= version <= layout.versions[1]:
            return layout
    return None


def _filters_of(api_key: int) -> set[str]:
    """The filters some version of the api can match."""
    found: set[str] = set()
    for layout in LAYOUTS.get(api_key, ()):
        found.update(layout.top)
        for level in layout.levels:
            found.update(level.filters)
    return found


# -- faults --------------------------------------------------------------------------------


@dataclasses.dataclass
class _Fault:
    id: int
    kind: str
    api_key: int | None = None
    error_code: int = 0
    times: int | None = None
    filters: dict[str, Any] = dataclasses.field(default_factory=dict)
    handled: bool = False
    seconds: float | None = None
    after: int = 0
    #: deep: the error goes to the innermost level even with no filter there (a leaderless
    #: partition's Metadata).
    deep: bool = False
    timer: asyncio.TimerHandle | None = None
    #: partitions of the group coordinator's internal topic a move unloaded.
    partitions: list[int] = dataclasses.field(default_factory=list)
    state: str = ""

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "kind": self.kind}
        if self.api_key is not None:
            out["api_key"] = self.api_key
        if self.kind == "fail":
            out.update(error_code=self.error_code, handled=self.handled)
        if self.times is not None:
            out["times"] = self.times
        out.update({k: v for k, v in self.filters.items() if v is not None})
        if self.seconds is not None:
            out["seconds"] = self.seconds
        if self.kind == "disconnect":
            out["after"] = self.after
        if self.partitions:
            out["partitions"] = list(self.partitions)
        if self.state:
            out["state"] = self.state
        return out


@dataclasses.dataclass
class _Rule:
    """One fault's error for one request: its code, filters and mode."""

    code: int
    filters: Mapping[str, Any]
    handled: bool
    deep: bool = False


class Faults:
    """Faults arms failures on one broker. Not thread-safe: every method runs on the broker's
    event loop. Each arming method returns a fault id for :meth:`remove` (``disconnect()``
    now: the number of connections closed); faults with ``seconds`` or ``times`` end by
    themselves. See the module's docstring."""

    def __init__(self, state: BrokerState) -> None:
        self.state = state
        #: armed: some fault is active or the broker is paused; the server reads it once per
        #: request and asks :meth:`intercept` only then.
        self.armed = False
        #: paused: no request is read or answered (:meth:`pause`).
        self.paused = False
        self._faults: dict[int, _Fault] = {}
        self._ids = itertools.count(1)
        self._pause_id: int | None = None
        #: _held: by delay fault id, the answers it holds back (released when it is removed).
        self._held: dict[int, set[asyncio.Future[None]]] = {}

    # -- arming --------------------------------------------------------------------------

    def fail(
        self,
        api_key: int,
        error_code: int,
        *,
        times: int | None = 1,
        topic: str | None = None,
        partition: int | None = None,
        group: str | None = None,
        transactional_id: str | None = None,
        handled: bool = False,
    ) -> int:
        """Answer the next ``times`` requests of ``api_key`` (None: every one until removed)
        that match the filters with ``error_code``: only the matching parts (partitions,
        groups) with ``topic``/``partition``/``group``/``transactional_id``, the rest handled
        as usual. ``handled``: the request is handled first, then the matching answers are
        replaced (a timeout after the write). ValueError for an api or filter it cannot
        serve."""
        api_key = int(api_key)
        if api_key not in LAYOUTS:
            name = protocol.API_NAMES.get(api_key, str(api_key))
            raise ValueError(f"faults cannot fail {name} requests (api key {api_key})")
        filters = {
            "topic": topic,
            "partition": partition,
            "group": group,
            "transactional_id": transactional_id,
        }
        given = {k for k, v in filters.items() if v is not None}
        unknown = given - _filters_of(api_key)
        if unknown:
            raise ValueError(
                f"{protocol.API_NAMES[api_key]} requests cannot be filtered by "
                f"{', '.join(sorted(unknown))}"
            )
        if partition is not None and topic is None:
            raise ValueError("a partition filter needs a topic")
        if times is not None and times < 1:
            raise ValueError("times must be at least 1 (or None: until removed)")
        return self._add(
            _Fault(
                next(self._ids),
                "fail",
                api_key=api_key,
                error_code=int(error_code),
                times=times,
                filters={k: v for k, v in filters.items() if v is not None},
                handled=handled,
            )
        )

    def delay(self, seconds: float, api_key: int | None = None, *, times: int | None = None) -> int:
        """Send the answers to ``api_key`` (None: every api) ``seconds`` late, for the next
        ``times`` requests (None: until removed). A connection's answers keep their order."""
        if seconds < 0:
            raise ValueError("seconds must not be negative")
        return self._add(
            _Fault(
                next(self._ids),
                "delay",
                api_key=None if api_key is None else int(api_key),
                times=times,
                seconds=seconds,
            )
        )

    def disconnect(self, after: int = 0, api_key: int | None = None) -> int:
        """``after=0``: close every client connection now; returns how many (nothing stays
        armed). ``after=N``: the connection carrying the N-th next request (of ``api_key``,
        if given) is closed when it arrives, unanswered; returns the fault's id."""
        if after < 0:
            raise ValueError("after must not be negative")
        if after == 0:
            closed = list(self.state.connections)
            for c in closed:
                c.close()
            return len(closed)
        return self._add(
            _Fault(
                next(self._ids),
                "disconnect",
                api_key=None if api_key is None else int(api_key),
                after=after,
            )
        )

    def pause(self) -> int:
        """Stall the broker as a long GC pause would: no request is read or answered
        (connections stay open, new ones are accepted but not served) until :meth:`resume`,
        ``remove`` or ``clear``. The coordinators' timers keep running."""
        if self._pause_id is not None:
            return self._pause_id
        fault = _Fault(next(self._ids), "pause")
        self._pause_id = fault.id
        self.paused = True
        self._add(fault)
        for c in list(self.state.connections):
            hold = getattr(c, "hold", None)
            if hold is not None:
                hold()
        return fault.id

    def resume(self) -> None:
        """End a :meth:`pause`: what was read is served, answers held are sent."""
        if self._pause_id is not None:
            self.remove(self._pause_id)

    def leaderless(
        self, topic: str, partition: int | None = None, seconds: float | None = None
    ) -> int:
        """The partition (every partition of ``topic`` with None) has no leader: Metadata
        answers leader -1 and LEADER_NOT_AVAILABLE for it, Produce, Fetch, ListOffsets,
        OffsetForLeaderEpoch and DeleteRecords NOT_LEADER_OR_FOLLOWER. The leader is back
        after ``seconds`` (None: when removed)."""
        fault = _Fault(
            next(self._ids),
            "leaderless",
            filters={"topic": topic}
            if partition is None
            else {"topic": topic, "partition": partition},
            seconds=seconds,
        )
        self._add(fault)
        if seconds is not None:
            fault.timer = asyncio.get_running_loop().call_later(seconds, self.remove, fault.id)
        return fault.id

    def move_coordinator(self, group: str | None = None, *, seconds: float = 1.0) -> int:
        """Move the group coordinator of ``group`` (of every group with None) away and back,
        as a coordinator failover does in Kafka: its ``__consumer_offsets`` partition(s) are
        unloaded now (parked requests answer NOT_COORDINATOR, the groups' state is dropped),
        group requests answer NOT_COORDINATOR for ``seconds`` (FindCoordinator still names
        this broker), then the partitions are loaded again from the log
        (COORDINATOR_LOAD_IN_PROGRESS meanwhile)."""
        if seconds < 0:
            raise ValueError("seconds must not be negative")
        groups = self.state.groups
        runtime = groups.runtime
        if group is not None:
            groups.offsets_topic()  # as FindCoordinator would create it
            wanted = [groups.coordinator.partition_for(group)]
        else:
            wanted = sorted(runtime.owned)
        taken = [p for p in wanted if p in runtime.owned]
        fault = _Fault(
            next(self._ids),
            "move_coordinator",
            filters={"group": group},
            seconds=seconds,
            partitions=taken,
            state="away",
        )
        for p in taken:
            runtime.unload_partition(p)
        self._add(fault)
        fault.timer = asyncio.get_running_loop().call_later(seconds, self._come_back, fault.id)
        return fault.id

    def _come_back(self, fault_id: int) -> None:
        fault = self._faults.get(fault_id)
        if fault is None or fault.state != "away":
            return
        fault.timer = None
        fault.state = "loading"
        runtime = self.state.groups.runtime
        loads = [t for p in fault.partitions if (t := runtime.reload_partition(p)) is not None]
        if not loads:
            self._drop(fault_id)
            return
        done = asyncio.gather(*loads, return_exceptions=True)
        done.add_done_callback(lambda _: self._drop(fault_id))

    # -- listing and removing --------------------------------------------------------------

    def active(self) -> list[dict[str, Any]]:
        """The armed faults, as plain dicts (``id``, ``kind`` and their settings)."""
        return [f.describe() for f in self._faults.values()]

    def remove(self, fault_id: int) -> None:
        """Remove a fault: a pause resumes, a leaderless partition gets its leader back, a moved
        coordinator comes back (loading its partitions now), the answers a delay holds back
        are sent now (also those of a delay already spent). Unknown ids are ignored."""
        self._release(fault_id)
        fault = self._faults.get(fault_id)
        if fault is None:
            return
        if fault.kind == "move_coordinator" and fault.state == "away":
            if fault.timer is not None:
                fault.timer.cancel()
            self._come_back(fault_id)
            # Its partitions are loading; the fault itself goes now.
        self._drop(fault_id)

    def clear(self) -> None:
        """Remove every fault (see :meth:`remove`)."""
        for fid in list(self._faults):
            self.remove(fid)
        for fid in list(self._held):
            self._release(fid)

    def _release(self, fault_id: int) -> None:
        for waiter in self._held.pop(fault_id, ()):
            if not waiter.done():
                waiter.set_result(None)

    def _add(self, fault: _Fault) -> int:
        self._faults[fault.id] = fault
        self.armed = True
        return fault.id

    def _drop(self, fault_id: int) -> None:
        fault = self._faults.pop(fault_id, None)
        if fault is None:
            return
        if fault.timer is not None:
            fault.timer.cancel()
            fault.timer = None
        if fault.kind == "pause":
            self._pause_id = None
            self.paused = False
            for c in list(self.state.connections):
                release = getattr(c, "release", None)
                if release is not None:
                    release()
        self.armed = bool(self._faults)

    # -- requests --------------------------------------------------------------------------

    def intercept(self, conn: Connection, api_key: int, frame: bytes | bytearray) -> bool:
        """Called by the server for every request while armed: True when the faults took the
        request over (closed its connection, or will answer it), False to serve it as usual."""
        faults = list(self._faults.values())
        for f in faults:
            if f.kind == "disconnect" and (f.api_key is None or f.api_key == api_key):
                f.after -= 1
                if f.after <= 0:
                    self._drop(f.id)
                    log.info("Fault %d: closing the connection of %s", f.id, conn.peer)
                    conn.close()
                    return True
        candidates = [
            f
            for f in faults
            if (f.kind == "fail" and f.api_key == api_key)
            or (f.kind == "delay" and (f.api_key is None or f.api_key == api_key))
            or (f.kind == "leaderless" and (api_key in LEADERLESS_APIS or api_key == K.METADATA))
        ]
        if not candidates:
            return False
        try:
            request = protocol.decode_request(bytes(frame), strict=False)
        except errors.KGroupError:
            return False  # the usual path closes the connection
        module = HANDLERS.get(api_key)
        if module is None or not module.VERSIONS[0] <= request.api_version <= module.VERSIONS[1]:
            return False
        layout = layout_for(api_key, request.api_version)
        rules: list[_Rule] = []
        delay = 0.0
        delays: list[int] = []
        for f in candidates:
            if f.kind == "delay":
                delay = max(delay, f.seconds or 0.0)
                delays.append(f.id)
                self._spend(f)
            elif layout is None:
                continue
            elif f.kind == "fail":
                rule = _Rule(f.error_code, f.filters, f.handled)
                if _Plan(self.state, request, layout, [rule]).matches:
                    rules.append(rule)
                    self._spend(f)
            else:  # leaderless
                if api_key == K.METADATA:
                    rule = _Rule(errors.LeaderNotAvailable.code, f.filters, handled=True, deep=True)
                else:
                    rule = _Rule(errors.NotLeaderOrFollower.code, f.filters, handled=False)
                if _Plan(self.state, request, layout, [rule]).matches:
                    rules.append(rule)
        if not rules and delay == 0:
            return False
        conn.answer_later(request, self._answer(conn, request, layout, rules, delay, delays))
        return True

    def _spend(self, fault: _Fault) -> None:
        if fault.times is not None:
            fault.times -= 1
            if fault.times <= 0:
                self._drop(fault.id)

    async def _answer(
        self,
        conn: Connection,
        request: protocol.Request,
        layout: Layout | None,
        rules: list[_Rule],
        delay: float,
        delays: Sequence[int] = (),
    ) -> Any:
        if rules:
            assert layout is not None
            body: Any = await _Plan(self.state, request, layout, rules).run(conn)
        else:
            body = await _resolve(_handle(self.state, conn, request))
        if delay:
            await self._late(delay, delays)
        return body

    async def _late(self, seconds: float, fault_ids: Sequence[int]) -> None:
        """Wait ``seconds``, or until one of the delay faults ``fault_ids`` is removed."""
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()
        deadline = time.monotonic() + seconds
        timed_out = False

        def done() -> None:
            nonlocal timed_out
            timed_out = True
            if not waiter.done():
                waiter.set_result(None)

        timer = loop.call_later(seconds, done)
        for fid in fault_ids:
            self._held.setdefault(fid, set()).add(waiter)
        try:
            await waiter
            # A loop's timer may fire a little early (uvloop counts whole milliseconds): the
            # answer is never sent before the delay is over.
            while timed_out and (left := deadline - time.monotonic()) > 0:
                await asyncio.sleep(left + 0.0005)
        finally:
            timer.cancel()
            for fid in fault_ids:
                held = self._held.get(fid)
                if held is not None:
                    held.discard(waiter)
                    if not held:
                        del self._held[fid]


# -- serving a request in parts ---------------------------------------------------------------


def _handle(state: BrokerState, conn: Connection, request: protocol.Request) -> Any:
    return HANDLERS[request.api_key].handle(RequestContext(state, request, conn))


async def _resolve(result: Any) -> Any:
    while asyncio.isfuture(result) or asyncio.iscoroutine(result):
        result = await result
    return result


def _as_body(request: protocol.Request, answer: Any) -> dict[str, Any] | None:
    """A handler's answer as a plain body: a whole frame (the group coordinator's) decoded."""
    if answer is None:
        return None
    if isinstance(answer, (bytes, bytearray)):
        response = protocol.decode_response(request.api_key, request.api_version, bytes(answer[4:]))
        return dict(_plain(response.body.to_dict()))
    return dict(_plain(answer))


def _plain(value: Any) -> Any:
    """A body with its views turned into dicts and lists, so that it can be changed."""
    if isinstance(value, protocol.StructView):
        value = value.to_dict()
    elif isinstance(value, protocol.ArrayView):
        value = value.to_list()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _in(versions: str, version: int) -> bool:
    """Whether ``version`` is in a definition's version range (``0+``, ``2-4``, ``none``)."""
    if versions == "none":
        return False
    if versions.endswith("+"):
        return version >= int(versions[:-1])
    low, _, high = versions.partition("-")
    return int(low) <= version <= int(high or low)


_SCHEMAS: dict[int, list[dict[str, Any]]] = {}


def response_fields(api_key: int, path: Sequence[str]) -> list[dict[str, Any]]:
    """The definitions of the fields of the api's response struct at ``path`` (the names of
    the arrays leading to it), all versions."""
    if not _SCHEMAS:
        for m in protocol.definitions():
            if m["type"] == "response":
                _SCHEMAS[m["api_key"]] = m["fields"]
    fields = _SCHEMAS[api_key]
    for name in path:
        fields = next(f for f in fields if f["name"] == name)["fields"]
    return fields


def _in_version(
    api_key: int, version: int, path: Sequence[str], values: dict[str, Any]
) -> dict[str, Any]:
    """``values`` without the fields the version's response struct at ``path`` lacks."""
    present = {f["name"] for f in response_fields(api_key, path) if _in(f["versions"], version)}
    return {k: v for k, v in values.items() if k in present}


def _rkeys(level: Level) -> tuple[str, ...]:
    """The fields that name an answer's entry: topics by name, or else by id."""
    if level.filter == "topic":
        return (level.response_key, "topic_id")
    return (level.response_key,)


def _key_of(state: BrokerState, entry: Any, fields: Sequence[str]) -> Any:
    """The name of a request or answer entry: its first set key field, a topic id as its
    topic's name where the broker knows it; the entry itself for a bare key."""
    if not fields:
        return entry
    for f in fields:
        value = entry.get(f)
        if value is None or value == "" or value == _NIL:
            continue
        if f == "topic_id":
            topic = state.topics.by_id.get(value)
            return topic.name if topic is not None else value
        return value
    return None


def _value(value: Value, site: _Site) -> Any:
    return value(site) if callable(value) else value


class _Plan:
    """_Plan serves one request some faults match: which entries err, the rest handled."""

    def __init__(
        self, state: BrokerState, request: protocol.Request, layout: Layout, rules: list[_Rule]
    ) -> None:
        self.state = state
        self.request = request
        self.api_key = request.api_key
        self.layout = layout
        self.version = request.api_version
        self.body = request.body
        #: errs: per rule that matches, the paths (key tuples) in error, in request order;
        #: an empty path: the whole answer.
        self.errs: list[tuple[_Rule, list[tuple[Any, ...]]]] = []
        #: open: where the request asks for everything (a null list, Metadata's partitions):
        #: the rule's entries are found in the answer.
        self.open: list[tuple[_Rule, tuple[Any, ...]]] = []
        for rule in rules:
            paths = self._walk(rule)
            if paths is not None:
                self.errs.append((rule, paths))

    @property
    def matches(self) -> bool:
        return any(paths for _, paths in self.errs) or bool(self.open)

    # -- which entries -----------------------------------------------------------------------

    def _names(self, level: Level) -> set[str]:
        """The filters that select entries of ``level``."""
        return set(level.filters)

    def _filter(self, level: Level, entry: Any) -> str | None:
        """The filter that selects ``entry`` of ``level``."""
        if level.choose is None:
            return level.filters[0]
        return level.choose(self.body, entry)

    def _depth(self, rule: _Rule) -> int:
        """How many levels deep the error goes: 0 the top; else the first level that may hold
        it at or below the deepest filter the rule sets."""
        levels = self.layout.levels
        if rule.deep:
            return len(levels)
        deepest = max(
            (i for i, level in enumerate(levels) if self._names(level) & set(rule.filters)),
            default=-1,
        )
        if deepest < 0 and self.layout.stop and self.layout.error is not None:
            return 0
        for i in range(max(deepest, 0), len(levels)):
            if levels[i].stop and levels[i].error is not None:
                return i + 1
        return len(levels)

    def _selects(self, rule: _Rule, level: Level, entry: Any, key: Any) -> bool:
        given = self._names(level) & set(rule.filters)
        if not given:
            return True
        name = self._filter(level, entry)
        return name in given and rule.filters[name] == key

    def _walk(self, rule: _Rule) -> list[tuple[Any, ...]] | None:
        """The paths in error for ``rule``; None when the request is not its."""
        body = self.body
        for name, field in self.layout.top.items():
            wanted = rule.filters.get(name)
            if wanted is None:
                continue
            if self.api_key == K.FIND_COORDINATOR and _key_type(body) != name:
                return None
            if body.get(field) != wanted:
                return None
        depth = self._depth(rule)
        if depth == 0:
            return [()]
        out: list[tuple[Any, ...]] = []
        self._collect(rule, body, 0, depth, (), out)
        return out

    def _collect(
        self,
        rule: _Rule,
        container: Any,
        i: int,
        depth: int,
        path: tuple[Any, ...],
        out: list[tuple[Any, ...]],
    ) -> None:
        level = self.layout.levels[i]
        entries = container.get(level.request) if level.request else None
        if entries is None or (self.api_key == K.METADATA and self.version == 0 and not entries):
            # Everything asked for (a null list; Metadata v0's empty one): found in the answer.
            self.open.append((rule, path))
            return
        for entry in entries:
            key = _key_of(self.state, entry, level.key)
            if not self._selects(rule, level, entry, key):
                continue
            if i + 1 == depth:
                out.append((*path, key))
            else:
                self._collect(rule, entry, i + 1, depth, (*path, key), out)

    # -- serving ------------------------------------------------------------------------------

    async def run(self, conn: Connection) -> Any:
        # Metadata refuses nothing: its answer is changed (a refused topic would leave v0's
        # empty list asking for every topic).
        refused = {
            path
            for rule, paths in self.errs
            if not rule.handled and self.api_key != K.METADATA
            for path in paths
        }
        rest = None if () in refused else self._rest(refused)
        answer: dict[str, Any] | None = {}
        if rest is not None:
            answer = _as_body(self.request, await _resolve(_handle(self.state, conn, rest)))
        if self.api_key == K.PRODUCE and self.body.acks == 0:
            # Kafka closes the connection of an acks=0 produce that failed.
            if refused or any(rule.handled for rule, _ in self.errs):
                conn.close()
            return None
        assert answer is not None
        for rule, paths in self.errs:
            for path in paths:
                self._set_error(answer, rule, path)
        for rule, path in self.open:
            for full in self._answer_paths(answer, rule, path):
                self._set_error(answer, rule, full)
        self._order(answer)
        return answer

    def _rest(self, refused: set[tuple[Any, ...]]) -> protocol.Request | None:
        """The request without the refused entries; None when nothing is left to handle."""
        if not refused:
            return self.request
        body = _plain(self.body)
        levels = self.layout.levels

        def prune(container: dict[str, Any], i: int, path: tuple[Any, ...]) -> bool:
            level = levels[i]
            entries = container.get(level.request)
            if entries is None:
                return True
            kept = []
            for entry in entries:
                full = (*path, _key_of(self.state, entry, level.key))
                if full in refused:
                    continue
                if (
                    i + 1 < len(levels)
                    and levels[i + 1].request
                    and level.key
                    and not prune(entry, i + 1, full)
                ):
                    continue
                kept.append(entry)
            container[level.request] = kept
            return bool(kept)

        if not prune(body, 0, ()):
            return None
        if self.api_key == K.FETCH:
            # Kafka answers a fetch with a partition in error at once, without its long poll.
            body["max_wait_ms"] = 0
        frame = protocol.encode_request(
            self.api_key,
            self.version,
            self.request.correlation_id,
            self.request.client_id,
            body,
            tagged_fields=self.request.tagged_fields,
        )
        return protocol.decode_request(frame[4:])

    def _request_entry(self, path: tuple[Any, ...]) -> Any:
        """The request's entry at ``path`` (None where the request does not list it)."""
        container: Any = self.body
        entry = None
        for level, key in zip(self.layout.levels, path, strict=False):
            entries = container.get(level.request) if level.request and container else None
            entry = next(
                (e for e in entries or () if _key_of(self.state, e, level.key) == key), None
            )
            container = entry if level.key else None
        return entry

    def _set_error(self, answer: dict[str, Any], rule: _Rule, path: tuple[Any, ...]) -> None:
        site = _Site(self.state, rule.code, self.version, self._request_entry(path))
        if not path:
            layout = self.layout
            values = {k: _value(v, site) for k, v in layout.entry.items()}
            if layout.error is not None:
                values[layout.error] = rule.code
            answer.update(_in_version(self.api_key, self.version, (), values))
            return
        levels = self.layout.levels
        container = answer
        names: list[str] = []
        for i, key in enumerate(path):
            level = levels[i]
            names.append(level.response)
            entries = container.setdefault(level.response, [])
            found = next((e for e in entries if _key_of(self.state, e, _rkeys(level)) == key), None)
            if i + 1 < len(path):
                if found is None:
                    found = self._named(level, key, names, {})
                    entries.append(found)
                container = found
                continue
            values = {k: _value(v, site) for k, v in level.entry.items()}
            if level.error is not None:
                values[level.error] = rule.code
            entry = self._named(level, key, names, values)
            if found is None:
                entries.append(entry)
            elif rule.deep:
                found.update(entry)  # a leaderless partition keeps its replicas
            else:
                entries[entries.index(found)] = entry

    def _named(
        self, level: Level, key: Any, path: Sequence[str], values: dict[str, Any]
    ) -> dict[str, Any]:
        """An answer entry for ``key`` with ``values``, of the fields the version has."""
        entry = dict(values)
        if level.filter == "topic":
            topic = self.state.topics.by_name.get(key) if isinstance(key, str) else None
            entry["topic_id"] = (
                topic.id if topic is not None else key if isinstance(key, uuid.UUID) else _NIL
            )
            entry[level.response_key] = key if isinstance(key, str) else ""
        else:
            entry[level.response_key] = key
        return _in_version(self.api_key, self.version, path, entry)

    def _answer_paths(
        self, answer: dict[str, Any], rule: _Rule, path: tuple[Any, ...]
    ) -> list[tuple[Any, ...]]:
        """The answer's paths under ``path`` (where the request listed nothing) that ``rule``
        selects, down to its depth."""
        depth = self._depth(rule)
        levels = self.layout.levels
        container: Any = answer
        for level, key in zip(levels, path, strict=False):
            container = next(
                (
                    e
                    for e in container.get(level.response, [])
                    if _key_of(self.state, e, _rkeys(level)) == key
                ),
                None,
            )
            if container is None:
                return []
        out: list[tuple[Any, ...]] = []

        def walk(c: Any, i: int, p: tuple[Any, ...]) -> None:
            level = levels[i]
            for e in c.get(level.response, []):
                key = _key_of(self.state, e, _rkeys(level))
                if not self._selects(rule, level, e, key):
                    continue
                if i + 1 == depth:
                    out.append((*p, key))
                else:
                    walk(e, i + 1, (*p, key))

        if len(path) < depth:
            walk(container, len(path), path)
        return out

    def _order(self, answer: dict[str, Any]) -> None:
        """Put the answer's entries in the request's order, as Kafka answers."""
        levels = self.layout.levels

        def sort(req: Any, resp: dict[str, Any], i: int) -> None:
            if i >= len(levels) or req is None:
                return
            level = levels[i]
            asked = req.get(level.request) if level.request else None
            got = resp.get(level.response)
            if asked is None or not got:
                return
            order: dict[Any, int] = {}
            for n, e in enumerate(asked):
                order.setdefault(_key_of(self.state, e, level.key), n)
            got.sort(key=lambda e: order.get(_key_of(self.state, e, _rkeys(level)), len(order)))
            if not level.key:
                return
            by_key = {_key_of(self.state, r, _rkeys(level)): r for r in got}
            for e in asked:
                r = by_key.get(_key_of(self.state, e, level.key))
                if r is not None:
                    sort(e, r, i + 1)

        sort(self.body, answer, 0)
