"""Real frames of share groups (KIP-932) from real peers: Kafka's Java clients (a
``KafkaShareConsumer`` and the Admin's share group calls, ``java_share/kgroup/ShareCapture.java``)
and librdkafka's share consumer (its ``examples/share_consumer_commit_sync.c``, built against
``$RDK_SRC``) talking to Apache Kafka (``support.apache_kafka``, 4.4 by default, where share
groups are on by default), through a :class:`RecordingProxy` the broker advertises.

The committed frames are ``tests/protocol/share_frames/<client>/<Api>-v<N>-<i>.{request,
response}.bin`` (frames without their size prefix). Beside them, ``records/<Schema>-<i>.bin``
are the keys and values of the share group records that broker wrote to ``__consumer_offsets``
(record types 10 to 15) and ``__share_group_state`` (0 and 1) meanwhile, read from its log
segments (each starts with its INT16 version, for a key the record type; tombstones left out).
To write them all again, from the repository's root::

    .venv/bin/python -m tests.support.share_capture --write
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from kgroup import protocol
from kgroup.protocol.records import decode_batches

from .apache_kafka import KafkaCluster, check_run, classpath, compiled, java
from .recording_proxy import Exchange, RecordingProxy

FRAMES = Path(__file__).parents[1] / "protocol" / "share_frames"
SOURCE_DIR = Path(__file__).resolve().parent / "java_share"
#: SHARE_APIS are the client-facing share group apis.
SHARE_APIS = frozenset({76, 77, 78, 79, 90, 91, 92})
#: PER_VERSION is how many distinct exchanges of one api and version are kept.
PER_VERSION = 3
RDK_SRC = Path(os.environ.get("RDK_SRC", "/tmp/rdk/src"))


def java_program() -> Path:
    """The compiled ShareCapture program's folder (compiled once per source)."""
    return compiled("share-capture", sorted(SOURCE_DIR.rglob("*.java")), SOURCE_DIR)


def run_java(bootstrap: str, topic: str, group: str, *more_groups: str) -> None:
    build = java_program()
    check_run(
        [
            java(),
            "-Xmx256m",
            "-cp",
            classpath(build / "classes"),
            "kgroup.ShareCapture",
            bootstrap,
            topic,
            group,
            *more_groups,
        ],
        "ShareCapture",
    )


def rdk_program(out: Path) -> Path:
    """librdkafka's share consumer example with explicit commits, built into ``out``."""
    exe = out / "share_consumer_commit_sync"
    check_run(
        [
            shutil.which("cc") or "gcc",
            str(RDK_SRC / "examples" / "share_consumer_commit_sync.c"),
            f"-I{RDK_SRC / 'src'}",
            f"-L{RDK_SRC / 'src'}",
            "-lrdkafka",
            "-o",
            str(exe),
        ],
        "building librdkafka's share consumer",
    )
    return exe


