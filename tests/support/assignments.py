"""Assignments written down for comparison in the assignor tests: each partition as
``"topic-partition"``, the notation of Java's tests and of the golden vectors."""

from __future__ import annotations


def lists(out):
    """Each member's partitions, in the assignor's order: ``{member: ["t-0", "t-2"]}``."""
    return {m: [f"{tp.topic}-{tp.partition}" for tp in a.partitions] for m, a in out.items()}


def moving(a):
    """The partitions a cooperative assignor held back in its last round, and the member each
    goes to: ``{"t-5": "c2"}``."""
    return {f"{tp.topic}-{tp.partition}": m for tp, m in a.last_transferring.items()}
