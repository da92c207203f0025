"""AlterUserScramCredentials: v0 (flexible). Deletes and inserts or updates users' SCRAM
credentials (KIP-554), with Kafka's ScramControlManager.alterCredentials validation, per user:
a user named twice in one request (in either list) is DUPLICATE_RESOURCE; an empty name
UNACCEPTABLE_CREDENTIAL; an unknown mechanism UNSUPPORTED_SASL_MECHANISM; iterations below
the mechanism's minimum (4096) or above 16384 UNACCEPTABLE_CREDENTIAL; deleting a credential
that does not exist RESOURCE_NOT_FOUND. What is valid is applied and written to
``scram-credentials.json`` before the answer (Kafka commits the records atomically). The
upsertion's salted password becomes the stored and server keys; it is not kept."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.broker.scram import MAX_ITERATIONS, MECHANISM_BY_TYPE, MIN_ITERATIONS, credential
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext
    from kgroup.broker.scram import ScramCredentials

API_KEY = ApiKey.ALTER_USER_SCRAM_CREDENTIALS
VERSIONS = (0, 0)

_DUPLICATE = "A user credential cannot be altered twice in the same request"


def _check(name: str, mechanism: int) -> tuple[int, str] | None:
    if not name:
        return errors.UnacceptableCredential.code, "Username must not be empty"
    if mechanism not in MECHANISM_BY_TYPE:
        return errors.UnsupportedSaslMechanism.code, "Unknown SCRAM mechanism"
    return None


def _check_deletion(store: ScramCredentials, d: Any) -> tuple[int, str] | None:
    bad = _check(d.name, d.mechanism)
    if bad is None and store.get(d.name, MECHANISM_BY_TYPE[d.mechanism]) is None:
        return (
            errors.ResourceNotFound.code,
            "Attempt to delete a user credential that does not exist",
        )
    return bad


def _check_upsertion(u: Any) -> tuple[int, str] | None:
    bad = _check(u.name, u.mechanism)
    if bad is None:
        if u.iterations < MIN_ITERATIONS:
            return errors.UnacceptableCredential.code, "Too few iterations"
        if u.iterations > MAX_ITERATIONS:
            return errors.UnacceptableCredential.code, "Too many iterations"
    return bad


def handle(ctx: RequestContext) -> dict[str, Any]:
    store = ctx.state.scram
    body = ctx.request.body
    failed: dict[str, tuple[int, str]] = {}
    deletions: dict[str, Any] = {}
    upsertions: dict[str, Any] = {}
    for d in body.deletions:
        if d.name in failed:
            continue
        if deletions.pop(d.name, None) is not None:
            failed[d.name] = (errors.DuplicateResource.code, _DUPLICATE)
            continue
        bad = _check_deletion(store, d)
        if bad is not None:
            failed[d.name] = bad
        else:
            deletions[d.name] = d
    for u in body.upsertions:
        if u.name in failed:
            continue
        if deletions.pop(u.name, None) is not None or upsertions.pop(u.name, None) is not None:
            failed[u.name] = (errors.DuplicateResource.code, _DUPLICATE)
            continue
        bad = _check_upsertion(u)
        if bad is not None:
            failed[u.name] = bad
        else:
            upsertions[u.name] = u
    results = []
    for name, d in deletions.items():
        store.delete(name, MECHANISM_BY_TYPE[d.mechanism])
        results.append({"user": name, "error_code": 0, "error_message": None})
    for name, u in upsertions.items():
        mechanism = MECHANISM_BY_TYPE[u.mechanism]
        cred = credential(mechanism, bytes(u.salted_password), bytes(u.salt), u.iterations)
        store.put(name, mechanism, cred)
        results.append({"user": name, "error_code": 0, "error_message": None})
    if deletions or upsertions:
        store.save()
    results += [
        {"user": name, "error_code": code, "error_message": message}
        for name, (code, message) in failed.items()
    ]
    return {"throttle_time_ms": 0, "results": results}
