"""kgroup.partitioners: where each Kafka producer puts a record, keyed or not.

Keyed records
-------------


``partition_for_key`` answers for one key, ``partition_keys`` for a whole batch (a list, a
numpy array, or an Arrow array read without copying). ``hash`` names the producer's keyed
partitioner:

============  ==========================================================================
``murmur2``   Java's producer (every version), kafka-python, franz-go, librdkafka's
              ``murmur2`` / ``murmur2_random``: ``toPositive(murmur2(key)) % n``
``crc32``     librdkafka's ``consistent`` / ``consistent_random`` (its default, so
              confluent-kafka's default): ``crc32(key) % n``
``fnv1a``     librdkafka's ``fnv1a`` / ``fnv1a_random``, Sarama's hash partitioner
============  ==========================================================================

A ``str`` key is encoded as UTF-8, as Java's StringSerializer does. A null key (``None``)
is not hashed by any of them; it gives -1 (Kafka's ``UNKNOWN_PARTITION``: the producer's
null-key partitioner decides). An empty key is a key and is hashed.

Records without a key
---------------------
Keyed records go to ``toPositive(murmur2(key)) % n`` in every Kafka version; what changed is
where records without a key go. One class per era of Java's producer, state kept in Rust:

- :class:`RoundRobinPartitioner`: Kafka up to 2.3 (``DefaultPartitioner``'s null-key path: a
  per-topic counter from a random start over the available partitions). ``start=0`` gives
  Kafka 3.x's ``RoundRobinPartitioner`` class.
- :class:`StickyPartitionCache`: Kafka 2.4 to 3.2 (KIP-480): a topic sticks to one partition
  until a batch on it closes (``next_partition``), then moves to a different random one.
- :class:`BuiltInPartitioner`: Kafka 3.3+ (KIP-794): sticky for ``batch.size`` bytes (the 3.4+
  switch rule), next choice weighted towards partitions with shorter queues.

Java draws its choices from ``ThreadLocalRandom``, which cannot be replayed: these classes
reproduce the policy, and take a ``seed`` for reproducible runs. Instances are not
thread-safe; use one per producer thread or guard it with a lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from kgroup._native import partitioners as _native
from kgroup._native.partitioners import (
    BuiltInPartitioner,
    RoundRobinPartitioner,
    StickyPartitionCache,
)
from kgroup.errors import InvalidType

__all__ = [
    "HASH_NAMES",
    "BuiltInPartitioner",
    "HashName",
    "RoundRobinPartitioner",
    "StickyPartitionCache",
    "crc32",
    "fnv1a",
    "murmur2",
    "partition_for_key",
    "partition_keys",
    "to_positive",
]

HashName = Literal["murmur2", "crc32", "fnv1a"]
HASH_NAMES: tuple[str, ...] = tuple(_native.HASH_NAMES)

murmur2 = _native.murmur2
crc32 = _native.crc32
fnv1a = _native.fnv1a


def to_positive(x: int) -> int:
    """Kafka's ``Utils.toPositive``: clears the sign bit of a 32-bit int (it is not ``abs``)."""
    return x & 0x7FFFFFFF


def partition_for_key(
    key: bytes | bytearray | str | None, num_partitions: int, *, hash: HashName = "murmur2"
) -> int:
    """The partition ``hash``'s producer gives ``key`` in a topic of ``num_partitions``.

    Returns -1 for ``None`` (a null key is not hashed). Raises ``ValueError`` for
    ``num_partitions < 1`` or an unknown ``hash`` and ``TypeError`` for another key type.
    """
    return _native.partition_for_key(key, num_partitions, hash)


def _is_arrow(keys: Any) -> bool:
    return hasattr(keys, "__arrow_c_array__") or hasattr(keys, "__arrow_c_stream__")


def partition_keys(keys: Any, num_partitions: int, *, hash: HashName = "murmur2") -> np.ndarray:
    """The partition of every key of a batch, as an int32 numpy array (-1 for a null key).

    ``keys`` may be a list or tuple of bytes / bytearray / str / None; a numpy array of dtype
    ``S``, ``U`` or ``object``; or an Arrow array or chunked array of binary, large_binary,
    string, large_string, binary_view or string_view (also dictionary-encoded), from pyarrow
    or any library with the Arrow PyCapsule interface. Arrow and numpy buffers are read in
    place, and the GIL is released while hashing them.
    """
    if isinstance(keys, list | tuple):
        out = np.empty(len(keys), dtype=np.int32)
        _native.partition_seq_into(keys, num_partitions, hash, out)
        return out
    if isinstance(keys, np.ndarray):
        return _partition_numpy(keys, num_partitions, hash)
    if _is_arrow(keys):
        out = np.empty(len(keys), dtype=np.int32)
        _native.partition_arrow_into(keys, num_partitions, hash, out)
        return out
    if isinstance(keys, Sequence) and not isinstance(keys, str | bytes | bytearray):
        return partition_keys(list(keys), num_partitions, hash=hash)
    raise InvalidType(
        f"keys must be a list or tuple, a numpy array or an Arrow array, got {type(keys).__name__}"
    )


def _partition_numpy(keys: np.ndarray, num_partitions: int, hash: str) -> np.ndarray:
    if keys.ndim != 1:
        raise InvalidType(f"keys must be a 1-dimensional array, got {keys.ndim} dimensions")
    out = np.empty(len(keys), dtype=np.int32)
    kind = keys.dtype.kind
    if kind == "S":
        width = keys.dtype.itemsize
        if width == 0 or len(keys) == 0:
            # np.bytes_ of width 0 holds only empty keys.
            _native.partition_seq_into([b""] * len(keys), num_partitions, hash, out)
            return out
        raw = np.ascontiguousarray(keys).view(np.uint8)
        _native.partition_fixed_into(raw, width, num_partitions, hash, out)
    elif kind == "U":
        width = keys.dtype.itemsize // 4
        if width == 0 or len(keys) == 0:
            _native.partition_seq_into([""] * len(keys), num_partitions, hash, out)
            return out
        raw = np.ascontiguousarray(keys).view(np.uint32)
        _native.partition_ucs4_into(raw, width, num_partitions, hash, out)
    elif kind == "O":
        _native.partition_seq_into(keys.tolist(), num_partitions, hash, out)
    else:
        raise InvalidType(f"keys must be a numpy array of dtype S, U or object, got {keys.dtype}")
    return out
