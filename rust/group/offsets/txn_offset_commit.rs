//! TxnOffsetCommit: v0-4. A transactional producer commits a group's offsets inside its
//! transaction (KIP-98, KIP-447; Kafka's `OffsetMetadataManager.commitTransactionalOffset` and
//! `validateTransactionalOffsetCommit`), and the transaction's marker ends them
//! ([`Coordinator::end_transaction`], Kafka's `replayEndTransactionMarker`).
//!
//! v1 is v0; v2 adds leader epochs; v3 the generation, member id and group instance id, and
//! flexible versions; v4 may answer TRANSACTION_ABORTABLE (KIP-890), which only the
//! transaction check before the commit gives (the host's). The response has no top-level
//! error: a group's error is copied onto every partition. Before v2 COORDINATOR_LOAD_IN_PROGRESS
//! is answered COORDINATOR_NOT_AVAILABLE (`responses.rs`).
//!
//! The offsets are written as the usual offset commit records, in one transactional batch of the
//! producer (its id and epoch, no sequence), and the response waits until the batch is in the
//! log. From the moment the batch goes out the offsets wait in the group under the producer id:
//! OffsetFetch does not return them, and with `require_stable` answers UNSTABLE_OFFSET_COMMIT
//! for their partitions, until the transaction's commit marker makes them the committed offsets
//! (each only if written after the one committed) or its abort marker drops them.
//!
//! Group checks, unlike OffsetCommit's: a commit without generation, member id and instance id
//! is accepted even by a group with members (older producers send none); the group's state is
//! not checked (no REBALANCE_IN_PROGRESS); and a consumer-protocol member's stale epoch is
//! ILLEGAL_GENERATION, which is all a v0-5 client knows (Kafka answers STALE_MEMBER_EPOCH from
//! v6, KIP-1319).

use std::sync::Arc;

use crate::coordinator::appends::Producer;
use crate::errors::ErrorCode;
use crate::group::api::{
    text, AppendToken, Effect, GroupResponse, Token, TxnOffsetCommit, TxnOffsetCommitResponse,
    TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};
use crate::group::classic::state::GroupState;
use crate::group::coordinator::Coordinator;
use crate::group::offsets::offsets::appended;
use crate::group::pending::{Pending, TxnCommit};
use crate::group::records::{offset_commit_key, offset_commit_value, OffsetAndMetadata};

