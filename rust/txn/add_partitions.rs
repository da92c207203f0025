//! AddPartitionsToTxn (24), AddOffsetsToTxn (25) and verification.
//!
//! AddPartitionsToTxn v0-3 comes from clients: one transaction at the top level. v2 answers
//! PRODUCER_FENCED (earlier versions get INVALID_PRODUCER_EPOCH, `responses.rs`). v4-5 come
//! from brokers, batched: several transactions, each with `verify_only` (KIP-890 part 1: answer
//! whether the partitions are in the transaction, adding nothing). A partition of a topic the
//! broker does not have is UNKNOWN_TOPIC_OR_PARTITION and the transaction's other partitions
//! OPERATION_NOT_ATTEMPTED; otherwise every partition of a transaction gets its one answer.
//!
//! AddOffsetsToTxn v0-4 adds the group's `__consumer_offsets` partition; v2 answers
//! PRODUCER_FENCED.
//!
//! Kafka's `KafkaApis.handleAddPartitionsToTxnRequest` and `handleAddOffsetsToTxnRequest`,
//! `TransactionCoordinator.handleAddPartitionsToTransaction` and
//! `handleVerifyPartitionsInTransaction`.

use std::borrow::Cow;

use super::api::{
    AddOffsetsToTxnRequest, AddOffsetsToTxnResponse, AddPartitionsToTxnRequest,
    AddPartitionsToTxnRequestTopic, AddPartitionsToTxnResponse,
    AddPartitionsToTxnResponseResultsByPartition, AddPartitionsToTxnResponseResultsByTransaction,
    AddPartitionsToTxnResponseTopicResult, Token, TxnResponse,
};
use super::coordinator::Coordinator;
use super::metadata::{Transit, TxnPartitions};
use super::pending::{AddReply, Batch, Pending, Slot};
use super::records;
use super::state::TxnState;
use crate::coordinator::partition::partition_for;
use crate::errors::ErrorCode;

/// OFFSETS_TOPIC is the group coordinator's internal topic.
pub const OFFSETS_TOPIC: &str = "__consumer_offsets";

/// Asked is one transaction of an AddPartitionsToTxn request: id, producer id, epoch,
/// verify_only, partitions by topic.
type Asked<'a> = (&'a str, i64, i16, bool, Vec<(String, Vec<i32>)>);

