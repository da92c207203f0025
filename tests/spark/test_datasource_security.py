"""The kgroup data source through a SASL_SSL listener of Apache Kafka 4.x, configured as a Spark
user configures Spark's own Kafka source: the Java client's settings under ``kafka.*``
(``kafka.sasl.jaas.config``, ``kafka.ssl.truststore.*``), handed unchanged to the driver's
AdminClient and the tasks' consumers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from support.secure_kafka import PASSWORD, USER, SecureKafka, run_secure_kafka

import kgroup
import spark_udfs
from spark_udfs.options import parse_read_options

pytestmark = [pytest.mark.network, pytest.mark.slow]


@pytest.fixture(scope="module")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureKafka]:
    with run_secure_kafka(tmp_path_factory.mktemp("spark-secure-kafka")) as k:
        yield k


def _options(k: SecureKafka) -> dict[str, str]:
    return {
        "kafka.bootstrap.servers": k.bootstrap("SASL_SSL"),
        "kafka.security.protocol": "SASL_SSL",
        "kafka.sasl.mechanism": "SCRAM-SHA-512",
        "kafka.sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
        f'required username="{USER}" password="{PASSWORD}";',
        "kafka.ssl.truststore.type": "PEM",
        "kafka.ssl.truststore.location": str(k.certs.ca),
    }


def test_read_through_sasl_ssl_with_java_settings(spark, kafka: SecureKafka) -> None:
    topic = f"spark-sec-{uuid.uuid4().hex[:8]}"
    config = {k[len("kafka.") :]: v for k, v in _options(kafka).items()}
    with kgroup.AdminClient(config) as admin:
        admin.create_topics([kgroup.NewTopic(topic, 2, 1)])[topic].result(30)
    producer = kgroup.Producer(config)
    for i in range(20):
        producer.produce(topic, key=f"k{i}", value=f"v{i}")
    assert producer.flush(30) == 0
    producer.close()

    options = {**_options(kafka), "subscribe": topic}
    # The driver's admin settings keep every security setting.
    admin_config = parse_read_options(options, batch=True).admin_config()
    assert admin_config["sasl.jaas.config"] == options["kafka.sasl.jaas.config"]
    assert admin_config["ssl.truststore.location"] == str(kafka.certs.ca)

    spark_udfs.register(spark)
    reader = spark.read.format("kgroup")
    for k, v in options.items():
        reader = reader.option(k, v)
    rows = reader.load().collect()
    assert sorted(r.value.decode() for r in rows) == sorted(f"v{i}" for i in range(20))
