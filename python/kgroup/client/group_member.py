"""group_member: what a consumer's membership of its group does the same way under both group
protocols, shared by :class:`~kgroup.client.membership.Membership` (classic) and
:class:`~kgroup.client.consumer_membership.ConsumerMembership` (KIP-848).

:class:`GroupMember` holds the consumer's hooks (``post`` an event to the application's thread,
``fatal``, ``last_poll``, ``positions``, ``spawn``), sends group requests to the group's
coordinator (:meth:`GroupMember.coordinator_request`: Cluster finds it and finds it again after
NOT_COORDINATOR), resolves a subscription to topic names from Metadata (a ``^`` entry is a
regular expression, fully matched), wakes a member that left after ``max.poll.interval.ms``
when the application polls again, loses the owned partitions (``lost`` event), and builds the
topics of an OffsetCommit request. Runs on the consumer's event loop, as its subclasses do.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from kgroup.client.cluster import Cluster
from kgroup.client.config import ClientConfig
from kgroup.errors import FencedInstanceId, KafkaError

__all__ = ["GroupMember", "Key", "Offsets", "Post"]

Key = tuple[str, int]
#: Post an event to the application's thread: (kind, partitions); the future resolves once the
#: application has handled it.
Post = Callable[[str, list[Key]], "asyncio.Future[None]"]
#: What commit() takes: ``{key: offset}`` or ``{key: (offset, metadata, leader epoch)}``.
Offsets = dict[Key, int] | dict[Key, tuple[int, str | None, int | None]]


class GroupMember:
    """GroupMember is the part of one consumer's group membership that both protocols share.
    Its subclasses set ``member_id`` and ``generation`` (the member epoch under KIP-848)."""

    def __init__(
        self,
        config: ClientConfig,
        cluster: Cluster,
        *,
        post: Post,
        fatal: Callable[[BaseException], None],
        last_poll: Callable[[], float],
        positions: Callable[[Iterable[Key]], dict[Key, int]],
        spawn: Callable[[Any], asyncio.Task[Any]],
    ) -> None:
        self.config, self.cluster = config, cluster
        self.group: str = config["group.id"]
        self.instance_id: str | None = config["group.instance.id"]
        self.post, self.fatal, self.last_poll, self.positions = post, fatal, last_poll, positions
        self.spawn = spawn
        self.member_id = ""
        self.generation = -1
        #: the partitions the member owns
        self.owned: list[Key] = []
        self.subscription: list[str] = []
        self._patterns: list[re.Pattern[str]] = []
        #: the subscription resolved to topic names, sorted
        self.topics: list[str] = []
        self._poll_timed_out = False
        self._polled = asyncio.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self._closed = False

    # -- requests ----------------------------------------------------------------------------

    async def coordinator_request(self, api: int, body: Any, **kwargs: Any) -> Any:
        """One request to the group's coordinator (found, and found again after
        NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE, by :meth:`Cluster.coordinator_request`,
        which takes the same keyword arguments)."""
        return await self.cluster.coordinator_request(self.group, api, body, **kwargs)

    # -- subscription ------------------------------------------------------------------------

    def _set_subscription(self, topics: Iterable[str]) -> None:
        self.subscription = list(topics)
        self._patterns = [re.compile(t[1:]) for t in self.subscription if t.startswith("^")]

    async def _update_topics(self) -> bool:
        """Resolve the subscription to topic names; True when they changed."""
        names = [t for t in self.subscription if not t.startswith("^")]
        if self._patterns:
            with contextlib.suppress(KafkaError):
                await self.cluster.refresh(None)
            internal = self.config["exclude.internal.topics"]
            for name, info in self.cluster.topics.items():
                if internal and (info.internal or name.startswith("__")):
                    continue
                if any(p.fullmatch(name) for p in self._patterns) and name not in names:
                    names.append(name)
        else:
            with contextlib.suppress(KafkaError):
                await self.cluster.refresh(names)
        names.sort()
        changed = names != self.topics
        self.topics = names
        return changed

    def _metadata_interval(self) -> float:
        """Seconds between two refreshes of the subscribed topics' metadata:
        ``topic.metadata.refresh.interval.ms``, at most ``metadata.max.age.ms``."""
        every = self.config["topic.metadata.refresh.interval.ms"]
        every = min(every, self.config["metadata.max.age.ms"]) if every else None
        return float((every or self.config["metadata.max.age.ms"]) / 1000)

    # -- events for the application ----------------------------------------------------------

    def polled(self) -> None:
        """The application polled (called on the loop)."""
        if self._poll_timed_out:
            self._poll_timed_out = False
            self._polled.set()

    def _lose_owned(self) -> asyncio.Future[None] | None:
        """The owned partitions are lost (``on_lost``, else ``on_revoke``, without a commit):
        posted to the application, whose handling the returned future reports; None when the
        member owned nothing."""
        if not self.owned:
            return None
        lost, self.owned = self.owned, []
        return self.post("lost", lost)

    def _fenced_instance(self) -> FencedInstanceId:
        """FENCED_INSTANCE_ID: another consumer took this one's ``group.instance.id``; fatal to
        the application (reported from poll()), and returned for the caller to raise."""
        err = FencedInstanceId(f"group {self.group}: instance {self.instance_id} fenced")
        self.fatal(err)
        return err

    # -- commits -----------------------------------------------------------------------------

    @staticmethod
    def _commit_topics(offsets: Offsets) -> tuple[list[dict[str, Any]], dict[Key, int]]:
        """The ``topics`` of an OffsetCommit request (v6+ fields; older versions drop the
        leader epoch) and the ``{key: offset}`` a successful commit returns."""
        by_topic: dict[str, list[dict[str, Any]]] = {}
        flat: dict[Key, int] = {}
        for (t, p), val in offsets.items():
            off, meta, epoch = val if isinstance(val, tuple) else (val, None, None)
            flat[(t, p)] = off
            by_topic.setdefault(t, []).append(
                {
                    "partition_index": p,
                    "committed_offset": off,
                    "committed_leader_epoch": -1 if epoch is None else epoch,
                    "committed_metadata": meta if meta is not None else "",
                }
            )
        return [{"name": t, "partitions": ps} for t, ps in by_topic.items()], flat

    def _cancel_tasks(self) -> None:
        for t in self._tasks:
            t.cancel()
        self._tasks = []
