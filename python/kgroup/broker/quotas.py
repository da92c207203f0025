"""Client quotas: the produce and fetch byte rates and the request-time share each user and
client id may use, set with AlterClientQuotas and kept in ``client-quotas.json``.

Kafka's model (its DefaultQuotaCallback and ClientQuotaManager):

- A quota entity is a user, a client id, both, or an IP address; a ``None`` name is that type's
  default. Each quota key resolves on its own, at the most specific entity set for it:
  ``/users/<user>/clients/<client-id>``, ``/users/<user>/clients/<default>``, ``/users/<user>``,
  ``/users/<default>/clients/<client-id>``, ``/users/<default>/clients/<default>``,
  ``/users/<default>``, ``/clients/<client-id>``, ``/clients/<default>``.
- Clients that resolve to the same entity share one rate (a default applies to each user or
  client id on its own). A rate is measured over ``quota.window.num`` samples of
  ``quota.window.size.seconds``, and over at least all but one of them: a client may send a
  burst of up to about ten seconds' worth before it is throttled.
- A request that takes the rate over its bound is served, and answered with
  ``throttle_time_ms``: how long until the rate falls back to the bound, (rate - bound) / bound
  times the measured window. The broker then reads nothing more from that connection for that
  long (KIP-219); a throttled Fetch is answered with no records, which are then not counted.

``controller_mutation_rate`` (KIP-599) is measured otherwise, as Kafka's
ControllerMutationQuotaManager does: each partition a CreateTopics, CreatePartitions or
DeleteTopics creates or deletes is one mutation taken from a token bucket that refills at the
quota's rate and holds at most ``controller.quota.window.num`` x
``controller.quota.window.size.seconds`` seconds' worth (a :class:`MutationQuota` per request).

With no quota set, nothing is measured: the server asks :attr:`Quotas.active` once per request.
"""

from __future__ import annotations

import ipaddress
import json
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgroup.log import file_exists, read_text, write_atomically

__all__ = [
    "CONSUMER_BYTE_RATE",
    "CONTROLLER_MUTATION_RATE",
    "PRODUCER_BYTE_RATE",
    "REQUEST_PERCENTAGE",
    "UNBOUNDED",
    "MutationQuota",
    "QuotaError",
    "Quotas",
    "Rate",
    "TokenBucket",
    "UnsupportedEntityType",
]

USER, CLIENT_ID, IP = "user", "client-id", "ip"
PRODUCER_BYTE_RATE = "producer_byte_rate"
CONSUMER_BYTE_RATE = "consumer_byte_rate"
REQUEST_PERCENTAGE = "request_percentage"
CONTROLLER_MUTATION_RATE = "controller_mutation_rate"
CONNECTION_CREATION_RATE = "connection_creation_rate"

#: _KEYS are the quota keys of each kind of entity, with their Kafka types (QuotaConfig).
_USER_CLIENT_KEYS = {
    PRODUCER_BYTE_RATE: "LONG",
    CONSUMER_BYTE_RATE: "LONG",
    REQUEST_PERCENTAGE: "DOUBLE",
    CONTROLLER_MUTATION_RATE: "DOUBLE",
}
_IP_KEYS = {CONNECTION_CREATION_RATE: "INT"}
_MAX = {"SHORT": 2**15 - 1, "INT": 2**31 - 1, "LONG": 2**63 - 1}

#: Entity is a quota entity: sorted (type, name or None) pairs.
Entity = tuple[tuple[str, str | None], ...]

FILE = "client-quotas.json"


class QuotaError(Exception):
    """QuotaError is an INVALID_REQUEST with Kafka's message for a bad entity, filter or
    value."""


def entity_text(entity: Entity) -> str:
    """An entity as Kafka's ClientQuotaEntity prints itself in error messages."""
    inner = ", ".join(f"{t}={n}" for t, n in entity)
    return f"ClientQuotaEntity(entries={{{inner}}})"


