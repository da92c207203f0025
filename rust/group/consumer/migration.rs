//! Migration between classic and consumer groups (reference §8, Kafka's
//! `group.consumer.migration.policy`, `bidirectional` by default):
//! - the online upgrade: a ConsumerGroupHeartbeat joining a classic group with members converts
//!   it into a consumer group whose members still speak the classic protocol
//!   ([`Coordinator::upgrade_classic_group`], Kafka's `convertToConsumerGroup`);
//! - the bridge: JoinGroup, SyncGroup and Heartbeat of classic-protocol members inside a
//!   consumer group ([`Coordinator::classic_join_to_consumer_group`] and the two after it), where
//!   the coordinator computes their assignment as for any other member;
//! - the online downgrade: when the last consumer-protocol member leaves and only classic
//!   members remain, the group becomes a classic group again and rebalances
//!   ([`Coordinator::downgrade_consumer_group`], Kafka's `convertToClassicGroup`); so does a
//!   classic static member's JoinGroup that replaces the last consumer-protocol member,
//!   rebalancing only when the target it takes over is stale (KAFKA-20273).
//!
//! A classic member inside a consumer group has no rebalance timeout of its own. Its one
//! member timer (the `rebalance` timer, armed at [`CLASSIC_TIMER`]) is Kafka's join timeout
//! (the member must rejoin within its rebalance timeout once told REBALANCE_IN_PROGRESS) and sync
//! timeout (it must send SyncGroup within its rebalance timeout of its JoinGroup): whichever of
//! the two is due first fences it, as in Kafka.

use std::collections::BTreeSet;
use std::sync::Arc;

use super::member::{ClassicMemberMetadata, ClassicProtocol, ConsumerMember, MemberState};
use super::part::{metadata_hash, ConsumerPart, CLASSIC_TIMER};
use super::records::{ConsumerGroupRecord, CurrentAssignment, MemberMetadata};
use super::OwnedTopicPartitions;
use crate::assignors::consumer_protocol::{
    decode_assignment, decode_subscription, encode_assignment,
};
use crate::assignors::TopicPartition;
use crate::coordinator::appends::Records;
use crate::coordinator::timers::Timer;
use crate::errors::{Error, ErrorCode};
use crate::group::api::{
    bytes, join_error, sync_error, text, GroupResponse, Heartbeat, JoinGroup, JoinGroupResponse,
    SyncGroup, SyncGroupResponse, Token,
};
use crate::group::assignors::Assignment;
use crate::group::classic::classic_group::{empty_bytes, CONSUMER_PROTOCOL_TYPE};
use crate::group::classic::member::{Member, Protocol};
use crate::group::classic::state::GroupState;
use crate::group::coordinator::Coordinator;
use crate::group::records::group_metadata_key;

fn not_found(message: String) -> Error {
    Error::kafka(ErrorCode::GroupIdNotFound, message)
}

fn kafka(code: ErrorCode, message: impl Into<String>) -> Error {
    Error::kafka(code, message)
}

fn code_of(e: &Error) -> ErrorCode {
    match e {
        Error::Kafka(k) => k.code,
        _ => ErrorCode::UnknownServerError,
    }
}

/// protocol_version is the ConsumerProtocol version a classic member's metadata is written in
/// (its first two bytes), 0 when it has none.
fn protocol_version(metadata: &[u8]) -> i16 {
    match metadata {
        [a, b, ..] => i16::from_be_bytes([*a, *b]).max(0),
        _ => 0,
    }
}

impl Coordinator {
    /// ids_of is `partitions` (by topic name) as an assignment by topic id; topics the broker
    /// does not know are dropped.
    fn ids_of(&self, partitions: &[TopicPartition]) -> Assignment {
        partitions
            .iter()
            .filter_map(|tp| {
                self.topic_meta
                    .get(&*tp.topic)
                    .map(|t| (t.topic_id, vec![tp.partition]))
            })
            .collect()
    }

    /// names_of is `a` as the ConsumerProtocol lists it: topic name and partition, topics the
    /// broker no longer knows dropped.
    fn names_of(&self, a: &Assignment) -> Vec<TopicPartition> {
        let mut out = Vec::with_capacity(a.len());
        for (id, parts) in a.iter() {
            if let Some(name) = self.topic_names.get(id) {
                out.extend(parts.iter().map(|p| TopicPartition::new(name.clone(), *p)));
            }
        }
        out
    }

