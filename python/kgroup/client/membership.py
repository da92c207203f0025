"""membership: a consumer's side of a classic consumer group, as Java's ConsumerCoordinator.

:class:`Membership` runs on the consumer's event loop. It finds the coordinator, joins
(JoinGroup v4+: MEMBER_ID_REQUIRED answers with the member id to join again with), and syncs:
the leader runs the assignor the group chose on every member's subscription, with the metadata
of all their topics (and the racks of each partition's replicas when members give a
``client.rack``), followers send no assignments. It heartbeats every ``heartbeat.interval.ms``
in the background, commits offsets with its generation, and leaves the group on close
(dynamic members only: a static member, ``group.instance.id``, keeps its place until its
session ends).

Rebalance protocol, as Java decides it: COOPERATIVE when every assignor of
``partition.assignment.strategy`` supports it, else EAGER.

- EAGER: before joining, commit (auto commit) and revoke every partition, then join.
- COOPERATIVE (KIP-429): keep consuming while joining; after SyncGroup revoke only the
  partitions the new assignment takes away, and if there were any, join once more.

Partitions are LOST (``on_lost``, else ``on_revoke``), without a commit, when the coordinator no
longer knows the member or its generation (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION), and when the
application did not poll for ``max.poll.interval.ms`` (the member then leaves the group, as
Java's heartbeat thread does, and joins again at the next poll). FENCED_INSTANCE_ID is fatal.

The application's callbacks run in the application's thread, inside ``poll()``: the membership
posts an event and, for revocations, waits until the application has handled it.

Rejoin triggers: a heartbeat answered REBALANCE_IN_PROGRESS; a subscription change; a new topic
matching a pattern; a partition count change of a group topic (leader, at each metadata
refresh); the end of a scheduled rebalance delay a cooperative-sticky assignment announces
(KIP-415, :func:`kgroup.assignors.remaining_delay_ms`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from kgroup.assignors import (
    Assignment,
    Assignor,
    CooperativeStickyAssignor,
    RebalanceProtocol,
    StickyAssignor,
    Subscription,
    assignor,
    remaining_delay_ms,
)
from kgroup.assignors.consumer_protocol import (
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_subscription,
)
from kgroup.client.cluster import partitions_coordinator_code, retrying
from kgroup.client.config import ClientConfig
from kgroup.client.group_member import GroupMember, Key, Offsets
from kgroup.client.types import CommitFailed
from kgroup.errors import (
    FencedInstanceId,
    IllegalGeneration,
    InvalidArgument,
    KafkaError,
    MemberIdRequired,
    RebalanceInProgress,
    UnknownMemberId,
    error_for_code,
)
from kgroup.protocol import ApiKey

__all__ = ["Membership", "make_assignors"]

log = logging.getLogger("kgroup.client.membership")

_FATAL_JOIN = frozenset({23, 30, 81, 82})  # inconsistent protocol, auth, max size, fenced


def make_assignors(config: ClientConfig) -> list[Assignor]:
    """The assignors of ``partition.assignment.strategy``, in order (the group picks the first
    one every member supports)."""
    out: list[Assignor] = []
    names = config["partition.assignment.strategy"]
    if isinstance(names, str):  # the default is not parsed
        names = names.split(",")
    for name in names:
        name = str(name).strip().lower()
        if name == "cooperative-sticky":
            delay = config["scheduled.rebalance.max.delay.ms"]
            out.append(CooperativeStickyAssignor(scheduled_rebalance_max_delay_ms=delay))
        else:
            out.append(assignor(name))
    if not out:
        raise InvalidArgument("partition.assignment.strategy is empty")
    return out


def rebalance_protocol(assignors: Iterable[Assignor]) -> RebalanceProtocol:
    """Java's choice: the highest protocol every assignor supports."""
    common = None
    for a in assignors:
        s = set(a.supported_protocols)
        common = s if common is None else common & s
    return max(common) if common else RebalanceProtocol.EAGER