class Rate:
    """Rate is Kafka 4.1's sampled rate (``org.apache.kafka.common.metrics.stats.Rate`` over a
    ``SampledStat``): per second, over up to ``samples`` + 1 samples of ``window_ms`` each, a
    sample starting where the event that opened it came; a sample whose last event is
    ``samples`` windows old is cleared (reset to now); the rate divides by the time since the
    oldest sample's start, counting at least ``samples - 1`` whole windows."""

    __slots__ = ("_current", "_last", "_starts", "_values", "samples", "window_ms")

    def __init__(self, window_ms: int, samples: int) -> None:
        self.window_ms = window_ms
        self.samples = samples
        #: the samples, a ring: each one's start, last event and total.
        self._starts: list[float] = []
        self._last: list[float] = []
        self._values: list[float] = []
        self._current = 0

    def _new(self, now_ms: float) -> None:
        self._starts.append(now_ms)
        self._last.append(now_ms)
        self._values.append(0.0)

    def _reset(self, i: int, now_ms: float) -> None:
        self._starts[i] = now_ms
        self._last[i] = now_ms
        self._values[i] = 0.0

    def _purge(self, now_ms: float) -> None:
        expire = self.samples * self.window_ms
        for i, last in enumerate(self._last):
            if now_ms - last >= expire:
                self._reset(i, now_ms)

    def record(self, value: float, now_ms: float) -> None:
        if not self._starts:
            self._new(now_ms)
        i = self._current
        if now_ms - self._starts[i] >= self.window_ms:
            # The sample is complete: on to the next of the ring (one more than ``samples``,
            # Kafka's placeholder for a sample overlapping the monitored window).
            i = self._current = (i + 1) % (self.samples + 1)
            if i >= len(self._starts):
                self._new(now_ms)
            else:
                self._reset(i, now_ms)
        self._values[i] += value
        self._last[i] = now_ms

    def window_size(self, now_ms: float) -> float:
        """The elapsed time the rate divides by, in ms (Kafka's ``Rate.windowSize``)."""
        self._purge(now_ms)
        if not self._starts:
            self._new(now_ms)
        elapsed = now_ms - min(self._starts)
        full = int(elapsed // self.window_ms)
        if full < self.samples - 1:
            elapsed += (self.samples - 1 - full) * self.window_ms
        return max(elapsed, 1.0)

    def measure(self, now_ms: float) -> float:
        """The rate per second now."""
        window = self.window_size(now_ms)
        return sum(self._values) / (window / 1000.0)

    def throttle_ms(self, bound: float, now_ms: float) -> int:
        """How long to wait, in ms, for the rate to come back to ``bound``: (rate - bound) /
        bound of the measured window (Kafka's ``QuotaUtils.throttleTime``); 0 within it."""
        measured = self.measure(now_ms)
        if measured <= bound:
            return 0
        return round((measured - bound) / bound * self.window_size(now_ms))


def _java_round(x: float) -> int:
    """``x`` rounded as Java's ``Math.round``: halves up."""
    return math.floor(x + 0.5)


class TokenBucket:
    """TokenBucket is Kafka's ``stats.TokenBucket``, the measure of a controller mutation
    quota: it refills at ``bound`` tokens a second up to ``burst``, and a recorded value takes
    that many tokens, below zero if it must. Starts full (Kafka's starts empty at time zero,
    which its first refill fills)."""

    __slots__ = ("_bound", "_burst", "_last_ms", "tokens")

    def __init__(self, burst: float, now_ms: float) -> None:
        self.tokens = burst
        self._last_ms = now_ms
        self._bound = 0.0
        self._burst = burst

    def _refill(self, bound: float, burst: float, now_ms: float) -> None:
        self.tokens = min(burst, self.tokens + bound * (now_ms - self._last_ms) / 1000.0)
        self._last_ms = now_ms
        self._bound, self._burst = bound, burst

    def full(self, now_ms: float) -> bool:
        """Whether the bucket has refilled to its burst by now, at the rate it was last used
        with: a full bucket is as good as a new one."""
        return self.tokens + self._bound * (now_ms - self._last_ms) / 1000.0 >= self._burst

    def measure(self, bound: float, burst: float, now_ms: float) -> float:
        """The tokens left now."""
        self._refill(bound, burst, now_ms)
        return self.tokens

    def record(self, value: float, bound: float, burst: float, now_ms: float) -> None:
        self._refill(bound, burst, now_ms)
        self.tokens = min(burst, self.tokens - value)


class MutationQuota:
    """MutationQuota is one request's hold on its client's ``controller_mutation_rate`` (Kafka's
    Strict- and PermissiveControllerMutationQuota), for the request's lifetime only.

    Strict (the request versions that can answer THROTTLING_QUOTA_EXCEEDED): :meth:`record`
    refuses, taking nothing, once the bucket is below zero, and otherwise takes every permit
    asked, however many (a burst may overdraw the bucket); the request is throttled only for a
    refusal. Permissive (older versions): every mutation is taken, and the request is throttled
    when the bucket ends below zero. The throttle is how long the bucket takes to refill to
    zero, counted from the last refusal or overdraft."""

    __slots__ = ("_bound", "_bucket", "_burst", "_last_ms", "_throttle_ms", "strict")

    def __init__(
        self, bucket: TokenBucket | None, bound: float, burst: float, strict: bool
    ) -> None:
        self._bucket = bucket
        self._bound = bound
        self._burst = burst
        self.strict = strict
        self._throttle_ms = 0
        self._last_ms = 0.0

    def record(self, permits: int, now_ms: float | None = None) -> bool:
        """Take ``permits`` mutations; False when a strict quota refuses them (the topic then
        fails with THROTTLING_QUOTA_EXCEEDED)."""
        bucket = self._bucket
        if bucket is None:
            return True
        now = time.monotonic() * 1000 if now_ms is None else now_ms
        if self.strict:
            tokens = bucket.measure(self._bound, self._burst, now)
            if tokens < 0:
                self._throttled(tokens, now)
                return False
            bucket.record(permits, self._bound, self._burst, now)
            return True
        bucket.record(permits, self._bound, self._burst, now)
        tokens = bucket.measure(self._bound, self._burst, now)
        if tokens < 0:
            self._throttled(tokens, now)
        return True

    def _throttled(self, tokens: float, now_ms: float) -> None:
        self._throttle_ms = _java_round(-tokens / self._bound * 1000)
        self._last_ms = now_ms

    def throttle_ms(self, now_ms: float | None = None) -> int:
        """The request's throttle time now: the last one found, less the time since."""
        if not self._throttle_ms:
            return 0
        now = time.monotonic() * 1000 if now_ms is None else now_ms
        return max(0, int(self._throttle_ms - (now - self._last_ms)))


#: UNBOUNDED is the MutationQuota of a client no controller_mutation_rate applies to.
UNBOUNDED = MutationQuota(None, 0.0, 0.0, strict=False)


@dataclass
class _Sensor:
    rate: Rate
    used: float


def _normal_ip(text: str) -> str:
    """An address as connections from it are named (Kafka keys IP quotas by InetAddress)."""
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return text


def _user(principal: str) -> str:
    """The user name of a principal string (``User:alice`` is ``alice``)."""
    return principal.split(":", 1)[1] if ":" in principal else principal


class Quotas:
    """Quotas holds the broker's client quotas and measures what each client uses. It lives on
    the broker's event loop."""

    def __init__(
        self,
        data_dir: Path,
        window_seconds: int = 1,
        samples: int = 11,
        mutation_window_seconds: int = 1,
        mutation_samples: int = 11,
    ) -> None:
        self._path = Path(data_dir) / FILE
        self.window_ms = window_seconds * 1000
        self.samples = samples
        #: mutation_burst_seconds: how many seconds' worth of mutations a token bucket holds
        #: (``controller.quota.window.num`` x ``controller.quota.window.size.seconds``).
        self.mutation_burst_seconds = mutation_window_seconds * mutation_samples
        #: _buckets: the controller mutation token buckets by (user, client id) tags. Kept when
        #: quotas change, as Kafka updates its sensors' bounds in place; a full one is dropped
        #: when the dict has doubled since the last sweep (a client churning client ids would
        #: grow it; Kafka expires a sensor an hour after its last use).
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self._sweep_at = 1024
        #: values are the quotas set: {entity: {key: value}}.
        self.values: dict[Entity, dict[str, float]] = {}
        self._sensors: dict[tuple[str, str, str], _Sensor] = {}
        #: _ip_rates: the connection_creation_rate quotas by address (None: the default IP's),
        #: made when first wanted after a change.
        self._ip_rates: dict[str | None, float] | None = None
        if file_exists(self._path):
            for item in json.loads(read_text(self._path)):
                entity = tuple((t, n) for t, n in item["entity"])
                self.values[entity] = {k: float(v) for k, v in item["values"].items()}

    @property
    def active(self) -> bool:
        """Whether any user or client-id quota is set (nothing is measured otherwise)."""
        return bool(self.values)

    # -- AlterClientQuotas -------------------------------------------------------------------

    def alter(
        self, entries: Iterable[tuple[Entity, list[tuple[str, float, bool]]]], validate_only: bool
    ) -> list[tuple[Entity, QuotaError | None]]:
        """Apply each entry's ops (key, value, remove) to its entity, as Kafka's
        ClientQuotaControlManager does: an entry with any error changes nothing, the others
        apply. Returns one result per entity (Kafka answers from a map by entity): an entity
        named twice, or a key twice for one entity, is "ignored" as a duplicate, though what
        its first entry changed stays changed, as in Kafka."""
        results: dict[Entity, tuple[Entity, QuotaError | None]] = {}
        changed = False
        for entity, ops in entries:
            key_entity = tuple(sorted(entity))
            alterations: dict[str, float | None] = {}
            duplicate = False
            for key, value, remove in ops:
                duplicate |= key in alterations
                alterations[key] = None if remove else value
            if duplicate or key_entity in results:
                error = QuotaError(f"Ignoring duplicate entity {entity_text(entity)}")
                results[key_entity] = (results.get(key_entity, (entity, None))[0], error)
                continue
            try:
                changed |= self._alter_one(key_entity, alterations, validate_only)
                results[key_entity] = (entity, None)
            except QuotaError as e:
                results[key_entity] = (entity, e)
        if changed and not validate_only:
            self._save()
        return list(results.values())

    def _alter_one(
        self, entity: Entity, alterations: dict[str, float | None], validate_only: bool
    ) -> bool:
        keys = _validate_entity(entity)
        current = self.values.get(entity, {})
        new = dict(current)
        for key, value in alterations.items():
            if value is None:
                new.pop(key, None)
                continue
            _validate_value(keys, key, value)
            new[key] = value
        if validate_only or new == current:
            return False
        if new:
            self.values[entity] = new
        else:
            self.values.pop(entity, None)
        self._sensors.clear()  # the entities clients resolve to may have changed
        self._ip_rates = None
        return True

    def _save(self) -> None:
        items = [
            {"entity": [list(p) for p in entity], "values": values}
            for entity, values in sorted(self.values.items(), key=lambda kv: repr(kv[0]))
        ]
        write_atomically(self._path, json.dumps(items, indent=1) + "\n")

    # -- DescribeClientQuotas ----------------------------------------------------------------

    def describe(
        self, components: list[tuple[str, int, str | None]], strict: bool
    ) -> list[tuple[Entity, dict[str, float]]]:
        """The entities a filter matches and their quotas, as Kafka's ClientQuotasImage
        answers. ``components`` are (entity type, match type, match): 0 exact name, 1 the
        default, 2 any name given."""
        exact: dict[str, str | None] = {}
        typed: set[str] = set()
        for etype, match_type, match in components:
            if not etype:
                raise QuotaError("Invalid empty entity type.")
            if etype in exact or etype in typed:
                raise QuotaError(f"Entity type {etype} cannot appear more than once in the filter.")
            if etype not in (IP, USER, CLIENT_ID):
                raise UnsupportedEntityType(f"Unsupported entity type {etype}")
            if match_type == 0:
                if match is None:
                    raise QuotaError(
                        "Request specified MATCH_TYPE_EXACT, but set match string to null."
                    )
                exact[etype] = match
            elif match_type == 1:
                if match is not None:
                    raise QuotaError(
                        "Request specified MATCH_TYPE_DEFAULT, but also specified a match string."
                    )
                exact[etype] = None
            elif match_type == 2:
                if match is not None:
                    raise QuotaError(
                        "Request specified MATCH_TYPE_SPECIFIED, but also specified a match string."
                    )
                typed.add(etype)
            else:
                raise QuotaError(f"Unknown match type {match_type}")
        if (IP in exact or IP in typed) and (
            USER in exact or USER in typed or CLIENT_ID in exact or CLIENT_ID in typed
        ):
            raise QuotaError(
                "Invalid entity filter component combination. IP filter component should not "
                "be used with user or clientId filter component."
            )
        out = []
        for entity, values in self.values.items():
            names = dict(entity)
            if strict and len(names) != len(exact) + len(typed):
                continue
            if any(t not in names or names[t] != n for t, n in exact.items()):
                continue
            if any(t not in names for t in typed):
                continue
            out.append((entity, dict(values)))
        return out

    # -- enforcement -------------------------------------------------------------------------

    def ip_connection_rate(self, ip: str) -> float | None:
        """The connection_creation_rate quota of connections from ``ip``: its own, else the
        default IP's, else None (Kafka's ``connectionRateForIp``: unlimited)."""
        if not self.values:
            return None
        rates = self._ip_rates
        if rates is None:
            rates = self._ip_rates = {
                (None if entity[0][1] is None else _normal_ip(entity[0][1])): v
                for entity, values in self.values.items()
                if len(entity) == 1 and entity[0][0] == IP
                for k, v in values.items()
                if k == CONNECTION_CREATION_RATE
            }
        if not rates:
            return None
        got = rates.get(_normal_ip(ip))
        return rates.get(None) if got is None else got

    def _resolve(self, key: str, user: str, client_id: str) -> tuple[tuple[str, str], float] | None:
        """The quota ``key`` that applies to (user, client id): the sensor's (user, client id)
        tags and the bound, or None when no level sets it."""
        levels: list[tuple[Entity, tuple[str, str]]] = [
            (((CLIENT_ID, client_id), (USER, user)), (user, client_id)),
            (((CLIENT_ID, None), (USER, user)), (user, client_id)),
            (((USER, user),), (user, "")),
            (((CLIENT_ID, client_id), (USER, None)), (user, client_id)),
            (((CLIENT_ID, None), (USER, None)), (user, client_id)),
            (((USER, None),), (user, "")),
            (((CLIENT_ID, client_id),), ("", client_id)),
            (((CLIENT_ID, None),), ("", client_id)),
        ]
        for entity, tags in levels:
            values = self.values.get(entity)
            if values is not None and key in values:
                return tags, values[key]
        return None

    def record(
        self, key: str, principal: str, client_id: str, value: float, now_ms: float | None = None
    ) -> int:
        """Count ``value`` (bytes, or request-time percent) against quota ``key`` for this
        client; the throttle time in ms (0 when within its quota or none applies)."""
        user = _user(principal)
        found = self._resolve(key, user, client_id or "")
        if found is None:
            return 0
        (tag_user, tag_client), bound = found
        now = time.monotonic() * 1000 if now_ms is None else now_ms
        sensor_key = (key, tag_user, tag_client)
        sensor = self._sensors.get(sensor_key)
        if sensor is None:
            sensor = self._sensors[sensor_key] = _Sensor(Rate(self.window_ms, self.samples), 0)
        sensor.rate.record(value, now)
        return sensor.rate.throttle_ms(bound, now)

    def mutation_quota(
        self, principal: str, client_id: str, strict: bool, now_ms: float | None = None
    ) -> MutationQuota:
        """The controller_mutation_rate quota of one request of this client (Kafka's
        ``newQuotaFor``): strict or permissive by the request's version; UNBOUNDED when no
        quota applies."""
        if not self.values:
            return UNBOUNDED
        found = self._resolve(CONTROLLER_MUTATION_RATE, _user(principal), client_id or "")
        if found is None:
            return UNBOUNDED
        tags, bound = found
        burst = self.mutation_burst_seconds * bound
        bucket = self._buckets.get(tags)
        if bucket is None:
            now = time.monotonic() * 1000 if now_ms is None else now_ms
            if len(self._buckets) >= self._sweep_at:
                self._buckets = {t: b for t, b in self._buckets.items() if not b.full(now)}
                self._sweep_at = max(1024, 2 * len(self._buckets))
            bucket = self._buckets[tags] = TokenBucket(burst, now)
        return MutationQuota(bucket, bound, burst, strict)

    def unrecord(
        self, key: str, principal: str, client_id: str, value: float, now_ms: float | None = None
    ) -> None:
        """Take back ``value`` (a throttled Fetch sends no records)."""
        found = self._resolve(key, _user(principal), client_id or "")
        if found is None:
            return
        sensor = self._sensors.get((key, *found[0]))
        if sensor is not None:
            now = time.monotonic() * 1000 if now_ms is None else now_ms
            sensor.rate.record(-value, now)


class UnsupportedEntityType(QuotaError):
    """An entity type DescribeClientQuotas does not know: UNSUPPORTED_VERSION in Kafka."""


def _validate_entity(entity: Entity) -> dict[str, str]:
    if not entity:
        raise QuotaError("Invalid empty client quota entity")
    names: dict[str, str | None] = {}
    for etype, name in entity:
        if etype in names:
            raise QuotaError(f"Invalid client quota entity, duplicate entity entry {etype}")
        if etype not in (USER, CLIENT_ID, IP):
            raise QuotaError(f"Unhandled client quota entity type: {etype}")
        names[etype] = name
        if name is not None and name == "":
            raise QuotaError(f"Empty {etype} not supported")
    if IP in names:
        if USER in names or CLIENT_ID in names:
            raise QuotaError(
                "Invalid quota entity combination, IP entity shouldnot be combined with User "
                "or ClientId"
            )
        ip = names[IP]
        if ip is not None:
            try:
                ipaddress.ip_address(ip)
            except ValueError:
                raise QuotaError(f"{ip} is not a valid IP or resolvable host.") from None
        return _IP_KEYS
    return _USER_CLIENT_KEYS


def _validate_value(keys: dict[str, str], key: str, value: float) -> None:
    kind = keys.get(key)
    if kind is None:
        raise QuotaError(f"Invalid configuration key {key}")
    if value <= 0.0:
        raise QuotaError(f"Quota {key} must be greater than 0")
    if kind == "DOUBLE":
        return
    if value > _MAX[kind]:
        article = "an" if kind == "INT" else "a"
        raise QuotaError(f"Proposed value for {key} is too large for {article} {kind}.")
    if abs(math.fmod(value, 1.0)) > 1e-6:
        raise QuotaError(f"{key} cannot be a fractional value.")


def describe_entity(entity: Entity) -> list[dict[str, Any]]:
    """An entity as the responses list it."""
    return [{"entity_type": t, "entity_name": n} for t, n in entity]
