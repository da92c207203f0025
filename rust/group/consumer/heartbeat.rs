//! ConsumerGroupHeartbeat (api 68) v0-1: a member of a KIP-848 consumer group joins, keeps its
//! session, reports what it owns and learns its assignment; it leaves with epoch -1, or -2 for a
//! static member's temporary leave (Kafka 4.2's `GroupMetadataManager.consumerGroupHeartbeat`
//! and `consumerGroupLeave`, reference §2). Also the session and rebalance timeouts that fence
//! a member.
//!
//! A heartbeat works on the group as it stands plus the member it changes, writes what changed
//! as records in Kafka's order (§7.3), applies them to the group at once and answers once they
//! are appended; a failed append puts the group back and answers the mapped error.

use super::group::{ConsumerGroup, TargetChange};
use super::member::{ConsumerMember, MemberState};
use super::part::{metadata_hash, ConsumerPart, Undo};
use super::records::{ConsumerGroupRecord, CurrentAssignment, MemberMetadata, ResolvedRegex};
use super::{reconcile, validate_member_epoch, OwnedTopicPartitions, Reconcile};
use crate::coordinator::appends::Records;
use crate::errors::{Error, ErrorCode};
use crate::group::api::{
    ConsumerGroupHeartbeat, ConsumerGroupHeartbeatResponse,
    ConsumerGroupHeartbeatResponseAssignment, ConsumerGroupHeartbeatResponseTopicPartition,
    GroupResponse, LeaveGroup, LeaveGroupResponse, Token,
};
use crate::group::assignors::{by_name, Assignment, TopicId};
use crate::group::classic::leave_group::left;
use crate::group::classic::rebalance::map_group_error;
use crate::group::coordinator::Coordinator;
use crate::group::pending::{ConsumerWrite, Pending};
use crate::group::records::group_metadata_key;
use crate::group::timers::TimerKey;
use std::collections::{BTreeMap, BTreeSet};

/// LEAVE_EPOCH is the member epoch of a leave; STATIC_LEAVE_EPOCH a static member's temporary
/// leave.
const LEAVE_EPOCH: i32 = -1;
const STATIC_LEAVE_EPOCH: i32 = -2;

fn kafka(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::kafka(code, message)
}

/// error_response is Kafka's answer to a failed heartbeat: the code and message, no member id,
/// epoch 0, no interval.
pub(crate) fn error_response(e: &Error) -> ConsumerGroupHeartbeatResponse<'static> {
    let (code, message) = match e {
        Error::Kafka(k) => (k.code, Some(k.message.clone()).filter(|m| !m.is_empty())),
        other => (ErrorCode::UnknownServerError, Some(other.to_string())),
    };
    ConsumerGroupHeartbeatResponse {
        error_code: code.code(),
        error_message: message.map(Into::into),
        ..Default::default()
    }
}

/// Step is what [`Coordinator::member_step`] worked out for one member: the records to write,
/// the member as reconciled, and what the group saw of the topics.
pub(super) struct Step {
    pub records: Vec<ConsumerGroupRecord>,
    pub reconciled: ConsumerMember,
    /// reconciliation_changed: the member's epoch, state or partitions moved.
    pub reconciliation_changed: bool,
    refreshed: bool,
    new_hash: Option<i64>,
    /// bump: the step bumps the group epoch.
    pub bump: bool,
    topic_version: u64,
}

/// Slot is how [`Coordinator::consumer_slot`] found the group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Existing,
    Created,
    OfflineUpgrade,
    OnlineUpgrade,
}

fn is_blank(s: &str) -> bool {
    s.trim().is_empty()
}

