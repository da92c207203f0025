//! InitProducerId (22) with a transactional id: v0-5 (v6's two-phase commit is unstable in
//! Kafka 4.1 and not served). v3 adds the producer id and epoch a producer already has
//! (KIP-360: a bump that keeps its id); v4 answers PRODUCER_FENCED, which earlier versions get
//! as INVALID_PRODUCER_EPOCH (`responses.rs`). Without a transactional id the broker answers
//! itself.
//!
//! Kafka's `TransactionCoordinator.handleInitProducerId` and `prepareInitProducerIdTransit`.

use super::api::{InitProducerIdRequest, InitProducerIdResponse, Token, TxnResponse};
use super::coordinator::{Coordinator, NextProducerId};
use super::metadata::{is_epoch_exhausted, Transit, TxnMetadata, NO_PRODUCER_EPOCH};
use super::pending::{EndReply, Pending};
use super::records;
use super::state::TxnState;
use crate::errors::ErrorCode;

impl Coordinator {
    /// answer_init answers an InitProducerId.
    pub(super) fn answer_init(&mut self, token: Token, error: ErrorCode, pid: i64, epoch: i16) {
        let (pid, epoch) = if error == ErrorCode::None {
            (pid, epoch)
        } else {
            (-1, -1)
        };
        self.respond(
            token,
            TxnResponse::InitProducerId(InitProducerIdResponse {
                error_code: error.code(),
                producer_id: pid,
                producer_epoch: epoch,
                ..Default::default()
            }),
        );
    }

    pub(super) fn init_producer_id(
        &mut self,
        token: Token,
        r: &InitProducerIdRequest<'_>,
        next_producer_id: &mut NextProducerId<'_>,
    ) {
        let fail = |c: &mut Coordinator, e: ErrorCode| c.answer_init(token, e, -1, -1);
        let Some(id) = r.transactional_id.as_deref() else {
            // The broker answers idempotent producers itself; here, a request without an id.
            return fail(self, ErrorCode::InvalidRequest);
        };
        if id.is_empty() {
            return fail(self, ErrorCode::InvalidRequest);
        }
        // KafkaApis: exactly one of the producer id and epoch given is INVALID_REQUEST.
        if (r.producer_id == -1) != (r.producer_epoch == -1) {
            return fail(self, ErrorCode::InvalidRequest);
        }
        if r.transaction_timeout_ms <= 0
            || r.transaction_timeout_ms as i64 > self.config.max_timeout_ms
        {
            return fail(self, ErrorCode::InvalidTransactionTimeout);
        }
        if let Some(e) = self.gate(id) {
            return fail(self, e);
        }
        let now = self.now();
        if !self.txns.contains_key(id) {
            let pid = match next_producer_id() {
                Ok(p) if p >= 0 => p,
                Ok(_) => return fail(self, ErrorCode::UnknownServerError),
                Err(e) => return fail(self, e),
            };
            let uid = self.new_uid();
            self.txns.insert(
                id.to_string(),
                TxnMetadata::new(id, uid, pid, r.transaction_timeout_ms, now),
            );
        }
        let expected = (r.producer_id != -1).then_some((r.producer_id, r.producer_epoch));
        let timeout = r.transaction_timeout_ms;
        let m = self.txns.get_mut(id).expect("just checked");
        let valid = |m: &TxnMetadata, (pid, epoch): (i64, i16)| {
            m.producer_epoch == NO_PRODUCER_EPOCH
                || pid == m.producer_id
                || (pid == m.prev_producer_id && is_epoch_exhausted(epoch))
        };
        if m.pending.is_some() {
            return fail(self, ErrorCode::ConcurrentTransactions);
        }
        if let Some(e) = expected {
            if !valid(m, e) {
                return fail(self, ErrorCode::ProducerFenced);
            }
        }
        match m.state {
            TxnState::PrepareAbort | TxnState::PrepareCommit => {
                fail(self, ErrorCode::ConcurrentTransactions)
            }
            TxnState::Empty | TxnState::CompleteAbort | TxnState::CompleteCommit => {
                let transit = if is_epoch_exhausted(m.producer_epoch)
                    && expected.is_none_or(|(_, e)| e == m.producer_epoch)
                {
                    let pid = match next_producer_id() {
                        Ok(p) if p >= 0 => p,
                        Ok(_) => return fail(self, ErrorCode::UnknownServerError),
                        Err(e) => return fail(self, e),
                    };
                    let m = self.txns.get_mut(id).expect("just checked");
                    m.prepare_rotation(pid, timeout, now, expected.is_some())
                } else {
                    match m.prepare_increment_epoch(timeout, expected.map(|e| e.1), now) {
                        Some(t) => t,
                        None => return fail(self, ErrorCode::ProducerFenced),
                    }
                };
                self.append_init(token, id, transit);
            }
            TxnState::Ongoing => {
                // Fence the old producer and abort its transaction; the bumped epoch is never
                // returned: the answer is CONCURRENT_TRANSACTIONS, and the retry bumps again.
                let Some(fence) = m.prepare_fence() else {
                    return fail(self, ErrorCode::ProducerFenced);
                };
                self.abort_fenced(id, fence, EndReply::Init { token });
            }
            TxnState::Dead | TxnState::PrepareEpochFence => {
                // Never a current state (Kafka throws IllegalStateException).
                fail(self, ErrorCode::UnknownServerError)
            }
        }
    }

    /// append_init writes InitProducerId's Empty record.
    fn append_init(&mut self, token: Token, id: &str, transit: Transit) {
        let uid = self.txns[id].uid;
        match records::key(id).and_then(|k| Ok((k, records::value(&transit)?))) {
            Ok((k, v)) => {
                self.append(
                    id,
                    vec![(k, Some(v))],
                    Pending::Init {
                        token,
                        id: id.to_string(),
                        uid,
                        transit,
                    },
                );
            }
            Err(_) => {
                if let Some(m) = self.txns.get_mut(id) {
                    m.abandon();
                }
                self.answer_init(token, ErrorCode::UnknownServerError, -1, -1);
            }
        }
    }

    /// complete_init answers an InitProducerId once its record's append ended.
    pub(super) fn complete_init(
        &mut self,
        token: Token,
        id: &str,
        uid: u64,
        transit: Transit,
        error: ErrorCode,
    ) {
        let Some(m) = self.current(id, uid) else {
            return self.answer_init(token, ErrorCode::NotCoordinator, -1, -1);
        };
        if error != ErrorCode::None {
            m.abandon();
            return self.answer_init(token, error, -1, -1);
        }
        let (pid, epoch) = (transit.producer_id, transit.producer_epoch);
        m.complete(transit);
        self.answer_init(token, ErrorCode::None, pid, epoch);
    }
}
