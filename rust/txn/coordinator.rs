//! Coordinator: the transaction coordinator of every transactional id of one broker, as a pure
//! state machine over `__transaction_state`. The host hands it requests, append outcomes,
//! written markers and the time; it answers with effects. Its clock, timers, appends and
//! loading partitions are the shared runtime's ([`crate::coordinator::Runtime`]).
//!
//! The handlers live one module per api beside this one (`init_producer_id.rs`,
//! `add_partitions.rs` with AddOffsetsToTxn and verification, `end_txn.rs` with the markers,
//! `describe.rs` with ListTransactions), the timers' work in `cleanup.rs`, loading in `load.rs`;
//! they extend [`Coordinator`] with `impl` blocks and this module imports none of them.

use std::collections::BTreeMap;

use super::api::{AppendToken, Effect, Token, TxnRequest, TxnResponse, WriteMarkers};
use super::config::Config;
use super::metadata::TxnMetadata;
use super::pending::{Batch, Pending};
use super::replay::LoadState;
use super::state::TxnState;
use crate::assignors::fxhash::FxMap;
use crate::coordinator::appends::Records;
use crate::coordinator::partition::partition_for;
use crate::coordinator::runtime;
use crate::coordinator::timers::{Owners, Timer};
use crate::errors::{ErrorCode, Result};

/// TimerKey names the coordinator's two periodic timers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKey {
    /// Abort: `transaction.abort.timed.out.transaction.cleanup.interval.ms`.
    Abort,
    /// Expire: `transaction.remove.expired.transaction.cleanup.interval.ms`.
    Expire,
}

/// Runtime is the coordinator runtime as the transaction coordinator plugs into it.
pub(super) type Runtime = runtime::Runtime<TimerKey, TxnResponse, Pending, LoadState, WriteMarkers>;

/// NextProducerId supplies fresh producer ids (the host's persistent counter, which never
/// hands out one twice); an error answers the request that needed one.
pub type NextProducerId<'a> = dyn FnMut() -> std::result::Result<i64, ErrorCode> + 'a;

/// Coordinator is the transaction coordinator. Deterministic: the same calls with the same
/// times and producer ids give the same effects. Not thread-safe; a host serialises its calls.
///
/// Calls take the current time (`now`, ms); a time earlier than one seen before counts as the
/// later one. Each call first fires the timers that are due, then does its work.
pub struct Coordinator {
    pub(super) config: Config,
    /// txns are the transactional ids' metadata, by id.
    pub(super) txns: BTreeMap<String, TxnMetadata>,
    pub(super) runtime: Runtime,
    pub(super) next_uid: u64,
    pub(super) abort_timer: Timer,
    pub(super) expire_timer: Timer,
    /// topics are the broker's topics with their partition counts; None: every topic exists.
    pub(super) topics: Option<FxMap<String, i32>>,
    /// coordinator_epochs are the loaded partitions' epochs, stamped on their markers (0 for a
    /// partition never loaded).
    pub(super) coordinator_epochs: BTreeMap<i32, i32>,
    /// batches are the AddPartitionsToTxn requests waiting on appends, by token.
    pub(super) batches: FxMap<Token, Batch>,
}

struct TimerOwners<'a> {
    abort: &'a mut Timer,
    expire: &'a mut Timer,
}

impl Owners<TimerKey> for TimerOwners<'_> {
    fn timer(&mut self, key: TimerKey) -> Option<&mut Timer> {
        Some(match key {
            TimerKey::Abort => self.abort,
            TimerKey::Expire => self.expire,
        })
    }
}

impl Coordinator {
    /// new is a coordinator with `config`, serving every partition and holding no id.
    pub fn new(config: Config) -> Coordinator {
        Coordinator {
            config,
            txns: BTreeMap::new(),
            runtime: Runtime::default(),
            next_uid: 1,
            abort_timer: Timer::default(),
            expire_timer: Timer::default(),
            topics: None,
            coordinator_epochs: BTreeMap::new(),
            batches: FxMap::default(),
        }
    }