/// assignment_of is an assignment as the response carries it.
pub(crate) fn response_assignment(
    a: &Assignment,
) -> ConsumerGroupHeartbeatResponseAssignment<'static> {
    ConsumerGroupHeartbeatResponseAssignment {
        topic_partitions: a
            .iter()
            .map(|(t, p)| ConsumerGroupHeartbeatResponseTopicPartition {
                topic_id: *t,
                partitions: p.to_vec(),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    }
}

impl Coordinator {
    /// consumer_group_heartbeat serves a ConsumerGroupHeartbeat.
    pub(crate) fn consumer_group_heartbeat(
        &mut self,
        token: Token,
        r: &ConsumerGroupHeartbeat<'_>,
    ) {
        if let Err(e) = self.consumer_heartbeat_or_leave(token, r) {
            self.respond(
                token,
                GroupResponse::ConsumerGroupHeartbeat(error_response(&e)),
            );
        }
    }

    fn consumer_heartbeat_or_leave(
        &mut self,
        token: Token,
        r: &ConsumerGroupHeartbeat<'_>,
    ) -> Result<(), Error> {
        if !self.config.consumer_enabled() {
            return Err(kafka(
                ErrorCode::UnsupportedVersion,
                "The new consumer group protocol is not enabled on this broker.",
            ));
        }
        self.validate_heartbeat(r)?;
        if let Some(e) = self.gate(&r.group_id) {
            return Err(kafka(e, ""));
        }
        if r.member_epoch == LEAVE_EPOCH || r.member_epoch == STATIC_LEAVE_EPOCH {
            self.consumer_leave(token, r)
        } else {
            self.consumer_heartbeat(token, r)
        }
    }

    /// validate_heartbeat is Kafka's `throwIfConsumerGroupHeartbeatRequestIsInvalid` (§2.3).
    fn validate_heartbeat(&self, r: &ConsumerGroupHeartbeat<'_>) -> Result<(), Error> {
        let invalid = |m: &str| Err(kafka(ErrorCode::InvalidRequest, m));
        if (r.version >= 1 || r.member_epoch > 0 || r.member_epoch == LEAVE_EPOCH)
            && is_blank(&r.member_id)
        {
            return invalid("MemberId can't be empty.");
        }
        if is_blank(&r.group_id) {
            return invalid("GroupId can't be empty.");
        }
        if r.instance_id.as_deref().is_some_and(is_blank) {
            return invalid("InstanceId can't be empty.");
        }
        if r.rack_id.as_deref().is_some_and(is_blank) {
            return invalid("RackId can't be empty.");
        }
        if r.member_epoch == 0 {
            if r.rebalance_timeout_ms == -1 {
                return invalid("RebalanceTimeoutMs must be provided in first request.");
            }
            if !r.topic_partitions.as_ref().is_some_and(|t| t.is_empty()) {
                return invalid("TopicPartitions must be empty when (re-)joining.");
            }
            if r.subscribed_topic_names.is_none() && r.subscribed_topic_regex.is_none() {
                return invalid(
                    "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.",
                );
            }
        } else if r.member_epoch == STATIC_LEAVE_EPOCH {
            if r.instance_id.is_none() {
                return invalid("InstanceId can't be null.");
            }
        } else if r.member_epoch < STATIC_LEAVE_EPOCH {
            return invalid(&format!("MemberEpoch {} is invalid.", r.member_epoch));
        }
        if let Some(a) = r.server_assignor.as_deref() {
            if !self.config.consumer_assignors.iter().any(|n| n == a) {
                return Err(kafka(
                    ErrorCode::UnsupportedAssignor,
                    format!(
                        "ServerAssignor {a} is not supported. Supported assignors: {}.",
                        self.config.consumer_assignors.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// consumer_slot is the slot of consumer group `group_id`: GROUP_ID_NOT_FOUND when there
    /// is none or the group is another type. With `create` (a join) a missing group is made;
    /// an Empty classic group becomes a consumer group, its metadata tombstoned into `records`
    /// (Kafka's offline upgrade; its offsets stay); a classic group with members is upgraded
    /// online (§8.2), its conversion's records in `records`. The [`Slot`] says which.
    fn consumer_slot(
        &mut self,
        group_id: &str,
        create: bool,
        records: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) -> Result<(u32, Slot), Error> {
        let Some(s) = self.slot_of(group_id) else {
            if !create {
                return Err(kafka(
                    ErrorCode::GroupIdNotFound,
                    format!("Consumer group {group_id} not found."),
                ));
            }
            let s = self.create_group(group_id);
            self.group_mut(s).consumer = Some(Box::new(ConsumerPart::new(group_id)));
            return Ok((s, Slot::Created));
        };
        let g = self.group(s);
        if g.consumer.is_some() {
            return Ok((s, Slot::Existing));
        }
        if create && g.share.is_none() && g.members.is_empty() && g.pending.is_empty() {
            if g.generation > 0 || g.protocol_type.is_some() {
                records.push((group_metadata_key(group_id)?, None));
            }
            let g = self.group_mut(s);
            g.consumer = Some(Box::new(ConsumerPart::new(group_id)));
            return Ok((s, Slot::OfflineUpgrade));
        }
        if create && g.share.is_none() {
            self.upgrade_classic_group(s, records)?;
            return Ok((s, Slot::OnlineUpgrade));
        }
        Err(kafka(
            ErrorCode::GroupIdNotFound,
            format!("Group {group_id} is not a consumer group."),
        ))
    }

    pub(super) fn part(&self, g: u32) -> &ConsumerPart {
        self.group(g).consumer.as_deref().expect("a consumer group")
    }

    pub(super) fn part_mut(&mut self, g: u32) -> &mut ConsumerPart {
        self.group_mut(g)
            .consumer
            .as_deref_mut()
            .expect("a consumer group")
    }

    fn consumer_heartbeat(
        &mut self,
        token: Token,
        r: &ConsumerGroupHeartbeat<'_>,
    ) -> Result<(), Error> {
        let group_id: &str = &r.group_id;
        let joining = r.member_epoch == 0;
        let mut raw = Vec::new();
        let (g, slot) = self.consumer_slot(group_id, joining, &mut raw)?;
        let result = self.consumer_heartbeat_in(token, r, g, &mut raw);
        if result.is_err() {
            match slot {
                Slot::Created if self.part(g).group.num_members() == 0 => {
                    self.drop_group(g);
                }
                // The Empty classic group is as it was.
                Slot::OfflineUpgrade if self.part(g).group.num_members() == 0 => {
                    self.group_mut(g).consumer = None;
                }
                // The classic group is gone already (its parked requests were answered):
                // the conversion is written even though this heartbeat failed.
                Slot::OnlineUpgrade => self.write_consumer(g, None, raw, Vec::new(), None),
                _ => {}
            }
        }
        result
    }

    fn consumer_heartbeat_in(
        &mut self,
        token: Token,
        r: &ConsumerGroupHeartbeat<'_>,
        g: u32,
        raw: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>,
    ) -> Result<(), Error> {
        let group_id: &str = &r.group_id;
        let joining = r.member_epoch == 0;
        let now = self.runtime.now();
        let max_size = usize::try_from(self.config.consumer_max_size).unwrap_or(usize::MAX);
        let owned = r.topic_partitions.as_deref();
        let instance_id = r.instance_id.as_deref();
        let mut records: Vec<ConsumerGroupRecord> = Vec::new();
        let mut replaced: Option<String> = None;

        let part = self.part(g);
        let group = &part.group;
        if instance_id.is_none_or(|i| group.static_member_id(i).is_none())
            && group.is_full(max_size, &r.member_id)
        {
            return Err(kafka(
                ErrorCode::GroupMaxSizeReached,
                format!(
                    "The consumer group has reached its maximum capacity of {max_size} members."
                ),
            ));
        }
        let member_id = if r.member_id.is_empty() {
            self.new_uuid()
        } else {
            r.member_id.to_string()
        };
        let part = self.part(g);
        let group = &part.group;

        // The member: found, made, or (a static member's rejoin) taken over.
        let member: ConsumerMember = match instance_id {
            None => match group.member(&member_id) {
                Some(m) => {
                    validate_member_epoch(m, r.member_epoch, owned)?;
                    m.clone()
                }
                None if joining => ConsumerMember::new(member_id.as_str()),
                None => {
                    return Err(kafka(
                        ErrorCode::UnknownMemberId,
                        format!("Member {member_id} is not a member of group {group_id}."),
                    ))
                }
            },
            Some(instance) => {
                let existing = group.static_member(instance);
                if joining {
                    match existing {
                        None => group
                            .member(&member_id)
                            .cloned()
                            .unwrap_or_else(|| ConsumerMember::new(member_id.as_str())),
                        Some(old) => {
                            if old.classic_member_metadata.is_none()
                                && old.member_epoch != STATIC_LEAVE_EPOCH
                            {
                                return Err(kafka(
                                    ErrorCode::UnreleasedInstanceId,
                                    format!(
                                        "Static member {} with instance id {instance} cannot \
                                         join the group because the instance id is owned by \
                                         {} member.",
                                        member_id, old.member_id
                                    ),
                                ));
                            }
                            if old.member_id != member_id {
                                replaced = Some(old.member_id.clone());
                            }
                            replace_static_member(group, old, &member_id, &mut records)
                        }
                    }
                } else {
                    let Some(m) = existing else {
                        return Err(kafka(
                            ErrorCode::UnknownMemberId,
                            format!("Instance id {instance} is unknown."),
                        ));
                    };
                    if m.member_id != member_id {
                        return Err(kafka(
                            ErrorCode::FencedInstanceId,
                            format!(
                                "Static member {member_id} with instance id {instance} is \
                                 fenced by existing member {}.",
                                m.member_id
                            ),
                        ));
                    }
                    validate_member_epoch(m, r.member_epoch, owned)?;
                    m.clone()
                }
            }
        };

        // The member as this heartbeat updates it.
        let mut updated = member.clone();
        if let Some(i) = instance_id {
            updated.instance_id = Some(i.to_string());
        }
        if let Some(rack) = r.rack_id.as_deref() {
            updated.rack_id = Some(rack.to_string());
        }
        if r.rebalance_timeout_ms != -1 {
            updated.rebalance_timeout_ms = r.rebalance_timeout_ms;
        }
        if let Some(a) = r.server_assignor.as_deref() {
            updated.server_assignor = Some(a.to_string());
        }
        if let Some(names) = &r.subscribed_topic_names {
            updated.subscribed_topic_names = names.iter().map(|n| n.to_string()).collect();
        }
        if let Some(regex) = r.subscribed_topic_regex.as_deref() {
            updated.subscribed_topic_regex = regex.to_string();
        }
        updated.client_id = r.client_id.to_string();
        updated.client_host = r.client_host.to_string();
        updated.classic_member_metadata = None;

        let step = self.member_step(g, &member, updated, replaced.as_deref(), records, owned)?;
        let reconciled = &step.reconciled;
        let full = r.rebalance_timeout_ms != -1
            && (r.subscribed_topic_names.is_some() || r.subscribed_topic_regex.is_some())
            && owned.is_some();
        let response = ConsumerGroupHeartbeatResponse {
            member_id: Some(member_id.clone().into()),
            member_epoch: reconciled.member_epoch,
            heartbeat_interval_ms: i32::try_from(self.consumer_heartbeat_interval_ms(group_id))
                .unwrap_or(i32::MAX),
            assignment: (joining
                || full
                || reconciled.assigned_partitions != member.assigned_partitions)
                .then(|| response_assignment(&reconciled.assigned_partitions)),
            ..Default::default()
        };

        // Apply what changed, then the timers.
        let undo = self.apply_step(g, &step, replaced.as_deref());
        let session = self.consumer_session_timeout_ms(group_id);
        self.arm_session(g, &member_id, now.saturating_add(session));
        if step.reconciliation_changed {
            if reconciled.state == MemberState::UnrevokedPartitions {
                self.arm_rebalance(
                    g,
                    &member_id,
                    now.saturating_add(i64::from(reconciled.rebalance_timeout_ms.max(0))),
                    reconciled.member_epoch,
                );
            } else {
                self.cancel_rebalance(g, &member_id);
            }
        }
        self.write_consumer(
            g,
            Some(token),
            raw_records(raw, &step.records)?,
            undo,
            Some(GroupResponse::ConsumerGroupHeartbeat(response)),
        );
        Ok(())
    }

    /// member_step is what a member's heartbeat (or a classic member's JoinGroup) does to the
    /// group once the member as the request updates it is known: its regexes resolved, the
    /// group epoch bumped when the subscriptions, the preferred assignor or the topics changed,
    /// the target computed when the group epoch is ahead of it, and the member reconciled
    /// towards its target. Nothing changes yet: the records are in the [`Step`].
    pub(super) fn member_step(
        &self,
        g: u32,
        member: &ConsumerMember,
        updated: ConsumerMember,
        replaced: Option<&str>,
        mut records: Vec<ConsumerGroupRecord>,
        owned: Option<&[OwnedTopicPartitions<'_>]>,
    ) -> Result<Step, Error> {
        let now = self.runtime.now();
        let part = self.part(g);
        let group = &part.group;
        let group_id = group.group_id().to_string();
        let group_id: &str = &group_id;
        let member_id = updated.member_id.clone();
        let instance_id = updated.instance_id.as_deref();
        let default_assignor = self
            .config
            .consumer_assignors
            .first()
            .cloned()
            .unwrap_or_else(|| "uniform".to_string());

        let mut names_changed = false;
        if updated != *member {
            records.push(ConsumerGroupRecord::MemberMetadata {
                group: group_id.to_string(),
                member: member_id.clone(),
                value: Some(MemberMetadata::of(&updated)),
            });
            names_changed = updated.subscribed_topic_names != member.subscribed_topic_names;
        }
        // Regex subscriptions (§4): a regex no member uses any more is tombstoned; one new to the
        // group is compiled (INVALID_REGULAR_EXPRESSION) and resolved at the group's next
        // heartbeat, as Kafka resolves it off the heartbeat path and bumps the epoch afterwards
        // (librdkafka's 0045 counts on the member's names being assigned before its regex's);
        // every regex in use is resolved again once the topics have changed.
        let topic_version = self.topic_version;
        let prior = match replaced {
            Some(old) => group.member(old),
            None => group.member(&member_id),
        };
        let mut regex_counts: BTreeMap<String, usize> = group.subscribed_regexes().clone();
        if let Some(p) = prior.filter(|p| !p.subscribed_topic_regex.is_empty()) {
            if let Some(c) = regex_counts.get_mut(&p.subscribed_topic_regex) {
                *c -= 1;
            }
        }
        if !updated.subscribed_topic_regex.is_empty() {
            *regex_counts
                .entry(updated.subscribed_topic_regex.clone())
                .or_default() += 1;
        }
        regex_counts.retain(|_, c| *c > 0);
        let mut resolutions: BTreeMap<String, ResolvedRegex> = group.resolved_regexes().clone();
        let old_regex = member.subscribed_topic_regex.as_str();
        let new_regex = updated.subscribed_topic_regex.as_str();
        let regex_changed = old_regex != new_regex;
        let mut regex_bump = false;
        let mut refreshed = false;
        if regex_changed {
            if !old_regex.is_empty()
                && !regex_counts.contains_key(old_regex)
                && resolutions.remove(old_regex).is_some()
            {
                records.push(ConsumerGroupRecord::RegularExpression {
                    group: group_id.to_string(),
                    regex: old_regex.to_string(),
                    value: None,
                });
            }
            if !new_regex.is_empty() {
                if resolutions.contains_key(new_regex) {
                    regex_bump = true;
                } else {
                    compile_regex(new_regex)?;
                }
            } else if !old_regex.is_empty() {
                // KAFKA-19891 (4.2): dropping a regex bumps the epoch too.
                regex_bump = true;
            }
        }
        // The regex this heartbeat brings to the group waits for the next one.
        let brought = (regex_changed && !group.subscribed_regexes().contains_key(new_regex))
            .then_some(new_regex);
        let unresolved = regex_counts
            .keys()
            .any(|r| Some(r.as_str()) != brought && !resolutions.contains_key(r));
        if !regex_counts.is_empty() && (part.regexes_seen != topic_version || unresolved) {
            refreshed = true;
            for regex in regex_counts.keys() {
                if Some(regex.as_str()) == brought {
                    continue;
                }
                let Ok(re) = compile_regex(regex) else {
                    continue;
                };
                let topics = matching_topics(&re, &self.topic_meta);
                let old = resolutions.get(regex);
                if old.map(|r| &r.topics) == Some(&topics) {
                    continue;
                }
                // A first resolution that matches nothing changes no assignment.
                regex_bump |= old.is_some() || !topics.is_empty();
                let resolved = ResolvedRegex {
                    topics,
                    version: topic_version as i64,
                    timestamp: now,
                };
                records.push(ConsumerGroupRecord::RegularExpression {
                    group: group_id.to_string(),
                    regex: regex.clone(),
                    value: Some(resolved.clone()),
                });
                resolutions.insert(regex.clone(), resolved);
            }
        }

        let preferred_before = group
            .preferred_server_assignor(&default_assignor)
            .to_string();
        let preferred =
            group.preferred_server_assignor_after(Some(member), Some(&updated), &default_assignor);

        // The group epoch: bumped on a subscription or assignor change, and when the subscribed
        // topics' metadata changed. A new group is at epoch 1 already (KAFKA-20268).
        let mut group_epoch = group.group_epoch();
        let mut bump = names_changed || regex_bump || preferred != preferred_before;
        let mut new_hash = None;
        if bump || part.metadata_seen != topic_version {
            let mut names = subscribed_names_after(group, prior, Some(&updated));
            for regex in regex_counts.keys() {
                if let Some(r) = resolutions.get(regex) {
                    names.extend(r.topics.iter().cloned());
                }
            }
            let hash = metadata_hash(names.iter(), &self.topic_meta);
            bump |= hash != part.metadata_hash;
            new_hash = Some(hash);
        }
        if bump {
            group_epoch += 1;
            records.push(ConsumerGroupRecord::Metadata {
                group: group_id.to_string(),
                value: Some((group_epoch, new_hash.unwrap_or(part.metadata_hash))),
            });
        }

        // The target: computed when the group epoch is ahead of it and the group's assignment
        // interval has passed since the last one (Kafka 4.3+'s batching, KIP-1263); else the
        // member reconciles towards the last target.
        let (target_epoch, target) = if group_epoch > group.assignment_epoch()
            && ConsumerGroup::can_compute_next_target_assignment(
                group.assignment_timestamp(),
                self.consumer_assignment_interval_ms(group_id),
                now,
            ) {
            let assignor = by_name(&preferred).ok_or_else(|| {
                kafka(
                    ErrorCode::UnknownServerError,
                    format!("The assignor {preferred} is not known."),
                )
            })?;
            let resolved: BTreeMap<&str, &[String]> = resolutions
                .iter()
                .map(|(k, v)| (k.as_str(), v.topics.as_slice()))
                .collect();
            let computed = group
                .compute_target_assignment_with(
                    TargetChange::Update(&updated),
                    &self.topic_meta,
                    &resolved,
                    assignor,
                )
                .map_err(|e| kafka(e.error_code(), e.to_string()))?;
            for id in &computed.changed {
                records.push(ConsumerGroupRecord::TargetAssignmentMember {
                    group: group_id.to_string(),
                    member: id.clone(),
                    value: Some(computed.targets[id].clone()),
                });
            }
            records.push(ConsumerGroupRecord::TargetAssignmentMetadata {
                group: group_id.to_string(),
                value: Some((group_epoch, now)),
            });
            let target = computed
                .targets
                .get(&member_id)
                .cloned()
                .unwrap_or_default();
            (group_epoch, target)
        } else {
            let target = group
                .target(&member_id)
                .or_else(|| {
                    instance_id
                        .and_then(|i| group.static_member_id(i))
                        .and_then(|old| group.target(old))
                })
                .cloned()
                .unwrap_or_default();
            (group.assignment_epoch(), target)
        };

        // Reconciliation towards the target.
        let by_regex = resolutions
            .get(new_regex)
            .map(|r| r.topics.as_slice())
            .unwrap_or(&[]);
        let subscribed_ids: BTreeSet<TopicId> = updated
            .subscribed_topic_names
            .iter()
            .chain(by_regex)
            .filter_map(|n| self.topic_meta.get(n).map(|t| t.topic_id))
            .collect();
        let epochs = group.partition_epochs();
        let partition_epoch = |t: &TopicId, p: i32| epochs.get(t, p);
        let reconciled = reconcile(
            &updated,
            &Reconcile {
                target_epoch,
                target: &target,
                partition_epoch: &partition_epoch,
                owned_topic_partitions: owned,
                subscription_changed: names_changed || regex_changed,
                subscribed_topic_ids: &subscribed_ids,
            },
        )?;

        let reconciliation_changed = reconciled != updated;
        if reconciliation_changed {
            records.push(ConsumerGroupRecord::CurrentMemberAssignment {
                group: group_id.to_string(),
                member: member_id.clone(),
                value: Some(CurrentAssignment::of(&reconciled)),
            });
        }
        Ok(Step {
            records,
            reconciled,
            reconciliation_changed,
            refreshed,
            new_hash,
            bump,
            topic_version,
        })
    }

    /// apply_step applies a [`Step`] to the group: its records (with their undos, returned),
    /// the topic versions it checked, and the timers of a replaced static member going.
    pub(super) fn apply_step(&mut self, g: u32, step: &Step, replaced: Option<&str>) -> Vec<Undo> {
        let part = self.part_mut(g);
        if step.refreshed {
            part.regexes_seen = step.topic_version;
        }
        if let Some(h) = step.new_hash {
            part.metadata_seen = step.topic_version;
            if !step.bump {
                part.metadata_hash = h;
            }
        }
        let mut undo = Vec::new();
        for rec in &step.records {
            part.apply(rec, Some(&mut undo));
        }
        if let Some(old) = replaced {
            // A static member's replacement: the old id's timers go.
            part.drop_timers(old);
        }
        undo
    }

    /// consumer_leave serves a heartbeat with epoch -1 (leave) or -2 (a static member's
    /// temporary leave), Kafka's `consumerGroupLeave`.
    fn consumer_leave(
        &mut self,
        token: Token,
        r: &ConsumerGroupHeartbeat<'_>,
    ) -> Result<(), Error> {
        let group_id: &str = &r.group_id;
        let mut raw = Vec::new();
        let (g, _) = self.consumer_slot(group_id, false, &mut raw)?;
        let member_id = r.member_id.to_string();
        let part = self.part(g);
        let member = match r.instance_id.as_deref() {
            None => part.group.member(&member_id).cloned().ok_or_else(|| {
                kafka(
                    ErrorCode::UnknownMemberId,
                    format!("Member {member_id} is not a member of group {group_id}."),
                )
            })?,
            Some(instance) => {
                let m = part.group.static_member(instance).ok_or_else(|| {
                    kafka(
                        ErrorCode::UnknownMemberId,
                        format!("Instance id {instance} is unknown."),
                    )
                })?;
                if m.member_id != member_id {
                    return Err(kafka(
                        ErrorCode::FencedInstanceId,
                        format!(
                            "Static member {member_id} with instance id {instance} is fenced \
                             by existing member {}.",
                            m.member_id
                        ),
                    ));
                }
                m.clone()
            }
        };
        let response = ConsumerGroupHeartbeatResponse {
            member_id: Some(member_id.clone().into()),
            member_epoch: r.member_epoch,
            ..Default::default()
        };
        if r.member_epoch == STATIC_LEAVE_EPOCH {
            let mut left = member.clone();
            left.member_epoch = STATIC_LEAVE_EPOCH;
            let assigned = left.assigned_partitions.clone();
            left.hold(assigned, Assignment::new(), r.member_epoch);
            let records = vec![ConsumerGroupRecord::CurrentMemberAssignment {
                group: group_id.to_string(),
                member: member_id.clone(),
                value: Some(CurrentAssignment::of(&left)),
            }];
            let mut undo = Vec::new();
            let part = self.part_mut(g);
            for rec in &records {
                part.apply(rec, Some(&mut undo));
            }
            self.cancel_rebalance(g, &member_id);
            self.write_consumer(
                g,
                Some(token),
                raw_records(&mut raw, &records)?,
                undo,
                Some(GroupResponse::ConsumerGroupHeartbeat(response)),
            );
            return Ok(());
        }
        self.fence_members(
            g,
            &[member_id],
            Some(token),
            Some(GroupResponse::ConsumerGroupHeartbeat(response)),
        )
    }

    /// fence_members removes members (a leave, their session or rebalance timeout, an admin's
    /// LeaveGroup): each one's tombstones, then one group epoch bump, which the target
    /// assignment epoch follows when no member is left (Kafka's `consumerGroupFenceMembers`).
    pub(crate) fn fence_members(
        &mut self,
        g: u32,
        member_ids: &[String],
        token: Option<Token>,
        response: Option<GroupResponse>,
    ) -> Result<(), Error> {
        if self.downgrades_without(g, member_ids) {
            // Only classic members remain: the group becomes classic again (§8.4).
            let raw = self.downgrade_consumer_group(g, member_ids, None, true)?;
            self.write_consumer(g, token, raw, Vec::new(), response);
            return Ok(());
        }
        let topic_version = self.topic_version;
        let part = self.part(g);
        let group_id = part.group.group_id().to_string();
        let mut names: std::collections::BTreeMap<&str, usize> = part
            .group
            .subscribed_topic_names()
            .iter()
            .map(|(n, c)| (n.as_str(), *c))
            .collect();
        let mut records = Vec::new();
        for id in member_ids {
            if let Some(m) = part.group.member(id) {
                for n in &m.subscribed_topic_names {
                    if let Some(c) = names.get_mut(n.as_str()) {
                        *c = c.saturating_sub(1);
                    }
                }
            }
            records.extend(fence_records(&group_id, id));
        }
        let mut regexes: BTreeMap<&str, usize> = part
            .group
            .subscribed_regexes()
            .iter()
            .map(|(r, c)| (r.as_str(), *c))
            .collect();
        for id in member_ids {
            if let Some(m) = part.group.member(id) {
                if let Some(c) = regexes.get_mut(m.subscribed_topic_regex.as_str()) {
                    *c = c.saturating_sub(1);
                }
            }
        }
        let mut names: BTreeSet<String> = names
            .into_iter()
            .filter(|(_, c)| *c > 0)
            .map(|(n, _)| n.to_string())
            .collect();
        for (regex, count) in &regexes {
            let resolved = part.group.resolved_regexes().get(*regex);
            if *count > 0 {
                names.extend(resolved.iter().flat_map(|r| r.topics.iter().cloned()));
            } else if resolved.is_some() {
                records.push(ConsumerGroupRecord::RegularExpression {
                    group: group_id.clone(),
                    regex: regex.to_string(),
                    value: None,
                });
            }
        }
        let hash = metadata_hash(names.iter(), &self.topic_meta);
        let group_epoch = part.group.group_epoch() + 1;
        records.push(ConsumerGroupRecord::Metadata {
            group: group_id.clone(),
            value: Some((group_epoch, hash)),
        });
        // An empty group's target assignment epoch is its group epoch (Kafka 4.4,
        // KAFKA-20442): nobody is left to heartbeat the target up to date.
        let fenced = member_ids
            .iter()
            .filter(|id| part.group.member(id).is_some())
            .count();
        if fenced == part.group.members().len() {
            // Timestamp 0, as for a new group: the interval does not delay the next target.
            records.push(ConsumerGroupRecord::TargetAssignmentMetadata {
                group: group_id.clone(),
                value: Some((group_epoch, 0)),
            });
        }
        let part = self.part_mut(g);
        part.metadata_seen = topic_version;
        let mut undo = Vec::new();
        for rec in &records {
            part.apply(rec, Some(&mut undo));
        }
        for id in member_ids {
            part.drop_timers(id);
        }
        let mut raw = Vec::new();
        let raw = raw_records(&mut raw, &records)?;
        self.write_consumer(g, token, raw, undo, response);
        Ok(())
    }

    /// leave_consumer_group serves a LeaveGroup to a consumer group (Kafka's
    /// `classicGroupLeaveToConsumerGroup`): members named by id, or static members by instance
    /// id (an admin's removal, member id empty), are fenced together; the answer waits for the
    /// records.
    pub(crate) fn leave_consumer_group(&mut self, token: Token, g: u32, req: &LeaveGroup<'_>) {
        let mut leaving: Vec<String> = Vec::new();
        let mut members = Vec::with_capacity(req.members.len());
        let group = &self.part(g).group;
        for m in &req.members {
            let error = match m.group_instance_id.as_deref() {
                None => match group.member(&m.member_id) {
                    Some(found) => Ok(found.member_id.clone()),
                    None => Err(ErrorCode::UnknownMemberId),
                },
                Some(instance) => match group.static_member(instance) {
                    None => Err(ErrorCode::UnknownMemberId),
                    Some(found) if !m.member_id.is_empty() && found.member_id != *m.member_id => {
                        Err(ErrorCode::FencedInstanceId)
                    }
                    Some(found) => Ok(found.member_id.clone()),
                },
            };
            members.push(left(m, error.clone().err().unwrap_or(ErrorCode::None)));
            if let Ok(id) = error {
                if !leaving.contains(&id) {
                    leaving.push(id);
                }
            }
        }
        let response = GroupResponse::LeaveGroup(LeaveGroupResponse {
            members,
            ..Default::default()
        });
        if leaving.is_empty() {
            return self.respond(token, response);
        }
        if let Err(e) = self.fence_members(g, &leaving, Some(token), Some(response)) {
            let code = match e {
                Error::Kafka(k) => k.code,
                _ => ErrorCode::UnknownServerError,
            };
            self.respond(
                token,
                GroupResponse::LeaveGroup(LeaveGroupResponse {
                    error_code: code.code(),
                    ..Default::default()
                }),
            );
        }
    }

    /// write_consumer appends a consumer group's records; the response (if any) goes out when
    /// they are in the log. Without records it goes out now.
    pub(super) fn write_consumer(
        &mut self,
        g: u32,
        token: Option<Token>,
        records: Records,
        undo: Vec<Undo>,
        response: Option<GroupResponse>,
    ) {
        if records.is_empty() {
            if let (Some(t), Some(r)) = (token, response) {
                self.respond(t, r);
            }
            return;
        }
        let group = self.group(g);
        let (partition, uid, id) = (group.partition, group.uid, group.id.clone());
        self.append(
            partition,
            records,
            Pending::Consumer(Box::new(ConsumerWrite {
                token,
                group: id,
                uid,
                response,
                undo,
            })),
        );
    }

    /// complete_consumer_write answers what waited on a consumer group's append; a failed
    /// append puts the group back as it was before it.
    pub(crate) fn complete_consumer_write(&mut self, w: ConsumerWrite, error: ErrorCode) {
        if error != ErrorCode::None {
            let code = match error {
                // Kafka's new coordinator (CoordinatorOperationExceptionHelper) answers a write
                // that timed out COORDINATOR_NOT_AVAILABLE, which its consumer retries;
                // REBALANCE_IN_PROGRESS is the classic protocol's mapping, fatal to a KIP-848
                // consumer.
                ErrorCode::RequestTimedOut => ErrorCode::CoordinatorNotAvailable,
                e => map_group_error(e),
            };
            if let Some(g) = self.slot_of_uid(&w.group, w.uid) {
                if let Some(part) = self.group_mut(g).consumer.as_deref_mut() {
                    part.undo(w.undo);
                    self.rearm_restored_sessions(g);
                }
            }
            if let (Some(t), Some(r)) = (w.token, w.response) {
                let failed = match r {
                    GroupResponse::LeaveGroup(_) => GroupResponse::LeaveGroup(LeaveGroupResponse {
                        error_code: code.code(),
                        ..Default::default()
                    }),
                    GroupResponse::JoinGroup(j) => {
                        GroupResponse::JoinGroup(crate::group::api::join_error(&j.member_id, code))
                    }
                    _ => GroupResponse::ConsumerGroupHeartbeat(error_response(&kafka(code, ""))),
                };
                self.respond(t, failed);
            }
            return;
        }
        if let (Some(t), Some(r)) = (w.token, w.response) {
            self.respond(t, r);
        }
    }

    // -- timers -------------------------------------------------------------------------

    /// activate_consumer_group starts a loaded group's timers (Kafka's `onLoaded`): a full
    /// session for every member, and the rebalance timeout of each member that must revoke.
    pub(crate) fn activate_consumer_group(&mut self, g: u32) {
        let now = self.runtime.now();
        let session = self.consumer_session_timeout_ms(self.part(g).group.group_id());
        let members: Vec<(String, MemberState, i32, i32, Option<i32>)> = self
            .part(g)
            .group
            .members()
            .values()
            .map(|m| {
                (
                    m.member_id.clone(),
                    m.state,
                    m.rebalance_timeout_ms,
                    m.member_epoch,
                    m.classic_member_metadata
                        .as_ref()
                        .map(|c| c.session_timeout_ms),
                )
            })
            .collect();
        for (id, state, rebalance, epoch, classic) in members {
            // A classic member's session is its JoinGroup's; it has no rebalance timeout.
            let timeout = classic.map_or(session, i64::from);
            self.arm_session(g, &id, now.saturating_add(timeout));
            if classic.is_none() && state == MemberState::UnrevokedPartitions {
                self.arm_rebalance(
                    g,
                    &id,
                    now.saturating_add(i64::from(rebalance.max(0))),
                    epoch,
                );
            }
        }
    }

    /// rearm_restored_sessions gives a full session to each member without one: a member a
    /// failed append put back after its leave or fencing had dropped its timers. Without it
    /// the member would keep its partitions until the partition is loaded again.
    fn rearm_restored_sessions(&mut self, g: u32) {
        let now = self.runtime.now();
        let session = self.consumer_session_timeout_ms(self.part(g).group.group_id());
        let part = self.part(g);
        let missing: Vec<(String, i64)> = part
            .group
            .members()
            .values()
            .filter(|m| {
                part.timer_slot(&m.member_id)
                    .and_then(|s| part.timers.get(s))
                    .is_none_or(|t| t.session.deadline.is_none())
            })
            .map(|m| {
                // A classic member's session is its JoinGroup's.
                let timeout = m
                    .classic_member_metadata
                    .as_ref()
                    .map_or(session, |c| i64::from(c.session_timeout_ms));
                (m.member_id.clone(), timeout)
            })
            .collect();
        for (id, timeout) in missing {
            self.arm_session(g, &id, now.saturating_add(timeout));
        }
    }

    pub(super) fn arm_session(&mut self, g: u32, member_id: &str, at: i64) {
        let slot = self.part_mut(g).timers_of(member_id);
        let Coordinator {
            groups, runtime, ..
        } = self;
        if let Some(t) = groups
            .get_mut(g)
            .and_then(|gr| gr.consumer.as_deref_mut())
            .and_then(|p| p.timers.get_mut(slot))
        {
            runtime.timers.set(
                &mut t.session,
                TimerKey::ConsumerSession {
                    group: g,
                    member: slot,
                },
                at,
            );
        }
    }

    pub(super) fn arm_rebalance(&mut self, g: u32, member_id: &str, at: i64, epoch: i32) {
        let slot = self.part_mut(g).timers_of(member_id);
        let Coordinator {
            groups, runtime, ..
        } = self;
        if let Some(t) = groups
            .get_mut(g)
            .and_then(|gr| gr.consumer.as_deref_mut())
            .and_then(|p| p.timers.get_mut(slot))
        {
            t.rebalance_epoch = epoch;
            runtime.timers.set(
                &mut t.rebalance,
                TimerKey::ConsumerRebalance {
                    group: g,
                    member: slot,
                },
                at,
            );
        }
    }

    pub(super) fn cancel_rebalance(&mut self, g: u32, member_id: &str) {
        let part = self.part_mut(g);
        if let Some(s) = part.timer_slot(member_id) {
            if let Some(t) = part.timers.get_mut(s) {
                t.rebalance.cancel();
            }
        }
    }

    /// expire_consumer_session fences a member whose session ended.
    pub(crate) fn expire_consumer_session(&mut self, g: u32, slot: u32) {
        let Some(member_id) = self.consumer_timer_member(g, slot) else {
            return;
        };
        self.expire_consumer_member(g, &member_id);
    }

    /// expire_consumer_member is the end of `member_id`'s session, whether its timer fired or
    /// a host ended it ([`Coordinator::expire_member`]): the member is fenced; a member the
    /// group no longer has only loses its timers.
    pub(crate) fn expire_consumer_member(&mut self, g: u32, member_id: &str) {
        if self.part(g).group.has_member(member_id) {
            let _ = self.fence_members(g, &[member_id.to_string()], None, None);
        } else {
            self.part_mut(g).drop_timers(member_id);
        }
    }

    /// expire_consumer_rebalance fences a member still at the epoch it had to revoke
    /// partitions at.
    pub(crate) fn expire_consumer_rebalance(&mut self, g: u32, slot: u32) {
        let Some(member_id) = self.consumer_timer_member(g, slot) else {
            return;
        };
        let part = self.part(g);
        let epoch = part.timers.get(slot).map(|t| t.rebalance_epoch);
        let due = part.group.member(&member_id).is_some_and(|m| {
            Some(m.member_epoch) == epoch
                || (epoch == Some(super::part::CLASSIC_TIMER)
                    && m.classic_member_metadata.is_some())
        });
        if due {
            let _ = self.fence_members(g, &[member_id], None, None);
        }
    }

    fn consumer_timer_member(&self, g: u32, slot: u32) -> Option<String> {
        let part = self.groups.get(g)?.consumer.as_deref()?;
        part.timers.get(slot).map(|t| t.member_id.clone())
    }

    /// new_uuid is a member id as Kafka's `Uuid.randomUuid().toString()`: 16 random bytes in
    /// URL-safe base64 without padding (22 characters).
    pub(crate) fn new_uuid(&mut self) -> String {
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&self.rng.next_u64().to_be_bytes());
        bytes[8..].copy_from_slice(&self.rng.next_u64().to_be_bytes());
        crate::group::assignors::uuid::format(&bytes)
    }
}

/// compile_regex compiles a member's regex with RE2 semantics as Kafka's RE2J, anchored for
/// a full match (Java's `matches()`); INVALID_REGULAR_EXPRESSION when it does not compile.
fn compile_regex(pattern: &str) -> Result<regex::Regex, Error> {
    regex::Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
        kafka(
            ErrorCode::InvalidRegularExpression,
            format!("SubscribedTopicRegex `{pattern}` is not a valid regular expression: {e}."),
        )
    })
}

/// matching_topics are the topics whose whole name `re` matches, sorted.
fn matching_topics(
    re: &regex::Regex,
    topics: &std::collections::BTreeMap<String, super::TopicInfo>,
) -> Vec<String> {
    topics.keys().filter(|t| re.is_match(t)).cloned().collect()
}

/// replace_static_member is a static member's rejoin under `member_id` (Kafka's
/// `replaceMember`): the old member copied under the new id at epoch 0; when the id changed,
/// the old id's tombstones and the new member's records (with the old target) go to `records`.
pub(super) fn replace_static_member(
    group: &super::ConsumerGroup,
    old: &ConsumerMember,
    member_id: &str,
    records: &mut Vec<ConsumerGroupRecord>,
) -> ConsumerMember {
    let group_id = group.group_id();
    let mut new = old.clone();
    new.member_id = member_id.to_string();
    new.member_epoch = 0;
    new.previous_member_epoch = 0;
    if old.member_id != member_id {
        records.extend(fence_records(group_id, &old.member_id));
        records.push(ConsumerGroupRecord::MemberMetadata {
            group: group_id.to_string(),
            member: member_id.to_string(),
            value: Some(MemberMetadata::of(&new)),
        });
        records.push(ConsumerGroupRecord::TargetAssignmentMember {
            group: group_id.to_string(),
            member: member_id.to_string(),
            value: Some(group.target(&old.member_id).cloned().unwrap_or_default()),
        });
        records.push(ConsumerGroupRecord::CurrentMemberAssignment {
            group: group_id.to_string(),
            member: member_id.to_string(),
            value: Some(CurrentAssignment::of(&new)),
        });
    }
    new
}

/// fence_records are the tombstones that remove a member, in Kafka's order: its current
/// assignment, its target, its metadata.
fn fence_records(group_id: &str, member_id: &str) -> Vec<ConsumerGroupRecord> {
    vec![
        ConsumerGroupRecord::CurrentMemberAssignment {
            group: group_id.to_string(),
            member: member_id.to_string(),
            value: None,
        },
        ConsumerGroupRecord::TargetAssignmentMember {
            group: group_id.to_string(),
            member: member_id.to_string(),
            value: None,
        },
        ConsumerGroupRecord::MemberMetadata {
            group: group_id.to_string(),
            member: member_id.to_string(),
            value: None,
        },
    ]
}

/// subscribed_names_after is the set of topic names the group subscribes to once `old` is
/// replaced by `new` (either may be absent).
fn subscribed_names_after(
    group: &super::ConsumerGroup,
    old: Option<&ConsumerMember>,
    new: Option<&ConsumerMember>,
) -> BTreeSet<String> {
    let mut counts: std::collections::BTreeMap<&str, usize> = group
        .subscribed_topic_names()
        .iter()
        .map(|(n, c)| (n.as_str(), *c))
        .collect();
    if let Some(old) = old.filter(|o| group.has_member(&o.member_id)) {
        for n in &old.subscribed_topic_names {
            if let Some(c) = counts.get_mut(n.as_str()) {
                *c = c.saturating_sub(1);
            }
        }
    }
    if let Some(new) = new {
        for n in &new.subscribed_topic_names {
            *counts.entry(n.as_str()).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .filter(|(_, c)| *c > 0)
        .map(|(n, _)| n.to_string())
        .collect()
}

/// raw_records are `records` as (key, value) bytes after those already in `raw`.
pub(super) fn raw_records(
    raw: &mut Vec<(Vec<u8>, Option<Vec<u8>>)>,
    records: &[ConsumerGroupRecord],
) -> Result<Records, Error> {
    let mut out = std::mem::take(raw);
    for rec in records {
        out.push((rec.key()?, rec.value()?));
    }
    Ok(out)
}
