"""SaslAuthenticate: v0-2. One SASL token exchange; v1 adds the session lifetime (KIP-368), v2
is flexible. The exchange itself is the connection's authenticator's (``kgroup.broker.sasl``);
what reaches this handler comes after authentication is done (or on a listener without SASL),
answered with ILLEGAL_SASL_STATE as Kafka's KafkaApis.handleSaslAuthenticateRequest answers
it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup.errors import IllegalSaslState
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.SASL_AUTHENTICATE
VERSIONS = (0, 2)


def handle(ctx: RequestContext) -> dict[str, Any]:
    return {
        "error_code": IllegalSaslState.code,
        "error_message": "SaslAuthenticate request received after successful authentication",
        "auth_bytes": b"",
        "session_lifetime_ms": 0,
    }
