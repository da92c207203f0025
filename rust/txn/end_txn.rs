//! EndTxn (26): v0-4, transaction protocol v1 (v5 and its epoch bump per transaction are
//! transaction protocol v2, not served yet). v2 answers PRODUCER_FENCED, which earlier versions
//! get as INVALID_PRODUCER_EPOCH (`responses.rs`).
//!
//! A commit or abort of an Ongoing transaction writes PrepareCommit or PrepareAbort, is
//! answered once that record is durable, then asks the host to write the markers
//! ([`WriteMarkers`](super::api::WriteMarkers)); once it reports them written
//! ([`Coordinator::markers_written`]) CompleteCommit or CompleteAbort is written. Aborts the
//! coordinator starts itself (a fencing InitProducerId, a timeout) go the same way.
//!
//! Kafka's `TransactionCoordinator.endTransactionWithTV1` and the completion of
//! `TransactionMarkerChannelManager`.

use super::api::{Effect, EndTxnRequest, EndTxnResponse, Token, TxnResponse};
use super::coordinator::Coordinator;
use super::metadata::Transit;
use super::pending::{EndReply, Pending};
use super::records;
use super::state::TxnState;
use crate::errors::ErrorCode;

impl Coordinator {
    fn answer_end(&mut self, token: Token, error: ErrorCode) {
        self.respond(
            token,
            TxnResponse::EndTxn(EndTxnResponse {
                error_code: error.code(),
                ..Default::default()
            }),
        );
    }

    /// answer_end_reply tells whoever waits on a decision how it went.
    fn answer_end_reply(&mut self, reply: EndReply, error: ErrorCode) {
        match reply {
            EndReply::EndTxn { token } => self.answer_end(token, error),
            EndReply::Init { token } => {
                // A fence whose abort is durable: the client retries (Kafka's
                // sendRetriableErrorCallback).
                let e = if error == ErrorCode::None {
                    ErrorCode::ConcurrentTransactions
                } else {
                    error
                };
                self.answer_init(token, e, -1, -1)
            }
            EndReply::Timeout => {}
        }
    }

    pub(super) fn end_txn(&mut self, token: Token, r: &EndTxnRequest<'_>) {
        let id = &*r.transactional_id;
        if id.is_empty() {
            return self.answer_end(token, ErrorCode::InvalidRequest);
        }
        if let Some(e) = self.gate(id) {
            return self.answer_end(token, e);
        }
        let now = self.now();
        let Some(m) = self.txns.get_mut(id) else {
            return self.answer_end(token, ErrorCode::InvalidProducerIdMapping);
        };
        let error = if m.producer_id != r.producer_id {
            ErrorCode::InvalidProducerIdMapping
        } else if r.producer_epoch != m.producer_epoch {
            ErrorCode::ProducerFenced
        } else if m.pending.is_some() {
            ErrorCode::ConcurrentTransactions
        } else {
            use TxnState::*;
            match (m.state, r.committed) {
                (Ongoing, commit) => {
                    let to = if commit { PrepareCommit } else { PrepareAbort };
                    let transit = m.prepare_abort_or_commit(to, now);
                    self.append_prepare(id, transit, EndReply::EndTxn { token }, false);
                    return;
                }
                (CompleteCommit, true) | (CompleteAbort, false) => ErrorCode::None,
                (PrepareCommit, true) | (PrepareAbort, false) => ErrorCode::ConcurrentTransactions,
                (Dead | PrepareEpochFence, _) => ErrorCode::UnknownServerError,
                _ => ErrorCode::InvalidTxnState,
            }
        };
        self.answer_end(token, error);
    }

    /// abort_fenced aborts the Ongoing transaction of `id` at the epoch `fence` bumped to
    /// (Kafka's `endTransaction(ABORT, isFromClient = false)` after
    /// `prepareFenceProducerEpoch`): the bumped epoch is taken at once, the abort written.
    pub(super) fn abort_fenced(&mut self, id: &str, fence: Transit, reply: EndReply) {
        let now = self.now();
        let m = self.txns.get_mut(id).expect("a fenced id");
        m.abandon();
        m.producer_epoch = fence.producer_epoch;
        m.last_producer_epoch = fence.last_producer_epoch;
        let transit = m.prepare_abort_or_commit(TxnState::PrepareAbort, now);
        self.append_prepare(id, transit, reply, true);
    }

