"""kafka-configs on client quotas against kgroup's broker prints what it prints against Apache
Kafka: quotas of client ids, users, users and client ids together, IP addresses and their
defaults, set, described, deleted and refused (AlterClientQuotas and DescribeClientQuotas).

Each scenario removes what it set: the Apache Kafka beside it is shared by the session, and a
quota left on it would throttle other tests' clients."""

from __future__ import annotations

import pytest
from support.kafka_tools import CONFIGS, Transcript, compare, unique

pytestmark = [pytest.mark.network, pytest.mark.slow]


def test_kafka_configs_client_quotas(brokers: dict[str, str]) -> None:
    client, user = unique("kt-client"), unique("kt-user")
    clients = ["--entity-type", "clients", "--entity-name", client]
    users = ["--entity-type", "users", "--entity-name", user]
    ips = ["--entity-type", "ips", "--entity-name", "10.1.2.3"]

    def scenario(t: Transcript) -> None:
        t.tool(CONFIGS, "--alter", *clients, "--add-config",
               "producer_byte_rate=1024,consumer_byte_rate=2048")  # fmt: skip
        t.tool(CONFIGS, "--describe", *clients)
        t.tool(CONFIGS, "--alter", *users, *clients, "--add-config", "request_percentage=250.5")
        t.tool(CONFIGS, "--describe", *users, *clients)
        t.tool(CONFIGS, "--alter", *users, "--add-config", "producer_byte_rate=4096")
        t.tool(CONFIGS, "--describe", *users)
        # Defaults: a value no test's client can reach, removed again below.
        t.tool(CONFIGS, "--alter", *users, "--entity-type", "clients", "--entity-default",
               "--add-config", "consumer_byte_rate=1000000000000")  # fmt: skip
        t.tool(CONFIGS, "--describe", *users, "--entity-type", "clients", "--entity-default")
        t.tool(CONFIGS, "--alter", *ips, "--add-config", "connection_creation_rate=10")
        t.tool(CONFIGS, "--describe", *ips)
        # Refused: bad values and keys, an IP quota on a client id, a bad address.
        t.tool(CONFIGS, "--alter", *clients, "--add-config", "producer_byte_rate=1.5")
        t.tool(CONFIGS, "--alter", *clients, "--add-config", "producer_byte_rate=0")
        t.tool(CONFIGS, "--alter", *clients, "--add-config", "connection_creation_rate=5")
        t.tool(CONFIGS, "--alter", *ips, "--add-config", "producer_byte_rate=5")
        t.tool(CONFIGS, "--alter", "--entity-type", "ips", "--entity-name", "not-an-ip",
               "--add-config", "connection_creation_rate=10")  # fmt: skip
        # Deleting a key, then the rest.
        t.tool(CONFIGS, "--alter", *clients, "--delete-config", "producer_byte_rate")
        t.tool(CONFIGS, "--describe", *clients)
        t.tool(CONFIGS, "--alter", *clients, "--delete-config", "consumer_byte_rate")
        t.tool(CONFIGS, "--alter", *users, *clients, "--delete-config", "request_percentage")
        t.tool(CONFIGS, "--alter", *users, "--delete-config", "producer_byte_rate")
        t.tool(CONFIGS, "--alter", *users, "--entity-type", "clients", "--entity-default",
               "--delete-config", "consumer_byte_rate")  # fmt: skip
        t.tool(CONFIGS, "--alter", *ips, "--delete-config", "connection_creation_rate")
        t.tool(CONFIGS, "--describe", *clients)
        t.tool(CONFIGS, "--describe", *users, *clients)
        t.tool(CONFIGS, "--describe", *ips)

    compare(scenario, brokers)
