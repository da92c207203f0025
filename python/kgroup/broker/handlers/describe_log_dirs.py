"""DescribeLogDirs: v0-4. Each log directory of the broker (``log.dirs``), the size of the
partitions it holds, and its error: KAFKA_STORAGE_ERROR while writes to it fail or one of its
logs is offline (``kgroup.broker.logdirs``), still with its partitions. v1 changes throttling;
v2 is flexible; v3 adds a top-level error code (0: no authorization here); v4 each directory's
total and usable bytes (its filesystem's, as Kafka reports them). Null topics ask for every
partition; named ones only those listed, unknown ones left out, as Kafka does. The offset lag
is 0: every log here is a current replica, its end the high watermark.

With an authorizer, DESCRIBE on the cluster, else CLUSTER_AUTHORIZATION_FAILED and no
directory (Kafka's KafkaApis.handleDescribeLogDirsRequest).
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

from kgroup import errors
from kgroup.acl import CLUSTER_NAME, AclOperation, ResourceType
from kgroup.protocol import ApiKey

if TYPE_CHECKING:
    from kgroup.broker.context import RequestContext
    from kgroup.broker.topics import Partition

API_KEY = ApiKey.DESCRIBE_LOG_DIRS
VERSIONS = (0, 4)


def handle(ctx: RequestContext) -> dict[str, Any]:
    topics = ctx.state.topics
    if ctx.state.authorizer is not None and not ctx.authorize(
        AclOperation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME
    ):
        # Kafka's handleDescribeLogDirsRequest: DESCRIBE on the cluster, else no directory.
        return {
            "throttle_time_ms": 0,
            "error_code": errors.ClusterAuthorizationFailed.code,
            "results": [],
        }
    wanted: list[Partition] = []
    if ctx.request.body.topics is None:
        wanted = list(topics.partitions())
    else:
        for t in ctx.request.body.topics:
            topic = topics.by_name.get(t.topic)
            if topic is None:
                continue
            wanted += [topic.partitions[i] for i in t.partitions if 0 <= i < len(topic.partitions)]
    by_dir: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for p in wanted:
        by_dir[p.dir.id][p.topic.name].append(
            {
                "partition_index": p.index,
                "partition_size": p.log.size,
                "offset_lag": 0,
                "is_future_key": False,
            }
        )
    results = []
    for d in topics.log_dirs:
        total, usable = d.space()
        results.append(
            {
                "error_code": errors.KafkaStorageError.code if d.in_error else 0,
                "log_dir": str(d.path.absolute()),
                "topics": [
                    {"name": name, "partitions": parts}
                    for name, parts in sorted(by_dir[d.id].items())
                ],
                "total_bytes": total,
                "usable_bytes": usable,
            }
        )
    return {"throttle_time_ms": 0, "error_code": 0, "results": results}