/// layout is a request's partitions by topic, in the order asked, each once.
fn layout(topics: &[AddPartitionsToTxnRequestTopic<'_>]) -> Vec<(String, Vec<i32>)> {
    let mut out: Vec<(String, Vec<i32>)> = Vec::new();
    for t in topics {
        let at = match out.iter().position(|(n, _)| *n == *t.name) {
            Some(i) => i,
            None => {
                out.push((t.name.to_string(), Vec::new()));
                out.len() - 1
            }
        };
        for p in &t.partitions {
            if !out[at].1.contains(p) {
                out[at].1.push(*p);
            }
        }
    }
    out
}

fn uniform(topics: &[(String, Vec<i32>)], e: ErrorCode) -> Vec<Vec<i16>> {
    topics
        .iter()
        .map(|(_, ps)| vec![e.code(); ps.len()])
        .collect()
}

impl Coordinator {
    pub(super) fn add_partitions_to_txn(
        &mut self,
        token: Token,
        version: i16,
        r: &AddPartitionsToTxnRequest<'_>,
    ) {
        // Before v4 the one transaction is at the top level.
        let txns: Vec<Asked<'_>> = if version < 4 {
            vec![(
                &*r.v3_and_below_transactional_id,
                r.v3_and_below_producer_id,
                r.v3_and_below_producer_epoch,
                false,
                layout(&r.v3_and_below_topics),
            )]
        } else {
            r.transactions
                .iter()
                .map(|t| {
                    (
                        &*t.transactional_id,
                        t.producer_id,
                        t.producer_epoch,
                        t.verify_only,
                        layout(&t.topics),
                    )
                })
                .collect()
        };
        let mut batch = Batch {
            slots: txns
                .iter()
                .map(|(id, _, _, _, topics)| Slot {
                    id: id.to_string(),
                    topics: topics.clone(),
                    errors: None,
                })
                .collect(),
        };
        let mut waiting = false;
        for (slot, (id, pid, epoch, verify_only, topics)) in txns.into_iter().enumerate() {
            let errors = if verify_only {
                Some(self.verify_partitions(id, pid, epoch, &topics))
            } else if let Some(errors) = self.unknown_partitions(&topics) {
                Some(errors)
            } else {
                let partitions: TxnPartitions = topics
                    .iter()
                    .flat_map(|(t, ps)| ps.iter().map(move |p| (t.clone(), *p)))
                    .collect();
                let reply = AddReply::Batch { token, slot };
                match self.add_partitions(id, pid, epoch, partitions, reply) {
                    Some(e) => Some(uniform(&topics, e)),
                    None => {
                        waiting = true;
                        None
                    }
                }
            };
            batch.slots[slot].errors = errors;
        }
        if waiting {
            self.batches.insert(token, batch);
        } else {
            self.answer_batch(token, batch);
        }
    }

    /// unknown_partitions is the answer of a transaction naming a partition the broker does
    /// not have: UNKNOWN_TOPIC_OR_PARTITION for those, OPERATION_NOT_ATTEMPTED for the rest.
    fn unknown_partitions(&self, topics: &[(String, Vec<i32>)]) -> Option<Vec<Vec<i16>>> {
        let known = self.topics.as_ref()?;
        let exists = |t: &str, p: i32| known.get(t).is_some_and(|&n| p >= 0 && p < n);
        let errors: Vec<Vec<i16>> = topics
            .iter()
            .map(|(t, ps)| {
                ps.iter()
                    .map(|&p| {
                        if exists(t, p) {
                            ErrorCode::OperationNotAttempted.code()
                        } else {
                            ErrorCode::UnknownTopicOrPartition.code()
                        }
                    })
                    .collect()
            })
            .collect();
        let any_unknown = errors
            .iter()
            .flatten()
            .any(|&e| e == ErrorCode::UnknownTopicOrPartition.code());
        any_unknown.then_some(errors)
    }

    /// verify_partitions is verification's answer per partition (Kafka's
    /// `handleVerifyPartitionsInTransaction`; the pending state is not checked).
    fn verify_partitions(
        &self,
        id: &str,
        pid: i64,
        epoch: i16,
        topics: &[(String, Vec<i32>)],
    ) -> Vec<Vec<i16>> {
        match self.verify_transaction(id, pid, epoch) {
            Err(e) => uniform(topics, e),
            Ok(m) => topics
                .iter()
                .map(|(t, ps)| {
                    ps.iter()
                        .map(|&p| {
                            if m.partitions.contains(&(t.clone(), p)) {
                                ErrorCode::None.code()
                            } else {
                                ErrorCode::TransactionAbortable.code()
                            }
                        })
                        .collect()
                })
                .collect(),
        }
    }

    fn verify_transaction(
        &self,
        id: &str,
        pid: i64,
        epoch: i16,
    ) -> Result<&super::metadata::TxnMetadata, ErrorCode> {
        if id.is_empty() {
            return Err(ErrorCode::InvalidRequest);
        }
        if let Some(e) = self.gate(id) {
            return Err(e);
        }
        let m = self
            .txns
            .get(id)
            .ok_or(ErrorCode::InvalidProducerIdMapping)?;
        if m.producer_id != pid {
            Err(ErrorCode::InvalidProducerIdMapping)
        } else if m.producer_epoch != epoch {
            Err(ErrorCode::ProducerFenced)
        } else if m.state.is_prepare() {
            Err(ErrorCode::ConcurrentTransactions)
        } else {
            Ok(m)
        }
    }

    /// verify answers the produce path's check of a transactional batch (KIP-890 part 1): NONE
    /// (0) when `topic`-`partition` is in `transactional_id`'s transaction at `producer_id` and
    /// `producer_epoch`; else INVALID_PRODUCER_ID_MAPPING (no such id or another producer id),
    /// PRODUCER_FENCED (another epoch), CONCURRENT_TRANSACTIONS (the transaction is being
    /// decided), TRANSACTION_ABORTABLE (not in the transaction), INVALID_REQUEST (an empty id),
    /// COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR. The produce path shows them to the
    /// producer as Kafka's `AddPartitionsToTxnManager` does (PRODUCER_FENCED as
    /// INVALID_PRODUCER_EPOCH, TRANSACTION_ABORTABLE as INVALID_TXN_STATE before Produce v11).
    pub fn verify(
        &self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        topic: &str,
        partition: i32,
    ) -> ErrorCode {
        match self.verify_transaction(transactional_id, producer_id, producer_epoch) {
            Err(e) => e,
            Ok(m) if m.partitions.contains(&(topic.to_string(), partition)) => ErrorCode::None,
            Ok(_) => ErrorCode::TransactionAbortable,
        }
    }

    /// add_partitions adds `partitions` to the transaction of `id` (Kafka's
    /// `handleAddPartitionsToTransaction`): Some(error) when answered at once (NONE when they
    /// are all in already), None when an append was asked for and `reply` waits on it.
    fn add_partitions(
        &mut self,
        id: &str,
        pid: i64,
        epoch: i16,
        partitions: TxnPartitions,
        reply: AddReply,
    ) -> Option<ErrorCode> {
        if id.is_empty() {
            return Some(ErrorCode::InvalidRequest);
        }
        if let Some(e) = self.gate(id) {
            return Some(e);
        }
        let now = self.now();
        let Some(m) = self.txns.get_mut(id) else {
            return Some(ErrorCode::InvalidProducerIdMapping);
        };
        if m.pending.is_some() {
            return Some(ErrorCode::ConcurrentTransactions);
        }
        if m.producer_id != pid {
            return Some(ErrorCode::InvalidProducerIdMapping);
        }
        if m.producer_epoch != epoch {
            return Some(ErrorCode::ProducerFenced);
        }
        if epoch < 0 {
            // An id whose first InitProducerId failed has no epoch yet: Kafka's transition
            // refuses a negative epoch (IllegalArgumentException, an unknown server error).
            return Some(ErrorCode::UnknownServerError);
        }
        match m.state {
            TxnState::PrepareCommit | TxnState::PrepareAbort => {
                return Some(ErrorCode::ConcurrentTransactions)
            }
            TxnState::Ongoing if partitions.is_subset(&m.partitions) => {
                return Some(ErrorCode::None)
            }
            TxnState::Dead | TxnState::PrepareEpochFence => {
                return Some(ErrorCode::UnknownServerError)
            }
            _ => {}
        }
        let transit = m.prepare_add_partitions(&partitions, now);
        let uid = m.uid;
        match records::key(id).and_then(|k| Ok((k, records::value(&transit)?))) {
            Ok((k, v)) => {
                self.append(
                    id,
                    vec![(k, Some(v))],
                    Pending::Add {
                        reply,
                        id: id.to_string(),
                        uid,
                        transit,
                    },
                );
                None
            }
            Err(_) => {
                if let Some(m) = self.txns.get_mut(id) {
                    m.abandon();
                }
                Some(ErrorCode::UnknownServerError)
            }
        }
    }

    pub(super) fn add_offsets_to_txn(&mut self, token: Token, r: &AddOffsetsToTxnRequest<'_>) {
        let partition = partition_for(&r.group_id, self.config.offsets_topic_num_partitions);
        let partitions: TxnPartitions = [(OFFSETS_TOPIC.to_string(), partition)].into();
        let reply = AddReply::Offsets { token };
        if let Some(e) = self.add_partitions(
            &r.transactional_id,
            r.producer_id,
            r.producer_epoch,
            partitions,
            reply,
        ) {
            self.answer_offsets(token, e);
        }
    }

    fn answer_offsets(&mut self, token: Token, e: ErrorCode) {
        self.respond(
            token,
            TxnResponse::AddOffsetsToTxn(AddOffsetsToTxnResponse {
                error_code: e.code(),
                ..Default::default()
            }),
        );
    }

    /// complete_add applies a durable Ongoing record and answers.
    pub(super) fn complete_add(
        &mut self,
        reply: AddReply,
        id: &str,
        uid: u64,
        transit: Transit,
        error: ErrorCode,
    ) {
        let error = match self.current(id, uid) {
            None => ErrorCode::NotCoordinator,
            Some(m) if error != ErrorCode::None => {
                m.abandon();
                error
            }
            Some(m) => {
                m.complete(transit);
                ErrorCode::None
            }
        };
        match reply {
            AddReply::Offsets { token } => self.answer_offsets(token, error),
            AddReply::Batch { token, slot } => {
                let Some(batch) = self.batches.get_mut(&token) else {
                    return;
                };
                let s = &mut batch.slots[slot];
                s.errors = Some(uniform(&s.topics, error));
                if batch.slots.iter().all(|s| s.errors.is_some()) {
                    let batch = self.batches.remove(&token).expect("just seen");
                    self.answer_batch(token, batch);
                }
            }
        }
    }

    fn answer_batch(&mut self, token: Token, batch: Batch) {
        let results = batch
            .slots
            .into_iter()
            .map(|s| {
                let errors = s.errors.unwrap_or_default();
                AddPartitionsToTxnResponseResultsByTransaction {
                    transactional_id: Cow::Owned(s.id),
                    topic_results: s
                        .topics
                        .into_iter()
                        .zip(errors)
                        .map(|((name, ps), es)| AddPartitionsToTxnResponseTopicResult {
                            name: Cow::Owned(name),
                            results_by_partition: ps
                                .into_iter()
                                .zip(es)
                                .map(|(p, e)| AddPartitionsToTxnResponseResultsByPartition {
                                    partition_index: p,
                                    partition_error_code: e,
                                    ..Default::default()
                                })
                                .collect(),
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                }
            })
            .collect();
        self.respond(
            token,
            TxnResponse::AddPartitionsToTxn(AddPartitionsToTxnResponse {
                results_by_transaction: results,
                ..Default::default()
            }),
        );
    }
}