impl Coordinator {
    pub(crate) fn txn_offset_commit(&mut self, token: Token, req: &TxnOffsetCommit<'_>) {
        let mut response = TxnOffsetCommitResponse {
            topics: req
                .topics
                .iter()
                .map(|t| TxnOffsetCommitResponseTopic {
                    name: text(&t.name),
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| TxnOffsetCommitResponsePartition {
                            partition_index: p.partition_index,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        // Partitions the broker does not have are answered before the group is looked at
        // (Kafka's handleTxnOffsetCommitRequest).
        let (todo, unknown) = self.known_partitions(
            req.topics
                .iter()
                .map(|t| (&*t.name, t.partitions.iter().map(|p| p.partition_index))),
        );
        for (ti, pi) in unknown {
            response.topics[ti].partitions[pi].error_code =
                ErrorCode::UnknownTopicOrPartition.code();
        }
        if todo.is_empty() {
            return self.respond(token, GroupResponse::TxnOffsetCommit(response));
        }
        if let Some(e) = self.txn_commit_error(req, &todo) {
            for (ti, pi) in todo {
                response.topics[ti].partitions[pi].error_code = e.code();
            }
            return self.respond(token, GroupResponse::TxnOffsetCommit(response));
        }
        let g = match self.slot_of(&req.group_id) {
            Some(g) => g,
            // Validated above: an unknown group commits with generation -1, which creates a
            // simple group (no protocol type, no members).
            None => self.create_group(&req.group_id),
        };
        let now = self.runtime.now();
        let max = self.config.offset_metadata_max_bytes;
        let group_id = self.group(g).id.clone();
        let mut records = Vec::new();
        let mut offsets: Vec<(Arc<str>, i32, OffsetAndMetadata)> = Vec::new();
        let mut written = Vec::new();
        for (ti, pi) in todo {
            let t = &req.topics[ti];
            let p = &t.partitions[pi];
            let metadata = p.committed_metadata.as_deref().unwrap_or("");
            if metadata.len() as i64 > max && metadata.encode_utf16().count() as i64 > max {
                response.topics[ti].partitions[pi].error_code =
                    ErrorCode::OffsetMetadataTooLarge.code();
                continue;
            }
            // Kafka's OffsetAndMetadata.fromRequest: committed now, no expiry.
            let value = OffsetAndMetadata {
                offset: p.committed_offset,
                leader_epoch: p.committed_leader_epoch,
                metadata: Arc::from(metadata),
                commit_timestamp: now,
                expire_timestamp: None,
            };
            // Strings come from a decoded request, so they encode.
            records.push((
                offset_commit_key(&group_id, &t.name, p.partition_index).unwrap_or_default(),
                offset_commit_value(&value).ok(),
            ));
            offsets.push((Arc::<str>::from(&*t.name), p.partition_index, value));
            written.push((ti, pi));
        }
        if records.is_empty() {
            return self.respond(token, GroupResponse::TxnOffsetCommit(response));
        }
        let group = self.group(g);
        let (partition, uid) = (group.partition, group.uid);
        let producer = Producer {
            id: req.producer_id,
            epoch: req.producer_epoch,
        };
        let append = self.runtime.append_transactional(
            partition,
            producer,
            records,
            Pending::TxnCommit(TxnCommit {
                token,
                group: group_id.clone(),
                uid,
                producer_id: producer.id,
                response,
                written,
            }),
        );
        let group = self.group_mut(g);
        for (t, p, value) in offsets {
            group
                .offsets
                .put_transactional(producer.id, &t, p, value, appended(append));
        }
        self.track_transaction(producer.id, &group_id, uid);
    }

    /// complete_txn_commit answers a TxnOffsetCommit once its append `append` ends; on a
    /// failure its offsets leave the transaction (the records are not in the log; what the
    /// transaction wrote before for the same partitions counts again) and the storage error is
    /// mapped as Kafka's `handleOperationException` maps it.
    pub(crate) fn complete_txn_commit(
        &mut self,
        append: AppendToken,
        commit: TxnCommit,
        error: ErrorCode,
    ) {
        let TxnCommit {
            token,
            group,
            uid,
            producer_id,
            mut response,
            written,
        } = commit;
        let outcome = map_txn_commit_error(error);
        if let Some(g) = self.slot_of_uid(&group, uid) {
            let offsets = &mut self.group_mut(g).offsets;
            if outcome == ErrorCode::None {
                offsets.settle_transactional(producer_id, appended(append));
            } else {
                offsets.drop_transactional(producer_id, appended(append));
            }
        }
        for (ti, pi) in written {
            response.topics[ti].partitions[pi].error_code = outcome.code();
        }
        self.respond(token, GroupResponse::TxnOffsetCommit(response));
    }

    /// txn_commit_error is the error every partition of a TxnOffsetCommit gets, if any: the
    /// group id and partition checks, then Kafka's `validateTransactionalOffsetCommit` with
    /// `ClassicGroup.validateOffsetCommit` or `ConsumerGroup.validateOffsetCommit` (transactional).
    /// `todo` are the (topic, partition) indexes of the partitions the broker has.
    fn txn_commit_error(
        &self,
        req: &TxnOffsetCommit<'_>,
        todo: &[(usize, usize)],
    ) -> Option<ErrorCode> {
        if req.group_id.is_empty() {
            return Some(ErrorCode::InvalidGroupId);
        }
        if let Some(e) = self.gate(&req.group_id) {
            return Some(e);
        }
        let generation = req.generation_id;
        let Some(g) = self.slot_of(&req.group_id) else {
            // An unknown group: a simple group is made for a commit outside group management.
            return (generation >= 0).then_some(ErrorCode::IllegalGeneration);
        };
        let group = self.group(g);
        if group.is(GroupState::Dead) {
            return Some(ErrorCode::CoordinatorNotAvailable);
        }
        if group.share.is_some() {
            // Kafka's ShareGroup.validateOffsetCommit: a share group has no committed offsets.
            return Some(ErrorCode::GroupIdNotFound);
        }
        let anonymous =
            generation == -1 && req.member_id.is_empty() && req.group_instance_id.is_none();
        if let Some(part) = group.consumer.as_deref() {
            if generation < 0 && part.group.num_members() == 0 {
                return None;
            }
            if anonymous {
                return None;
            }
            let Some(m) = part.group.member(&req.member_id) else {
                return Some(ErrorCode::UnknownMemberId);
            };
            // The member epoch stands for the generation, checked as OffsetCommit checks it
            // (`offset_commit.rs`, KIP-1251): the current epoch, or an older one for partitions
            // assigned at it or before. Every refusal (STALE_MEMBER_EPOCH for a
            // consumer-protocol member) is ILLEGAL_GENERATION before v6.
            if generation == m.member_epoch {
                return None;
            }
            if generation > m.member_epoch {
                return Some(ErrorCode::IllegalGeneration);
            }
            let held_since = |ti: usize, pi: usize| {
                let t = &req.topics[ti];
                let id = self.topic_meta.get(&*t.name)?.topic_id;
                m.assignment_epoch(&id, t.partitions[pi].partition_index)
            };
            return todo
                .iter()
                .any(|&(ti, pi)| held_since(ti, pi).is_none_or(|since| generation < since))
                .then_some(ErrorCode::IllegalGeneration);
        }
        if generation < 0 && group.is(GroupState::Empty) {
            return None;
        }
        if generation >= 0 || !req.member_id.is_empty() || req.group_instance_id.is_some() {
            if let Some(e) =
                self.validate_current_member(g, &req.member_id, req.group_instance_id.as_deref())
            {
                return Some(e);
            }
            if generation != group.generation {
                return Some(ErrorCode::IllegalGeneration);
            }
        }
        None
    }

    /// track_transaction notes that the open transaction of `producer_id` wrote offsets of the
    /// group `group_id` (`uid`).
    pub(crate) fn track_transaction(&mut self, producer_id: i64, group_id: &Arc<str>, uid: u64) {
        let groups = self.open_txns.entry(producer_id).or_default();
        if !groups.iter().any(|(_, u)| *u == uid) {
            groups.push((group_id.clone(), uid));
        }
    }

    /// end_transaction ends the transaction of `producer_id` in partition `partition` of
    /// `__consumer_offsets`, whose COMMIT (`commit`) or ABORT marker the host has appended there
    /// (Kafka's `replayEndTransactionMarker`): on a commit, each offset the transaction wrote to
    /// the partition's groups becomes the committed one unless an offset written after it (a
    /// plain commit appended later) already is; on an abort they are dropped. A producer with
    /// nothing open there changes nothing. A partition loading or given up has its groups
    /// replaced by what its log holds: the marker must be in the log the host loads. The
    /// effects are those of the timers due at `now`.
    pub fn end_transaction(
        &mut self,
        now: i64,
        partition: i32,
        producer_id: i64,
        commit: bool,
    ) -> Vec<Effect> {
        self.enter(now);
        if let Some(mut groups) = self.open_txns.remove(&producer_id) {
            // Entries of groups gone since (deleted, unloaded) go too.
            groups.retain(|(id, uid)| {
                let Some(g) = self.slot_of_uid(id, *uid) else {
                    return false;
                };
                let group = self.groups.get_mut(g).expect("a group's slot");
                if group.partition != partition {
                    return true;
                }
                group.offsets.end_transaction(producer_id, commit);
                false
            });
            if !groups.is_empty() {
                self.open_txns.insert(producer_id, groups);
            }
        }
        self.run_timers();
        self.runtime.take_effects()
    }

    /// transactional_offset is what the open transaction of `producer_id` committed for a
    /// group's partition (tests, as Kafka's `pendingTransactionalOffset`).
    #[cfg(test)]
    pub(crate) fn transactional_offset(
        &self,
        group_id: &str,
        producer_id: i64,
        topic: &str,
        partition: i32,
    ) -> Option<i64> {
        let g = self.slot_of(group_id)?;
        self.group(g)
            .offsets
            .transactional_offset(producer_id, topic, partition)
            .map(|o| o.offset)
    }
}

/// map_txn_commit_error maps a storage error to what TxnOffsetCommit answers (Kafka's
/// `CoordinatorOperationExceptionHelper.handleOperationException`).
fn map_txn_commit_error(e: ErrorCode) -> ErrorCode {
    use ErrorCode::*;
    match e {
        NetworkException => CoordinatorLoadInProgress,
        UnknownTopicOrPartition | NotEnoughReplicas | RequestTimedOut => CoordinatorNotAvailable,
        NotLeaderOrFollower | KafkaStorageError => NotCoordinator,
        MessageTooLarge | RecordListTooLarge | InvalidFetchSize => UnknownServerError,
        other => other,
    }
}
