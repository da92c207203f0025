# 0103_transactions and 0135_sasl_credentials (its share consumer sub-tests) create topics with
# replication factor 3, which one broker cannot give (Apache Kafka with one node refuses it too:
# INVALID_REPLICATION_FACTOR); nothing else in them depends on replicas. Applied to
# tests/0103-transactions.c and tests/0135-sasl_credentials.cpp before the test programs are
# built (README.md), it asks for one replica instead.
s/test_create_topic_wait_exists(\(p1\?\), \([a-z_]*\), \([a-z_0-9]*\), 3, 5000);/test_create_topic_wait_exists(\1, \2, \3, 1, 5000);/
