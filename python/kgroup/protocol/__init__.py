"""kgroup.protocol: the Kafka wire protocol (requests, responses and record batches)."""
