"""The broker's request handlers: one module per api, named as its definition in
``rust/protocol/messages/<api>.rs``. Each opens with the versions it serves and what changed
between them, and declares ``API_KEY``, ``VERSIONS`` (the range ApiVersions advertises) and
``handle(ctx)``, which returns the response body, an awaitable of it (a Fetch long poll, an
acks=all Produce waiting for its fsync), or None when no response is sent (acks=0). The group
apis' handlers return what the group coordinator writes instead: a whole response frame
(``bytes``), or a future of one (a parked JoinGroup).
"""

from __future__ import annotations

from types import ModuleType

from kgroup.broker.handlers import (
    alter_configs,
    api_versions,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_groups,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sync_group,
)

__all__ = ["HANDLERS"]

#: HANDLERS maps each api key the broker serves to its handler module.
HANDLERS: dict[int, ModuleType] = {
    int(m.API_KEY): m
    for m in (
        alter_configs,
        api_versions,
        create_partitions,
        create_topics,
        delete_groups,
        delete_records,
        delete_topics,
        describe_cluster,
        describe_configs,
        describe_groups,
        fetch,
        find_coordinator,
        heartbeat,
        incremental_alter_configs,
        init_producer_id,
        join_group,
        leave_group,
        list_groups,
        list_offsets,
        metadata,
        offset_commit,
        offset_delete,
        offset_fetch,
        offset_for_leader_epoch,
        produce,
        sync_group,
    )
}
