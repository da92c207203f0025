"""ConsumerGroupDescribe: v0-1. State, epochs, assignor and members of KIP-848 consumer groups,
with each member's subscription, assignment and target assignment. A group that is not a
consumer group (a classic one) or does not exist is GROUP_ID_NOT_FOUND, on which clients fall
back to DescribeGroups. v1 (Kafka 4.0) adds each member's type (KIP-1099: classic or consumer
protocol). Every version is flexible.

Advertised only while ``group.coordinator.rebalance.protocols`` includes ``consumer`` (see
``api_versions``). Served by the group coordinator (``kgroup.broker.coordinators.groups``),
which writes the response frame.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    import asyncio

    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.CONSUMER_GROUP_DESCRIBE
VERSIONS = (0, 1)
#: PROTOCOL is the group protocol of ``group.coordinator.rebalance.protocols`` this api needs.
PROTOCOL = "consumer"


def handle(ctx: RequestContext) -> bytes | asyncio.Future[bytes]:
    return ctx.state.groups.handle(ctx)
