"""ApiVersions: v0-4. The first request of every client: the api keys and versions the broker
serves. v1 adds throttle_time_ms; v3 is flexible and carries the client's software name and
version (KIP-511); v4 only changes what finalized features mean.

The answer lists exactly the handlers this broker has, with the versions each serves, so
clients never pick an api it does not implement (librdkafka, for one, uses telemetry and the
new consumer protocol when they are advertised). A version the broker does not speak gets a v0
body with UNSUPPORTED_VERSION and the ranges (see ``unsupported_body``), which every client
reads to retry with a version both know.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from kgroup.errors import InvalidRequest, UnsupportedVersion
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.API_VERSIONS
VERSIONS = (0, 4)

# KIP-511: client_software_name and client_software_version must be non-empty, letters,
# digits, '.', '-'; start and end with a letter or digit.
_SOFTWARE = re.compile(r"^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$")


@functools.cache
def api_keys() -> list[dict[str, int]]:
    """Every api this broker serves, with its version range, by api key."""
    from kgroup.broker.handlers import HANDLERS

    return [
        {"api_key": key, "min_version": m.VERSIONS[0], "max_version": m.VERSIONS[1]}
        for key, m in sorted(HANDLERS.items())
    ]


def unsupported_body() -> dict[str, Any]:
    """The v0 answer to an ApiVersions version this broker does not speak."""
    return {"error_code": UnsupportedVersion.code, "api_keys": api_keys()}


def handle(ctx: RequestContext) -> dict[str, Any]:
    body = ctx.request.body
    if ctx.request.api_version >= 3:
        for field in ("client_software_name", "client_software_version"):
            if not _SOFTWARE.match(body[field]):
                # Kafka answers an invalid name with INVALID_REQUEST and no api keys.
                return {"error_code": InvalidRequest.code, "api_keys": []}
    return {"error_code": 0, "api_keys": api_keys(), "throttle_time_ms": 0}
