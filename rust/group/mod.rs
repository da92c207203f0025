//! The classic group coordinator: Kafka's consumer-group machinery (join, sync, heartbeat,
//! leave, offsets, admin) as a pure, deterministic state machine.
//!
//! The [`Coordinator`] reads no clock and does no I/O. A host (the broker) hands it requests
//! with the current time and a token, reports how the appends it asked for went, and calls
//! [`Coordinator::tick`] at [`Coordinator::next_deadline`]; it answers with [`Effect`]s:
//! responses to send (by token: parked JoinGroup and SyncGroup requests, and commits waiting on
//! their append, are answered later through the same effects) and record batches to append to
//! `__consumer_offsets`, whose records are Kafka's own ([`records`]). On start the host replays
//! that topic's partitions into it ([`Coordinator::load`]).
//!
//! - [`requests`] decodes a request frame of any version straight into its generated typed
//!   message (`protocol::typed`) and normalises older versions' shapes into a [`GroupRequest`];
//!   [`responses`] writes a [`GroupResponse`] as the response frame of that version.
//! - Each api is one module (`join_group.rs`, `sync_group.rs`, ...), opening with the versions
//!   it serves and what changed between them; `rebalance.rs` holds the mechanics they share,
//!   `load.rs` loading and unloading, `cleanup.rs` offset expiry, `pending.rs` what waits on an
//!   append.
//! - [`GroupState`] documents each state's actions and transitions.
//!
//! Behaviour, error codes and record formats are Kafka 3.9's (its Scala `GroupCoordinator`, and
//! its Java `GroupMetadataManager` where they differ only in structure); departures are named
//! where they are made.

mod api;
mod classic_group;
mod cleanup;
mod config;
mod coordinator;
mod delete_groups;
mod describe_groups;
mod heartbeat;
mod join_group;
mod leave_group;
mod list_groups;
mod load;
mod member;
mod name;
mod offset_commit;
mod offset_delete;
mod offset_fetch;
mod offsets;
mod pending;
mod rebalance;
pub mod records;
mod replay;
pub mod requests;
pub mod responses;
mod slab;
mod state;
mod sync_group;
mod timers;

#[cfg(test)]
mod tests;

pub use api::*;
pub use classic_group::CONSUMER_PROTOCOL_TYPE;
pub use config::{Config, NEW_MEMBER_JOIN_TIMEOUT_MS};
pub use coordinator::Coordinator;
pub use load::LoadStats;
pub use records::{partition_for, OffsetAndMetadata};
pub use state::GroupState;
