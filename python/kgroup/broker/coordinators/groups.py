"""GroupHost: Kafka's groups (classic, KIP-848's consumer protocol, KIP-932's share groups) on
this broker.

The coordinator is Rust (:class:`kgroup.group.Coordinator`): a pure state machine that reads no
clock and does no I/O. Its runtime (``runtime.CoordinatorRuntime``) carries out its effects,
appends its records to ``__consumer_offsets``, loads them at start and fires its timers, as
for any coordinator. ``GroupHost``, one per broker, adds what is the groups' own:

- Requests. The server hands the group apis' requests in as raw frames
  (``handle_frame``), which Rust decodes once into their typed messages: no Python view and no
  value tree on this path; their handlers (``handlers/join_group.py`` ...) hand a decoded
  request in (``handle``). Most are answered in the same call, with a whole response frame; the
  others (a JoinGroup or SyncGroup parked until its rebalance completes, a commit waiting for
  its records to be durable) get a future that a later effect resolves. The server writes
  either in the connection's request order, and a parked request holds nothing but its own
  connection's later responses, as Kafka, which reads nothing more from that connection
  meanwhile, holds them.
- Commits. A commit is answered, and visible to OffsetFetch, once its records are durable as
  the runtime has it: written, or fsynced once the topic's ``flush.messages`` is reached.
- Topics. ``set_topic_metadata`` after every topic change: commits to unknown topics or
  partitions get UNKNOWN_TOPIC_OR_PARTITION, and consumer groups (KIP-848) resolve the names
  they subscribe to into topic ids and partitions; ``topics_deleted`` when a topic is deleted.
- Group configs (KIP-848): ``configs`` keeps them (``kgroup.broker.group_configs``) and hands
  the ones the coordinator reads to it, at start and at each change.
- Share groups (KIP-932). ShareGroupHeartbeat and ShareGroupDescribe go to the coordinator
  like the others while ``group.share.enable`` is on. Its share effects act on the broker's
  share partitions (``state.shares``, ``kgroup.broker.share.manager``): InitializeShareState
  records their share state (state epoch, start offset decided at the first fetch) and is
  reported back with ``share_state_initialized``, in the same run of the runtime, so that the
  group's next heartbeat assigns them; DeleteShareState drops it.
- ``__consumer_offsets``. Created when first needed, as Kafka creates it: on the first
  FindCoordinator for a group (or a Metadata request naming it), with
  ``offsets.topic.num.partitions`` partitions, compacted, in ``offsets.topic.segment.bytes``
  segments. Until it exists no partition is this broker's: group requests are answered
  NOT_COORDINATOR and clients go back to FindCoordinator. Kafka creates it asynchronously and
  answers that first FindCoordinator COORDINATOR_NOT_AVAILABLE; here the topic is created
  in the request (about 40 ms for 50 partitions, once per data folder), which spares clients
  their retry. At start its partitions are loaded in reads of ``offsets.load.buffer.size``
  bytes; a partition that fails to load is not served (NOT_COORDINATOR) rather than served
  empty, which would reset its consumers' positions.

Not thread-safe: the broker's event loop owns it.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import TYPE_CHECKING, Protocol

from kgroup import errors
from kgroup.broker.coordinators.runtime import CoordinatorRuntime, Host, InternalTopic
from kgroup.broker.group_configs import GroupConfigs
from kgroup.broker.topics import OFFSETS_TOPIC, Topic, now_ms
from kgroup.group import CONFIG_KEYS, Coordinator, DeleteShareState, InitializeShareState
from kgroup.protocol import Request

if TYPE_CHECKING:
    from collections.abc import Sequence

    from kgroup.broker.coordinators.runtime import Effect
    from kgroup.broker.share.manager import ShareManager

__all__ = ["GroupHost", "GroupRequest"]


class _Client(Protocol):
    @property
    def client_host(self) -> str: ...


class GroupsHost(Host, Protocol):
    """GroupsHost is what GroupHost reads of the broker: a coordinator's host, and the share
    partitions its share groups' effects act on."""

    @property
    def shares(self) -> ShareManager: ...


class GroupRequest(Protocol):
    """GroupRequest is what GroupHost reads of a handler's ``RequestContext``: the request and
    its client's address."""

    @property
    def request(self) -> Request: ...
    @property
    def connection(self) -> _Client: ...


