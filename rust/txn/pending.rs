//! Pending: what waits on an append to `__transaction_state`, and the AddPartitionsToTxn
//! requests waiting on some of theirs.

use super::api::Token;
use super::metadata::Transit;

/// Pending is the work an append's outcome completes. Each names its transactional id and the
/// `uid` of the metadata it changed: an append that finds the id gone or replaced (unloaded,
/// loaded again, expired) answers NOT_COORDINATOR and changes nothing.
#[derive(Debug)]
pub enum Pending {
    /// Init: InitProducerId's Empty record; answer the new producer id and epoch.
    Init {
        token: Token,
        id: String,
        uid: u64,
        transit: Transit,
    },
    /// Add: the Ongoing record of AddPartitionsToTxn or AddOffsetsToTxn.
    Add {
        reply: AddReply,
        id: String,
        uid: u64,
        transit: Transit,
    },
    /// Prepare: the PrepareCommit or PrepareAbort record; once durable, answer and write the
    /// markers. `fence` is set when it aborts a fenced producer's transaction.
    Prepare {
        reply: EndReply,
        id: String,
        uid: u64,
        transit: Transit,
        fence: bool,
    },
    /// Complete: the CompleteCommit or CompleteAbort record after the markers.
    Complete {
        id: String,
        uid: u64,
        transit: Transit,
    },
    /// Expire: the tombstones of expired ids, by (id, uid, epoch when expired).
    Expire { ids: Vec<(String, u64, i16)> },
}

/// AddReply is who an Add answers.
#[derive(Debug, Clone, Copy)]
pub enum AddReply {
    /// Batch: entry `slot` of the AddPartitionsToTxn request of `token`.
    Batch { token: Token, slot: usize },
    /// Offsets: the AddOffsetsToTxn request of `token`.
    Offsets { token: Token },
}

/// EndReply is who a Prepare answers.
#[derive(Debug, Clone, Copy)]
pub enum EndReply {
    /// EndTxn: the client's EndTxn of `token`.
    EndTxn { token: Token },
    /// Init: an InitProducerId that fenced an ongoing transaction: CONCURRENT_TRANSACTIONS once
    /// the abort is durable (the client retries and bumps again).
    Init { token: Token },
    /// Timeout: nobody; the transaction timed out.
    Timeout,
}

/// Slot is one transaction of an AddPartitionsToTxn request: its id, its partitions as asked
/// (topic, partitions), and once known the error of each.
#[derive(Debug, Clone)]
pub struct Slot {
    pub id: String,
    pub topics: Vec<(String, Vec<i32>)>,
    pub errors: Option<Vec<Vec<i16>>>,
}

/// Batch is an AddPartitionsToTxn request answered once every slot is.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub slots: Vec<Slot>,
}