    /// encoded_assignment is `a` as a ConsumerProtocol assignment in `version`.
    fn encoded_assignment(&self, a: &Assignment, version: i16) -> Arc<[u8]> {
        let assignment = crate::assignors::Assignment {
            partitions: self.names_of(a),
            user_data: None,
        };
        encode_assignment(&assignment, version)
            .map(Arc::from)
            .unwrap_or_else(|_| empty_bytes())
    }

    // -- the online upgrade -------------------------------------------------------------

    /// upgrade_classic_group turns classic group `g`, which has members, into a consumer group
    /// (Kafka's `validateOnlineUpgrade` and `convertToConsumerGroup`): every classic member
    /// becomes a Stable member at the classic generation holding its last assignment, which is
    /// also its target; the records that say so are applied and pushed, after the classic
    /// metadata's tombstone, to `raw`. Parked JoinGroups and SyncGroups are answered
    /// REBALANCE_IN_PROGRESS: the members rejoin through the bridge. GROUP_ID_NOT_FOUND when the
    /// policy, the protocol type, the size or a member's metadata rules it out.
    pub(super) fn upgrade_classic_group(&mut self, g: u32, raw: &mut Records) -> Result<(), Error> {
        let group = self.group(g);
        let id = group.id.to_string();
        if !self.config.consumer_migration_policy.upgrades() {
            return Err(not_found(format!(
                "Cannot upgrade classic group {id} to consumer group because online upgrade is \
                 disabled."
            )));
        }
        if group.protocol_type.as_deref() != Some(CONSUMER_PROTOCOL_TYPE) {
            return Err(not_found(format!(
                "Cannot upgrade classic group {id} to consumer group because the group does not \
                 use the consumer embedded protocol."
            )));
        }
        if group.len() as i64 > self.config.consumer_max_size {
            return Err(not_found(format!(
                "Cannot upgrade classic group {id} to consumer group because the group size \
                 exceeds the consumer group maximum size."
            )));
        }
        let generation = group.generation;
        let protocol = group.protocol_name.clone();
        let malformed = || {
            not_found(format!(
                "Cannot upgrade the classic group {id} to consumer group because the embedded \
                 consumer protocol is malformed."
            ))
        };
        let mut members = Vec::with_capacity(group.len());
        for slot in group.ordered() {
            let m = group.member(slot);
            let assigned = if m.assignment.is_empty() {
                Assignment::new()
            } else {
                let (a, _) = decode_assignment(&m.assignment).map_err(|_| malformed())?;
                if a.user_data.as_ref().is_some_and(|u| !u.is_empty()) {
                    return Err(not_found(format!(
                        "Cannot upgrade classic group {id} to consumer group because an \
                         unsupported custom assignor is in use."
                    )));
                }
                self.ids_of(&a.partitions)
            };
            let metadata = protocol
                .as_deref()
                .and_then(|p| m.metadata(p))
                .or_else(|| m.protocols.first().map(|p| &p.metadata))
                .ok_or_else(malformed)?;
            let (sub, _) = decode_subscription(metadata).map_err(|_| malformed())?;
            let mut c = ConsumerMember::new(&*m.id);
            c.member_epoch = generation;
            c.previous_member_epoch = generation;
            c.state = MemberState::Stable;
            c.instance_id = m.instance_id.as_deref().map(str::to_string);
            c.rack_id = sub.rack_id.as_deref().map(str::to_string);
            c.rebalance_timeout_ms = m.rebalance_timeout_ms;
            c.client_id = m.client_id.to_string();
            c.client_host = m.client_host.to_string();
            c.subscribed_topic_names = sub.topics.iter().map(|t| t.to_string()).collect();
            // Every partition assigned at the classic generation (Kafka's
            // toAssignmentWithEpochs(assignment, generationId)).
            c.hold(assigned, Assignment::new(), generation);
            c.classic_member_metadata = Some(classic_metadata(m.session_timeout_ms, &m.protocols));
            members.push(c);
        }

        // The classic group goes: parked requests learn of the new rebalance, timers stop.
        raw.push((group_metadata_key(&id)?, None));
        for slot in self.group(g).ordered() {
            let group = self.group_mut(g);
            let join = group.take_join(slot);
            let sync = group.member_mut(slot).awaiting_sync.take();
            group.remove(slot);
            if let Some(t) = join {
                let r = join_error("", ErrorCode::RebalanceInProgress);
                self.respond(t, GroupResponse::JoinGroup(r));
            }
            if let Some(t) = sync {
                let r = sync_error(ErrorCode::RebalanceInProgress);
                self.respond(t, GroupResponse::SyncGroup(r));
            }
        }
        let now = self.runtime.now();
        let group = self.group_mut(g);
        let pending: Vec<u32> = group.pending.iter().map(|(p, _)| p).collect();
        for p in pending {
            group.pending.remove(p);
        }
        group.join_timer.cancel();
        group.sync_timer.cancel();
        group.clear_pending_sync();
        group.state = GroupState::Empty;
        group.state_timestamp = Some(now);
        group.generation = 0;
        group.protocol_type = None;
        group.protocol_name = None;
        group.leader = None;
        group.subscribed_topics = None;
        group.consumer = Some(Box::new(ConsumerPart::new(&id)));

        // The consumer group, as Kafka's createConsumerGroupRecords writes it.
        let names: BTreeSet<String> = members
            .iter()
            .flat_map(|m| m.subscribed_topic_names.iter().cloned())
            .collect();
        let hash = metadata_hash(names.iter(), &self.topic_meta);
        let mut records = Vec::new();
        for m in &members {
            records.push(ConsumerGroupRecord::MemberMetadata {
                group: id.clone(),
                member: m.member_id.clone(),
                value: Some(MemberMetadata::of(m)),
            });
        }
        records.push(ConsumerGroupRecord::Metadata {
            group: id.clone(),
            value: Some((generation, hash)),
        });
        for m in &members {
            records.push(ConsumerGroupRecord::TargetAssignmentMember {
                group: id.clone(),
                member: m.member_id.clone(),
                value: Some(m.assigned_partitions.clone()),
            });
        }
        // Kafka's fromClassicGroup: timestamp 0, so that the interval does not delay the
        // converted group's next target.
        records.push(ConsumerGroupRecord::TargetAssignmentMetadata {
            group: id.clone(),
            value: Some((generation, 0)),
        });
        for m in &members {
            records.push(ConsumerGroupRecord::CurrentMemberAssignment {
                group: id.clone(),
                member: m.member_id.clone(),
                value: Some(CurrentAssignment::of(m)),
            });
        }
        let topic_version = self.topic_version;
        let part = self.part_mut(g);
        for rec in &records {
            part.apply(rec, None);
        }
        part.metadata_seen = topic_version;
        for rec in &records {
            raw.push((rec.key()?, rec.value()?));
        }
        for m in &members {
            let session = m
                .classic_member_metadata
                .as_ref()
                .map_or(0, |c| c.session_timeout_ms);
            self.arm_session(g, &m.member_id, now.saturating_add(i64::from(session)));
        }
        Ok(())
    }

