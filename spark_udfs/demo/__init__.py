"""demo: the story ``make run`` tells, end to end on this machine.

Spark lays a generated sample out by Kafka partition and writes it to kgroup's broker, which
runs in the background; a group of three kgroup consumers reads it while one of them leaves
and comes back; the counts per partition on both sides, the generations, the committed offsets
and a read-back are checked. ``python -m spark_udfs.demo --help`` lists the options.

- :mod:`.story` is the story itself, step by step (``main``, and ``generate`` for the sample);
- :mod:`.broker` runs the broker in a process of its own for the length of a ``with`` block;
- :mod:`.group` is the consumer group, its members and what they saw;
- :mod:`.summary` formats the closing tables and decides the checks.
"""

from __future__ import annotations

from spark_udfs.demo.story import generate, main

__all__ = ["generate", "main"]
