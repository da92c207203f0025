"""FindCoordinator: v0-6. Which broker coordinates a group (key type 0) or a transactional id
(key type 1). v1 adds the key type, throttle_time_ms and an error message; v3 is flexible; v4
asks for many keys at once (``coordinator_keys``) and answers one entry per key; v5 changes
only the errors a transactional producer may get; v6 adds key type 2, share groups (KIP-932).

Every group's and every transactional id's coordinator is this broker. The first request for
a group creates ``__consumer_offsets`` (``GroupHost.offsets_topic``), and the first for a
transactional id ``__transaction_state`` (``TxnHost.coordinator_error``), as Kafka creates them
then. Share groups are not served either: INVALID_REQUEST, Kafka 3.9's answer
when they are disabled (and for key type 2 before v6). Any other key type is Kafka's
InvalidRequestException: the whole request is answered INVALID_REQUEST (KafkaApis.getCoordinator,
FindCoordinatorRequest.getErrorResponse).

Kafka writes error messages as ``Errors.message()``: the default text of the error, and
"NONE" for no error in v1-3 (the batched form leaves it null then).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.FIND_COORDINATOR
VERSIONS = (0, 6)

GROUP, TRANSACTION, SHARE = 0, 1, 2
# Kafka's Node.noNode(): where an error answer points.
NO_NODE = {"node_id": -1, "host": "", "port": -1}


def _coordinator(ctx: RequestContext, key_type: int, key: str) -> errors.KafkaError | None:
    """Why this broker is not the coordinator of ``key``, or None: it is."""
    if key_type == GROUP:
        return ctx.state.groups.coordinator_error(key)
    if key_type == TRANSACTION:
        return ctx.state.transactions.coordinator_error(key)
    return errors.InvalidRequest()  # SHARE: share groups are disabled


def handle(ctx: RequestContext) -> dict[str, Any]:
    state, request = ctx.state, ctx.request
    version, body = request.api_version, request.body
    key_type = body.key_type if version >= 1 else GROUP
    keys = list(body.coordinator_keys) if version >= 4 else [body.key]
    b = state.broker(ctx.connection.listener)
    this = {"node_id": b["node_id"], "host": b["host"], "port": b["port"]}
    answers: list[tuple[str, errors.KafkaError | None]] = []
    for key in keys:
        if key_type not in (GROUP, TRANSACTION, SHARE):
            # CoordinatorType.forId throws: the request fails as a whole.
            answers = [(k, errors.InvalidRequest()) for k in keys]
            break
        answers.append((key, _coordinator(ctx, key_type, key)))
    if version >= 4:
        return {
            "throttle_time_ms": 0,
            "coordinators": [
                {
                    "key": key,
                    **(this if error is None else NO_NODE),
                    "error_code": 0 if error is None else error.code,
                    "error_message": "" if error is None else error.message,
                }
                for key, error in answers
            ],
        }
    [(_, error)] = answers
    return {
        "throttle_time_ms": 0,
        **(this if error is None else NO_NODE),
        "error_code": 0 if error is None else error.code,
        "error_message": "NONE" if error is None else error.message,
    }
