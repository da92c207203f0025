"""SaslHandshake: v0-1. Picks the SASL mechanism (v0: raw tokens follow; v1: tokens in
SaslAuthenticate). Before authentication on a SASL listener it is served by the connection's
authenticator (``kgroup.broker.sasl``), and a re-authenticating one starts there too; what
reaches this handler is a handshake the broker does not expect (an authenticated connection
without a session lifetime, a PLAINTEXT or SSL listener), answered with ILLEGAL_SASL_STATE as
Kafka's KafkaApis.handleSaslHandshakeRequest answers it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup.errors import IllegalSaslState
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.SASL_HANDSHAKE
VERSIONS = (0, 1)


def handle(ctx: RequestContext) -> dict[str, Any]:
    return {"error_code": IllegalSaslState.code, "mechanisms": []}
