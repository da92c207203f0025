"""partition_keys over every accepted input shape agrees with partition_for_key, key by key."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kgroup
from kgroup._native import partitioners as _native
from kgroup.errors import InvalidArgument, InvalidType, KGroupError

KEYS = [b"a", None, b"", b"abc", "h\u00e9llo", "\U0001f600", b"\x00\xff\x00"]
N = 1000


def expected(keys, n=N, hash="murmur2"):
    return [kgroup.partition_for_key(k, n, hash=hash) for k in keys]


def test_null_is_minus_one_and_empty_is_hashed() -> None:
    assert kgroup.partition_for_key(None, 12) == -1
    assert kgroup.partition_for_key(b"", 1000) == 681  # kafka-python's Java vector
    assert kgroup.partition_keys([None, b""], 1000).tolist() == [-1, 681]


def test_str_is_utf8_as_java_string_serializer() -> None:
    for s in ["h\u00e9llo", "\u65e5\u672c", "\U0001f600", ""]:
        assert kgroup.partition_for_key(s, 997) == kgroup.partition_for_key(s.encode(), 997)


def test_unpaired_surrogates_encode_as_java_does() -> None:
    # Java's String.getBytes(UTF_8) writes '?' for an unpaired surrogate; a proper pair written
    # as two UTF-16 units is one 4-byte character.
    assert kgroup.murmur2("a\ud800b") == kgroup.murmur2(b"a?b")
    assert kgroup.partition_keys(["a\ud800b", "\udfff"], 50).tolist() == [
        kgroup.partition_for_key(b"a?b", 50),
        kgroup.partition_for_key(b"?", 50),
    ]
    pair = "\ud83d\ude00".encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    assert kgroup.murmur2(pair) == kgroup.murmur2("\U0001f600".encode())


def test_list_tuple_and_bytearray() -> None:
    keys = [*KEYS, bytearray(b"xyz")]
    want = expected(keys)
    assert kgroup.partition_keys(keys, N).tolist() == want
    assert kgroup.partition_keys(tuple(keys), N).tolist() == want
    out = kgroup.partition_keys(keys, N)
    assert out.dtype == np.int32 and out.shape == (len(keys),)


def test_empty_inputs() -> None:
    assert kgroup.partition_keys([], 3).tolist() == []
    assert kgroup.partition_keys(pa.array([], pa.binary()), 3).tolist() == []
    assert kgroup.partition_keys(np.array([], dtype="S3"), 3).tolist() == []


@pytest.mark.parametrize(
    "arrow_type",
    [
        pa.binary(),
        pa.large_binary(),
        pa.string(),
        pa.large_string(),
        pa.binary_view(),
        pa.string_view(),
    ],
    ids=str,
)
def test_arrow_types(arrow_type) -> None:
    keys = [
        b"a",
        None,
        b"",
        b"abc",
        b"a-little-bit-longer-string-that-is-not-inline",
        "h\u00e9llo".encode(),
    ]
    if (
        pa.types.is_string(arrow_type)
        or pa.types.is_large_string(arrow_type)
        or arrow_type == pa.string_view()
    ):
        values = [k.decode() if k is not None else None for k in keys]
    else:
        values = keys
    arr = pa.array(values, type=arrow_type)
    assert kgroup.partition_keys(arr, N).tolist() == expected(keys)
    # Sliced arrays keep their offset.
    assert kgroup.partition_keys(arr.slice(2, 3), N).tolist() == expected(keys[2:5])
    # Chunked arrays, dictionary-encoded arrays.
    chunked = pa.chunked_array([arr.slice(0, 2), arr.slice(2)], type=arrow_type)
    assert kgroup.partition_keys(chunked, N).tolist() == expected(keys)
    if arrow_type in (pa.binary(), pa.string(), pa.large_string()):
        assert kgroup.partition_keys(arr.dictionary_encode(), N).tolist() == expected(keys)


def test_arrow_null_type_and_all_nulls() -> None:
    assert kgroup.partition_keys(pa.nulls(3), 5).tolist() == [-1, -1, -1]
    assert kgroup.partition_keys(pa.array([None, None], pa.string()), 5).tolist() == [-1, -1]


def test_arrow_is_read_without_copying() -> None:
    # A 1 GB key column would double the memory if copied; check that no copy happens by
    # partitioning a view of a large buffer and watching pyarrow's allocator.
    keys = pa.array([b"x" * 64] * 100_000)
    before = pa.total_allocated_bytes()
    kgroup.partition_keys(keys, 12)
    assert pa.total_allocated_bytes() == before


def test_numpy_dtypes() -> None:
    raw = [b"a", b"", b"abc", b"a\x00b"]
    s = np.array(raw, dtype="S5")
    assert kgroup.partition_keys(s, N).tolist() == expected(raw)
    # numpy drops trailing NUL bytes of an S array's elements: so does kgroup.
    assert kgroup.partition_keys(np.array([b"ab\x00"], dtype="S3"), N).tolist() == expected([b"ab"])
    u = np.array(["a", "", "h\u00e9llo", "\U0001f600"])
    assert kgroup.partition_keys(u, N).tolist() == expected(list(u))
    o = np.array(KEYS, dtype=object)
    assert kgroup.partition_keys(o, N).tolist() == expected(KEYS)
    # Non-contiguous views are handled.
    assert kgroup.partition_keys(s[::2], N).tolist() == expected(raw[::2])


@pytest.mark.parametrize("hash", ["murmur2", "crc32", "fnv1a"])
@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.one_of(st.none(), st.binary(max_size=80), st.text(max_size=40)), max_size=60)
)
def test_every_path_agrees_with_partition_for_key(hash: str, keys) -> None:
    n = 37
    want = expected(keys, n, hash)
    assert kgroup.partition_keys(keys, n, hash=hash).tolist() == want
    as_bytes = [k.encode("utf-8", "surrogatepass") if isinstance(k, str) else k for k in keys]
    # Text without lone surrogates is what Arrow can hold.
    if all(not isinstance(k, str) or k.encode("utf-8", "ignore").decode() == k for k in keys):
        arr = pa.array(as_bytes, type=pa.binary())
        assert kgroup.partition_keys(arr, n, hash=hash).tolist() == want


def test_bad_partition_count() -> None:
    for n in (0, -1, 2**31):
        with pytest.raises(ValueError, match="num_partitions"):
            kgroup.partition_keys([b"a"], n)
        with pytest.raises(InvalidArgument):
            kgroup.partition_for_key(b"a", n)


def test_bad_key_type_names_its_index() -> None:
    with pytest.raises(TypeError, match=r"index 2.*int"):
        kgroup.partition_keys([b"a", "b", 3], 5)
    with pytest.raises(InvalidType):
        kgroup.partition_for_key(3.5, 5)
    with pytest.raises(TypeError, match="integer"):
        kgroup.partition_keys(pa.array([1, 2]), 5)
    with pytest.raises(TypeError):
        kgroup.partition_keys(np.array([1, 2]), 5)
    with pytest.raises(TypeError):
        kgroup.partition_keys(42, 5)


def test_unknown_hash_lists_the_valid_names() -> None:
    with pytest.raises(ValueError, match="murmur2, crc32, fnv1a"):
        kgroup.partition_keys([b"a"], 5, hash="md5")
    with pytest.raises(KGroupError):
        kgroup.partition_for_key(b"a", 5, hash="")


def test_out_of_range_dictionary_index_is_an_error_not_a_crash() -> None:
    indices = pa.array([0, 5], pa.int32())
    dictionary = pa.array(["a"])
    bad = pa.DictionaryArray.from_arrays(indices, dictionary, safe=False)
    with pytest.raises(ValueError, match="dictionary index"):
        kgroup.partition_keys(bad, 3)


def ticks_inside_call(native_call) -> int:
    """How often another Python thread ran while `native_call()` was inside the extension: it
    cannot run at all while the GIL is held. The window skips three switch intervals at each
    end, where the GIL may change hands around the call."""
    import sys
    import threading
    import time

    stamps: list[float] = []
    stop = threading.Event()

    def tick() -> None:
        while not stop.is_set():
            stamps.append(time.perf_counter())
            time.sleep(0)

    t = threading.Thread(target=tick)
    t.start()
    time.sleep(0.02)
    try:
        start = time.perf_counter()
        native_call()
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    skip = 3 * sys.getswitchinterval()
    return sum(start + skip < x < end - skip for x in stamps)


def test_gil_is_released_for_arrow_batches() -> None:
    keys = [f"key-{i}".encode() for i in range(3_000_000)]
    out = np.empty(len(keys), dtype=np.int32)
    # Ten chunks of the same keys: long enough on a fast machine for the window to matter.
    arr = pa.chunked_array([pa.array(keys)] * 10)
    out_arrow = np.empty(len(arr), dtype=np.int32)
    # The list path must hold the GIL (it reads Python objects): the control. On a loaded
    # machine a few ticks can still land at the window's edges; inside the Arrow call the other
    # thread runs freely, orders of magnitude more often.
    held = ticks_inside_call(lambda: _native.partition_seq_into(keys, 12, "murmur2", out))
    free = max(
        ticks_inside_call(lambda: _native.partition_arrow_into(arr, 12, "murmur2", out_arrow))
        for _ in range(3)
    )
    assert free > 10 * held + 50, (free, held)
