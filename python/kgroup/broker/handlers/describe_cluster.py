"""DescribeCluster: v0-1. The cluster id, the controller and the brokers (KIP-700). v0 is
flexible; v1 adds the endpoint type asked for (1: brokers, 2: controllers; one node is both,
but like Kafka's brokers it answers only for the broker endpoint)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.handlers.metadata import CLUSTER_OPERATIONS, NOT_REQUESTED
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_CLUSTER
VERSIONS = (0, 1)

BROKER_ENDPOINT = 1
#: ENDPOINT_TYPES are Kafka's EndpointType names by id.
ENDPOINT_TYPES = {1: "BROKER", 2: "CONTROLLER"}


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    body = request.body
    out: dict[str, Any] = {"throttle_time_ms": 0, "error_code": 0, "error_message": None}
    if request.api_version >= 1:
        out["endpoint_type"] = BROKER_ENDPOINT
        # Kafka's AuthHelper.computeDescribeClusterResponse: an unknown type is unsupported,
        # a controller one mismatched; either answers with the spec's defaults beside the error.
        wanted = ENDPOINT_TYPES.get(body.endpoint_type)
        if wanted is None:
            out["error_code"] = errors.UnsupportedEndpointType.code
            out["error_message"] = f"Unsupported endpoint type {body.endpoint_type}"
            return out
        if body.endpoint_type != BROKER_ENDPOINT:
            out["error_code"] = errors.MismatchedEndpointType.code
            out["error_message"] = (
                "The request was sent to an endpoint of type BROKER, but we wanted an endpoint "
                f"of type {wanted}"
            )
            return out
    b = state.broker(ctx.connection.listener)
    out["cluster_id"] = state.cluster_id
    out["controller_id"] = state.node_id
    out["brokers"] = [
        {"broker_id": b["node_id"], "host": b["host"], "port": b["port"], "rack": None}
    ]
    out["cluster_authorized_operations"] = (
        CLUSTER_OPERATIONS if body.include_cluster_authorized_operations else NOT_REQUESTED
    )
    return out
