"""encode_response_segments beside encode_response: a Fetch response whose records are
FileSlices of a real log, written in segments, is byte for byte the frame encode_response writes
for the same body with each FileSlice's bytes in its place, at every Fetch version (INT32 record
lengths before v12, compact varints of one to three bytes after), whatever is inlined."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.bodies import body_of

from kgroup import protocol
from kgroup.errors import InvalidArgument
from kgroup.log import FileSlice, Log
from kgroup.protocol.records import Record, encode_batch

FETCH = protocol.ApiKey.FETCH
LO, HI = protocol.API_VERSIONS[FETCH]


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Log]:
    """A log of batches from a few bytes to 70 KB, so that record lengths need compact varints
    of one, two and three bytes."""
    lg = Log(tmp_path_factory.mktemp("segments") / "t-0")
    now = int(time.time() * 1000)
    for size in (0, 10, 60, 200, 5_000, 16_000, 20_000, 70_000, 3, 900):
        lg.append(encode_batch([Record(timestamp=now, value=b"v" * size)]), now)
    yield lg
    lg.close()


def slices(lg: Log) -> list[FileSlice]:
    end = lg.log_end_offset
    out = [lg.read_slice(o, m, end) for o in range(end) for m in (1, 100, 30_000, 1 << 20)]
    out.append(lg.read_slice(end, 1 << 20, end))  # empty: at the log end offset
    return out


def plain(value: Any) -> Any:
    """``value`` with every FileSlice read into bytes."""
    if isinstance(value, FileSlice):
        return value.read()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def file_slices(value: Any) -> list[FileSlice]:
    if isinstance(value, FileSlice):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in file_slices(v)]
    if isinstance(value, list):
        return [s for v in value for s in file_slices(v)]
    return []


def joined(segments: list[bytes | FileSlice]) -> bytes:
    return b"".join(s if isinstance(s, bytes) else s.read() for s in segments)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_segments_are_the_frame_with_the_slices_in_place(log: Log, data) -> None:
    pool = slices(log)
    records = st.sampled_from(pool) | st.binary(max_size=64)
    version = data.draw(st.integers(LO, HI))
    body = data.draw(body_of("FetchResponse", version, records))
    inline_below = data.draw(st.sampled_from([0, 1, 61, 200, 16_384, 1 << 30]))
    header = protocol.RequestHeader(FETCH, version, data.draw(st.integers(0, 2**31 - 1)))

    frame = protocol.encode_response(header, plain(body))
    segments = protocol.encode_response_segments(header, body, inline_below=inline_below)
    assert joined(segments) == frame
    # encode_response reads FileSlices into the frame itself.
    assert protocol.encode_response(header, body) == frame
    # The pieces: non-empty bytes, and the body's own FileSlices that are not inlined, in order.
    assert all(len(s) > 0 for s in segments)
    left = [s for s in file_slices(body) if len(s) >= max(inline_below, 1)]
    assert [s for s in segments if isinstance(s, FileSlice)] == left
    assert all(any(s is x for x in left) for s in segments if isinstance(s, FileSlice)), (
        "a piece is not one of the body's FileSlices"
    )


def test_nothing_to_leave_out_is_one_frame(log: Log) -> None:
    header = protocol.RequestHeader(FETCH, 12, 3)
    big = log.read_slice(0, 1 << 20, log.log_end_offset)
    body = {"responses": [{"topic": "t", "partitions": [{"partition_index": 0, "records": big}]}]}
    assert protocol.encode_response_segments(header, body, inline_below=len(big) + 1) == [
        protocol.encode_response(header, plain(body))
    ]
    pieces = protocol.encode_response_segments(header, body, inline_below=len(big))
    assert [type(p) for p in pieces] == [bytes, FileSlice, bytes]
    assert pieces[1] is big


def test_a_slice_outlives_its_deleted_log(tmp_path) -> None:
    # The broker may send a FileSlice after retention or a topic deletion removed its segment.
    lg = Log(tmp_path / "t-0")
    now = int(time.time() * 1000)
    lg.append(encode_batch([Record(timestamp=now, value=b"x" * 50_000)]), now)
    s = lg.read_slice(0, 1 << 20, lg.log_end_offset)
    before = s.read()
    lg.delete()
    assert not (tmp_path / "t-0").exists()
    header = protocol.RequestHeader(FETCH, 4, 1)
    body = {"responses": [{"topic": "t", "partitions": [{"partition_index": 0, "records": s}]}]}
    segments = protocol.encode_response_segments(header, body, inline_below=1 << 30)
    assert segments == [protocol.encode_response(header, plain(body))]
    assert s.read() == before


def test_a_slice_elsewhere_than_records_is_refused(log: Log) -> None:
    s = log.read_slice(0, 100, log.log_end_offset)
    header = protocol.RequestHeader(protocol.ApiKey.API_VERSIONS, 0, 1)
    with pytest.raises(TypeError):
        protocol.encode_response_segments(header, {"error_code": 0, "api_keys": s})
    # A Metadata response has no records: a FileSlice for a string is a type error, not a crash.
    header = protocol.RequestHeader(protocol.ApiKey.METADATA, 1, 1)
    with pytest.raises((TypeError, InvalidArgument)):
        protocol.encode_response_segments(header, {"brokers": [{"host": s}]})
