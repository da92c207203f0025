"""consumer_membership: a consumer's side of a KIP-848 consumer group (``group.protocol=consumer``),
as Java's ConsumerMembershipManager and ConsumerHeartbeatRequestManager.

:class:`ConsumerMembership` has the surface the :class:`~kgroup.client.consumer.Consumer` uses of
:class:`~kgroup.client.membership.Membership`, over one request, ConsumerGroupHeartbeat (api 68):
the broker computes the assignment (``group.remote.assignor`` names its assignor), the member
reconciles to it.

States and transitions (Java's ``MemberState``, reduced to what a Python member needs):

- ``unsubscribed``: no subscription, or after unsubscribe() / close().
  action: none. transition: subscribe() → ``joining``.
- ``joining``: epoch 0, a full request (rebalance timeout = ``max.poll.interval.ms``, the
  subscribed names, ``TopicPartitions=[]``). transition: a response → ``stable`` (epoch > 0).
- ``stable``: heartbeat every ``heartbeat_interval_ms`` the broker returns, with only the fields
  that changed since the last answered request (§2.7 of the KIP-848 reference); a full request
  after any failure. An ``Assignment`` in a response is the whole set the member may own
  (null: unchanged); reconciling it revokes first (``on_revoke``, after a commit with auto
  commit), then reports the smaller owned set in the next heartbeat, sent at once, and only then
  assigns what is new (``on_assign``). Topic ids are resolved with Metadata (v10+); an id the
  client has not seen yet makes it refresh and retry at the next heartbeat.
  transition: UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH → ``fenced``; a fatal error → ``fatal``.
- ``fenced``: action: the owned partitions are lost (``on_lost``, else ``on_revoke``, no
  commit). transition: once the application handled it, ``joining`` with epoch 0 and the same
  member id.
- ``fatal``: INVALID_REQUEST, GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR,
  UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, GROUP_AUTHORIZATION_FAILED, UNSUPPORTED_VERSION,
  GROUP_ID_NOT_FOUND and any error Java does not special-case: raised to the application from
  poll(); no more heartbeats.

NOT_COORDINATOR and COORDINATOR_NOT_AVAILABLE find the coordinator again, and
COORDINATOR_LOAD_IN_PROGRESS is retried with backoff (:meth:`Cluster.coordinator_request`); the
request after either is a full one. The member id is generated here (KIP-1082: a random UUID in
Kafka's 22-character base64url form) and kept for the consumer's life. Leaving sends epoch -1
(a static member, ``group.instance.id``: -2, keeping its partitions for its session).

Commits are OffsetCommit v9+ stamped with the member id and epoch; STALE_MEMBER_EPOCH is sent
again after the next heartbeat while the member still owns every partition of the commit
(:meth:`ConsumerMembership.commit`).

A pattern subscription (a topic starting with ``^``, confluent-kafka's convention) is resolved
by the broker: it is sent as ``SubscribedTopicRegex`` (ConsumerGroupHeartbeat v1+), RE2 syntax
matched against whole topic names, as Java's ``subscribe(SubscriptionPattern)`` and librdkafka
do; several patterns go as one, ``(^a)|(^b)`` (librdkafka's
``rd_kafka_topic_partition_list_combine_regexes``), the plain names beside it in
``SubscribedTopicNames``. The client neither compiles nor matches them, so a topic created
later reaches the member through the broker's assignment, and a pattern the broker cannot
compile comes back as INVALID_REGULAR_EXPRESSION, fatal as in Java (raised from poll()).

Runs on the consumer's event loop, like :class:`~kgroup.client.membership.Membership`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
import uuid
from collections.abc import Iterable
from typing import Any

from kgroup.client.cluster import backoff, partitions_coordinator_code
from kgroup.client.config import ClientConfig
from kgroup.client.group_member import GroupMember, Key, Offsets
from kgroup.client.types import ClientError, CommitFailed
from kgroup.errors import (
    FencedInstanceId,
    FencedMemberEpoch,
    InvalidArgument,
    KafkaError,
    StaleMemberEpoch,
    TopicAuthorizationFailed,
    UnknownMemberId,
    UnsupportedVersion,
    error_for_code,
)
from kgroup.protocol import ApiKey

__all__ = [
    "ConsumerMembership",
    "check_consumer_protocol_config",
    "combine_patterns",
    "new_member_id",
]

log = logging.getLogger("kgroup.client.consumer_membership")

LEAVE_EPOCH, LEAVE_STATIC_EPOCH = -1, -2
#: FORBIDDEN are the settings the broker owns under ``group.protocol=consumer``, each with what
#: takes its place.
FORBIDDEN = {
    "session.timeout.ms": "the broker's group.consumer.session.timeout.ms",
    "heartbeat.interval.ms": "the broker's group.consumer.heartbeat.interval.ms",
    "partition.assignment.strategy": "group.remote.assignor",
}


def check_consumer_protocol_config(config: ClientConfig) -> None:
    """check_consumer_protocol_config raises :class:`~kgroup.errors.InvalidArgument` when a
    ``group.protocol=consumer`` configuration sets one of :data:`FORBIDDEN`: confluent-kafka
    (librdkafka 2.16) fails at construction with ``_INVALID_ARG`` ("... is not supported for
    group.protocol=consumer ... It is defined broker side"), and Java throws a ConfigException
    naming every one set ("a, b cannot be set when group.protocol=CONSUMER"); kgroup's Consumer
    follows them, naming each and what takes its place, it does not warn and ignore."""
    if config["group.protocol"] != "consumer":
        return
    given = [key for key in FORBIDDEN if key in config.given]
    if given:
        instead = "; ".join(f"{key}: {FORBIDDEN[key]}" for key in given)
        raise InvalidArgument(
            f"{', '.join(given)} cannot be set when group.protocol=consumer: the broker owns"
            f" them under this protocol (instead, {instead})"
        )


def new_member_id() -> str:
    """new_member_id is a random UUID in Kafka's ``Uuid.toString()`` form: 22 characters of
    unpadded base64url (KIP-1082)."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")