class Membership(GroupMember):
    """Membership is one consumer's membership of its group. Runs on the client's loop;
    ``owned`` is in assignment order."""

    def __init__(self, config: ClientConfig, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        self.assignors = make_assignors(config)
        self.protocol = rebalance_protocol(self.assignors)
        self.protocol_name: str | None = None
        self.leader = False
        self._last_assignment: Assignment | None = None
        self._last_generation = -1
        self.state = "unjoined"  # unjoined, preparing, joining, stable
        self._rejoin = asyncio.Event()
        self._prepared = False
        self._group_snapshot: dict[str, int] = {}
        self._delay_handle: asyncio.TimerHandle | None = None
        self.session_ms = config["session.timeout.ms"]
        self.rebalance_ms = config["rebalance.timeout.ms"] or config["max.poll.interval.ms"]

    # -- subscription ------------------------------------------------------------------------

    async def subscribe(self, topics: list[str]) -> None:
        self._set_subscription(topics)
        await self._update_topics()
        self.request_rejoin("subscription changed")
        if not self._tasks:
            self._tasks = [
                self.spawn(self._run()),
                self.spawn(self._heartbeats()),
                self.spawn(self._metadata_refresh()),
            ]

    def request_rejoin(self, why: str) -> None:
        log.debug("%s: rejoin: %s", self.member_id or self.group, why)
        self._rejoin.set()

    # -- the join loop -----------------------------------------------------------------------

    async def _run(self) -> None:
        attempt = 0
        while not self._closed:
            await self._rejoin.wait()
            if self._poll_timed_out:
                self._polled.clear()
                await self._polled.wait()
            try:
                await self._rebalance()
                attempt = 0
            except asyncio.CancelledError:
                raise
            except FencedInstanceId as e:
                self.fatal(e)
                return
            except KafkaError as e:
                if e.code in _FATAL_JOIN:
                    self.fatal(e)
                    return
                log.info("group %s: rebalance failed: %r; retrying", self.group, e)
                self._rejoin.set()
                attempt += 1
                await asyncio.sleep(min(0.1 * 2**attempt, 1.0))

    async def _rebalance(self) -> None:
        self._rejoin.clear()
        if not self._prepared:
            self.state = "preparing"
            await self._commit_owned()
            if self.protocol == RebalanceProtocol.EAGER and self.owned:
                revoked, self.owned = self.owned, []
                await self.post("revoke", revoked)
            self._prepared = True
        self.state = "joining"
        resp = await self._join()
        if resp is None:
            return
        assignments: list[dict[str, Any]] = []
        if self.leader:
            assignments = self._assign(resp)
        payload = await self._sync(assignments)
        if payload is None:
            return
        self._prepared = False
        self.state = "stable"
        await self._joined(decode_assignment(payload) if payload else Assignment([]))

    async def _commit_owned(self) -> None:
        """Java's onJoinPrepare: with auto commit, commit the positions before rejoining."""
        if not self.config["enable.auto.commit"] or not self.owned or self.generation < 0:
            return
        try:
            await self.commit(self.positions(self.owned))
        except KafkaError as e:
            log.info("group %s: commit before rebalance failed: %r", self.group, e)

    def _subscription(self, a: Assignor) -> Subscription:
        kwargs = {"rack_id": self.config["client.rack"], "group_instance_id": self.instance_id}
        if isinstance(a, StickyAssignor) and not isinstance(a, CooperativeStickyAssignor):
            # eager sticky: the previous assignment travels in the user data
            if self._last_assignment is None:
                return a.subscription(self.topics, None, -1, **kwargs)
            return a.subscription(
                self.topics, self._last_assignment, self._last_generation, **kwargs
            )
        return a.subscription(self.topics, self.owned, self.generation, **kwargs)

    async def _join(self) -> Any | None:
        protocols = [
            {"name": a.name, "metadata": encode_subscription(self._subscription(a))}
            for a in self.assignors
        ]
        timeout = max(self.config.ms("request.timeout.ms"), self.rebalance_ms / 1000 + 5)
        while True:
            body = {
                "group_id": self.group,
                "session_timeout_ms": self.session_ms,
                "rebalance_timeout_ms": self.rebalance_ms,
                "member_id": self.member_id,
                "group_instance_id": self.instance_id,
                "protocol_type": "consumer",
                "protocols": protocols,
            }

            def version_body(v: int, body: dict[str, Any] = body) -> dict[str, Any]:
                b = dict(body)
                if v < 5:
                    b.pop("group_instance_id")
                if v < 1:
                    b.pop("rebalance_timeout_ms")
                return b

            resp = await self.coordinator_request(
                ApiKey.JOIN_GROUP, version_body, request_timeout=timeout
            )
            code = resp["error_code"]
            if code == 0:
                self.member_id = resp["member_id"]
                self.generation = resp["generation_id"]
                self.protocol_name = resp["protocol_name"]
                self.leader = resp["leader"] == self.member_id
                return resp
            if code == MemberIdRequired.code:
                self.member_id = resp["member_id"]
                continue
            if code == UnknownMemberId.code:
                self.member_id = ""
                continue
            if code in (RebalanceInProgress.code, IllegalGeneration.code):
                await asyncio.sleep(self.config.ms("retry.backoff.ms"))
                continue
            cls = error_for_code(code)
            assert cls is not None
            raise cls(f"JoinGroup({self.group}): {cls.name}")

    def _assign(self, resp: Any) -> list[dict[str, Any]]:
        name = resp["protocol_name"]
        a = next(x for x in self.assignors if x.name == name)
        subs: dict[str, Subscription] = {}
        topics: set[str] = set()
        for m in resp["members"]:
            s = decode_subscription(m["metadata"])
            subs[m["member_id"]] = Subscription(
                list(s.topics),
                user_data=s.user_data,
                owned_partitions=list(s.owned_partitions),
                generation_id=s.generation_id,
                rack_id=s.rack_id,
                group_instance_id=m.get("group_instance_id"),
            )
            topics.update(s.topics)
        counts = {t: n for t in topics if (n := self.cluster.partition_count(t))}
        racks = None
        if any(s.rack_id for s in subs.values()):
            racks = {}
            for t in counts:
                for p, info in self.cluster.topics[t].partitions.items():
                    rs: list[str] = []
                    for r in info.replicas:
                        rack = self.cluster.brokers[r].rack if r in self.cluster.brokers else None
                        if rack:
                            rs.append(rack)
                    racks[(t, p)] = rs
        self._group_snapshot = counts
        out = a.assign(counts, subs, partition_racks=racks)
        return [
            {"member_id": mid, "assignment": encode_assignment(asg)} for mid, asg in out.items()
        ]

    async def _sync(self, assignments: list[dict[str, Any]]) -> bytes | None:
        def body(v: int) -> dict[str, Any]:
            b: dict[str, Any] = {
                "group_id": self.group,
                "generation_id": self.generation,
                "member_id": self.member_id,
                "assignments": assignments,
            }
            if v >= 3:
                b["group_instance_id"] = self.instance_id
            if v >= 5:
                b["protocol_type"] = "consumer"
                b["protocol_name"] = self.protocol_name
            return b

        timeout = max(self.config.ms("request.timeout.ms"), self.rebalance_ms / 1000 + 5)
        resp = await self.coordinator_request(ApiKey.SYNC_GROUP, body, request_timeout=timeout)
        code = resp["error_code"]
        if code == 0:
            return bytes(resp["assignment"])
        if code == RebalanceInProgress.code:
            self.request_rejoin("SyncGroup: REBALANCE_IN_PROGRESS")
            return None
        if code in (UnknownMemberId.code, IllegalGeneration.code):
            self._reset(code == UnknownMemberId.code)
            self.request_rejoin("SyncGroup: " + (error_for_code(code) or KafkaError).name)
            return None
        cls = error_for_code(code)
        assert cls is not None
        raise cls(f"SyncGroup({self.group}): {cls.name}")

    async def _joined(self, assignment: Assignment) -> None:
        new: list[Key] = [(tp[0], tp[1]) for tp in assignment.partitions]
        self._last_assignment, self._last_generation = assignment, self.generation
        if self.protocol == RebalanceProtocol.COOPERATIVE:
            newset, ownedset = set(new), set(self.owned)
            revoked = [k for k in self.owned if k not in newset]
            added = [k for k in new if k not in ownedset]
            self.owned = new
            self.post("assign", added)
            if revoked:
                await self.post("revoke", revoked)
                self.request_rejoin("partitions revoked (cooperative)")
        else:
            self.owned = new
            self.post("assign", new)
        delay = remaining_delay_ms(assignment)
        if delay is not None and delay >= 0:
            if self._delay_handle is not None:
                self._delay_handle.cancel()
            loop = asyncio.get_running_loop()
            self._delay_handle = loop.call_later(
                delay / 1000, self.request_rejoin, "scheduled rebalance delay ended"
            )

    def _reset(self, forget_member: bool) -> None:
        """The group no longer knows our generation (or member id): the owned partitions are
        lost."""
        if forget_member:
            self.member_id = ""
        self.generation = -1
        self.state = "unjoined"
        self._prepared = False
        self._lose_owned()

    # -- background --------------------------------------------------------------------------

    async def _heartbeats(self) -> None:
        interval = self.config.ms("heartbeat.interval.ms")
        max_poll = self.config.ms("max.poll.interval.ms")
        while not self._closed:
            await asyncio.sleep(interval)
            if (
                self.generation >= 0
                and not self._poll_timed_out
                and time.monotonic() - self.last_poll() > max_poll
            ):
                log.warning(
                    "group %s: no poll() for max.poll.interval.ms; leaving the group", self.group
                )
                self._lose_owned()
                await self.leave("consumer poll timeout has expired")
                self._poll_timed_out = True
                self.request_rejoin("poll timeout")
                continue
            if self.generation < 0 or self.state == "joining":
                continue
            try:
                await self._heartbeat()
            except asyncio.CancelledError:
                raise
            except FencedInstanceId as e:
                self.fatal(e)
                return
            except KafkaError as e:
                log.debug("heartbeat failed: %r", e)

    async def _heartbeat(self) -> None:
        generation = self.generation

        def body(v: int) -> dict[str, Any]:
            b: dict[str, Any] = {
                "group_id": self.group,
                "generation_id": generation,
                "member_id": self.member_id,
            }
            if v >= 3:
                b["group_instance_id"] = self.instance_id
            return b

        resp = await self.coordinator_request(
            ApiKey.HEARTBEAT, body, timeout=self.session_ms / 1000
        )
        code = resp["error_code"]
        if code == 0 or generation != self.generation or self.state == "joining":
            return
        if code == RebalanceInProgress.code:
            self.request_rejoin("heartbeat: REBALANCE_IN_PROGRESS")
        elif code in (UnknownMemberId.code, IllegalGeneration.code):
            self._reset(code == UnknownMemberId.code)
            self.request_rejoin("heartbeat: " + (error_for_code(code) or KafkaError).name)
        elif code == FencedInstanceId.code:
            raise FencedInstanceId(f"group {self.group}: instance {self.instance_id} is fenced")
        else:
            log.debug("heartbeat: error %s", code)

    async def _metadata_refresh(self) -> None:
        every = self._metadata_interval()
        while not self._closed:
            await asyncio.sleep(every)
            try:
                if await self._update_topics():
                    self.request_rejoin("subscribed topics changed")
                    continue
                if self.leader and self._group_snapshot:
                    await self.cluster.refresh(self._group_snapshot)
                    now = {t: self.cluster.partition_count(t) for t in self._group_snapshot}
                    if now != self._group_snapshot:
                        self.request_rejoin("partition count changed")
            except KafkaError as e:
                log.debug("metadata refresh failed: %r", e)

    # -- commits -----------------------------------------------------------------------------

    async def commit(self, offsets: Offsets, timeout: float | None = None) -> dict[Key, int]:
        """OffsetCommit with the member's generation; ``{key: offset}`` committed. Raises
        :class:`RebalanceInProgress` while the group rebalances, :class:`CommitFailed` when the
        group no longer knows this generation, :class:`FencedInstanceId` when fenced."""
        if not offsets:
            return {}
        generation, member_id = self.generation, self.member_id
        topics, flat = self._commit_topics(offsets)

        def body(v: int) -> dict[str, Any]:
            b: dict[str, Any] = {
                "group_id": self.group,
                "generation_id_or_member_epoch": generation,
                "member_id": member_id,
                "topics": topics,
            }
            if v >= 7:
                b["group_instance_id"] = self.instance_id
            if v < 6:
                b["topics"] = [
                    {
                        "name": t["name"],
                        "partitions": [
                            {k: x for k, x in p.items() if k != "committed_leader_epoch"}
                            for p in t["partitions"]
                        ],
                    }
                    for t in topics
                ]
            return b

        async def once() -> dict[Key, int]:
            resp = await self.coordinator_request(
                ApiKey.OFFSET_COMMIT,
                body,
                timeout=timeout,
                code_of=partitions_coordinator_code,
            )
            codes = {c for t in resp["topics"] for p in t["partitions"] if (c := p["error_code"])}
            if not codes:
                return flat
            code = min(codes)
            if code == RebalanceInProgress.code:
                raise RebalanceInProgress(f"group {self.group} is rebalancing")
            if code in (UnknownMemberId.code, IllegalGeneration.code):
                if generation == self.generation and member_id == self.member_id:
                    self._reset(code == UnknownMemberId.code)
                    self.request_rejoin("OffsetCommit: " + str(code))
                cls = error_for_code(code)
                raise CommitFailed(
                    f"commit failed: the group rebalanced ({cls and cls.name})",
                    cls() if cls else None,
                )
            if code == FencedInstanceId.code:
                raise self._fenced_instance()
            cls = error_for_code(code)
            assert cls is not None
            raise cls(f"OffsetCommit: {cls.name}")

        return await retrying(
            once,
            timeout=self.config.ms("default.api.timeout.ms") if timeout is None else timeout,
            base_ms=self.config["retry.backoff.ms"],
            max_ms=self.config["retry.backoff.max.ms"],
        )

    # -- leaving -----------------------------------------------------------------------------

    async def leave(self, reason: str = "the consumer is being closed") -> None:
        """LeaveGroup (dynamic members only), then forget the generation; owned partitions are
        the caller's to revoke."""
        member_id = self.member_id
        if self.instance_id is None and member_id:

            def body(v: int) -> dict[str, Any]:
                if v >= 3:
                    m: dict[str, Any] = {"member_id": member_id, "group_instance_id": None}
                    if v >= 5:
                        m["reason"] = reason
                    return {"group_id": self.group, "members": [m]}
                return {"group_id": self.group, "member_id": member_id}

            try:
                await self.coordinator_request(ApiKey.LEAVE_GROUP, body, timeout=5.0)
            except KafkaError as e:
                log.debug("LeaveGroup failed: %r", e)
            self.member_id = ""
        self.generation = -1
        self.state = "unjoined"
        self._prepared = False

    async def unsubscribe(self) -> list[Key]:
        """Leave the group and stop joining; returns the partitions that were owned."""
        self._cancel_tasks()
        owned, self.owned = self.owned, []
        await self.leave("the consumer unsubscribed")
        self.subscription, self.topics, self._patterns = [], [], []
        self._rejoin.clear()
        return owned

    async def close(self) -> None:
        self._closed = True
        if self._delay_handle is not None:
            self._delay_handle.cancel()
        self._cancel_tasks()
        await self.leave()