class GroupHost:
    """GroupHost runs the broker's group coordinator over a :class:`CoordinatorRuntime`. See the
    module's docstring."""

    def __init__(self, state: GroupsHost) -> None:
        self.state = state
        config = state.config
        #: coordinator is the Rust state machine, configured by the broker's ``group.*`` and
        #: ``offset(s).*`` settings (Kafka's names).
        self.coordinator = Coordinator({k: config.get(k) for k in CONFIG_KEYS})
        self.num_partitions = int(config.get("offsets.topic.num.partitions"))
        #: runtime carries out the coordinator's effects, loads and timers.
        self.runtime = CoordinatorRuntime(
            state,
            self.coordinator,
            InternalTopic(
                name=OFFSETS_TOPIC,
                partitions=self.num_partitions,
                # Kafka's groupMetadataTopicConfigs: compacted, producer compression, its own
                # segment size.
                configs={
                    "cleanup.policy": ["compact"],
                    "compression.type": "producer",
                    "segment.bytes": int(config.get("offsets.topic.segment.bytes")),
                },
                load_buffer=int(config.get("offsets.load.buffer.size")),
                unit="group",
                contents="offsets and group metadata",
            ),
            other=self._share_effect,
        )
        state.topics.listeners.append(self._topic_changed)
        #: configs are the groups' dynamic configs (DescribeConfigs and the AlterConfigs apis on
        #: resource type GROUP), kept beside topics.json.
        self.configs = GroupConfigs(
            state.topics.dir / "group_configs.json", self.coordinator.set_group_config
        )

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> None:
        """Take the partitions of ``__consumer_offsets`` (after the topics are loaded, on the
        event loop): each is loaded in the background."""
        self._set_topics()
        self.configs.load()
        self.runtime.start()

    def stop(self) -> None:
        """Give every partition up: parked JoinGroups and SyncGroups are answered
        NOT_COORDINATOR. Commits waiting for their flush are still answered when it ends."""
        self.runtime.stop()

    # -- topics --------------------------------------------------------------------------

    def offsets_topic(self) -> Topic:
        """``__consumer_offsets``, created now if it does not exist yet."""
        return self.runtime.internal_topic()

    def coordinator_error(self, group_id: str) -> errors.KafkaError | None:
        """Why this broker cannot coordinate ``group_id`` (FindCoordinator), or None: it can.
        Creates ``__consumer_offsets`` when it does not exist."""
        topic = self.offsets_topic()
        if self.coordinator.partition_for(group_id) >= len(topic.partitions):
            # A topic created by hand with fewer partitions: Kafka finds no leader for it.
            return errors.CoordinatorNotAvailable()
        return None

    def _set_topics(self) -> None:
        self.coordinator.set_topic_metadata(
            [(t.name, t.id.bytes, len(t.partitions)) for t in self.state.topics.by_name.values()]
        )

    def _topic_changed(self, topic: Topic, change: str) -> None:
        # New partitions of __consumer_offsets are the runtime's (its own listener).
        self._set_topics()
        if change == "deleted":
            # A deleted topic's share state goes with it (Kafka's broker deletes it as the
            # topic goes); its share groups forget the topic at their next heartbeat.
            self.state.shares.topic_deleted(topic.id)
            self.runtime.apply(self.coordinator.topics_deleted(now_ms(), [topic.name]))

    # -- requests ------------------------------------------------------------------------

    def handle_frame(self, frame: bytes, client_host: str) -> bytes | asyncio.Future[bytes]:
        """Serve one group request given as its raw frame (the bytes after the size prefix),
        which Rust decodes once: its response frame, or a future of it. How the server hands
        the group apis' traffic in."""
        runtime = self.runtime
        token = runtime.new_token()
        effects = self.coordinator.handle_frame(now_ms(), token, frame, client_host)
        return runtime.answer(token, effects)

    def handle(self, ctx: GroupRequest) -> bytes | asyncio.Future[bytes]:
        """Serve one group request already decoded (a handler's): its response frame, or a
        future of it."""
        runtime = self.runtime
        token = runtime.new_token()
        effects = self.coordinator.handle(now_ms(), token, ctx.request, ctx.connection.client_host)
        return runtime.answer(token, effects)

    # -- share groups --------------------------------------------------------------------

    def _share_effect(self, e: object) -> Sequence[Effect]:
        """Carry out a share group's effect (KIP-932) on the broker's share partitions
        (``state.shares``), and report an initialization back to the coordinator: the
        effects of that report follow in the same run of the runtime."""
        shares = self.state.shares
        if isinstance(e, InitializeShareState):
            topic_id = uuid.UUID(bytes=e.topic_id)
            topic = self.state.topics.by_id.get(topic_id)
            if topic is None or any(not 0 <= i < len(topic.partitions) for i in e.partitions):
                # The topic went (or shrank) meanwhile: the next heartbeat sees it.
                return self.coordinator.share_state_initialize_failed(
                    now_ms(), e.group_id, e.topic_id, e.partitions
                )
            shares.initialize(e.group_id, topic_id, e.partitions, e.state_epoch)
            return self.coordinator.share_state_initialized(
                now_ms(), e.group_id, e.topic_id, e.partitions
            )
        if isinstance(e, DeleteShareState):
            shares.delete(e.group_id, uuid.UUID(bytes=e.topic_id), e.partitions)
            return []
        raise TypeError(f"the group coordinator asked for {e!r}")

    # -- actions -------------------------------------------------------------------------

    def expire_member(self, group_id: str, member_id: str | None = None) -> None:
        """End the session of ``member_id`` of ``group_id`` (of every member, when None) now,
        as its session timer would: a classic group removes it and rebalances (a member with
        a JoinGroup or SyncGroup parked keeps its session, as Kafka's ``onExpireHeartbeat``
        keeps it); a consumer group fences it. Its effects are carried out as any event's:
        records appended, parked requests answered. Raises GroupIdNotFound, UnknownMemberId,
        NotCoordinator or CoordinatorLoadInProgress."""
        self.runtime.apply(self.coordinator.expire_member(now_ms(), group_id, member_id))

    @property
    def waiting(self) -> int:
        """Requests handed to the coordinator and not answered yet."""
        return self.runtime.waiting
