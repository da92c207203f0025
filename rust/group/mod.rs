//! The group coordinator: Kafka's consumer-group machinery (join, sync, heartbeat, leave,
//! offsets, admin) as a pure, deterministic state machine over `__consumer_offsets`.
//!
//! The [`Coordinator`] reads no clock and does no I/O. A host (the broker) hands it requests
//! with the current time and a token, reports how the appends it asked for went, and calls
//! [`Coordinator::tick`] at [`Coordinator::next_deadline`]; it answers with [`Effect`]s:
//! responses to send (by token: parked JoinGroup and SyncGroup requests, and commits waiting on
//! their append, are answered later through the same effects) and record batches to append to
//! `__consumer_offsets`, whose records are Kafka's own ([`records`]). On start the host replays
//! that topic's partitions into it ([`Coordinator::load`]). The clock, timers, appends and
//! loading are the shared coordinator runtime's ([`crate::coordinator`]).
//!
//! Laid out as Kafka 4.x's `group-coordinator`: what is the coordinator's whatever the group
//! type here, each group type in its folder, offsets beside them.
//!
//! - Here: the [`Coordinator`] (`coordinator.rs`) and what it holds (`pending.rs`: the work
//!   waiting on appends; `timers.rs`: its timers' keys; `replay.rs`: a loading partition), the
//!   typed requests and responses (`api.rs`; [`requests`] decodes a frame of any version
//!   straight into its generated typed message and normalises older versions' shapes into a
//!   [`GroupRequest`], [`responses`] writes a [`GroupResponse`] as the frame of that version),
//!   `__consumer_offsets` records, configuration, loading and unloading (`load.rs`), offset
//!   expiry and deleted topics (`cleanup.rs`), the admin apis over every group type
//!   (`describe_groups.rs`, `list_groups.rs`, `delete_groups.rs`), and what a test harness
//!   reads and does beyond the apis (`inspect.rs`: groups as plain data, a member's session
//!   ended now).
//! - `classic/`: the classic group type (JoinGroup, SyncGroup, Heartbeat, LeaveGroup): the
//!   group and its members, [`GroupState`] with each state's actions and transitions, one module
//!   per api, and the rebalance mechanics they share.
//! - `offsets/`: a group's committed offsets, and OffsetCommit, OffsetFetch, OffsetDelete.
//! - `consumer/` (KIP-848, in progress): the consumer group type. Built so far: the member
//!   ([`consumer::ConsumerMember`], [`consumer::MemberState`]), the group's partition epochs,
//!   reconciliation towards a target assignment and member epoch fencing, as pure functions.
//!   To come: the group, ConsumerGroupHeartbeat and ConsumerGroupDescribe over the same
//!   coordinator, offsets and runtime; its records (`__consumer_offsets` keys 3 and up) replay
//!   through `replay.rs`, where they are skipped today.
//! - `share/` (KIP-932): the share group type: ShareGroupHeartbeat, ShareGroupDescribe, its
//!   records (types 10-15) and the share-state effects it asks of the host (see its doc).
//! - `assignors/`: the server-side assignors of consumer groups, `uniform` and `range`; the
//!   client-side ones are `crate::assignors`.
//!
//! Each api is one module opening with the versions it serves and what changed between them.
//! The api modules extend [`Coordinator`] with `impl` blocks; `coordinator.rs` imports none of
//! them, so no two modules import each other (`crate::module_cycles` checks it).
//!
//! Behaviour, error codes and record formats are Kafka 3.9's (its Scala `GroupCoordinator`, and
//! its Java `GroupMetadataManager` where they differ only in structure); departures are named
//! where they are made.

mod api;
pub mod assignors;
mod classic;
mod cleanup;
mod config;
pub mod consumer;
mod coordinator;
mod delete_groups;
mod describe_groups;
mod inspect;
mod list_groups;
mod load;
mod name;
mod offsets;
mod pending;
pub mod records;
mod replay;
pub mod requests;
pub mod responses;
pub mod share;
mod slab;
mod timers;

#[cfg(test)]
mod tests;

pub use api::*;
pub use classic::classic_group::CONSUMER_PROTOCOL_TYPE;
pub use classic::state::GroupState;
pub use config::{Config, GroupConfig, NEW_MEMBER_JOIN_TIMEOUT_MS};
pub use coordinator::Coordinator;
pub use inspect::{GroupKind, GroupView, MemberView};
pub use load::LoadStats;
pub use records::{partition_for, OffsetAndMetadata};
