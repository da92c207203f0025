//! OffsetCommit: v0-9. A group commits offsets (Kafka's `handleCommitOffsets`,
//! `validateOffsetCommit`, `doCommitOffsets`, `storeOffsets`).
//!
//! v1 adds the generation and member id (and v1 alone an explicit commit timestamp per
//! partition); v2-4 a retention time, kept as an explicit expire timestamp; v6 leader epochs;
//! v7 the group instance id; v8 flexible; v9 answers GROUP_ID_NOT_FOUND for an unknown group
//! (Kafka's new coordinator) where earlier versions answer ILLEGAL_GENERATION.
//!
//! In a consumer group (KIP-848) the member epoch stands for the generation, checked as Kafka
//! 4.3+ does (KIP-1251): see `commit_error`.
//!
//! Commits are visible once appended: the response waits for the host to report the append,
//! and until then OffsetFetch with `require_stable` answers UNSTABLE_OFFSET_COMMIT for the
//! partitions.

use std::sync::Arc;

use crate::errors::ErrorCode;
use crate::group::api::{
    text, AppendToken, GroupResponse, OffsetCommit, OffsetCommitResponse,
    OffsetCommitResponsePartition, OffsetCommitResponseTopic, Token,
};
use crate::group::classic::state::GroupState;
use crate::group::coordinator::Coordinator;
use crate::group::pending::{Commit, Pending};
use crate::group::records::{offset_commit_key, offset_commit_value, OffsetAndMetadata};

impl Coordinator {
    /// known_partitions splits the places (topic index, partition index) of a commit's
    /// partitions, given by topic name and partition numbers, into those of partitions the
    /// broker has and those it does not (every one is known while the broker has not told the
    /// coordinator its topics).
    #[allow(clippy::type_complexity)]
    pub(crate) fn known_partitions<'t, P: Iterator<Item = i32>>(
        &self,
        topics: impl Iterator<Item = (&'t str, P)>,
    ) -> (Vec<(usize, usize)>, Vec<(usize, usize)>) {
        let (mut known, mut unknown) = (Vec::new(), Vec::new());
        for (ti, (name, partitions)) in topics.enumerate() {
            let count = self.topics.as_ref().map(|k| k.get(name).copied());
            for (pi, p) in partitions.enumerate() {
                let has = match count {
                    None => true,
                    Some(n) => n.is_some_and(|n| p >= 0 && p < n),
                };
                if has {
                    known.push((ti, pi));
                } else {
                    unknown.push((ti, pi));
                }
            }
        }
        (known, unknown)
    }

