"""ApiVersions on both brokers: every version both speak, a version neither knows, invalid
client software names (KIP-511), and the version ranges side by side."""

from __future__ import annotations

import struct

import pytest
from support.differential import Differential

from kgroup import protocol
from kgroup.broker.handlers import HANDLERS
from kgroup.protocol import ApiKey

pytestmark = pytest.mark.network

SOFTWARE = {"client_software_name": "kgroup-diff", "client_software_version": "1.0"}
#: FEATURES are KRaft's feature flags, of which kgroup advertises group.version only
#: (docs/kafka-differences.md), and its epoch; group.version and the version ranges are compared
#: in their own tests.
FEATURES = ["supported_features", "finalized_features_epoch", "finalized_features", "api_keys"]


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_api_versions(diff: Differential, version: int) -> None:
    diff.request(ApiKey.API_VERSIONS, version, SOFTWARE if version >= 3 else {}, ignore=FEATURES)


@pytest.mark.parametrize(
    "name,software_version", [("", "1"), ("-bad", "1"), ("ok", "1.0-"), ("a b", "1")]
)
def test_api_versions_refuses_invalid_software_names(
    diff: Differential, name: str, software_version: str
) -> None:
    body = {"client_software_name": name, "client_software_version": software_version}
    diff.request(ApiKey.API_VERSIONS, 3, body, ignore=FEATURES)


def test_api_versions_unknown_version_answers_v0_with_the_ranges(diff: Differential) -> None:
    def frame(cid: int) -> bytes:
        # Request header v2 (a flexible version): api key, version 127, correlation id,
        # client id, no tagged fields; an empty body.
        client = b"kgroup-diff"
        header = struct.pack(">hhih", ApiKey.API_VERSIONS, 127, cid, len(client)) + client
        payload = header + b"\x00" + b"\x00"
        return struct.pack(">i", len(payload)) + payload

    answer = diff.raw(frame, ApiKey.API_VERSIONS, 0, ignore=["api_keys"])
    assert answer.body.error_code == 35  # UNSUPPORTED_VERSION


def test_api_versions_ranges(diff: Differential) -> None:
    """Every api kgroup advertises, Kafka advertises too, up to at least kgroup's version; the
    lowest versions differ as docs/kafka-differences.md says (Kafka 4 dropped old ones,
    KIP-896)."""
    answer = diff.request(ApiKey.API_VERSIONS, 3, SOFTWARE, ignore=FEATURES)
    ranges = [
        {k.api_key: (k.min_version, k.max_version) for k in r.body.api_keys}
        for r in (answer.kgroup, answer.kafka)
        if r is not None
    ]
    kgroup, kafka = ranges
    # Every api with a handler is served (SaslHandshake and SaslAuthenticate included): every
    # api declared but the share group offset apis (KIP-932's 90-92), which Kafka 4.4 serves
    # and kgroup not yet. Share groups are on by default in both (share.version=1 /
    # group.share.enable): 76-79 at Kafka's versions.
    assert set(kgroup) == set(HANDLERS)
    share = {76, 77, 78, 79, 90, 91, 92}
    assert set(protocol.API_VERSIONS) - set(kgroup) == {90, 91, 92}
    assert {k: kgroup[k] for k in (76, 77, 78, 79)} == {k: kafka[k] for k in (76, 77, 78, 79)}
    # The codec declares the versions of share groups' apis that Kafka 4.4 serves (4.2's).
    assert {k: kafka[k] for k in share} == {k: protocol.API_VERSIONS[k] for k in share}
    for key, (low, high) in kgroup.items():
        assert key in kafka, protocol.API_NAMES[key]
        assert high <= kafka[key][1], protocol.API_NAMES[key]
        assert low <= kafka[key][0], protocol.API_NAMES[key]


@pytest.mark.parametrize("version", [3, 4])
def test_api_versions_group_version_feature(diff: Differential, version: int) -> None:
    """kgroup's one feature, group.version (KIP-848's consumer protocol), reads as Kafka's:
    finalized at 1 with an epoch, supported 0-1 in v4 and left out of v3's supported features
    (KAFKA-17011: a v3 reader cannot take a supported min_version of 0)."""
    answer = diff.request(ApiKey.API_VERSIONS, version, SOFTWARE, ignore=FEATURES)

    def group_version(body) -> tuple[list, list, bool]:
        supported = [
            (f.min_version, f.max_version)
            for f in body.supported_features
            if f.name == "group.version"
        ]
        finalized = [
            (f.min_version_level, f.max_version_level)
            for f in body.finalized_features
            if f.name == "group.version"
        ]
        return supported, finalized, body.finalized_features_epoch >= 0

    assert answer.kgroup is not None and answer.kafka is not None
    assert group_version(answer.kgroup.body) == group_version(answer.kafka.body)
