"""Bad bytes give kgroup.errors.DecodeError: never another exception, a crash or a hang."""

from __future__ import annotations

import random

import pytest
from support.capture import fixture_files
from support.wire import reencode

from kgroup import protocol
from kgroup.errors import DecodeError, InvalidType

FIXTURES = fixture_files()


def test_every_truncated_fixture_is_a_decode_error() -> None:
    for path in FIXTURES:
        frame = path.read_bytes()
        for cut in range(len(frame)):
            with pytest.raises(DecodeError):
                protocol.decode_request(frame[:cut])
        with pytest.raises(DecodeError, match="left over"):
            protocol.decode_request(frame + b"\x00")


def test_mutated_fixtures_decode_or_raise_decode_error() -> None:
    rng = random.Random(5)
    frames = [p.read_bytes() for p in FIXTURES]
    decoded = 0
    for i in range(20_000):
        f = bytearray(frames[i % len(frames)])
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(f))
            f[at] = rng.randrange(256)
        try:
            request = protocol.decode_request(bytes(f))
        except DecodeError:
            continue
        decoded += 1
        again = reencode(request)
        assert protocol.decode_request(again[4:]) == request
    assert decoded > 1000


@pytest.mark.parametrize(
    ("frame", "message"),
    [
        (b"", "truncated"),
        (b"\x00\x63\x00\x00\x00\x00\x00\x01\xff\xff", "unknown api key 99"),
        (b"\x00\x0b\x00\x0a\x00\x00\x00\x01\xff\xff", "JoinGroup .* version 10 is not supported"),
        (b"\x00\x0b\x00\x00\x00\x00\x00\x01\xff\xfe", "string length -2 is negative"),
        # Heartbeat v4: group id with an invalid 6-byte varint length.
        (b"\x00\x0c\x00\x04\x00\x00\x00\x01\xff\xff\x00" + b"\xff" * 5 + b"\x01", "varint"),
        # ListGroups v4: states_filter claims 2^31-2 strings.
        (b"\x00\x10\x00\x04\x00\x00\x00\x01\xff\xff\x00\xff\xff\xff\xff\x07", "cannot fit"),
        # Heartbeat v4: tagged fields out of order.
        (b"\x00\x0c\x00\x04\x00\x00\x00\x01\xff\xff\x02\x02\x00\x01\x00", "out of order"),
    ],
)
def test_specific_bad_frames(frame: bytes, message: str) -> None:
    with pytest.raises(DecodeError, match=message):
        protocol.decode_request(frame)


def test_unsupported_versions_still_give_their_header() -> None:
    frame = b"\x00\x12\x00\x09\x00\x00\x00\x2a\x00\x01c\x00"  # ApiVersions v9
    with pytest.raises(DecodeError):
        protocol.decode_request(frame)
    header = protocol.decode_request_header(frame)
    assert (header.api_key, header.api_version, header.correlation_id) == (18, 9, 42)
    assert header.client_id == "c"
    assert not protocol.is_supported(18, 9)


def test_responses_to_unknown_versions_and_bad_frames() -> None:
    with pytest.raises(DecodeError, match="not supported"):
        protocol.decode_response(11, 10, b"\x00\x00\x00\x01")
    with pytest.raises(DecodeError):
        protocol.decode_response(11, 0, b"\x00\x00")
    with pytest.raises(DecodeError, match="unknown api key"):
        protocol.decode_response(5, 0, b"\x00\x00\x00\x01")


def test_frame_sizes() -> None:
    assert protocol.frame_size(b"\x00\x00\x01\x00") == 256
    with pytest.raises(DecodeError, match="negative"):
        protocol.frame_size(b"\xff\xff\xff\xff")
    with pytest.raises(DecodeError, match="above the limit"):
        protocol.frame_size(b"\x7f\xff\xff\xff")
    with pytest.raises(DecodeError, match="4 bytes"):
        protocol.frame_size(b"\x00\x01")


def test_frames_of_other_buffer_types() -> None:
    frame = FIXTURES[0].read_bytes()
    expected = protocol.decode_request(frame)
    assert protocol.decode_request(bytearray(frame)) == expected
    assert protocol.decode_request(memoryview(frame)) == expected
    with pytest.raises(InvalidType):
        protocol.decode_request("not bytes")  # type: ignore[arg-type]


def test_a_broker_tells_bad_requests_apart_by_kind() -> None:
    """What a broker answers, chosen from the exception's class and fields, never its text:
    UNSUPPORTED_VERSION for an unknown version, CORRUPT_MESSAGE for a batch failing its CRC,
    INVALID_RECORD for a wrong record count, a closed connection for a frame too large or cut
    short."""
    from kgroup.errors import CorruptRecord, FrameTooLarge, MalformedMessage, UnsupportedApiVersion
    from kgroup.protocol import records

    joingroup_v10 = b"\x00\x0b\x00\x0a\x00\x00\x00\x05\x00\x01c"
    with pytest.raises(UnsupportedApiVersion) as unsupported:
        protocol.decode_request(joingroup_v10)
    assert (unsupported.value.api_key, unsupported.value.api_version) == (11, 10)
    assert unsupported.value.error_code == 35
    assert protocol.decode_request_header(joingroup_v10).correlation_id == 5

    with pytest.raises(FrameTooLarge) as huge:
        protocol.frame_size(b"\x7f\xff\xff\xff", 1 << 20)
    assert (huge.value.size, huge.value.max_size, huge.value.error_code) == (
        2**31 - 1,
        1 << 20,
        None,
    )

    batch = records.encode_batch([(0, 1, None, b"v"), (1, 1, None, b"w")])
    body = {
        "acks": -1,
        "timeout_ms": 1000,
        "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": batch}]}],
    }
    frame = protocol.encode_request(0, 9, 6, "c", body)
    bad_crc = bytearray(batch)
    bad_crc[-1] ^= 0xFF
    bad_count = bytearray(batch)
    bad_count[57:61] = (3).to_bytes(4, "big")
    for data, kind, code in [(bad_crc, "crc", 2), (bad_count, "record_count", 87)]:
        body["topic_data"][0]["partition_data"][0]["records"] = bytes(data)
        request = protocol.decode_request(protocol.encode_request(0, 9, 6, "c", body)[4:])
        produced = request.body.topic_data[0].partition_data[0].records
        with pytest.raises(CorruptRecord) as corrupt:
            records.read_batch_headers(produced, verify_crc=kind == "crc", verify_records=True)
        assert (corrupt.value.kind, corrupt.value.error_code) == (kind, code)

    with pytest.raises(MalformedMessage) as cut:
        protocol.decode_request(frame[4:-10])
    assert cut.value.context == "ProduceRequest v9"
    assert cut.value.path == "topic_data[0].partition_data[0].records"
    assert cut.value.error_code is None
    for e in (unsupported, huge, corrupt, cut):
        assert isinstance(e.value, DecodeError) and isinstance(e.value, ValueError)
