"""kgroup.client: kgroup's own Kafka client, with confluent-kafka's Python API and Kafka's
config names, for kgroup's broker or any Kafka-compatible cluster.

The network side of each client runs in a background thread of its own (:mod:`.runtime`);
:mod:`.connection` speaks the protocol to one broker, :mod:`.cluster` holds the metadata, the
connections and the group coordinators, :mod:`.config` parses Kafka's config keys.
"""

from kgroup.client.config import ClientConfig
from kgroup.client.producer import Producer

__all__ = ["ClientConfig"]
__all__ += ["Producer"]
