"""ApiVersions: v0-4. The first request of every client: the api keys and versions the broker
serves. v1 adds throttle_time_ms; v3 is flexible and carries the client's software name and
version (KIP-511); v4 only changes what finalized features mean.

The answer lists exactly the handlers this broker has, with the versions each serves, so
clients never pick an api it does not implement (librdkafka, for one, uses telemetry and the
new consumer protocol when they are advertised). A handler that declares ``PROTOCOL`` (KIP-848's
ConsumerGroupHeartbeat and ConsumerGroupDescribe: ``consumer``) is listed only while
``group.coordinator.rebalance.protocols`` includes it, as Kafka 4.x lists them; one that
declares ``PROTOCOL = "share"`` (KIP-932's ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
ShareAcknowledge) only while the internal ``group.share.enable`` is on (the default, as Kafka
4.2+'s ``share.version=1``; Kafka lists them always and answers UNSUPPORTED_VERSION when share
groups are off; kgroup leaves them out then, so clients do not try them). A version the
broker does not speak gets a v0 body with UNSUPPORTED_VERSION and the ranges (see
``unsupported_body``), which every client reads to retry with a version both know.

Features (v3+, tagged fields): with the consumer protocol on, the one feature kgroup has,
``group.version`` (0 before KIP-848, 1 with it), supported 0-1 and finalized at 1, as Kafka 4.x
advertises it among its KRaft features; without it, no features and epoch -1. Kafka's others
(``metadata.version``, ``kraft.version``, ``transaction.version`` ...) describe what kgroup
does not serve and would steer clients to it. As Kafka does since KAFKA-17011, a v3 answer
(whose readers cannot take a supported min_version of 0) leaves out the features supported from
0, group.version among them; its finalized level is still there (checked against Kafka 4.4 by
``tests/conformance/test_api_versions.py``).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from kgroup.errors import InvalidRequest, UnsupportedVersion
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.config import BrokerConfig
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.API_VERSIONS
VERSIONS = (0, 4)

# KIP-511: client_software_name and client_software_version must be non-empty, letters,
# digits, '.', '-'; start and end with a letter or digit.
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


#: FEATURES_EPOCH is the epoch of the finalized features: Kafka's is the metadata log offset at
#: which they were finalized; kgroup's never change while it runs. Clients keep the features of
#: the highest epoch they saw, above -1 (Java's ``ApiVersions.update``).
FEATURES_EPOCH = 0
#: GROUP_VERSION is the ``group.version`` feature: supported 0-1, finalized at 1 (KIP-848).
GROUP_VERSION = ("group.version", 0, 1)


def consumer_protocol(config: BrokerConfig) -> bool:
    """Whether ``group.coordinator.rebalance.protocols`` includes KIP-848's ``consumer``."""
    protocols = config.get("group.coordinator.rebalance.protocols")
    return "consumer" in {str(p).strip().lower() for p in protocols}


def share_enabled(config: BrokerConfig) -> bool:
    """Whether the internal ``group.share.enable`` is on."""
    return bool(config.get("group.share.enable"))


@functools.cache
def api_keys(consumer: bool = True, share: bool = False) -> list[dict[str, int]]:
    """Every api this broker serves, with its version range, by api key; KIP-848's only when
    ``consumer`` (the consumer protocol is on), KIP-932's only when ``share``."""
    from kgroup.broker.handlers import HANDLERS

    def listed(m: object) -> bool:
        protocol = getattr(m, "PROTOCOL", None)
        return (consumer or protocol != "consumer") and (share or protocol != "share")

    return [
        {"api_key": key, "min_version": m.VERSIONS[0], "max_version": m.VERSIONS[1]}
        for key, m in sorted(HANDLERS.items())
        if listed(m)
    ]


def features(consumer: bool, version: int) -> dict[str, Any]:
    """The v3+ feature fields: ``group.version`` when ``consumer``, else none (epoch -1)."""
    if not consumer:
        return {"supported_features": [], "finalized_features_epoch": -1, "finalized_features": []}
    name, low, high = GROUP_VERSION
    # v3 readers cannot take a supported min_version of 0: Kafka leaves such features out.
    supported = [(name, low, high)] if version >= 4 or low > 0 else []
    return {
        "supported_features": [
            {"name": n, "min_version": lo, "max_version": hi} for n, lo, hi in supported
        ],
        "finalized_features_epoch": FEATURES_EPOCH,
        "finalized_features": [
            {"name": name, "max_version_level": high, "min_version_level": high}
        ],
    }


def unsupported_body(config: BrokerConfig) -> dict[str, Any]:
    """The v0 answer to an ApiVersions version this broker does not speak."""
    return {
        "error_code": UnsupportedVersion.code,
        "api_keys": api_keys(consumer_protocol(config), share_enabled(config)),
    }


def handle(ctx: RequestContext) -> dict[str, Any]:
    body = ctx.request.body
    version = ctx.request.api_version
    if version >= 3:
        for field in ("client_software_name", "client_software_version"):
            if not _SOFTWARE.match(body[field]):
                # Kafka answers an invalid name with INVALID_REQUEST and no api keys.
                return {"error_code": InvalidRequest.code, "api_keys": []}
    consumer = consumer_protocol(ctx.state.config)
    share = share_enabled(ctx.state.config)
    answer = {"error_code": 0, "api_keys": api_keys(consumer, share), "throttle_time_ms": 0}
    if version >= 3:
        answer.update(features(consumer, version))
    return answer
