"""Helpers shared by the tests, imported as ``support.<module>``: pytest's ``pythonpath``
(pyproject.toml) puts tests/ on sys.path.

- ``ports``: free loopback ports, and waiting until a server listens.
- ``tansu``: the tansu broker behind the ``tansu`` fixture (tests/conftest.py), and topics on it.
- ``wire``: frames read off a socket, a decoded request encoded again, spec version ranges.
- ``bodies``: hypothesis strategies for the body of any message at any version.
- ``fake_broker``: a loopback broker that answers with kgroup.protocol and records the frames.
- ``capture``: the real clients run against the fake broker; from the repository's root,
  ``python -m tests.support.capture --write`` rewrites tests/protocol/fixtures.
- ``assignments``: assignments written as ``"topic-partition"`` lists (assignor tests).
- ``transactions``: real open, committed and hanging transactions (confluent-kafka's
  transactional Producer), and a read_committed reader, for the transaction admin tests.

The kafka-python objects the assignor tests compare with come from bench/kafka_python_peer.py,
which the benchmarks use too (bench does not import from tests).
"""
