//! The share group type of KIP-932 ("queues for Kafka"): membership of share groups in the
//! group coordinator, as Kafka 4.2's `GroupMetadataManager` serves ShareGroupHeartbeat and
//! ShareGroupDescribe (`modern/share/`; reference
//! `/work/shared/reference/kafka-kip932-share-groups.md` §1.1-1.3 and §2).
//!
//! A share group is a group of the coordinator whose [`part::SharePart`] is set (as a consumer
//! group's `ConsumerPart` is): members that name themselves (the client makes the member id),
//! a group epoch, a target assignment computed by the `simple` assignor over the group's
//! *initialized* partitions (many members may share a partition), and each member's
//! assignment, reconciled in one step (there is nothing to revoke). No static members, no
//! regular expressions, no client-side assignors, no rebalance timeout: a member's session is
//! its only timer. Its records are `__consumer_offsets` types 10-15 (`records.rs`), applied by
//! one path for heartbeats and loading (`part.rs`), undone when an append fails.
//!
//! - `heartbeat.rs`: ShareGroupHeartbeat (join, heartbeat, leave), the session timeout, and
//!   the host's reports on share state.
//! - `describe.rs`: ShareGroupDescribe.
//! - ListGroups, DescribeGroups, DeleteGroups and the other group types' apis treat share
//!   groups in their own modules (`list_groups.rs`, ...).
//!
//! # Share state: the contract with the host
//!
//! A partition is assignable to a share group's members only once its share state (its start
//! offset and delivery window, `__share_group_state`, Kafka's share coordinator) exists. The
//! coordinator keeps which partitions are so in the group's ShareGroupStatePartitionMetadata
//! record (type 15: InitializingTopics, InitializedTopics, DeletingTopics):
//!
//! 1. When a heartbeat finds partitions of a subscribed topic neither initialized nor
//!    initializing (or initializing for longer than
//!    `group.share.initialize.retry.interval.ms`), it writes record 15 with them under
//!    InitializingTopics. Once that append succeeds, the coordinator emits one
//!    `Effect::Other(ShareEffect::InitializeShareState { group_id, topic_id, partitions,
//!    state_epoch })` per topic, after the heartbeat's response (`state_epoch` is the group
//!    epoch; the start offset is "not decided", -1). A failed append emits nothing.
//! 2. The host creates that state (idempotently: it may be asked again after a retry
//!    interval), then calls `Coordinator::share_state_initialized(now, group_id, topic_id,
//!    partitions)`, which writes record 15 moving them to InitializedTopics (an
//!    `Effect::Append` to report as any other). If it cannot, it calls
//!    `share_state_initialize_failed(now, ...)`, which drops them from InitializingTopics so
//!    the next heartbeat asks again. Reports for a group that is gone or not a share group are
//!    ignored.
//! 3. The group's next heartbeat sees initialized partitions its target assignment lacks
//!    (Kafka's `initializedAssignmentPending`), bumps the group epoch and hands them out. So a
//!    new member's first assignment is empty and the partitions come one heartbeat later, as
//!    with Kafka.
//! 4. DeleteGroups on an Empty share group emits `ShareEffect::DeleteShareState { group_id,
//!    topic_id, partitions }` per topic of its initialized and initializing partitions, before
//!    the group's tombstones (Kafka deletes the state through its persister first; here the
//!    host does it, and nothing is reported back).
//!
//! 5. A deleted topic's share state is the host's to delete with the topic (Kafka's broker
//!    does it as the topic goes); the group forgets the topic at its next heartbeat, which
//!    writes record 15 without it.
//!
//! A member leaving or fenced releases no records here: the share-partition leader releases a
//! member's acquired records when its share session closes or its connection drops (reference
//! §3.6), which is the broker's, not the coordinator's.

pub(crate) mod describe;
pub(crate) mod heartbeat;
pub(crate) mod part;
pub mod records;

#[cfg(test)]
mod tests;
