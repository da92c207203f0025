//! ShareGroupHeartbeat (api 76) v1: a member of a KIP-932 share group joins (epoch 0, with the
//! member id it made itself), keeps its session, learns its assignment, and leaves (epoch -1)
//! (Kafka 4.2's `GroupMetadataManager.shareGroupHeartbeat` and `shareGroupLeave`, reference
//! §2.2-2.4). Also the session timeout that fences a member, and the host's reports on the
//! share state it was asked to initialize (`initializeShareGroupState` /
//! `uninitializeShareGroupState`).
//!
//! A heartbeat works out the records of what changed in Kafka's order (member metadata, group
//! epoch, target assignment, current assignment, share-partition state metadata), applies them
//! to the group at once and answers once they are appended; a failed append puts the group
//! back and answers the mapped error. The partitions to initialize go to the host as
//! [`ShareEffect::InitializeShareState`] once their records are in the log.

use std::collections::{BTreeMap, BTreeSet};

use super::part::{InitState, ShareMember, SharePart, Undo, STABLE};
use super::records::{ShareGroupRecord, TopicPartitions};
use crate::coordinator::appends::Records;
use crate::errors::{Error, ErrorCode};
use crate::group::api::{
    Effect, GroupResponse, ShareEffect, ShareGroupHeartbeat, ShareGroupHeartbeatResponse,
    ShareGroupHeartbeatResponseAssignment, ShareGroupHeartbeatResponseTopicPartition, Token,
};
use crate::group::assignors::{simple, Assignment, SubscriptionType, TopicId};
use crate::group::classic::rebalance::map_group_error;
use crate::group::consumer::part::metadata_hash;
use crate::group::coordinator::Coordinator;
use crate::group::pending::{Pending, ShareWrite};
use crate::group::timers::TimerKey;

/// LEAVE_EPOCH is the member epoch of a leave.
const LEAVE_EPOCH: i32 = -1;

fn kafka(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::kafka(code, message)
}

/// error_response is Kafka's answer to a failed heartbeat: the code and message alone.
pub(crate) fn error_response(e: &Error) -> ShareGroupHeartbeatResponse<'static> {
    let (code, message) = match e {
        Error::Kafka(k) => (k.code, Some(k.message.clone()).filter(|m| !m.is_empty())),
        other => (ErrorCode::UnknownServerError, Some(other.to_string())),
    };
    ShareGroupHeartbeatResponse {
        error_code: code.code(),
        error_message: message.map(Into::into),
        ..Default::default()
    }
}