    // -- the bridge -----------------------------------------------------------------------

    /// classic_join_to_consumer_group serves a JoinGroup to a consumer group with members
    /// (Kafka's `classicGroupJoinToConsumerGroup`): the member is made or updated from its
    /// embedded subscription, the group epoch, target and reconciliation run as for a heartbeat,
    /// and the answer (once the records are in) carries the member epoch as the generation and no
    /// member list, so that every classic member syncs as a follower.
    pub(crate) fn classic_join_to_consumer_group(
        &mut self,
        token: Token,
        g: u32,
        req: &JoinGroup<'_>,
    ) {
        if let Err(e) = self.classic_join_in(token, g, req) {
            let member = if req.member_id.is_empty() {
                ""
            } else {
                &req.member_id
            };
            self.respond(
                token,
                GroupResponse::JoinGroup(join_error(member, code_of(&e))),
            );
        }
    }

    fn classic_join_in(&mut self, token: Token, g: u32, req: &JoinGroup<'_>) -> Result<(), Error> {
        let group_id = self.group(g).id.to_string();
        if self.config.consumer_migration_policy == crate::group::config::MigrationPolicy::Disabled
        {
            return Err(kafka(
                ErrorCode::InconsistentGroupProtocol,
                format!(
                    "Cannot join the consumer group {group_id} with the classic protocol because \
                     the group migration is disabled."
                ),
            ));
        }
        let unknown = req.member_id.is_empty();
        let member_id = if unknown {
            self.new_uuid()
        } else {
            req.member_id.to_string()
        };
        let instance_id = req.group_instance_id.as_deref();
        let max_size = usize::try_from(self.config.consumer_max_size).unwrap_or(usize::MAX);
        let group = &self.part(g).group;
        if instance_id.is_none_or(|i| group.static_member_id(i).is_none())
            && group.is_full(max_size, &member_id)
        {
            return Err(kafka(
                ErrorCode::GroupMaxSizeReached,
                format!(
                    "The consumer group has reached its maximum capacity of {max_size} members."
                ),
            ));
        }
        if !supports_classic_protocols(group, &req.protocol_type, req) {
            return Err(kafka(
                ErrorCode::InconsistentGroupProtocol,
                format!("Member {member_id}'s protocols are not supported."),
            ));
        }
        if unknown && instance_id.is_none() && req.version >= 4 {
            // KIP-394: the member comes back with the id it is given.
            self.respond(
                token,
                GroupResponse::JoinGroup(join_error(&member_id, ErrorCode::MemberIdRequired)),
            );
            return Ok(());
        }
        let (sub, _) = req
            .protocols
            .first()
            .ok_or(())
            .and_then(|p| decode_subscription(&p.metadata).map_err(|_| ()))
            .map_err(|_| {
                kafka(
                    ErrorCode::InconsistentGroupProtocol,
                    "Malformed embedded consumer protocol in subscription deserialization.",
                )
            })?;

        // The member: found or made (no epoch to check), or a static member taken over.
        let mut records = Vec::new();
        let mut replaced = None;
        let member = match instance_id {
            None => group
                .member(&member_id)
                .cloned()
                .unwrap_or_else(|| ConsumerMember::new(member_id.as_str())),
            Some(instance) => match group.static_member(instance) {
                Some(old) if unknown => {
                    replaced = Some(old.member_id.clone());
                    super::heartbeat::replace_static_member(group, old, &member_id, &mut records)
                }
                None if unknown => ConsumerMember::new(member_id.as_str()),
                None => {
                    return Err(kafka(
                        ErrorCode::UnknownMemberId,
                        format!(
                            "Member with instance id {instance} is not a member of group \
                             {group_id}."
                        ),
                    ))
                }
                Some(old) if old.member_id != member_id => {
                    return Err(kafka(
                        ErrorCode::FencedInstanceId,
                        format!(
                            "Static member {member_id} with instance id {instance} is fenced by \
                             existing member {}.",
                            old.member_id
                        ),
                    ))
                }
                Some(old) => old.clone(),
            },
        };
        let mut updated = member.clone();
        if let Some(i) = instance_id {
            updated.instance_id = Some(i.to_string());
        }
        if let Some(rack) = sub.rack_id.as_deref() {
            updated.rack_id = Some(rack.to_string());
        }
        if req.rebalance_timeout_ms != -1 {
            updated.rebalance_timeout_ms = req.rebalance_timeout_ms;
        }
        updated.subscribed_topic_names = sub.topics.iter().map(|t| t.to_string()).collect();
        // Regex subscriptions are not for classic members (KAFKA-19720).
        updated.subscribed_topic_regex = String::new();
        updated.client_id = req.client_id.to_string();
        updated.client_host = req.client_host.to_string();
        let protocols = Protocol::list(&req.protocols);
        updated.classic_member_metadata =
            Some(classic_metadata(req.session_timeout_ms, &protocols));
        let owned_ids = self.ids_of(&sub.owned_partitions);
        let owned: Vec<OwnedTopicPartitions<'static>> = owned_ids
            .iter()
            .map(|(t, p)| OwnedTopicPartitions {
                topic_id: *t,
                partitions: p.to_vec(),
                ..Default::default()
            })
            .collect();

        let replacing = records.len();
        let step = self.member_step(
            g,
            &member,
            updated,
            replaced.as_deref(),
            records,
            Some(&owned),
        )?;
        if let Some(old) = replaced
            .clone()
            .filter(|old| self.downgrades_replacing(g, old))
        {
            let replacement = Replacement {
                replaced: old,
                records: replacing,
                epoch: member.member_epoch,
            };
            return self.replace_and_downgrade(token, g, req, replacement, step);
        }
        let reconciled = &step.reconciled;
        let response = JoinGroupResponse {
            generation_id: reconciled.member_epoch,
            protocol_type: Some(text(CONSUMER_PROTOCOL_TYPE)),
            protocol_name: req.protocols.first().map(|p| text(&p.name)),
            leader: text(""),
            member_id: text(&member_id),
            ..Default::default()
        };
        let undo = self.apply_step(g, &step, replaced.as_deref());
        let now = self.runtime.now();
        self.arm_session(
            g,
            &member_id,
            now.saturating_add(i64::from(req.session_timeout_ms)),
        );
        // The sync timeout: the member must sync within its rebalance timeout.
        self.arm_classic_timer(
            g,
            &member_id,
            now.saturating_add(i64::from(req.rebalance_timeout_ms.max(0))),
            false,
        );
        let mut raw = Vec::new();
        let raw = super::heartbeat::raw_records(&mut raw, &step.records)?;
        self.write_consumer(
            g,
            Some(token),
            raw,
            undo,
            Some(GroupResponse::JoinGroup(response)),
        );
        Ok(())
    }

