//! The classic group type: Kafka's classic rebalance protocol (JoinGroup, SyncGroup, Heartbeat,
//! LeaveGroup), as Kafka 4.x's `group-coordinator/.../classic/` holds it.
//!
//! - `classic_group.rs`: a group's membership, generation and protocol
//!   ([`Group`](classic_group::Group)); `member.rs` its members; `state.rs`
//!   [`GroupState`](state::GroupState), each state's actions and transitions.
//! - One module per api (`join_group.rs`, `sync_group.rs`, `heartbeat.rs`, `leave_group.rs`),
//!   each opening with the versions it serves; `rebalance.rs` the mechanics they share (join and
//!   sync phases, session timeouts, storing the group); `load.rs` a group restored from its
//!   record and its requests answered when its partition is given up.
//!
//! The api modules extend the group-wide [`Coordinator`](crate::group::coordinator::Coordinator)
//! with `impl` blocks, as the group-wide modules do.

pub(crate) mod classic_group;
mod heartbeat;
mod join_group;
pub(crate) mod leave_group;
pub(crate) mod load;
pub(crate) mod member;
pub(crate) mod rebalance;
pub(crate) mod state;
mod sync_group;
