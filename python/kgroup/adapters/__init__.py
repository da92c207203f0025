"""Adapters that let other Kafka clients use kgroup: partitioners (and assignors) in the
shapes kafka-python and confluent-kafka expect."""
