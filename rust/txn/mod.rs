//! The transaction coordinator: Kafka's transaction coordinator (InitProducerId with a
//! transactional id, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, DescribeTransactions,
//! ListTransactions, and the produce path's verification) as a pure, deterministic state
//! machine over `__transaction_state`, on the shared coordinator runtime
//! ([`crate::coordinator`]), as the group coordinator is.
//!
//! The [`Coordinator`] reads no clock and does no I/O, and allocates no producer id itself: a
//! host hands it requests with the current time, a token and a supplier of fresh producer ids;
//! reports how the appends it asked for went; writes the markers it asks for
//! ([`WriteMarkers`]) and reports them written ([`Coordinator::markers_written`]); and calls
//! [`Coordinator::tick`] at [`Coordinator::next_deadline`]. Its records are Kafka's own
//! ([`records`]); on start the host replays `__transaction_state`'s partitions into it
//! ([`Coordinator::load`]).
//!
//! Transaction protocol v1 (KIP-98, with KIP-360's epoch bumps and KIP-890 part 1's
//! verification), as librdkafka and Java clients without `transaction.version` 2 use it.
//! Behaviour and error codes are Kafka 4.1's (`TransactionCoordinator.scala`,
//! `TransactionMetadata.scala`, `TransactionStateManager.scala`).
//!
//! - `state.rs`: [`TxnState`], each state's actions and transitions.
//! - `metadata.rs`: [`TxnMetadata`] per transactional id and its two-step changes.
//! - `coordinator.rs`: the [`Coordinator`], its timers, what the handlers share.
//! - one module per api: `init_producer_id.rs`, `add_partitions.rs` (with AddOffsetsToTxn and
//!   [`Coordinator::verify`]), `end_txn.rs` (with the markers and the timeout aborts),
//!   `describe.rs` (with ListTransactions); `cleanup.rs` expires idle ids; `load.rs` loads (over `replay.rs`).
//! - [`requests`] and [`responses`]: frames in and out, with the version rules.

mod add_partitions;
pub mod api;
mod cleanup;
mod config;
mod coordinator;
mod describe;
mod end_txn;
mod init_producer_id;
mod load;
pub mod metadata;
mod pending;
pub mod records;
mod replay;
pub mod requests;
pub mod responses;
mod state;

#[cfg(test)]
mod tests;

pub use add_partitions::OFFSETS_TOPIC;
pub use api::*;
pub use config::Config;
pub use coordinator::{Coordinator, NextProducerId};
pub use load::LoadStats;
pub use metadata::TxnMetadata;
pub use state::TxnState;