    /// replace_and_downgrade ends a JoinGroup whose classic static member replaced the last
    /// consumer-protocol member: the group becomes classic (Kafka's
    /// `classicGroupJoinToConsumerGroup` with a downgrade). When the joining member's target is
    /// current, it is reconciled to it and the classic group is Stable; when its subscription
    /// bumped the group epoch, no target is computed and the classic group rebalances. The
    /// records: the replacement, the member's update, then the downgrade, in one append.
    fn replace_and_downgrade(
        &mut self,
        token: Token,
        g: u32,
        req: &JoinGroup<'_>,
        replacement: Replacement,
        mut step: super::heartbeat::Step,
    ) -> Result<(), Error> {
        let group = &self.part(g).group;
        let rebalance = step.bump || group.assignment_epoch() < group.group_epoch();
        let generation = if rebalance {
            // Only the member's metadata and the epoch bump: Kafka skips the target and the
            // reconciliation, the rebalance assigns.
            let (before, after) = step.records.split_at(replacement.records);
            let mut kept = before.to_vec();
            kept.extend(
                after
                    .iter()
                    .filter(|r| {
                        matches!(
                            r,
                            ConsumerGroupRecord::MemberMetadata { .. }
                                | ConsumerGroupRecord::Metadata { .. }
                        )
                    })
                    .cloned(),
            );
            step.records = kept;
            replacement.epoch
        } else {
            step.reconciled.member_epoch
        };
        let response = JoinGroupResponse {
            generation_id: generation,
            protocol_type: Some(text(CONSUMER_PROTOCOL_TYPE)),
            protocol_name: req.protocols.first().map(|p| text(&p.name)),
            leader: text(""),
            member_id: text(&step.reconciled.member_id),
            ..Default::default()
        };
        let joining = Joining {
            replaced: replacement.replaced,
            member: step.reconciled.clone(),
        };
        let mut raw = Vec::new();
        let mut raw = super::heartbeat::raw_records(&mut raw, &step.records)?;
        raw.extend(self.downgrade_consumer_group(g, &[], Some(&joining), rebalance)?);
        self.write_consumer(
            g,
            Some(token),
            raw,
            Vec::new(),
            Some(GroupResponse::JoinGroup(response)),
        );
        Ok(())
    }

