//! The consumer group type of KIP-848 (`group.protocol=consumer`): its members, their member
//! epochs and their reconciliation towards the group's target assignment, as Kafka 4.2's
//! group coordinator has them (`modern/consumer/`).
//!
//! The handlers extend the coordinator: `heartbeat.rs` (ConsumerGroupHeartbeat, leaving, the
//! session and rebalance timeouts, LeaveGroup on a consumer group) and `describe.rs`
//! (ConsumerGroupDescribe); `part.rs` is what a coordinator's group holds when it is a
//! consumer group, and the one path records change it through (heartbeats and loads alike).
//!
//! The pure parts they stand on:
//! - [`ConsumerMember`] and [`MemberState`] (`member.rs`): a member as the records
//!   `ConsumerGroupMemberMetadata` (type 5) and `ConsumerGroupCurrentMemberAssignment` (type 8)
//!   describe it.
//! - [`PartitionEpochs`] (`partition_epochs.rs`): which member epoch holds each partition of
//!   the group, the map that keeps a partition from having two owners.
//! - [`reconcile`] (`reconcile.rs`): one heartbeat's step of a member towards its target
//!   (Kafka's `CurrentAssignmentBuilder`), with each state's actions and transitions on
//!   [`MemberState`].
//! - [`validate_member_epoch`] (`fencing.rs`): which heartbeat epochs a known member may send.
//! - [`ConsumerGroup`] (`group.rs`): the group as plain data, its indexes, derived views
//!   (state, subscription type, preferred assignor) and the target assignment computation.
//! - [`records`]: the group's records of `__consumer_offsets` (types 3-8 and 16), read and
//!   written with Kafka's schemas.
//!
//! Imports run one way: `member` ← `partition_epochs`, `reconcile`, `fencing`; `member`,
//! `partition_epochs`, `records` ← `group`; `member` ← `records`; all of them may use
//! `crate::group::assignors`, never the reverse; only the handlers and `part` use the
//! coordinator's modules.

mod describe;
mod fencing;
mod group;
mod heartbeat;
mod member;
mod migration;
pub(crate) mod part;
mod partition_epochs;
mod reconcile;
pub mod records;

#[cfg(test)]
mod tests;

pub use fencing::validate_member_epoch;
pub use group::{
    ConsumerGroup, ConsumerGroupState, TargetAssignment, TargetAssignmentError, TargetChange,
    TopicInfo,
};
pub use member::{ClassicMemberMetadata, ClassicProtocol, ConsumerMember, MemberState};
pub use partition_epochs::{PartitionEpochConflict, PartitionEpochs};
pub use reconcile::{reconcile, Reconcile};

/// OwnedTopicPartitions is one topic of the `TopicPartitions` a ConsumerGroupHeartbeat request
/// reports: the partitions the client owns, as the request carries them.
pub use crate::protocol::typed::consumer_group_heartbeat::ConsumerGroupHeartbeatRequestTopicPartition as OwnedTopicPartitions;