def combine_patterns(topics: Iterable[str]) -> str | None:
    """combine_patterns is the ``SubscribedTopicRegex`` of a subscription: its ``^`` entries as
    they are (the ``^`` anchors nothing under a full match), one alone, several as
    ``(^a)|(^b)`` as librdkafka combines them; None when there is none."""
    patterns = [t for t in topics if t.startswith("^")]
    if len(patterns) <= 1:
        return patterns[0] if patterns else None
    return "(" + ")|(".join(patterns) + ")"


#: Java's ConsumerHeartbeatRequestManager: errors after which the member rejoins (fenced).
_FENCED = frozenset({UnknownMemberId.code, FencedMemberEpoch.code})


class ConsumerMembership(GroupMember):
    """ConsumerMembership is one consumer's membership of a KIP-848 consumer group. Runs on the
    client's loop; ``generation`` is the member epoch (-1 outside the group, 0 while joining);
    ``owned`` is what the next full heartbeat reports."""

    def __init__(self, config: ClientConfig, *args: Any, **kwargs: Any) -> None:
        check_consumer_protocol_config(config)
        super().__init__(config, *args, **kwargs)
        self.member_id = new_member_id()
        self.state = "unsubscribed"
        self.rebalance_ms: int = config["max.poll.interval.ms"]
        self.assignor: str | None = config["group.remote.assignor"]
        #: the broker's interval; 0 until the first answer (the join goes out at once)
        self.interval_ms = 0
        # The last answered request's fields, to send only what changed (Java's HeartbeatState).
        self._full = True
        self._sent_topics: list[str] | None = None
        self._sent_regex: str | None = None
        #: the subscription's patterns as one SubscribedTopicRegex (:func:`combine_patterns`)
        self.regex: str | None = None
        self._sent_owned: list[Key] | None = None
        #: the latest assignment, by topic id, and the epoch it came with
        self._target: dict[uuid.UUID, list[int]] | None = None
        self._ids: dict[str, uuid.UUID] = {}
        self._reconciling: asyncio.Task[Any] | None = None
        self._fences = 0  # counts fencings, so that a reconciliation begun before one stops
        self._wake = asyncio.Event()
        self._beat = asyncio.Event()  # set after every answered heartbeat (commit retries)
        self._lock = asyncio.Lock()  # one heartbeat in flight

    # -- subscription ------------------------------------------------------------------------

    def _set_subscription(self, topics: Iterable[str]) -> None:
        # The broker resolves the patterns: none is compiled here (RE2 syntax, which Python's re
        # does not share), and GroupMember._update_topics resolves only the plain names.
        self.subscription = list(topics)
        self._patterns = []
        self.regex = combine_patterns(self.subscription)

    async def subscribe(self, topics: list[str]) -> None:
        self._set_subscription(topics)
        await self._update_topics()
        if self.state == "unsubscribed":
            self._join("subscribe")
        self._wake.set()
        if not self._tasks:
            self._tasks = [self.spawn(self._run()), self.spawn(self._metadata_refresh())]

    def _join(self, why: str) -> None:
        log.debug("group %s: member %s joins (epoch 0): %s", self.group, self.member_id, why)
        self.state = "joining"
        self.generation = 0
        self._full = True
        self._target = None
        self._wake.set()

    def request_rejoin(self, why: str) -> None:
        """Send the next heartbeat now (the subscription or the owned set changed)."""
        log.debug("group %s: heartbeat now: %s", self.group, why)
        self._wake.set()

    # -- the heartbeat loop ------------------------------------------------------------------

    async def _run(self) -> None:
        attempt = 0
        max_poll = self.config.ms("max.poll.interval.ms")
        while not self._closed:
            if self.state in ("unsubscribed", "fenced"):
                self._wake.clear()
                await self._wake.wait()
                continue
            if self.generation > 0 and time.monotonic() - self.last_poll() > max_poll:
                await self._poll_timeout()
                continue
            try:
                await self._heartbeat()
                attempt = 0
            except asyncio.CancelledError:
                raise
            except (KafkaError, ClientError, OSError, TimeoutError) as e:
                if isinstance(e, KafkaError) and not _retriable(e):
                    log.warning("group %s: fatal heartbeat error: %r", self.group, e)
                    self.state = "fatal"
                    self.fatal(e)
                    return
                log.info("group %s: heartbeat failed: %r; retrying", self.group, e)
                self._full = True
                attempt += 1
                await asyncio.sleep(backoff(attempt, self.config["retry.backoff.ms"], 10_000))
                continue
            if self._wake.is_set():
                self._wake.clear()
                continue
            wait = self.interval_ms / 1000 if self.interval_ms > 0 else 0.1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), wait)
            self._wake.clear()

    async def _poll_timeout(self) -> None:
        """Java's stale member: no poll() for ``max.poll.interval.ms``: the partitions are lost,
        the member leaves, and it joins again at the next poll()."""
        log.warning("group %s: no poll() for max.poll.interval.ms; leaving the group", self.group)
        await self._leave(LEAVE_EPOCH)
        self._lose()
        self._poll_timed_out = True
        self._polled.clear()
        await self._polled.wait()
        self._join("polled again after a poll timeout")

    def _body(self, full: bool) -> dict[str, Any]:
        epoch = self.generation
        full = full or epoch == 0
        b: dict[str, Any] = {
            "group_id": self.group,
            "member_id": self.member_id,
            "member_epoch": epoch,
            "instance_id": self.instance_id,
        }
        if full:
            b["rack_id"] = self.config["client.rack"]
            b["rebalance_timeout_ms"] = self.rebalance_ms
            b["server_assignor"] = self.assignor
        if full or self._sent_topics != self.topics:
            b["subscribed_topic_names"] = list(self.topics)
        # Java's HeartbeatState: the regex when joining or when it changed; "" drops it.
        if (full and self.regex is not None) or self._sent_regex != self.regex:
            b["subscribed_topic_regex"] = self.regex or ""
        if epoch == 0:
            b["topic_partitions"] = []
        elif full or self._sent_owned != self.owned:
            b["topic_partitions"] = self._owned_by_id()
        return b

    def _owned_by_id(self) -> list[dict[str, Any]]:
        by: dict[uuid.UUID, list[int]] = {}
        for t, p in self.owned:
            tid = self._ids.get(t)
            if tid is not None:
                by.setdefault(tid, []).append(p)
        return [{"topic_id": tid, "partitions": sorted(ps)} for tid, ps in by.items()]

    async def _heartbeat(self) -> None:
        async with self._lock:
            if self._closed or self.state in ("unsubscribed", "fatal"):
                return
            attempts = 0
            sent: dict[str, Any] = {}
            owned: list[Key] = []

            def body(v: int) -> dict[str, Any]:
                # A retry (after NOT_COORDINATOR, a lost connection) is a full request.
                nonlocal attempts, owned
                attempts += 1
                owned = list(self.owned)
                sent.clear()
                sent.update(self._body(self._full or attempts > 1))
                if v < 1:
                    if sent.pop("subscribed_topic_regex", None):
                        # Java's ConsumerGroupHeartbeatRequest.Builder refuses it likewise.
                        raise UnsupportedVersion(
                            "a pattern subscription is resolved by the broker: it needs"
                            " ConsumerGroupHeartbeat v1 (Kafka 4.0+)"
                        )
                return sent

            fences = self._fences
            try:
                resp = await self.coordinator_request(
                    ApiKey.CONSUMER_GROUP_HEARTBEAT,
                    body,
                    timeout=max(self.config.ms("request.timeout.ms"), 5.0),
                )
            except KafkaError:
                self._full = True
                raise
            if fences != self._fences or self.state in ("unsubscribed", "fatal"):
                return
            code = resp["error_code"]
            if code:
                self._full = True
                cls = error_for_code(code) or KafkaError
                msg = resp.get("error_message") or cls.name
                if code in _FENCED:
                    log.info("group %s: %s: %s; rejoining", self.group, cls.name, msg)
                    self._fence()
                    return
                raise cls(f"ConsumerGroupHeartbeat({self.group}): {msg}")
            self._full = False
            if "subscribed_topic_names" in sent:
                self._sent_topics = list(sent["subscribed_topic_names"])
            if "subscribed_topic_regex" in sent:
                self._sent_regex = sent["subscribed_topic_regex"] or None
            if sent.get("topic_partitions") is not None:
                self._sent_owned = owned if sent["member_epoch"] != 0 else []
            if resp.get("member_id"):
                self.member_id = resp["member_id"]
            self.generation = resp["member_epoch"]
            self.interval_ms = resp["heartbeat_interval_ms"]
            if self.state == "joining":
                self.state = "stable"
            self._beat.set()
            self._beat = asyncio.Event()
            a = resp.get("assignment")
            if a is not None:
                self._target = {
                    tp["topic_id"]: list(tp["partitions"]) for tp in a["topic_partitions"]
                }
            if self._target is not None and (self._reconciling is None or self._reconciling.done()):
                self._reconciling = self.spawn(self._reconcile())

    def _fence(self) -> None:
        """UNKNOWN_MEMBER_ID / FENCED_MEMBER_EPOCH: the partitions are lost; join again with
        epoch 0 and the same member id once the application has handled the loss."""
        self._fences += 1
        if self._reconciling is not None:
            self._reconciling.cancel()
            self._reconciling = None
        self.generation = -1
        self.state = "fenced"
        fut = self._lose()

        async def rejoin() -> None:
            if fut is not None:
                await fut
            if self.state == "fenced":
                self._join("fenced")

        self.spawn(rejoin())

    def _lose(self) -> asyncio.Future[None] | None:
        self._target = None
        self._sent_owned = None
        return self._lose_owned()

    # -- reconciliation ----------------------------------------------------------------------

    async def _reconcile(self) -> None:
        """Bring the owned set to the latest target: revoke first (the application's callback,
        then a heartbeat that reports the smaller set), then assign. Loops while the target
        moves on meanwhile."""
        fences = self._fences
        while self._target is not None and fences == self._fences and not self._closed:
            target = self._target
            names = await self._resolve(target)
            if fences != self._fences:
                return
            wanted = [(t, p) for tid, ps in target.items() if (t := names.get(tid)) for p in ps]
            wanted_set, owned_set = set(wanted), set(self.owned)
            revoked = [k for k in self.owned if k not in wanted_set]
            added = sorted(k for k in wanted_set if k not in owned_set)
            if revoked:
                await self.post("revoke", revoked)
                if fences != self._fences:
                    return
                gone = set(revoked)
                self.owned = [k for k in self.owned if k not in gone]
                self.request_rejoin("partitions revoked")
            if added:
                self.owned = self.owned + added
                self.post("assign", added)
                self.request_rejoin("partitions assigned")
            if self._target is target:
                # done, or ids not resolved yet: the next heartbeat's answer tries again
                return

    async def _resolve(self, target: dict[uuid.UUID, list[int]]) -> dict[uuid.UUID, str]:
        """Topic names of the target's ids, from Metadata; refreshed once when one is new."""
        for attempt in range(2):
            # The ids already resolved stay known even when a refresh of other names (or a
            # failed one) leaves a topic out of the cache: an owned partition is never revoked
            # for want of its name.
            names = {tid: name for name, tid in self._ids.items()}
            names.update(
                (info.topic_id, name)
                for name, info in self.cluster.topics.items()
                if info.topic_id is not None
            )
            if all(tid in names for tid in target) or attempt:
                break
            with contextlib.suppress(KafkaError):
                # A pattern's topics are the broker's to know: any topic may come.
                await self.cluster.refresh(None if self.regex else self.topics)
        out = {tid: names[tid] for tid in target if tid in names}
        for tid, name in out.items():
            self._ids[name] = tid
        missing = [tid for tid in target if tid not in out]
        if missing:
            log.info("group %s: assigned topic ids not in metadata yet: %s", self.group, missing)
        return out

    # -- background --------------------------------------------------------------------------

    async def _metadata_refresh(self) -> None:
        every = self._metadata_interval()
        while not self._closed:
            await asyncio.sleep(every)
            try:
                if await self._update_topics():
                    self.request_rejoin("subscribed topics changed")
            except KafkaError as e:
                log.debug("metadata refresh failed: %r", e)

    # -- commits -----------------------------------------------------------------------------

    async def commit(self, offsets: Offsets, timeout: float | None = None) -> dict[Key, int]:
        """OffsetCommit (v9+) with the member id and epoch; ``{key: offset}`` committed.
        STALE_MEMBER_EPOCH is sent again after the next heartbeat while every partition of the
        commit is still owned, else it raises :class:`CommitFailed`, as UNKNOWN_MEMBER_ID and
        FENCED_MEMBER_EPOCH do."""
        if not offsets:
            return {}
        topics, flat = self._commit_topics(offsets)
        total = self.config.ms("default.api.timeout.ms") if timeout is None else timeout
        deadline = time.monotonic() + total

        def body(v: int) -> dict[str, Any]:
            if v < 9:
                raise UnsupportedVersion(
                    "OffsetCommit: a consumer-protocol member needs v9+ (member epochs)"
                )
            in_group = self.generation >= 0
            return {
                "group_id": self.group,
                "generation_id_or_member_epoch": self.generation if in_group else -1,
                "member_id": self.member_id if in_group else "",
                "group_instance_id": self.instance_id,
                "topics": topics,
            }

        while True:
            beat = self._beat
            resp = await self.coordinator_request(
                ApiKey.OFFSET_COMMIT,
                body,
                timeout=max(deadline - time.monotonic(), 0.1),
                code_of=partitions_coordinator_code,
            )
            codes = {c for t in resp["topics"] for p in t["partitions"] if (c := p["error_code"])}
            if not codes:
                return flat
            code = min(codes)
            cls = error_for_code(code) or KafkaError
            left = deadline - time.monotonic()
            if code == StaleMemberEpoch.code and left > 0:
                # The broker moved the member to an epoch this client had not applied yet (a
                # reconciliation): sent again with the epoch of the next heartbeat, as Java's
                # CommitRequestManager does for the commit before a revocation, while every
                # partition is still the member's. One given up meanwhile may be another
                # member's by now, and an old offset committed over its progress would be
                # consumed twice: then CommitFailed, as Java's commitSync always raises.
                self._wake.set()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(beat.wait(), left)
                owned = set(self.owned)
                if self.generation > 0 and all(k in owned for k in flat):
                    continue
                raise CommitFailed(
                    "commit failed: stale member epoch, and the member no longer owns every"
                    " partition of the commit",
                    cls(),
                )
            if cls.retriable and left > 0:
                await asyncio.sleep(self.config.ms("retry.backoff.ms"))
                continue
            if code in (UnknownMemberId.code, FencedMemberEpoch.code, StaleMemberEpoch.code):
                raise CommitFailed(f"commit failed: the member was fenced ({cls.name})", cls())
            if code == FencedInstanceId.code:
                raise self._fenced_instance()
            raise cls(f"OffsetCommit: {cls.name}")

    # -- leaving -----------------------------------------------------------------------------

    async def _leave(self, epoch: int) -> None:
        """A heartbeat with epoch -1 (leave) or -2 (a static member's temporary leave)."""
        if self.generation < 0 and self.state != "joining":
            self.generation = -1
            return
        async with self._lock:
            body = {
                "group_id": self.group,
                "member_id": self.member_id,
                "member_epoch": epoch,
                "instance_id": self.instance_id,
            }
            try:
                resp = await self.coordinator_request(
                    ApiKey.CONSUMER_GROUP_HEARTBEAT, body, timeout=5.0
                )
                if resp["error_code"]:
                    log.debug("group %s: leave answered %s", self.group, resp["error_code"])
            except KafkaError as e:
                log.debug("group %s: leave failed: %r", self.group, e)
            self.generation = -1
            self._full = True
            self._sent_topics = self._sent_owned = self._sent_regex = None

    def _leave_epoch(self) -> int:
        return LEAVE_STATIC_EPOCH if self.instance_id is not None else LEAVE_EPOCH

    async def unsubscribe(self) -> list[Key]:
        """Leave the group (epoch -1; -2 for a static member); returns the partitions that
        were owned. The member id stays for a later subscribe()."""
        self._cancel_tasks()
        if self._reconciling is not None:
            self._reconciling.cancel()
            self._reconciling = None
        self._fences += 1
        owned, self.owned = self.owned, []
        await self._leave(self._leave_epoch())
        self.state = "unsubscribed"
        self._target = None
        self.subscription, self.topics, self._patterns, self.regex = [], [], [], None
        return owned

    async def close(self) -> None:
        self._closed = True
        self._cancel_tasks()
        if self._reconciling is not None:
            self._reconciling.cancel()
        if self.state not in ("unsubscribed", "fatal"):
            await self._leave(self._leave_epoch())
        self.state = "unsubscribed"


def _retriable(e: KafkaError) -> bool:
    """Heartbeat errors that are retried (Java retries retriable errors with backoff, and
    surfaces TOPIC_AUTHORIZATION_FAILED without leaving); everything else is fatal."""
    return bool(e.retriable) or isinstance(e, TopicAuthorizationFailed)