    /// classic_member is the classic member a SyncGroup, Heartbeat names in consumer group
    /// `g` (Kafka's `validateConsumerGroupMember` and `throwIfMemberDoesNotUseClassicProtocol`),
    /// with its generation checked against its member epoch.
    fn classic_member(
        &self,
        g: u32,
        member_id: &str,
        instance_id: Option<&str>,
        generation: i32,
    ) -> Result<ConsumerMember, ErrorCode> {
        let group = &self.part(g).group;
        let m = match instance_id {
            None => group.member(member_id).ok_or(ErrorCode::UnknownMemberId)?,
            Some(i) => {
                let m = group.static_member(i).ok_or(ErrorCode::UnknownMemberId)?;
                if m.member_id != member_id {
                    return Err(ErrorCode::FencedInstanceId);
                }
                m
            }
        };
        if m.classic_member_metadata.is_none() {
            return Err(ErrorCode::UnknownMemberId);
        }
        if generation != m.member_epoch {
            return Err(ErrorCode::IllegalGeneration);
        }
        Ok(m.clone())
    }

    /// classic_sync_to_consumer_group serves a SyncGroup to a consumer group (Kafka's
    /// `classicGroupSyncToConsumerGroup`): the member gets the partitions it holds now, in the
    /// ConsumerProtocol version of its first protocol; nothing is written.
    pub(crate) fn classic_sync_to_consumer_group(
        &mut self,
        token: Token,
        g: u32,
        req: &SyncGroup<'_>,
    ) {
        let r = self.classic_sync_in(g, req);
        let response = match r {
            Ok(r) => r,
            Err(e) => sync_error(e),
        };
        self.respond(token, GroupResponse::SyncGroup(response));
    }

