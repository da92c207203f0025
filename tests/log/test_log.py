"""kgroup.log through the binding, with batches from kgroup.protocol.records and from real
producers' captured Produce requests."""

import os
import pathlib
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgroup import errors
from kgroup.log import Log
from kgroup.protocol import decode_request
from kgroup.protocol.records import decode_batches, encode_batch

NOW = 1_700_000_000_000
FIXTURES = pathlib.Path(__file__).parent.parent / "protocol" / "fixtures"


def batch(n: int = 3, *, key: str = "k", ts: int = NOW, **kw: object) -> bytes:
    return encode_batch(
        [(i, ts, f"{key}{i}".encode(), b"value %d" % i) for i in range(n)],
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture
def folder(tmp_path: pathlib.Path) -> pathlib.Path:
    return tmp_path / "orders-0"


def offsets(data: bytes) -> list[int]:
    return [r.offset for b in decode_batches(data) for r in b.records]


def test_append_read_flush_reopen(folder: pathlib.Path) -> None:
    log = Log(folder, {"segment.bytes": 2000, "min.insync.replicas": 2}, now_ms=NOW)
    assert log.recovery.log_end_offset == 0
    for i in range(30):
        r = log.append(batch(), NOW, leader_epoch=4)
        assert (r.base_offset, r.last_offset, r.duplicate) == (3 * i, 3 * i + 2, False)
        assert r.log_append_time == -1
    assert log.segment_count > 1
    assert log.unflushed_messages == 90
    assert log.flush() == 90
    assert log.unflushed_messages == 0
    data = log.read(0, 1 << 20, max_offset=log.log_end_offset)
    assert offsets(data)[0] == 0
    assert decode_batches(data)[0].partition_leader_epoch == 4
    s = log.read_slice(10, 100, max_offset=90)
    assert len(s) > 0 and s.path is not None and s.fileno() >= 0
    with open(s.path, "rb") as f:
        f.seek(s.position)
        assert f.read(s.length) == s.read()
    assert os.pread(s.fileno(), s.length, s.position) == s.read()
    log.close()
    again = Log(folder, now_ms=NOW)
    assert again.recovery.clean
    assert again.log_end_offset == 90


def test_errors_are_kafka_error_classes(folder: pathlib.Path) -> None:
    log = Log(folder, {"cleanup.policy": ["compact"], "max.message.bytes": 500}, now_ms=NOW)
    with pytest.raises(errors.InvalidRecord) as e:
        log.append(encode_batch([(0, NOW, None, b"v")]), NOW)
    assert e.value.code == 87
    with pytest.raises(errors.MessageTooLarge):
        log.append(encode_batch([(0, NOW, b"k", b"v" * 1000)]), NOW)
    corrupt = bytearray(batch())
    corrupt[-1] ^= 1
    with pytest.raises(errors.CorruptMessage):
        log.append(bytes(corrupt), NOW)
    with pytest.raises(errors.OffsetOutOfRange):
        log.read(5, 100, 5)
    with pytest.raises(errors.InvalidArgument, match=r"segment\.bytes"):
        log.update_config({"segment.bytes": "lots"})
    with pytest.raises(errors.InvalidArgument, match=r"compression\.type"):
        Log(folder.parent / "x-0", {"compression.type": "none"})


def test_idempotent_retries_across_an_unclean_stop(folder: pathlib.Path) -> None:
    log = Log(folder, {"segment.bytes": 1000}, now_ms=NOW)
    sent = []
    for seq in range(0, 20, 2):
        b = batch(2, producer_id=7, producer_epoch=0, base_sequence=seq)
        sent.append((b, log.append(b, NOW)))
    del log  # no close: as after kill -9
    log = Log(folder, {"segment.bytes": 1000}, now_ms=NOW)
    assert not log.recovery.clean
    for b, first in sent[-5:]:
        again = log.append(b, NOW)
        assert again.duplicate and again.base_offset == first.base_offset
    with pytest.raises(errors.OutOfOrderSequenceNumber):
        log.append(batch(1, producer_id=7, producer_epoch=0, base_sequence=25), NOW)
    with pytest.raises(errors.InvalidProducerEpoch):
        log.append(batch(1, producer_id=7, producer_epoch=1, base_sequence=0), NOW)
        log.append(batch(1, producer_id=7, producer_epoch=0, base_sequence=20), NOW)


def test_torn_tail_is_cut(folder: pathlib.Path) -> None:
    log = Log(folder, now_ms=NOW)
    for _ in range(5):
        log.append(batch(), NOW)
    size = log.size
    del log
    seg = folder / ("0" * 20 + ".log")
    with open(seg, "ab") as f:
        f.write(batch()[:30])
    log = Log(folder, now_ms=NOW)
    assert log.recovery.bytes_truncated == 30
    assert log.size == size and log.log_end_offset == 15


def test_retention_delete_records_and_timestamps(folder: pathlib.Path) -> None:
    log = Log(folder, {"segment.bytes": 1000, "retention.ms": 10_000}, now_ms=NOW)
    for i in range(20):
        log.append(batch(ts=NOW + i * 1000), NOW)
    found = log.offset_for_timestamp(NOW + 5000)
    assert found is not None and (found.offset, found.timestamp) == (15, NOW + 5000)
    top = log.max_timestamp()
    assert top is not None and top.timestamp == NOW + 19_000
    assert log.delete_records(7, high_watermark=log.log_end_offset) == 7
    with pytest.raises(errors.OffsetOutOfRange):
        log.delete_records(1000, high_watermark=log.log_end_offset)
    r = log.maintenance(NOW + 25_000)
    assert r.segments_deleted > 0 and r.log_start_offset > 7
    log.close()
    assert Log(folder, now_ms=NOW).log_start_offset == r.log_start_offset


def test_compaction_beside_appends(folder: pathlib.Path) -> None:
    log = Log(folder, {"cleanup.policy": "compact", "segment.bytes": 800}, now_ms=NOW)
    stop = threading.Event()

    def produce() -> None:
        i = 0
        while not stop.is_set() and i < 2000:
            log.append(encode_batch([(0, NOW, b"key%d" % (i % 5), b"v%d" % i)]), NOW)
            i += 1

    t = threading.Thread(target=produce)
    t.start()
    cleaned = 0
    while t.is_alive():
        cleaned += log.compact(NOW, force=True).cleaned
    stop.set()
    t.join()
    assert cleaned > 0
    r = log.compact(NOW, force=True)
    assert r.cleaned and r.records_removed > 0
    data = log.read(0, 1 << 20, r.end_offset)
    keys = [rec.key for b in decode_batches(data) for rec in b.records if rec.offset < r.end_offset]
    assert len(keys) == len(set(keys)) == 5


@pytest.mark.parametrize(
    "client", ["kafka_python/Produce-v2-1.bin", "confluent_kafka/Produce-v8-1.bin"]
)
def test_a_real_producers_records(folder: pathlib.Path, client: str) -> None:
    req = decode_request((FIXTURES / client).read_bytes())
    records = req.body["topic_data"][0]["partition_data"][0]["records"]
    log = Log(folder, now_ms=NOW)
    r = log.append(records, NOW)
    assert r.base_offset == 0
    got = decode_batches(log.read(0, 1 << 20, log.log_end_offset))
    assert got[0].magic == 2
    assert got[0].records[-1].offset == r.last_offset


def test_delete_removes_the_folder(folder: pathlib.Path) -> None:
    log = Log(folder, now_ms=NOW)
    log.append(batch(), NOW)
    log.delete()
    assert not folder.exists()
    with pytest.raises(errors.KafkaStorageError):
        log.append(batch(), NOW)


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=20), min_size=1, max_size=30),
    codec=st.sampled_from(["none", "gzip", "lz4", "zstd"]),
    segment_bytes=st.integers(min_value=5000, max_value=20_000),
    cut=st.integers(min_value=0, max_value=10_000),
)
def test_appended_records_read_back_and_survive_a_torn_tail(
    tmp_path_factory: pytest.TempPathFactory,
    sizes: list[int],
    codec: str,
    segment_bytes: int,
    cut: int,
) -> None:
    folder = tmp_path_factory.mktemp("log") / "t-0"
    log = Log(folder, {"segment.bytes": segment_bytes}, now_ms=NOW)
    sent = []
    for n in sizes:
        records = [(i, NOW + i, b"k%d" % i, b"v" * (n * i)) for i in range(n)]
        r = log.append(encode_batch(records, compression=codec), NOW)
        sent.extend((r.base_offset + i, k, v) for i, _, k, v in records)
    end = log.log_end_offset

    def read_all(log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
        out, offset = [], 0
        while offset < log.log_end_offset:
            for b in decode_batches(log.read(offset, 4096, log.log_end_offset)):
                out.extend((r.offset, r.key, r.value) for r in b.records if r.offset >= offset)
                offset = b.base_offset + b.last_offset_delta + 1
        return out

    assert read_all(log) == sent
    del log
    # Tear the last segment anywhere: recovery keeps a prefix of what was sent.
    last = max(folder.glob("*.log"))
    data = last.read_bytes()
    last.write_bytes(data[: min(cut, len(data))])
    log = Log(folder, {"segment.bytes": segment_bytes}, now_ms=NOW)
    got = read_all(log)
    assert got == sent[: len(got)]
    assert log.log_end_offset <= end


def test_one_flush_serves_many_concurrent_produces(folder: pathlib.Path) -> None:
    # Group commit as the broker runs it: appends go on while an executor thread flushes; each
    # acks=all produce is answered once a flush returned an offset past its last offset.
    log = Log(folder, now_ms=NOW)
    appended: list[int] = []
    lock = threading.Lock()

    def produce() -> None:
        for _ in range(200):
            r = log.append(batch(2), NOW)
            with lock:
                appended.append(r.last_offset)

    threads = [threading.Thread(target=produce) for _ in range(4)]
    for t in threads:
        t.start()
    flushes = 0
    while any(t.is_alive() for t in threads):
        with lock:
            before = list(appended)
        durable = log.flush()
        flushes += 1
        assert all(last < durable for last in before)
    for t in threads:
        t.join()
    assert log.flush() == 1600
    assert flushes < 800