    /// config is the coordinator's configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// partition_for is the partition of `__transaction_state` that holds `transactional_id`.
    pub fn partition_for(&self, transactional_id: &str) -> i32 {
        partition_for(transactional_id, self.config.num_partitions)
    }

    /// handle serves one request; `token` comes back with its response, now or once the
    /// appends it waits on are reported. `next_producer_id` is called for each producer id the
    /// request needs (InitProducerId of a new id, or of an exhausted epoch).
    pub fn handle(
        &mut self,
        now: i64,
        token: Token,
        request: &TxnRequest<'_>,
        next_producer_id: &mut NextProducerId<'_>,
    ) -> Vec<Effect> {
        let mut out = Vec::new();
        self.handle_into(now, token, request, next_producer_id, &mut out);
        out
    }

    /// handle_into is [`Coordinator::handle`] appending the effects to `out`.
    pub fn handle_into(
        &mut self,
        now: i64,
        token: Token,
        request: &TxnRequest<'_>,
        next_producer_id: &mut NextProducerId<'_>,
        out: &mut Vec<Effect>,
    ) {
        self.enter(now);
        match request {
            TxnRequest::InitProducerId(_, r) => self.init_producer_id(token, r, next_producer_id),
            TxnRequest::AddPartitionsToTxn(v, r) => self.add_partitions_to_txn(token, *v, r),
            TxnRequest::AddOffsetsToTxn(_, r) => self.add_offsets_to_txn(token, r),
            TxnRequest::EndTxn(_, r) => self.end_txn(token, r),
            TxnRequest::DescribeTransactions(_, r) => self.describe_transactions(token, r),
            TxnRequest::ListTransactions(_, r) => self.list_transactions(token, r),
        }
        self.runtime.drain_into(out);
    }

    /// appended reports the outcome of the [`Effect::Append`] of `token`: `error` is NONE when
    /// the records are durable, else the storage error, mapped to what the waiting request is
    /// answered as Kafka's `TransactionStateManager.appendTransactionToLog` maps it. An unknown
    /// or already reported token is
    /// [`Error::InvalidArgument`](crate::errors::Error::InvalidArgument).
    pub fn appended(
        &mut self,
        now: i64,
        token: AppendToken,
        error: ErrorCode,
    ) -> Result<Vec<Effect>> {
        let mut out = Vec::new();
        self.appended_into(now, token, error, &mut out)?;
        Ok(out)
    }

    /// appended_into is [`Coordinator::appended`] appending the effects to `out`.
    pub fn appended_into(
        &mut self,
        now: i64,
        token: AppendToken,
        error: ErrorCode,
        out: &mut Vec<Effect>,
    ) -> Result<()> {
        let pending = self.runtime.appends.take(token)?;
        self.enter(now);
        let error = append_error(error);
        match pending {
            Pending::Init {
                token,
                id,
                uid,
                transit,
            } => self.complete_init(token, &id, uid, transit, error),
            Pending::Add {
                reply,
                id,
                uid,
                transit,
            } => self.complete_add(reply, &id, uid, transit, error),
            Pending::Prepare {
                reply,
                id,
                uid,
                transit,
                fence,
            } => self.complete_prepare(reply, &id, uid, transit, fence, error),
            Pending::Complete { id, uid, transit } => {
                self.complete_complete(&id, uid, transit, error)
            }
            Pending::Expire { ids } => self.complete_expire(ids, error),
        }
        self.runtime.drain_into(out);
        Ok(())
    }

    /// tick fires every timer due at `now`, and hands over effects a load queued.
    pub fn tick(&mut self, now: i64) -> Vec<Effect> {
        let mut out = Vec::new();
        self.tick_into(now, &mut out);
        out
    }