    fn classic_sync_in(
        &mut self,
        g: u32,
        req: &SyncGroup<'_>,
    ) -> Result<SyncGroupResponse<'static>, ErrorCode> {
        let m = self.classic_member(
            g,
            &req.member_id,
            req.group_instance_id.as_deref(),
            req.generation_id,
        )?;
        let first = m
            .classic_member_metadata
            .as_ref()
            .and_then(|c| c.supported_protocols.first())
            .cloned()
            .unwrap_or_default();
        if req
            .protocol_type
            .as_deref()
            .is_some_and(|t| t != CONSUMER_PROTOCOL_TYPE)
            || req
                .protocol_name
                .as_deref()
                .is_some_and(|n| n != first.name)
        {
            return Err(ErrorCode::InconsistentGroupProtocol);
        }
        // A newer target than the member's epoch (KAFKA-20272: the target epoch, which lags the
        // group epoch while an assignment waits): it rejoins to catch up.
        let target_epoch = self.part(g).group.assignment_epoch();
        let now = self.runtime.now();
        if target_epoch > m.member_epoch && m.state != MemberState::UnrevokedPartitions {
            self.arm_classic_timer(
                g,
                &m.member_id,
                now.saturating_add(i64::from(m.rebalance_timeout_ms.max(0))),
                true,
            );
            return Err(ErrorCode::RebalanceInProgress);
        }
        self.cancel_rebalance(g, &m.member_id);
        self.restart_classic_session(g, &m, now);
        let assignment =
            self.encoded_assignment(&m.assigned_partitions, protocol_version(&first.metadata));
        Ok(SyncGroupResponse {
            protocol_type: req.protocol_type.as_deref().map(text),
            protocol_name: req.protocol_name.as_deref().map(text),
            assignment: bytes(&assignment),
            ..Default::default()
        })
    }

    /// classic_heartbeat_to_consumer_group answers a Heartbeat to a consumer group (Kafka's
    /// `classicGroupHeartbeatToConsumerGroup`): the session restarts, and REBALANCE_IN_PROGRESS
    /// (with the join timeout armed) tells the member to rejoin when the group moved past its
    /// epoch, it must revoke, or partitions it waits for have been released.
    pub(crate) fn classic_heartbeat_to_consumer_group(
        &mut self,
        g: u32,
        req: &Heartbeat<'_>,
    ) -> ErrorCode {
        let m = match self.classic_member(
            g,
            &req.member_id,
            req.group_instance_id.as_deref(),
            req.generation_id,
        ) {
            Ok(m) => m,
            Err(e) => return e,
        };
        let now = self.runtime.now();
        self.restart_classic_session(g, &m, now);
        let group = &self.part(g).group;
        let target = group.target(&m.member_id).cloned().unwrap_or_default();
        let rejoin = m.member_epoch < group.assignment_epoch()
            || m.state == MemberState::UnrevokedPartitions
            || (m.state == MemberState::UnreleasedPartitions
                && !group
                    .partition_epochs()
                    .waiting_on_unreleased_partition(&m, &target));
        if rejoin {
            self.arm_classic_timer(
                g,
                &m.member_id,
                now.saturating_add(i64::from(m.rebalance_timeout_ms.max(0))),
                true,
            );
            ErrorCode::RebalanceInProgress
        } else {
            ErrorCode::None
        }
    }

    fn restart_classic_session(&mut self, g: u32, m: &ConsumerMember, now: i64) {
        let session = m
            .classic_member_metadata
            .as_ref()
            .map_or(0, |c| c.session_timeout_ms);
        self.arm_session(g, &m.member_id, now.saturating_add(i64::from(session)));
    }

    /// arm_classic_timer arms a classic member's join or sync timeout; with `if_absent` an armed
    /// one is kept (Kafka's `scheduleIfAbsent` of the join timeout).
    fn arm_classic_timer(&mut self, g: u32, member_id: &str, at: i64, if_absent: bool) {
        if if_absent {
            let part = self.part(g);
            if part
                .timer_slot(member_id)
                .and_then(|s| part.timers.get(s))
                .is_some_and(|t| t.rebalance.is_set())
            {
                return;
            }
        }
        self.arm_rebalance(g, member_id, at, CLASSIC_TIMER);
    }

    // -- the online downgrade -------------------------------------------------------------

    /// downgrades_without tells whether fencing `leaving` turns consumer group `g` back into a
    /// classic group (Kafka's `validateOnlineDowngradeWithFencedMembers`): someone remains,
    /// every one remaining speaks the classic protocol, the policy allows it, and they fit in a
    /// classic group.
    pub(super) fn downgrades_without(&self, g: u32, leaving: &[String]) -> bool {
        let group = &self.part(g).group;
        let mut remaining = 0usize;
        for m in group.members().values() {
            if leaving.contains(&m.member_id) {
                continue;
            }
            if m.classic_member_metadata.is_none() {
                return false;
            }
            remaining += 1;
        }
        remaining > 0
            && self.config.consumer_migration_policy.downgrades()
            && remaining as i64 <= self.config.max_size
    }

    /// downgrade_consumer_group turns consumer group `g` into a classic group without the
    /// `leaving` members (Kafka's `convertToClassicGroup` and `ClassicGroup.fromConsumerGroup`):
    /// the consumer group's records are tombstoned; the classic group is Stable at the group
    /// epoch, each member holding its target assignment in its own protocol's version, and
    /// starts a rebalance at once. Returns the records to append.
    ///
    /// With `joining`, the downgrade comes from a classic static member replacing the last
    /// consumer-protocol member (Kafka's `validateOnlineDowngradeWithReplacedMember`): the
    /// joining member takes the replaced one's place and target, and the group rebalances only
    /// when `rebalance` (its target is stale).
    pub(super) fn downgrade_consumer_group(
        &mut self,
        g: u32,
        leaving: &[String],
        joining: Option<&Joining>,
        rebalance: bool,
    ) -> Result<Records, Error> {
        let part = self.part(g);
        let group = &part.group;
        let id = group.group_id().to_string();
        // The replaced member's records are tombstoned by the replacement already: the joining
        // member's go instead (Kafka's createGroupTombstoneRecordsWithReplacedMember).
        let member_ids: Vec<String> = group
            .members()
            .keys()
            .map(|m| match joining {
                Some(j) if *m == j.replaced => j.member.member_id.clone(),
                _ => m.clone(),
            })
            .collect();
        let mut raw = crate::group::cleanup::consumer_group_tombstones_with_members(
            &id,
            member_ids.iter(),
            group.resolved_regexes().keys(),
        );
        let epoch = group.group_epoch();
        let mut members = Vec::new();
        for m in group.members().values() {
            if leaving.contains(&m.member_id) {
                continue;
            }
            let target = group.target(&m.member_id).cloned().unwrap_or_default();
            let m = match joining {
                Some(j) if m.member_id == j.replaced => &j.member,
                _ => m,
            };
            let Some(c) = m.classic_member_metadata.as_ref() else {
                continue;
            };
            members.push((m.clone(), c.clone(), target));
        }
        // Every consumer-side timer goes with the part.
        let now = self.runtime.now();
        let mut classic = Vec::with_capacity(members.len());
        for (m, c, target) in members {
            let protocols: Vec<Protocol> = c
                .supported_protocols
                .iter()
                .map(|p| Protocol {
                    name: Arc::from(p.name.as_str()),
                    metadata: Arc::from(p.metadata.as_slice()),
                })
                .collect();
            classic.push((
                Member {
                    heartbeat: Timer::default(),
                    session_timeout_ms: c.session_timeout_ms,
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    awaiting_join: None,
                    awaiting_sync: None,
                    is_new: false,
                    pending_sync: false,
                    id: Arc::from(m.member_id.as_str()),
                    instance_id: m.instance_id.as_deref().map(Arc::from),
                    client_id: Arc::from(m.client_id.as_str()),
                    client_host: Arc::from(m.client_host.as_str()),
                    protocol_type: Arc::from(CONSUMER_PROTOCOL_TYPE),
                    protocols,
                    assignment: empty_bytes(),
                    seq: 0,
                },
                target,
            ));
        }
        let group = self.group_mut(g);
        group.consumer = None;
        group.generation = epoch;
        group.protocol_type = Some(Arc::from(CONSUMER_PROTOCOL_TYPE));
        group.state = GroupState::Stable;
        group.state_timestamp = Some(now);
        let mut targets = Vec::with_capacity(classic.len());
        for (m, target) in classic {
            let slot = group.add(m);
            targets.push((slot, target));
        }
        group.protocol_name = group.select_protocol();
        group.subscribed_topics = group.compute_subscribed_topics();
        let protocol = group.protocol_name.clone();
        for (slot, target) in targets {
            let version = protocol
                .as_deref()
                .and_then(|p| self.group(g).member(slot).metadata(p))
                .map_or(0, |m| protocol_version(m));
            let assignment = self.encoded_assignment(&target, version);
            self.group_mut(g).member_mut(slot).assignment = assignment;
        }
        raw.push(Self::group_record(self.group(g), |m| m.assignment.clone()));
        for slot in self.group(g).ordered() {
            self.reschedule_session(g, slot);
        }
        if rebalance {
            self.prepare_rebalance(g);
        }
        Ok(raw)
    }

    /// downgrades_replacing tells whether a classic static member replacing `replaced` turns
    /// consumer group `g` classic (Kafka's `validateOnlineDowngradeWithReplacedMember`): every
    /// other member is classic, the policy allows downgrades, and the group fits a classic
    /// group.
    fn downgrades_replacing(&self, g: u32, replaced: &str) -> bool {
        let group = &self.part(g).group;
        group
            .members()
            .values()
            .all(|m| m.member_id == replaced || m.classic_member_metadata.is_some())
            && self.config.consumer_migration_policy.downgrades()
            && group.num_members() as i64 <= self.config.max_size
    }
}

