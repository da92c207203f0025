"""DescribeUserScramCredentials: v0 (flexible). Which SCRAM mechanisms each user has, with
their iterations (KIP-554), as Kafka's ScramImage.describe answers: no users (null or empty)
lists every user with a credential; a user asked for twice is DUPLICATE_RESOURCE, one without a
credential RESOURCE_NOT_FOUND."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.scram import MECHANISMS
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext

API_KEY = ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS
VERSIONS = (0, 0)


def handle(ctx: RequestContext) -> dict[str, Any]:
    store = ctx.state.scram
    users = ctx.request.body.users
    wanted: dict[str, bool] = {}  # user -> asked for more than once
    if not users:
        wanted = dict.fromkeys(store.users(), False)
    else:
        for u in users:
            wanted[u.name] = u.name in wanted
    results = []
    for user, duplicate in wanted.items():
        result: dict[str, Any] = {
            "user": user,
            "error_code": 0,
            "error_message": None,
            "credential_infos": [],
        }
        if duplicate:
            result["error_code"] = errors.DuplicateResource.code
            result["error_message"] = (
                "Cannot describe SCRAM credentials for the same user twice in a single "
                f"request: {user}"
            )
        else:
            creds = store.user(user)
            if creds:
                result["credential_infos"] = [
                    {"mechanism": MECHANISMS[m][1], "iterations": c.iterations}
                    for m, c in sorted(creds.items(), key=lambda mc: MECHANISMS[mc[0]][1])
                ]
            else:
                result["error_code"] = errors.ResourceNotFound.code
                result["error_message"] = (
                    f"Attempt to describe a user credential that does not exist: {user}"
                )
        results.append(result)
    return {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "results": results}
