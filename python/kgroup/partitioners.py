"""Null-key partitioners of the Java producer, one per era (state kept in Rust).

Keyed records go to ``toPositive(murmur2(key)) % n`` in every Kafka version; what changed is
where records without a key go:

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

from kgroup._native import BuiltInPartitioner, RoundRobinPartitioner, StickyPartitionCache

__all__ = ["BuiltInPartitioner", "RoundRobinPartitioner", "StickyPartitionCache"]