    fn append_prepare(&mut self, id: &str, transit: Transit, reply: EndReply, fence: bool) {
        let uid = self.txns[id].uid;
        match records::key(id).and_then(|k| Ok((k, records::value(&transit)?))) {
            Ok((k, v)) => {
                self.append(
                    id,
                    vec![(k, Some(v))],
                    Pending::Prepare {
                        reply,
                        id: id.to_string(),
                        uid,
                        transit,
                        fence,
                    },
                );
            }
            Err(_) => {
                if let Some(m) = self.txns.get_mut(id) {
                    m.abandon();
                }
                self.answer_end_reply(reply, ErrorCode::UnknownServerError);
            }
        }
    }

    /// complete_prepare applies a durable decision, answers and asks for the markers; a
    /// failed fence is remembered so that the next one does not bump again.
    pub(super) fn complete_prepare(
        &mut self,
        reply: EndReply,
        id: &str,
        uid: u64,
        transit: Transit,
        fence: bool,
        error: ErrorCode,
    ) {
        let Some(m) = self.current(id, uid) else {
            return self.answer_end_reply(reply, ErrorCode::NotCoordinator);
        };
        if error != ErrorCode::None {
            m.abandon();
            if fence {
                m.has_failed_epoch_fence = true;
            }
            return self.answer_end_reply(reply, error);
        }
        m.complete(transit);
        self.answer_end_reply(reply, ErrorCode::None);
        self.emit_markers(id);
    }

    /// markers_written reports that every marker of `transactional_id`'s decided transaction
    /// (`producer_id` at `producer_epoch`, as [`WriteMarkers`](super::api::WriteMarkers) gave
    /// them) is written: the transaction's Complete record is appended. A report that matches
    /// no transaction waiting on its markers (a stale one, the id unloaded) does nothing.
    pub fn markers_written(
        &mut self,
        now: i64,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
    ) -> Vec<Effect> {
        let mut out = Vec::new();
        self.markers_written_into(now, transactional_id, producer_id, producer_epoch, &mut out);
        out
    }

    /// markers_written_into is [`Coordinator::markers_written`] appending to `out`.
    pub fn markers_written_into(
        &mut self,
        now: i64,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        out: &mut Vec<Effect>,
    ) {
        self.enter(now);
        let now = self.now();
        let id = transactional_id;
        if let Some(m) = self.txns.get_mut(id) {
            let awaited = m.state.is_prepare()
                && m.producer_id == producer_id
                && m.producer_epoch == producer_epoch
                && m.pending.is_none();
            if awaited {
                let transit = m.prepare_complete(now);
                self.append_complete(id, transit);
            }
        }
        self.runtime.drain_into(out);
    }

    fn append_complete(&mut self, id: &str, transit: Transit) {
        let uid = self.txns[id].uid;
        if let Ok((k, v)) = records::key(id).and_then(|k| Ok((k, records::value(&transit)?))) {
            self.append(
                id,
                vec![(k, Some(v))],
                Pending::Complete {
                    id: id.to_string(),
                    uid,
                    transit,
                },
            );
        }
    }

    /// complete_complete applies a durable Complete record. A failed append is retried while
    /// the coordinator is not available, the pending state kept (Kafka's
    /// `testPendingStateNotResetOnRetryAppend`); after any other error the transaction stays
    /// decided, and its markers are asked for again when the partition loads again.
    pub(super) fn complete_complete(
        &mut self,
        id: &str,
        uid: u64,
        transit: Transit,
        error: ErrorCode,
    ) {
        let Some(m) = self.current(id, uid) else {
            return;
        };
        match error {
            ErrorCode::None => m.complete(transit),
            ErrorCode::CoordinatorNotAvailable => self.append_complete(id, transit),
            _ => m.abandon(),
        }
    }

    /// abort_timed_out aborts every Ongoing transaction past its timeout, with no change
    /// pending, fencing its producer (Kafka's `abortTimedOutTransactions`: the timeout counts
    /// from the transaction's first partition).
    pub(super) fn abort_timed_out(&mut self) {
        let now = self.now();
        let due: Vec<String> = self
            .txns
            .values()
            .filter(|m| {
                m.state == TxnState::Ongoing
                    && m.pending.is_none()
                    && m.start_timestamp.saturating_add(m.timeout_ms as i64) < now
                    && self.gate(&m.transactional_id).is_none()
            })
            .map(|m| m.transactional_id.clone())
            .collect();
        for id in due {
            let m = self.txns.get_mut(&id).expect("listed");
            if let Some(fence) = m.prepare_fence() {
                self.abort_fenced(&id, fence, EndReply::Timeout);
            }
        }
    }
}