    pub(crate) fn offset_commit(&mut self, token: Token, req: &OffsetCommit<'_>) {
        let mut response = OffsetCommitResponse {
            topics: req
                .topics
                .iter()
                .map(|t| OffsetCommitResponseTopic {
                    name: text(&t.name),
                    partitions: t
                        .partitions
                        .iter()
                        .map(|p| OffsetCommitResponsePartition {
                            partition_index: p.partition_index,
                            ..Default::default()
                        })
                        .collect(),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        };
        // Partitions the broker does not have are answered before the group is looked at.
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
            return self.respond(token, GroupResponse::OffsetCommit(response));
        }
        if let Some(e) = self.commit_error(req, &todo) {
            for (ti, pi) in todo {
                response.topics[ti].partitions[pi].error_code = e.code();
            }
            return self.respond(token, GroupResponse::OffsetCommit(response));
        }
        let g = match self.slot_of(&req.group_id) {
            Some(g) => g,
            // Validated above: an unknown group here commits with generation -1, which creates a
            // simple group (no protocol type, no members).
            None => self.create_group(&req.group_id),
        };
        match self.group(g).state {
            GroupState::Stable | GroupState::PreparingRebalance => {
                // Commits of the previous generation still count during PreparingRebalance;
                // they keep the session alive too.
                if let Some(s) = self.group(g).slot(&req.member_id) {
                    self.reschedule_session(g, s);
                }
            }
            _ => {}
        }
        // Metadata longer than offset.metadata.max.bytes is refused per partition; the rest is
        // stored.
        let now = self.runtime.now();
        let max = self.config.offset_metadata_max_bytes;
        let expire =
            (req.retention_time_ms != -1).then(|| now.saturating_add(req.retention_time_ms));
        let mut offsets = Vec::new();
        let mut records = Vec::new();
        let group_id = self.group(g).id.clone();
        for (ti, pi) in todo {
            let t = &req.topics[ti];
            let p = &t.partitions[pi];
            let metadata = p.committed_metadata.as_deref().unwrap_or("");
            if metadata.len() as i64 > max && metadata.encode_utf16().count() as i64 > max {
                response.topics[ti].partitions[pi].error_code =
                    ErrorCode::OffsetMetadataTooLarge.code();
                continue;
            }
            let value = OffsetAndMetadata {
                offset: p.committed_offset,
                leader_epoch: p.committed_leader_epoch,
                metadata: Arc::from(metadata),
                commit_timestamp: if p.commit_timestamp == -1 {
                    now
                } else {
                    p.commit_timestamp
                },
                expire_timestamp: expire,
            };
            // Strings come from a decoded request, so they encode.
            records.push((
                offset_commit_key(&group_id, &t.name, p.partition_index).unwrap_or_default(),
                offset_commit_value(&value).ok(),
            ));
            offsets.push((ti, pi, Arc::<str>::from(&*t.name), p.partition_index, value));
        }
        if offsets.is_empty() {
            return self.respond(token, GroupResponse::OffsetCommit(response));
        }
        let group = self.group(g);
        let (partition, uid) = (group.partition, group.uid);
        let staged: Vec<(Arc<str>, i32)> = offsets.iter().map(|o| (o.2.clone(), o.3)).collect();
        let append = self.append(
            partition,
            records,
            Pending::Commit(Commit {
                token,
                group: group_id,
                uid,
                response,
                offsets,
            }),
        );
        let group = self.group_mut(g);
        for (t, p) in staged {
            group.offsets.stage(&t, p, append);
        }
    }

    /// complete_commit answers a commit once its append `append` ends: the staged offsets
    /// become committed, or are dropped with the storage error mapped for the commit.
    pub(crate) fn complete_commit(
        &mut self,
        append: AppendToken,
        commit: Commit,
        error: ErrorCode,
    ) {
        let Commit {
            token,
            group,
            uid,
            mut response,
            offsets,
        } = commit;
        let outcome = if error == ErrorCode::None {
            ErrorCode::None
        } else {
            map_commit_error(error)
        };
        let g = self.slot_of_uid(&group, uid);
        for (ti, pi, topic, partition, value) in offsets {
            if let Some(g) = g {
                let ok = (outcome == ErrorCode::None).then_some(value);
                self.group_mut(g)
                    .offsets
                    .complete(&topic, partition, append, ok);
            }
            response.topics[ti].partitions[pi].error_code = outcome.code();
        }
        self.respond(token, GroupResponse::OffsetCommit(response));
    }

    /// commit_error is the error every partition of a commit gets, if any: the group id and
    /// partition checks, an unknown group (unless it commits with generation -1), and Kafka's
    /// `validateOffsetCommit` and state rules. `todo` are the (topic, partition) indexes of the
    /// partitions the broker has.
    fn commit_error(&self, req: &OffsetCommit<'_>, todo: &[(usize, usize)]) -> Option<ErrorCode> {
        if let Some(e) = self.gate(&req.group_id) {
            return Some(e);
        }
        let Some(g) = self.slot_of(&req.group_id) else {
            return match (req.generation_id_or_member_epoch < 0, req.version >= 9) {
                (true, _) => None,
                (false, true) => Some(ErrorCode::GroupIdNotFound),
                (false, false) => Some(ErrorCode::IllegalGeneration),
            };
        };
        let group = self.group(g);
        if group.is(GroupState::Dead) {
            return Some(ErrorCode::CoordinatorNotAvailable);
        }
        if group.share.is_some() {
            // Kafka's ShareGroup.validateOffsetCommit: a share group has no committed offsets.
            return Some(ErrorCode::GroupIdNotFound);
        }
        if let Some(part) = group.consumer.as_deref() {
            // Kafka 4.3+'s ConsumerGroup.validateOffsetCommit (KIP-1251): an admin commits to
            // a group without members; a member commits with OffsetCommit v9+, at its epoch, or
            // at an older one for partitions it was assigned at that epoch or before (a commit
            // sent before the member learnt of its last bump). A classic member's refusals are
            // ILLEGAL_GENERATION.
            let epoch = req.generation_id_or_member_epoch;
            if epoch < 0 && part.group.num_members() == 0 {
                return None;
            }
            let Some(m) = part.group.member(&req.member_id) else {
                return Some(ErrorCode::UnknownMemberId);
            };
            let classic = m.classic_member_metadata.is_some();
            if !classic && req.version < 9 {
                return Some(ErrorCode::UnsupportedVersion);
            }
            let refused = if classic {
                ErrorCode::IllegalGeneration
            } else {
                ErrorCode::StaleMemberEpoch
            };
            if epoch == m.member_epoch {
                return None;
            }
            if epoch > m.member_epoch {
                return Some(refused);
            }
            let held_since = |ti: usize, pi: usize| {
                let t = &req.topics[ti];
                let id = self.topic_meta.get(&*t.name)?.topic_id;
                m.assignment_epoch(&id, t.partitions[pi].partition_index)
            };
            return todo
                .iter()
                .any(|&(ti, pi)| held_since(ti, pi).is_none_or(|since| epoch < since))
                .then_some(refused);
        }
        if req.generation_id_or_member_epoch < 0 && group.is(GroupState::Empty) {
            // The admin client, or a consumer that assigns itself: allowed while no member is.
            return None;
        }
        if req.generation_id_or_member_epoch >= 0
            || !req.member_id.is_empty()
            || req.group_instance_id.is_some()
        {
            if let Some(e) =
                self.validate_current_member(g, &req.member_id, req.group_instance_id.as_deref())
            {
                return Some(e);
            }
            if req.generation_id_or_member_epoch != group.generation {
                return Some(ErrorCode::IllegalGeneration);
            }
        } else if !group.is(GroupState::Empty) {
            // Only members commit to a group that has members.
            return Some(ErrorCode::UnknownMemberId);
        }
        match group.state {
            // The member has this generation's JoinGroup response but no assignment yet.
            GroupState::CompletingRebalance => Some(ErrorCode::RebalanceInProgress),
            _ => None,
        }
    }
}

/// map_commit_error maps a storage error to what OffsetCommit answers (Kafka's
/// `maybeConvertOffsetCommitError`).
fn map_commit_error(e: ErrorCode) -> ErrorCode {
    use ErrorCode::*;
    match e {
        NetworkException => CoordinatorLoadInProgress,
        UnknownTopicOrPartition | NotEnoughReplicas | NotEnoughReplicasAfterAppend => {
            CoordinatorNotAvailable
        }
        NotLeaderOrFollower | KafkaStorageError => NotCoordinator,
        MessageTooLarge | RecordListTooLarge | InvalidFetchSize => InvalidCommitOffsetSize,
        other => other,
    }
}