/// Replacement is a classic static member's JoinGroup taking member `replaced`'s place: its
/// first `records` of the step are the replacement's, and `epoch` is the member's epoch
/// before reconciliation.
struct Replacement {
    replaced: String,
    records: usize,
    epoch: i32,
}

/// Joining is the classic static member whose JoinGroup replaces member `replaced`.
pub(super) struct Joining {
    pub replaced: String,
    pub member: ConsumerMember,
}

/// classic_metadata is what a classic member's JoinGroup leaves in its member record.
fn classic_metadata(session_timeout_ms: i32, protocols: &[Protocol]) -> ClassicMemberMetadata {
    ClassicMemberMetadata {
        session_timeout_ms,
        supported_protocols: protocols
            .iter()
            .map(|p| ClassicProtocol {
                name: p.name.to_string(),
                metadata: p.metadata.to_vec(),
            })
            .collect(),
    }
}

/// supports_classic_protocols is Kafka's `ConsumerGroup.supportsClassicProtocols`: the
/// protocol type is `consumer`, and one of the offered protocols is supported by every classic
/// member already in the group (any one will do when there is none).
fn supports_classic_protocols(
    group: &super::ConsumerGroup,
    protocol_type: &str,
    req: &JoinGroup<'_>,
) -> bool {
    if protocol_type != CONSUMER_PROTOCOL_TYPE {
        return false;
    }
    let classic: Vec<&ClassicMemberMetadata> = group
        .members()
        .values()
        .filter_map(|m| m.classic_member_metadata.as_ref())
        .collect();
    if classic.is_empty() {
        return !req.protocols.is_empty();
    }
    req.protocols.iter().any(|p| {
        classic
            .iter()
            .all(|c| c.supported_protocols.iter().any(|q| q.name == *p.name))
    })
}