def run_rdk(exe: Path, bootstrap: str, topic: str, group: str, seconds: float = 20) -> None:
    """Runs the example until it has polled for ``seconds``, then stops it with SIGINT (it
    leaves the group and closes its share sessions on the way out)."""
    env = {**os.environ, "LD_LIBRARY_PATH": str(RDK_SRC / "src")}
    p = subprocess.Popen(
        [str(exe), bootstrap, group, topic],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        p.wait(seconds)
    except subprocess.TimeoutExpired:
        p.send_signal(2)
        p.wait(30)


def distinct(exchanges: list[Exchange]) -> list[Exchange]:
    """The answered share group exchanges, at most PER_VERSION distinct ones per api and
    version."""
    out: list[Exchange] = []
    seen: dict[tuple[int, int], set[tuple[bytes, bytes]]] = {}
    for e in exchanges:
        if e.api_key not in SHARE_APIS or e.response is None:
            continue
        # The correlation id aside, equal frames are the same fixture.
        key = (e.request[:4] + e.request[8:], e.response[4:])
        kept = seen.setdefault((e.api_key, e.api_version), set())
        if key in kept or len(kept) >= PER_VERSION:
            continue
        kept.add(key)
        out.append(e)
    return out


#: RECORD_TYPES name the share group records by internal topic and record type (a key's
#: version); a value's schema is its key's with "Value" for "Key".
RECORD_TYPES = {
    "__consumer_offsets": {
        10: "ShareGroupMemberMetadataKey",
        11: "ShareGroupMetadataKey",
        12: "ShareGroupTargetAssignmentMetadataKey",
        13: "ShareGroupTargetAssignmentMemberKey",
        14: "ShareGroupCurrentMemberAssignmentKey",
        15: "ShareGroupStatePartitionMetadataKey",
    },
    "__share_group_state": {0: "ShareSnapshotKey", 1: "ShareUpdateKey"},
}


def share_records(data: Path) -> dict[str, list[bytes]]:
    """The share group records' keys and values in the log segments under a node's ``data``
    folder, by schema name, at most PER_VERSION distinct ones each."""
    out: dict[str, list[bytes]] = {}
    for topic, types in RECORD_TYPES.items():
        for segment in sorted(data.glob(f"{topic}-*/*.log")):
            for batch in decode_batches(segment.read_bytes(), verify_crc=True):
                for r in batch.records:
                    if r.key is None or r.value is None or len(r.key) < 2:
                        continue
                    schema = types.get(int.from_bytes(r.key[:2], "big", signed=True))
                    if schema is None:
                        continue
                    for name, blob in ((schema, r.key), (schema[:-3] + "Value", r.value)):
                        kept = out.setdefault(name, [])
                        if blob not in kept and len(kept) < PER_VERSION:
                            kept.append(blob)
    return out


def capture() -> tuple[dict[str, list[Exchange]], dict[str, list[bytes]]]:
    """Each client's share group exchanges with a fresh Apache Kafka, and the share group
    records it wrote."""
    out: dict[str, list[Exchange]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = rdk_program(Path(tmp)) if (RDK_SRC / "src" / "librdkafka.so").exists() else None
        proxy = RecordingProxy()
        advertised = f"PLAINTEXT://127.0.0.1:{proxy.port}"
        config = {
            "advertised.listeners": advertised,
            "group.share.heartbeat.interval.ms": 1000,
            "group.share.min.heartbeat.interval.ms": 1000,
        }
        cluster = KafkaCluster(config=config)
        proxy.target = ("127.0.0.1", cluster.nodes[0].port)
        with proxy, cluster:
            bootstrap = f"127.0.0.1:{proxy.port}"
            run_java(bootstrap, "share-java", "share-java-group", "share-rdk-group")
            out["java"] = distinct(proxy.exchanges())
            if exe is not None:
                before = len(proxy.exchanges())
                run_rdk(exe, bootstrap, "share-java", "share-rdk-group")
                out["librdkafka"] = distinct(proxy.exchanges()[before:])
            records = share_records(cluster.nodes[0].data)
    return out, records


def name(e: Exchange, index: int) -> str:
    return f"{protocol.API_NAMES[e.api_key]}-v{e.api_version}-{index}"


def write() -> None:
    found, records = capture()
    folder = FRAMES / "records"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for schema, blobs in sorted(records.items()):
        for i, blob in enumerate(blobs, 1):
            (folder / f"{schema}-{i}.bin").write_bytes(blob)
            print("records", f"{schema}-{i}")
    for client, exchanges in found.items():
        folder = FRAMES / client
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        counts: dict[tuple[int, int], int] = {}
        for e in exchanges:
            i = counts[(e.api_key, e.api_version)] = counts.get((e.api_key, e.api_version), 0) + 1
            assert e.response is not None
            (folder / f"{name(e, i)}.request.bin").write_bytes(e.request)
            (folder / f"{name(e, i)}.response.bin").write_bytes(e.response)
            print(client, name(e, i))


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    write()