fn response_assignment(a: &Assignment) -> ShareGroupHeartbeatResponseAssignment<'static> {
    ShareGroupHeartbeatResponseAssignment {
        topic_partitions: a
            .iter()
            .map(|(t, p)| ShareGroupHeartbeatResponseTopicPartition {
                topic_id: *t,
                partitions: p.to_vec(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// validate is Kafka's `throwIfShareGroupHeartbeatRequestIsInvalid` (reference §1.1), after
/// the broker's own check of the member id (`KafkaApis.isMemberIdValid`: 1 to 36 characters),
/// which Kafka makes before the request reaches its coordinator.
fn validate(r: &ShareGroupHeartbeat<'_>) -> Result<(), Error> {
    let invalid = |m: &str| Err(kafka(ErrorCode::InvalidRequest, m));
    if r.member_id.is_empty() || r.member_id.chars().count() > 36 {
        return invalid("Invalid member id in the request.");
    }
    if is_blank(&r.member_id) {
        return invalid("MemberId can't be empty.");
    }
    if is_blank(&r.group_id) {
        return invalid("GroupId can't be empty.");
    }
    if r.rack_id.as_deref().is_some_and(is_blank) {
        return invalid("RackId can't be empty.");
    }
    if r.member_epoch == 0 {
        if r.subscribed_topic_names
            .as_ref()
            .is_none_or(|n| n.is_empty())
        {
            return invalid("SubscribedTopicNames must be set in first request.");
        }
    } else if r.member_epoch < LEAVE_EPOCH {
        return invalid("MemberEpoch is invalid.");
    }
    Ok(())
}

/// validate_member_epoch is Kafka's `throwIfShareGroupMemberEpochIsInvalid`.
fn validate_member_epoch(m: &ShareMember, epoch: i32) -> Result<(), Error> {
    if epoch == 0 {
        return Ok(());
    }
    if epoch > m.member_epoch {
        return Err(kafka(
            ErrorCode::FencedMemberEpoch,
            format!(
                "The share group member has a greater member epoch ({epoch}) than the one known \
                 by the group coordinator ({}). The member must abandon all its partitions and \
                 rejoin.",
                m.member_epoch
            ),
        ));
    }
    if epoch < m.member_epoch && epoch != m.previous_member_epoch {
        return Err(kafka(
            ErrorCode::FencedMemberEpoch,
            format!(
                "The share group member has a smaller member epoch ({epoch}) than the one known \
                 by the group coordinator ({}), and it does not match the previous member epoch \
                 ({}). The member must abandon all its partitions and rejoin.",
                m.member_epoch, m.previous_member_epoch
            ),
        ));
    }
    Ok(())
}

impl Coordinator {
    /// share_group_heartbeat serves a ShareGroupHeartbeat.
    pub(crate) fn share_group_heartbeat(&mut self, token: Token, r: &ShareGroupHeartbeat<'_>) {
        let result = validate(r).and_then(|()| {
            if let Some(e) = self.gate(&r.group_id) {
                return Err(kafka(e, ""));
            }
            if r.member_epoch == LEAVE_EPOCH {
                self.share_leave(token, r)
            } else {
                self.share_heartbeat(token, r)
            }
        });
        if let Err(e) = result {
            self.respond(
                token,
                GroupResponse::ShareGroupHeartbeat(error_response(&e)),
            );
        }
    }

    /// share_session_timeout_ms is `group_id`'s member session: its group config, else the
    /// broker's.
    pub(crate) fn share_session_timeout_ms(&self, group_id: &str) -> i64 {
        self.config
            .share_session_timeout_ms(self.group_config(group_id))
    }

    /// share_heartbeat_interval_ms is the interval `group_id`'s members are told.
    pub(crate) fn share_heartbeat_interval_ms(&self, group_id: &str) -> i64 {
        self.config
            .share_heartbeat_interval_ms(self.group_config(group_id))
    }

    /// share_slot is the slot of share group `group_id` (Kafka's `getOrMaybeCreateShareGroup`):
    /// GROUP_ID_NOT_FOUND when there is none (unless `create`) or the group is of another type.
    /// True when it was made now.
    fn share_slot(&mut self, group_id: &str, create: bool) -> Result<(u32, bool), Error> {
        match self.slot_of(group_id) {
            None if create => {
                let s = self.create_group(group_id);
                self.group_mut(s).share = Some(Box::new(SharePart::new(group_id)));
                Ok((s, true))
            }
            None => Err(kafka(
                ErrorCode::GroupIdNotFound,
                format!("Share group {group_id} not found."),
            )),
            Some(s) if self.group(s).share.is_some() => Ok((s, false)),
            Some(_) => Err(kafka(
                ErrorCode::GroupIdNotFound,
                format!("Group {group_id} is not a share group."),
            )),
        }
    }

    pub(super) fn share_part(&self, g: u32) -> &SharePart {
        self.group(g).share.as_deref().expect("a share group")
    }

    fn share_part_mut(&mut self, g: u32) -> &mut SharePart {
        self.group_mut(g)
            .share
            .as_deref_mut()
            .expect("a share group")
    }

    fn share_heartbeat(&mut self, token: Token, r: &ShareGroupHeartbeat<'_>) -> Result<(), Error> {
        let joining = r.member_epoch == 0;
        let (g, created) = self.share_slot(&r.group_id, joining)?;
        let result = self.share_heartbeat_in(token, r, g);
        if result.is_err() && created && self.share_part(g).is_empty() {
            self.drop_group(g);
        }
        result
    }

    fn share_heartbeat_in(
        &mut self,
        token: Token,
        r: &ShareGroupHeartbeat<'_>,
        g: u32,
    ) -> Result<(), Error> {
        let group_id = r.group_id.to_string();
        let member_id = r.member_id.to_string();
        let joining = r.member_epoch == 0;
        let now = self.runtime.now();
        let max_size = usize::try_from(self.config.share_max_size).unwrap_or(usize::MAX);
        let part = self.share_part(g);
        if part.members.len() >= max_size && !part.members.contains_key(&member_id) {
            return Err(kafka(
                ErrorCode::GroupMaxSizeReached,
                format!("The share group has reached its maximum capacity of {max_size} members."),
            ));
        }
        let member = match part.members.get(&member_id) {
            Some(m) => m.clone(),
            None if joining => ShareMember::new(&member_id),
            None => {
                return Err(kafka(
                    ErrorCode::UnknownMemberId,
                    format!("Member {member_id} is not a member of group {group_id}."),
                ))
            }
        };
        validate_member_epoch(&member, r.member_epoch)?;

        // 1. The member as this heartbeat updates it; the group epoch bumps when its
        // subscription changed or newly initialized partitions wait to be assigned.
        let mut updated = member.clone();
        if let Some(rack) = r.rack_id.as_deref() {
            updated.rack_id = Some(rack.to_string());
        }
        if let Some(names) = &r.subscribed_topic_names {
            updated.subscribed_topic_names = names.iter().map(|n| n.to_string()).collect();
        }
        updated.client_id = r.client_id.to_string();
        updated.client_host = r.client_host.to_string();
        let mut records = Vec::new();
        let mut bump = false;
        if updated.metadata() != member.metadata() || !part.members.contains_key(&member_id) {
            records.push(ShareGroupRecord::MemberMetadata {
                group: group_id.clone(),
                member: member_id.clone(),
                value: Some(updated.metadata()),
            });
            bump = updated.subscribed_topic_names != member.subscribed_topic_names;
        }
        bump |= initialized_assignment_pending(part, &self.topic_names);

        // The subscribed topics after this heartbeat, and their metadata hash (checked at a
        // bump and whenever the topics changed since the group last looked).
        let mut subscribed: BTreeMap<String, usize> = BTreeMap::new();
        for m in part.members.values().filter(|m| m.member_id != member_id) {
            for n in &m.subscribed_topic_names {
                *subscribed.entry(n.clone()).or_default() += 1;
            }
        }
        for n in &updated.subscribed_topic_names {
            *subscribed.entry(n.clone()).or_default() += 1;
        }
        let topic_version = self.topic_version;
        let mut group_epoch = part.group_epoch;
        let mut new_hash = None;
        if bump || part.metadata_seen != topic_version {
            let hash = metadata_hash(subscribed.keys(), &self.topic_meta);
            bump |= hash != part.metadata_hash;
            new_hash = Some(hash);
        }
        if bump {
            group_epoch += 1;
            records.push(ShareGroupRecord::Metadata {
                group: group_id.clone(),
                value: Some((group_epoch, new_hash.unwrap_or(part.metadata_hash))),
            });
        }

        // 2. The target assignment, when the group epoch is ahead of it.
        let (target_epoch, target) = if group_epoch > part.assignment_epoch {
            let target = self.share_target(g, &updated, group_epoch, &mut records)?;
            (group_epoch, target)
        } else {
            (
                part.assignment_epoch,
                part.targets.get(&member_id).cloned().unwrap_or_default(),
            )
        };

        // 3. Reconciliation, in one step (Kafka's `ShareGroupAssignmentBuilder`).
        let reconciled = if !bump && updated.state == STABLE && updated.member_epoch == target_epoch
        {
            updated.clone()
        } else {
            let mut m = updated.clone();
            if target_epoch != m.member_epoch {
                m.state = STABLE;
                m.previous_member_epoch = m.member_epoch;
                m.member_epoch = target_epoch;
            }
            m.assigned_partitions = self.filter_subscribed(&target, &m.subscribed_topic_names);
            m
        };
        if reconciled != updated {
            records.push(ShareGroupRecord::CurrentMemberAssignment {
                group: group_id.clone(),
                member: member_id.clone(),
                value: Some(reconciled.current()),
            });
        }

        let response = ShareGroupHeartbeatResponse {
            member_id: Some(member_id.clone().into()),
            member_epoch: reconciled.member_epoch,
            heartbeat_interval_ms: i32::try_from(self.share_heartbeat_interval_ms(&group_id))
                .unwrap_or(i32::MAX),
            assignment: (joining
                || r.subscribed_topic_names.is_some()
                || reconciled.assigned_partitions != member.assigned_partitions)
                .then(|| response_assignment(&reconciled.assigned_partitions)),
            ..Default::default()
        };

        // 4. The subscribed partitions whose share state is not initialized (nor being
        // initialized, unless that was asked for too long ago): their record and effects.
        let init = self.partitions_to_initialize(g, subscribed.keys(), now);
        let effects = self.add_initializing(g, &group_id, group_epoch, init, now, &mut records);

        // Apply, arm the session, write.
        let part = self.share_part_mut(g);
        if let Some(h) = new_hash {
            part.metadata_seen = topic_version;
            if !bump {
                part.metadata_hash = h;
            }
        }
        let mut undo = Vec::new();
        for rec in &records {
            part.apply(rec, now, Some(&mut undo));
        }
        let session = self.share_session_timeout_ms(&group_id);
        self.arm_share_session(g, &member_id, now.saturating_add(session));
        self.write_share(
            g,
            Some(token),
            &records,
            undo,
            Some(GroupResponse::ShareGroupHeartbeat(response)),
            effects,
        )
    }

    /// share_target computes the group's target assignment at `epoch` with `simple` over the
    /// initialized partitions, `updated` in place of its old self, and adds the records of
    /// what changed (Kafka's `ShareTargetAssignmentBuilder`: every member whose target
    /// changed, or that had none, then the assignment epoch). Returns `updated`'s target.
    fn share_target(
        &self,
        g: u32,
        updated: &ShareMember,
        epoch: i32,
        records: &mut Vec<ShareGroupRecord>,
    ) -> Result<Assignment, Error> {
        let part = self.share_part(g);
        let mut members: BTreeMap<&str, &ShareMember> = part
            .members
            .iter()
            .map(|(id, m)| (id.as_str(), m))
            .collect();
        members.insert(&updated.member_id, updated);
        let ids: Vec<BTreeSet<TopicId>> = members
            .values()
            .map(|m| self.topic_ids(&m.subscribed_topic_names))
            .collect();
        let empty = Assignment::new();
        let olds: Vec<&Assignment> = members
            .keys()
            .map(|id| part.targets.get(*id).unwrap_or(&empty))
            .collect();
        let specs: Vec<simple::ShareMemberSpec<'_>> = members
            .keys()
            .enumerate()
            .map(|(i, id)| simple::ShareMemberSpec {
                member_id: id,
                subscribed_topic_ids: &ids[i],
                target: olds[i],
            })
            .collect();
        let subscription_type =
            SubscriptionType::of(members.values().map(|m| &m.subscribed_topic_names));
        let counts: BTreeMap<TopicId, i32> = self
            .topic_meta
            .values()
            .map(|t| (t.topic_id, t.partition_count))
            .collect();
        let init = part.init.clone().unwrap_or_default();
        let assignable = |t: &TopicId, p: i32| init.is_initialized(t, p);
        let computed =
            simple::assign(&specs, subscription_type, &counts, &assignable).map_err(|e| {
                kafka(
                    ErrorCode::UnknownServerError,
                    format!(
                        "Failed to compute a new target assignment for epoch {epoch}: {}",
                        e.message()
                    ),
                )
            })?;
        let group_id = part.group_id.clone();
        let mut mine = Assignment::new();
        for (i, (id, new)) in members.keys().zip(computed).enumerate() {
            if !part.targets.contains_key(*id) || *olds[i] != new {
                records.push(ShareGroupRecord::TargetAssignmentMember {
                    group: group_id.clone(),
                    member: id.to_string(),
                    value: Some(new.clone()),
                });
            }
            if *id == updated.member_id {
                mine = new;
            }
        }
        // With the time of the computation, as Kafka 4.3+ writes it (4.2 writes none).
        records.push(ShareGroupRecord::TargetAssignmentMetadata {
            group: group_id,
            value: Some((epoch, self.runtime.now())),
        });
        Ok(mine)
    }

    /// topic_ids are the ids of the named topics that exist.
    fn topic_ids(&self, names: &BTreeSet<String>) -> BTreeSet<TopicId> {
        names
            .iter()
            .filter_map(|n| self.topic_meta.get(n).map(|t| t.topic_id))
            .collect()
    }

    /// filter_subscribed is `target` without the topics `names` does not subscribe to.
    fn filter_subscribed(&self, target: &Assignment, names: &BTreeSet<String>) -> Assignment {
        let ids = self.topic_ids(names);
        target
            .iter()
            .filter(|(t, _)| ids.contains(*t))
            .map(|(t, p)| (*t, p.to_vec()))
            .collect()
    }

    /// partitions_to_initialize is Kafka's `subscribedTopicsChangeMap`: for each subscribed
    /// topic that exists, the partitions neither initialized nor initializing (an entry
    /// initializing for longer than `group.share.initialize.retry.interval.ms` counts as
    /// neither), when the topic has any such.
    fn partitions_to_initialize<'a>(
        &self,
        g: u32,
        subscribed: impl Iterator<Item = &'a String>,
        now: i64,
    ) -> BTreeMap<TopicId, TopicPartitions> {
        let part = self.share_part(g);
        let retry = self.config.share_initialize_retry_interval_ms;
        let mut out = BTreeMap::new();
        for name in subscribed {
            let Some(t) = self.topic_meta.get(name) else {
                continue;
            };
            let mut known: BTreeSet<i32> = BTreeSet::new();
            if let Some(init) = &part.init {
                if let Some(i) = init.initialized.get(&t.topic_id) {
                    known.extend(&i.partitions);
                }
                if let Some((i, at)) = init.initializing.get(&t.topic_id) {
                    if now.saturating_sub(*at) < retry {
                        known.extend(&i.partitions);
                    }
                }
            }
            if known.is_empty() || known.len() < t.partition_count.max(0) as usize {
                let partitions: BTreeSet<i32> = (0..t.partition_count)
                    .filter(|p| !known.contains(p))
                    .collect();
                out.insert(
                    t.topic_id,
                    TopicPartitions {
                        name: name.clone(),
                        partitions,
                    },
                );
            }
        }
        out
    }

    /// add_initializing adds the record 15 that marks `init` as initializing (Kafka's
    /// `addInitializingTopicsRecords`, merged with what the group has: the topics it initializes
    /// are no longer deleting) and returns the effects asking the host for them. Topics that no
    /// longer exist leave the record too (Kafka's `maybeCleanupShareGroupState`, which it runs
    /// as the topic goes; here at the group's next heartbeat): their share state is the host's
    /// to delete with the topic, as Kafka's broker deletes it.
    fn add_initializing(
        &self,
        g: u32,
        group_id: &str,
        state_epoch: i32,
        init: BTreeMap<TopicId, TopicPartitions>,
        now: i64,
        records: &mut Vec<ShareGroupRecord>,
    ) -> Vec<ShareEffect> {
        let mut state = self.share_part(g).init.clone().unwrap_or_default();
        let exists = |id: &TopicId| self.topic_names.contains_key(id);
        let before = state.clone();
        state.initializing.retain(|id, _| exists(id));
        state.initialized.retain(|id, _| exists(id));
        state.deleting.retain(|id, _| exists(id));
        if init.is_empty() && state == before {
            return Vec::new();
        }
        for (id, t) in &init {
            let e = state
                .initializing
                .entry(*id)
                .or_insert_with(|| (TopicPartitions::default(), now));
            e.0.name = t.name.clone();
            e.0.partitions.extend(&t.partitions);
            e.1 = now;
            state.deleting.remove(id);
        }
        records.push(ShareGroupRecord::StatePartitionMetadata {
            group: group_id.to_string(),
            value: Some(state.value()),
        });
        init.into_iter()
            .map(|(topic_id, t)| ShareEffect::InitializeShareState {
                group_id: group_id.to_string(),
                topic_id,
                partitions: t.partitions.into_iter().collect(),
                state_epoch,
            })
            .collect()
    }

    fn share_leave(&mut self, token: Token, r: &ShareGroupHeartbeat<'_>) -> Result<(), Error> {
        let (g, _) = self.share_slot(&r.group_id, false)?;
        let member_id = r.member_id.to_string();
        if !self.share_part(g).members.contains_key(&member_id) {
            return Err(kafka(
                ErrorCode::UnknownMemberId,
                format!(
                    "Member {member_id} is not a member of group {}.",
                    r.group_id
                ),
            ));
        }
        let response = ShareGroupHeartbeatResponse {
            member_id: Some(member_id.clone().into()),
            member_epoch: r.member_epoch,
            ..Default::default()
        };
        self.share_fence(
            g,
            &member_id,
            Some(token),
            Some(GroupResponse::ShareGroupHeartbeat(response)),
        )
    }

    /// share_fence removes a member (its leave or its session's end; Kafka's
    /// `shareGroupFenceMember`): its current assignment, target and metadata tombstoned, the
    /// group epoch bumped with the hash of the topics the others subscribe to.
    fn share_fence(
        &mut self,
        g: u32,
        member_id: &str,
        token: Option<Token>,
        response: Option<GroupResponse>,
    ) -> Result<(), Error> {
        let now = self.runtime.now();
        let part = self.share_part(g);
        let group_id = part.group_id.clone();
        let names: BTreeSet<String> = part
            .members
            .values()
            .filter(|m| m.member_id != member_id)
            .flat_map(|m| m.subscribed_topic_names.iter().cloned())
            .collect();
        let hash = metadata_hash(names.iter(), &self.topic_meta);
        let group = || group_id.clone();
        let member = || member_id.to_string();
        let records = vec![
            ShareGroupRecord::CurrentMemberAssignment {
                group: group(),
                member: member(),
                value: None,
            },
            ShareGroupRecord::TargetAssignmentMember {
                group: group(),
                member: member(),
                value: None,
            },
            ShareGroupRecord::MemberMetadata {
                group: group(),
                member: member(),
                value: None,
            },
            ShareGroupRecord::Metadata {
                group: group(),
                value: Some((part.group_epoch + 1, hash)),
            },
        ];
        let part = self.share_part_mut(g);
        let mut undo = Vec::new();
        for rec in &records {
            part.apply(rec, now, Some(&mut undo));
        }
        part.drop_timers(member_id);
        self.write_share(g, token, &records, undo, response, Vec::new())
    }

    /// write_share appends a share group's records; the response (if any) and the effects go
    /// out when they are in the log. Without records they go out now.
    fn write_share(
        &mut self,
        g: u32,
        token: Option<Token>,
        records: &[ShareGroupRecord],
        undo: Vec<Undo>,
        response: Option<GroupResponse>,
        effects: Vec<ShareEffect>,
    ) -> Result<(), Error> {
        let mut raw: Records = Vec::with_capacity(records.len());
        for rec in records {
            raw.push((rec.key()?, rec.value()?));
        }
        if raw.is_empty() {
            if let (Some(t), Some(r)) = (token, response) {
                self.respond(t, r);
            }
            for e in effects {
                self.runtime.emit(e);
            }
            return Ok(());
        }
        let group = self.group(g);
        let (partition, uid, id) = (group.partition, group.uid, group.id.clone());
        self.append(
            partition,
            raw,
            Pending::Share(Box::new(ShareWrite {
                token,
                group: id,
                uid,
                response,
                undo,
                effects,
            })),
        );
        Ok(())
    }

    /// complete_share_write answers what waited on a share group's append and hands the host
    /// its effects; a failed append puts the group back as it was before it, and asks for
    /// nothing.
    pub(crate) fn complete_share_write(&mut self, w: ShareWrite, error: ErrorCode) {
        if error != ErrorCode::None {
            let code = match error {
                ErrorCode::RequestTimedOut => ErrorCode::CoordinatorNotAvailable,
                e => map_group_error(e),
            };
            if let Some(g) = self.slot_of_uid(&w.group, w.uid) {
                if let Some(part) = self.group_mut(g).share.as_deref_mut() {
                    part.undo(w.undo);
                    // A group the failed heartbeat made has nothing in the log: it goes.
                    if part.is_empty() && part.group_epoch == 0 && part.init.is_none() {
                        self.drop_group(g);
                    } else {
                        self.rearm_restored_share_sessions(g);
                    }
                }
            }
            if let Some(t) = w.token {
                let failed = error_response(&kafka(code, ""));
                self.respond(t, GroupResponse::ShareGroupHeartbeat(failed));
            }
            return;
        }
        if let (Some(t), Some(r)) = (w.token, w.response) {
            self.respond(t, r);
        }
        for e in w.effects {
            self.runtime.emit(e);
        }
    }

    // -- the host's reports on share state ----------------------------------------------

    /// share_state_initialized is the host's report that the share state of `partitions` of
    /// `topic_id` in share group `group_id` is initialized (after an
    /// [`ShareEffect::InitializeShareState`]; Kafka's `initializeShareGroupState`): a record
    /// moves them from initializing to initialized, and the group's next heartbeat bumps its
    /// epoch and assigns them. A group that is gone or not a share group, or no partitions,
    /// change nothing.
    pub fn share_state_initialized(
        &mut self,
        now: i64,
        group_id: &str,
        topic_id: TopicId,
        partitions: &[i32],
    ) -> Vec<Effect> {
        self.share_state_report(now, group_id, topic_id, partitions, true)
    }

    /// share_state_initialize_failed is the host's report that initializing the share state
    /// of `partitions` failed (Kafka's `uninitializeShareGroupState`): they are no longer
    /// initializing, so the group's next heartbeat asks for them again.
    pub fn share_state_initialize_failed(
        &mut self,
        now: i64,
        group_id: &str,
        topic_id: TopicId,
        partitions: &[i32],
    ) -> Vec<Effect> {
        self.share_state_report(now, group_id, topic_id, partitions, false)
    }

    fn share_state_report(
        &mut self,
        now: i64,
        group_id: &str,
        topic_id: TopicId,
        partitions: &[i32],
        done: bool,
    ) -> Vec<Effect> {
        let mut out = Vec::new();
        self.enter(now);
        if let Some(g) = self.slot_of(group_id).filter(|g| {
            self.group(*g).share.is_some()
                && !partitions.is_empty()
                && self.gate(group_id).is_none()
        }) {
            let part = self.share_part(g);
            let old = part.init.clone();
            let mut state: InitState = old.clone().unwrap_or_default();
            let ps: BTreeSet<i32> = partitions.iter().copied().collect();
            if let Some((t, _)) = state.initializing.get_mut(&topic_id) {
                t.partitions.retain(|p| !ps.contains(p));
                if t.partitions.is_empty() {
                    state.initializing.remove(&topic_id);
                }
            }
            if done {
                let name = self
                    .topic_names
                    .get(&topic_id)
                    .map(|n| n.to_string())
                    .unwrap_or_else(|| "<UNKNOWN>".to_string());
                let e = state.initialized.entry(topic_id).or_default();
                e.name = name;
                e.partitions.extend(&ps);
            }
            if Some(&state) != old.as_ref() {
                let rec = ShareGroupRecord::StatePartitionMetadata {
                    group: group_id.to_string(),
                    value: Some(state.value()),
                };
                let mut undo = Vec::new();
                self.share_part_mut(g).apply(&rec, now, Some(&mut undo));
                let _ = self.write_share(g, None, &[rec], undo, None, Vec::new());
            }
        }
        self.run_timers();
        self.runtime.drain_into(&mut out);
        out
    }

    /// delete_share_group drops a deleted (Empty) share group: the host is asked to delete the
    /// share state of its initialized and initializing partitions, then its tombstones go to
    /// `tombstones` (Kafka's `ShareGroup.createGroupTombstoneRecords` for a group without
    /// members: target assignment metadata, share-partition state metadata, epoch).
    pub(crate) fn delete_share_group(&mut self, g: u32, tombstones: &mut BTreeMap<i32, Records>) {
        let Some(group) = self.drop_group(g) else {
            return;
        };
        let Some(part) = group.share else {
            return;
        };
        let id = part.group_id.clone();
        if let Some(init) = &part.init {
            let mut all: BTreeMap<TopicId, BTreeSet<i32>> = BTreeMap::new();
            for (t, tp) in &init.initialized {
                all.entry(*t).or_default().extend(&tp.partitions);
            }
            for (t, (tp, _)) in &init.initializing {
                all.entry(*t).or_default().extend(&tp.partitions);
            }
            for (topic_id, ps) in all {
                self.runtime.emit(ShareEffect::DeleteShareState {
                    group_id: id.clone(),
                    topic_id,
                    partitions: ps.into_iter().collect(),
                });
            }
        }
        let recs = [
            ShareGroupRecord::TargetAssignmentMetadata {
                group: id.clone(),
                value: None,
            },
            ShareGroupRecord::StatePartitionMetadata {
                group: id.clone(),
                value: None,
            },
            ShareGroupRecord::Metadata {
                group: id,
                value: None,
            },
        ];
        let out = tombstones.entry(group.partition).or_default();
        for r in recs {
            if let (Ok(k), Ok(v)) = (r.key(), r.value()) {
                out.push((k, v));
            }
        }
    }

    // -- timers -------------------------------------------------------------------------

    /// activate_share_group starts a loaded group's sessions (Kafka's `onLoaded`): a full
    /// session for every member; its initializing partitions count from now.
    pub(crate) fn activate_share_group(&mut self, g: u32) {
        let now = self.runtime.now();
        let session = self.share_session_timeout_ms(&self.share_part(g).group_id);
        let part = self.share_part_mut(g);
        if let Some(init) = part.init.as_mut() {
            for (_, at) in init.initializing.values_mut() {
                *at = now;
            }
        }
        let members: Vec<String> = part.members.keys().cloned().collect();
        for id in members {
            self.arm_share_session(g, &id, now.saturating_add(session));
        }
    }

    /// rearm_restored_share_sessions gives a full session to each member without one: a
    /// member a failed append put back after its leave or fencing had dropped its timer.
    fn rearm_restored_share_sessions(&mut self, g: u32) {
        let now = self.runtime.now();
        let session = self.share_session_timeout_ms(&self.share_part(g).group_id);
        let part = self.share_part(g);
        let missing: Vec<String> = part
            .members
            .keys()
            .filter(|id| {
                part.timer_slot(id)
                    .and_then(|s| part.timers.get(s))
                    .is_none_or(|t| t.session.deadline.is_none())
            })
            .cloned()
            .collect();
        for id in missing {
            self.arm_share_session(g, &id, now.saturating_add(session));
        }
    }

    fn arm_share_session(&mut self, g: u32, member_id: &str, at: i64) {
        let slot = self.share_part_mut(g).timers_of(member_id);
        let Coordinator {
            groups, runtime, ..
        } = self;
        if let Some(t) = groups
            .get_mut(g)
            .and_then(|gr| gr.share.as_deref_mut())
            .and_then(|p| p.timers.get_mut(slot))
        {
            runtime.timers.set(
                &mut t.session,
                TimerKey::ShareSession {
                    group: g,
                    member: slot,
                },
                at,
            );
        }
    }

    /// expire_share_session fences a member whose session ended.
    pub(crate) fn expire_share_session(&mut self, g: u32, slot: u32) {
        let Some(member_id) = self
            .groups
            .get(g)
            .and_then(|gr| gr.share.as_deref())
            .and_then(|p| p.timers.get(slot))
            .map(|t| t.member_id.clone())
        else {
            return;
        };
        self.expire_share_member(g, &member_id);
    }

    /// expire_share_member is the end of `member_id`'s session: the member is fenced; a member
    /// the group no longer has only loses its timer.
    pub(crate) fn expire_share_member(&mut self, g: u32, member_id: &str) {
        if self.share_part(g).members.contains_key(member_id) {
            let _ = self.share_fence(g, member_id, None, None);
        } else {
            self.share_part_mut(g).drop_timers(member_id);
        }
    }
}

/// initialized_assignment_pending is Kafka's `initializedAssignmentPending`: the group has
/// members and initialized partitions of a topic it subscribes to that its target assignment
/// does not hold exactly (newly initialized ones wait for an epoch bump to be assigned).
fn initialized_assignment_pending(
    part: &SharePart,
    topic_names: &crate::assignors::fxhash::FxMap<TopicId, std::sync::Arc<str>>,
) -> bool {
    if part.is_empty() {
        return false;
    }
    let Some(init) = part.init.as_ref().filter(|i| !i.initialized.is_empty()) else {
        return false;
    };
    let subscribed = part.subscribed_topic_names();
    if subscribed.is_empty() {
        return false;
    }
    let mut assigned: BTreeMap<TopicId, BTreeSet<i32>> = BTreeMap::new();
    for a in part.targets.values() {
        for (t, ps) in a.iter() {
            assigned.entry(*t).or_default().extend(ps.iter().copied());
        }
    }
    // A topic gone (or made again under another id) is not pending: Kafka drops it from the
    // group's state as it goes.
    init.initialized
        .iter()
        .filter(|(id, t)| {
            subscribed.contains(&t.name) && topic_names.get(*id).is_some_and(|n| **n == *t.name)
        })
        .any(|(id, t)| assigned.get(id) != Some(&t.partitions))
}