    /// tick_into is [`Coordinator::tick`] appending the effects to `out`.
    pub fn tick_into(&mut self, now: i64, out: &mut Vec<Effect>) {
        self.enter(now);
        self.runtime.drain_into(out);
    }

    /// next_deadline is when the next timer is due (ms), `i64::MIN` when a load queued
    /// effects (markers to write again) that a tick hands over, None before the first call.
    pub fn next_deadline(&mut self) -> Option<i64> {
        if self.runtime.has_effects() {
            return Some(i64::MIN);
        }
        self.runtime.timers.next_deadline(&mut TimerOwners {
            abort: &mut self.abort_timer,
            expire: &mut self.expire_timer,
        })
    }

    /// set_topics gives the broker's topics with their partition counts, against which
    /// AddPartitionsToTxn checks partitions (UNKNOWN_TOPIC_OR_PARTITION); None checks nothing.
    pub fn set_topics<'a>(&mut self, topics: Option<impl IntoIterator<Item = (&'a str, i32)>>) {
        self.topics = topics.map(|t| t.into_iter().map(|(n, c)| (n.to_string(), c)).collect());
    }

    /// transaction is a transactional id's metadata, None when the coordinator has none.
    pub fn transaction(&self, transactional_id: &str) -> Option<&TxnMetadata> {
        self.txns.get(transactional_id)
    }

    /// transactions are every transactional id's metadata, by id (Dead ones included: the
    /// caller filters as DescribeTransactions does).
    pub fn transactions(&self) -> impl Iterator<Item = &TxnMetadata> + '_ {
        self.txns.values()
    }

    /// transaction_count is the number of transactional ids held.
    pub fn transaction_count(&self) -> usize {
        self.txns.len()
    }

    /// pending_appends is the number of appends whose outcome is not reported yet.
    pub fn pending_appends(&self) -> usize {
        self.runtime.appends.len()
    }

    // -----------------------------------------------------------------------------------------
    // internals shared by the handlers

    /// enter advances the clock, arming the periodic timers at the first call, and fires what
    /// is due.
    pub(super) fn enter(&mut self, now: i64) {
        if self.runtime.advance(now) {
            let now = self.runtime.now();
            let Coordinator {
                runtime,
                abort_timer,
                expire_timer,
                config,
                ..
            } = self;
            runtime.timers.set(
                abort_timer,
                TimerKey::Abort,
                now.saturating_add(config.abort_interval_ms),
            );
            runtime.timers.set(
                expire_timer,
                TimerKey::Expire,
                now.saturating_add(config.remove_interval_ms),
            );
        }
        let now = self.runtime.now();
        while let Some(key) = self.runtime.timers.pop_due(
            now,
            &mut TimerOwners {
                abort: &mut self.abort_timer,
                expire: &mut self.expire_timer,
            },
        ) {
            let (timer, interval) = match key {
                TimerKey::Abort => {
                    self.abort_timed_out();
                    (&mut self.abort_timer, self.config.abort_interval_ms)
                }
                TimerKey::Expire => {
                    self.expire_ids();
                    (&mut self.expire_timer, self.config.remove_interval_ms)
                }
            };
            self.runtime
                .timers
                .set(timer, key, now.saturating_add(interval));
        }
    }

    /// now is the coordinator's clock.
    #[inline]
    pub(super) fn now(&self) -> i64 {
        self.runtime.now()
    }

    /// respond queues a response.
    #[inline]
    pub(super) fn respond(&mut self, token: Token, response: TxnResponse) {
        self.runtime.respond(token, response);
    }

    /// gate is what a request for `transactional_id` is answered instead of being served:
    /// COORDINATOR_LOAD_IN_PROGRESS while its partition loads, NOT_COORDINATOR once unloaded.
    pub(super) fn gate(&self, transactional_id: &str) -> Option<ErrorCode> {
        if self.runtime.partitions.all_served() {
            return None;
        }
        self.runtime
            .partitions
            .error(self.partition_for(transactional_id))
    }

    /// append queues an append of `records` to the partition of `transactional_id`.
    pub(super) fn append(
        &mut self,
        transactional_id: &str,
        records: Records,
        pending: Pending,
    ) -> AppendToken {
        let partition = self.partition_for(transactional_id);
        self.runtime.append(partition, records, pending)
    }

    /// coordinator_epoch is the epoch of the partition holding `transactional_id`.
    pub(super) fn coordinator_epoch(&self, transactional_id: &str) -> i32 {
        self.coordinator_epochs
            .get(&self.partition_for(transactional_id))
            .copied()
            .unwrap_or(0)
    }

    /// current is the metadata of `id` if it is still the one `uid` names.
    pub(super) fn current(&mut self, id: &str, uid: u64) -> Option<&mut TxnMetadata> {
        self.txns.get_mut(id).filter(|m| m.uid == uid)
    }

    /// new_uid is a fresh metadata uid.
    pub(super) fn new_uid(&mut self) -> u64 {
        let u = self.next_uid;
        self.next_uid += 1;
        u
    }

    /// emit_markers asks the host to write the markers of `id`'s decided transaction. Unlike
    /// Kafka, which sets the Complete state pending while its markers are out, the id keeps no
    /// pending state until the host reports them written: so an EndTxn of the other result is
    /// answered INVALID_TXN_STATE meanwhile (Kafka's state table) rather than
    /// CONCURRENT_TRANSACTIONS; every other request is answered the same either way (PrepareX
    /// is concurrent for them).
    pub(super) fn emit_markers(&mut self, id: &str) {
        let epoch = self.coordinator_epoch(id);
        let Some(m) = self.txns.get(id) else {
            return;
        };
        let markers = WriteMarkers {
            transactional_id: id.to_string(),
            producer_id: m.producer_id,
            producer_epoch: m.producer_epoch,
            commit: m.state == TxnState::PrepareCommit,
            coordinator_epoch: epoch,
            partitions: m.partitions.iter().cloned().collect(),
        };
        self.runtime.emit(markers);
    }

    /// check_invariants panics unless every id's metadata holds together (tests).
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        for (id, m) in &self.txns {
            assert_eq!(&m.transactional_id, id);
            assert_ne!(
                m.state,
                TxnState::PrepareEpochFence,
                "{id}: fence is never current"
            );
            assert_ne!(m.state, TxnState::Dead, "{id}: Dead ids are dropped");
            assert!(m.producer_id >= 0, "{id}: producer id");
            if m.state != TxnState::Empty {
                // Only an id whose first InitProducerId failed has no epoch.
                assert!(m.producer_epoch >= 0, "{id}: epoch {}", m.producer_epoch);
            }
            match m.state {
                TxnState::Empty | TxnState::CompleteAbort | TxnState::CompleteCommit => {
                    assert!(m.partitions.is_empty(), "{id}: {} with partitions", m.state)
                }
                _ => assert!(
                    !m.partitions.is_empty(),
                    "{id}: {} without partitions",
                    m.state
                ),
            }
            if m.state == TxnState::Ongoing {
                assert!(m.start_timestamp >= 0, "{id}: Ongoing without a start");
            }
            if let Some(p) = m.pending {
                assert!(
                    p.valid_previous(m.state),
                    "{id}: pending {p} from {}",
                    m.state
                );
            }
        }
    }
}

/// append_error maps a failed append's error to what a request waiting on it is answered
/// (Kafka's `TransactionStateManager.appendTransactionToLog`).
pub(super) fn append_error(error: ErrorCode) -> ErrorCode {
    use ErrorCode::*;
    match error {
        UnknownTopicOrPartition
        | NotEnoughReplicas
        | NotEnoughReplicasAfterAppend
        | RequestTimedOut => CoordinatorNotAvailable,
        NotLeaderOrFollower | KafkaStorageError => NotCoordinator,
        MessageTooLarge | RecordListTooLarge => UnknownServerError,
        e => e,
    }
}
