//! Offsets: a group's committed offsets and the apis over them (OffsetCommit, OffsetFetch,
//! OffsetDelete, TxnOffsetCommit), beside the group types as Kafka 4.x's `OffsetMetadataManager` is: every group
//! type commits and fetches offsets the same way.
//!
//! - `offsets.rs`: one group's committed offsets and its commits still being appended.
//! - `offset_commit.rs`, `offset_fetch.rs`, `offset_delete.rs`, `txn_offset_commit.rs`: one
//!   module per api, each opening with the versions it serves; they extend the group-wide
//!   `Coordinator` with `impl` blocks. `txn_offset_commit.rs` also ends transactions
//!   (`Coordinator::end_transaction`).
//!
//! Offset expiry and deleted topics are the coordinator's periodic cleanup (`../cleanup.rs`).

mod offset_commit;
mod offset_delete;
mod offset_fetch;
mod txn_offset_commit;
// The folder is the offsets' area, the file one group's offsets (`Offsets`), as Kafka 4.x's
// `offsets/` beside `classic/`: the repeated name is the layout, not a nesting mistake.
#[allow(clippy::module_inception)]
pub(crate) mod offsets;
