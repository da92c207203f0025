//! Pending: what waits on an append to `__consumer_offsets`, by what asked for it: an
//! OffsetCommit or a TxnOffsetCommit (offsets), the leader's assignment and a static member's
//! rejoin (the classic group type), a consumer or share group's records. The coordinator keeps one per outstanding append in the runtime and does it when
//! the host reports the outcome (`Coordinator::complete_append`).

use std::sync::Arc;

use super::api::ShareEffect;
use super::api::{GroupResponse, OffsetCommitResponse, Token, TxnOffsetCommitResponse};
use super::classic::member::Protocol;
use super::consumer::part::Undo;
use super::records::OffsetAndMetadata;
use super::share::part::Undo as ShareUndo;
use crate::assignors::fxhash::FxMap;

/// Pending is work waiting on an append: what to do when the host reports its outcome.
#[derive(Debug)]
pub(crate) enum Pending {
    /// Commit: an OffsetCommit's offsets; its response goes out when the append ends.
    Commit(Commit),
    /// TxnCommit: a TxnOffsetCommit's offsets, written in its producer's transaction; its
    /// response goes out when the append ends.
    TxnCommit(TxnCommit),
    /// Assignment: the leader's assignment of a generation; the group becomes Stable on success.
    Assignment {
        group: Arc<str>,
        uid: u64,
        generation: i32,
        assignment: FxMap<Arc<str>, Arc<[u8]>>,
    },
    /// StaticRejoin: a known static member rejoined a Stable group under a new member id without
    /// a rebalance; on failure the replacement is reverted.
    StaticRejoin(Box<StaticRejoin>),
    /// Consumer: a consumer group's records (a heartbeat's, or a member fenced by a timer).
    Consumer(Box<ConsumerWrite>),
    /// Share: a share group's records (a heartbeat's, a member fenced by its session timer, the
    /// host's report of initialized share state).
    Share(Box<ShareWrite>),
    /// Nothing waits (tombstones, an Empty group's metadata).
    Nothing,
}

/// ConsumerWrite is what waits on a consumer group's append: the heartbeat's response, and
/// what puts the group back if the append fails.
#[derive(Debug)]
pub(crate) struct ConsumerWrite {
    pub token: Option<Token>,
    pub group: Arc<str>,
    pub uid: u64,
    pub response: Option<GroupResponse>,
    pub undo: Vec<Undo>,
}

/// ShareWrite is what waits on a share group's append: the heartbeat's response, what puts
/// the group back if the append fails, and the share state to ask the host for once it
/// succeeds.
#[derive(Debug)]
pub(crate) struct ShareWrite {
    pub token: Option<Token>,
    pub group: Arc<str>,
    pub uid: u64,
    pub response: Option<GroupResponse>,
    pub undo: Vec<ShareUndo>,
    pub effects: Vec<ShareEffect>,
}

/// Commit is an OffsetCommit waiting on the append of its offsets.
#[derive(Debug)]
pub(crate) struct Commit {
    pub token: Token,
    pub group: Arc<str>,
    pub uid: u64,
    pub response: OffsetCommitResponse<'static>,
    /// offsets are (topic index, partition index in the response, topic, partition, offset).
    pub offsets: Vec<(usize, usize, Arc<str>, i32, OffsetAndMetadata)>,
}

/// TxnCommit is a TxnOffsetCommit waiting on the append of its offsets; they wait in the
/// group under `producer_id` from the moment the append is asked for.
#[derive(Debug)]
pub(crate) struct TxnCommit {
    pub token: Token,
    pub group: Arc<str>,
    pub uid: u64,
    pub producer_id: i64,
    pub response: TxnOffsetCommitResponse<'static>,
    /// written are the (topic index, partition index) in the response of the offsets written.
    pub written: Vec<(usize, usize)>,
}

/// StaticRejoin is what reverting or answering a static member's rejoin needs.
#[derive(Debug)]
pub(crate) struct StaticRejoin {
    pub token: Token,
    pub group: Arc<str>,
    pub uid: u64,
    pub instance_id: Arc<str>,
    pub old_member_id: Arc<str>,
    pub new_member_id: Arc<str>,
    pub old_protocols: Vec<Protocol>,
    pub old_rebalance_timeout_ms: i32,
    pub old_session_timeout_ms: i32,
    /// old_leader is the leader before the replacement (the pre-v9 answer's leader).
    pub old_leader: Option<Arc<str>>,
    /// skip_assignment: JoinGroup v9+, which can tell a leader to skip the assignment.
    pub skip_assignment: bool,
}
