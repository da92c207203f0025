//! What happens to groups outside requests: append outcomes, loading a partition of
//! `__consumer_offsets` back into groups, unloading one, offset expiry, deleted topics, and the
//! tombstones all of these write (Kafka's `GroupMetadataManager.loadGroupsAndOffsets`,
//! `removeGroupsForPartition`, `cleanupGroupMetadata`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::api::{join_error, sync_error, text, AppendToken, GroupResponse, JoinGroupResponse};
use super::classic_group::{empty_bytes, Group};
use super::coordinator::{map_commit_error, map_group_error, Coordinator, Pending, StaticRejoin};
use super::member::{Member, Protocol};
use super::records::{
    group_metadata_key, offset_commit_key, read_group_metadata_value, read_key,
    read_offset_commit_value, GroupMetadataValue, OffsetAndMetadata, RecordKey,
};
use super::state::GroupState;
use crate::coordinator::appends::Records;
use crate::coordinator::load::{Counts, Replay, Replayed};
use crate::coordinator::timers::Timer;
use crate::errors::{ErrorCode, Result};
use crate::protocol::records::ControlRecordType;

/// Tombstones are records to append, by partition of `__consumer_offsets`.
pub(super) type Tombstones = BTreeMap<i32, Records>;

/// GroupTopicPartition keys an offset while loading.
type Gtp = (String, String, i32);

/// LoadState is a partition's replay so far: the last record per key wins, and a tombstone
/// removes.
#[derive(Debug, Default)]
pub(crate) struct LoadState {
    offsets: BTreeMap<Gtp, OffsetAndMetadata>,
    /// groups hold the last group metadata record per group; None after a tombstone.
    groups: BTreeMap<String, Option<GroupMetadataValue>>,
    /// transactional holds offsets committed in a transaction until its marker (by producer id).
    transactional: BTreeMap<i64, BTreeMap<Gtp, Option<OffsetAndMetadata>>>,
}

/// LoadStats counts what a [`Coordinator::load`] call read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    pub batches: usize,
    pub records: usize,
    /// unknown are records of a type a classic coordinator skips (KIP-848, share groups).
    pub unknown: usize,
    /// groups is the number of groups the partition holds once loaded (0 until the last call).
    pub groups: usize,
}

impl Coordinator {
    /// load replays record batches of one partition of `__consumer_offsets` (as the log holds
    /// them, from its start), rebuilding its groups, generations, members and committed offsets.
    /// Call it once with the whole log, or once per chunk in order with `last` set on the final
    /// one; meanwhile the partition's groups answer COORDINATOR_LOAD_IN_PROGRESS. The records
    /// take effect when `last` is set: later records and tombstones win, unknown record types
    /// are skipped, transactional offsets count once their commit marker is read. Loaded members'
    /// sessions start at the next call that gives a time. A corrupt batch or a record that does
    /// not decode fails the load (the partition's earlier chunks are dropped); groups the
    /// partition already held are replaced, their parked requests answered NOT_COORDINATOR.
    pub fn load(&mut self, partition: i32, data: &[u8], last: bool) -> Result<LoadStats> {
        let mut counts = Counts::default();
        let loaded = self.runtime.load(partition, data, last, &mut counts)?;
        let mut stats = LoadStats {
            batches: counts.batches,
            records: counts.records,
            unknown: counts.unknown,
            groups: 0,
        };
        let Some(state) = loaded else {
            return Ok(stats);
        };
        // Groups already here are replaced by what the log says.
        let existing: Vec<u32> = self
            .groups
            .iter()
            .filter(|(_, g)| g.partition == partition)
            .map(|(s, _)| s)
            .collect();
        for s in existing {
            self.unload_group(s);
        }
        let mut offsets_by_group: BTreeMap<String, Vec<(String, i32, OffsetAndMetadata)>> =
            BTreeMap::new();
        for ((g, t, p), o) in state.offsets {
            offsets_by_group.entry(g).or_default().push((t, p, o));
        }
        let mut names: Vec<String> = state
            .groups
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        names.extend(offsets_by_group.keys().cloned());
        names.sort();
        names.dedup();
        for name in names {
            let value = state.groups.get(&name).and_then(|v| v.as_ref());
            let slot = self.create_group(&name);
            let group = self.groups.get_mut(slot).expect("just created");
            group.state_timestamp = None;
            if let Some(v) = value {
                restore(group, v);
            }
            for (t, p, o) in offsets_by_group.remove(&name).unwrap_or_default() {
                group.offsets.put(&t, p, o);
            }
            let uid = group.uid;
            self.to_activate.push((Arc::from(name.as_str()), uid));
            stats.groups += 1;
        }
        Ok(stats)
    }

    /// activate_loaded starts the sessions of loaded members (Kafka's `onGroupLoaded`) and
    /// rebalances a group above `group.max.size`.
    pub(super) fn activate_loaded(&mut self) {
        for (id, uid) in std::mem::take(&mut self.to_activate) {
            let Some(g) = self.slot_of_uid(&id, uid) else {
                continue;
            };
            for s in self.group(g).ordered() {
                self.reschedule_session(g, s);
            }
            if self.group(g).len() as i64 > self.config.max_size {
                self.prepare_rebalance(g);
            }
        }
    }

    /// unload gives up a partition (Kafka's `onResignation`): its groups go Dead and are dropped,
    /// parked JoinGroups and SyncGroups are answered NOT_COORDINATOR, and its groups answer
    /// NOT_COORDINATOR until it is loaded again. A host shutting down unloads every partition so
    /// that no request stays parked.
    pub fn unload(&mut self, now: i64, partition: i32) -> Vec<super::api::Effect> {
        self.enter(now);
        self.runtime.partitions.unload(partition);
        let slots: Vec<u32> = self
            .groups
            .iter()
            .filter(|(_, g)| g.partition == partition)
            .map(|(s, _)| s)
            .collect();
        for s in slots {
            self.unload_group(s);
        }
        self.run_timers();
        self.runtime.take_effects()
    }

    fn unload_group(&mut self, g: u32) {
        let now = self.runtime.now();
        for s in self.group(g).ordered() {
            let group = self.group_mut(g);
            let id = group.member(s).id.clone();
            let join = group.take_join(s);
            let sync = group.member_mut(s).awaiting_sync.take();
            if let Some(t) = join {
                self.respond(
                    t,
                    GroupResponse::JoinGroup(join_error(&id, ErrorCode::NotCoordinator)),
                );
            }
            if let Some(t) = sync {
                self.respond(
                    t,
                    GroupResponse::SyncGroup(sync_error(ErrorCode::NotCoordinator)),
                );
            }
        }
        self.group_mut(g).transition(GroupState::Dead, now);
        self.drop_group(g);
    }

    /// expire_offsets is the periodic retention check (Kafka's `cleanupGroupMetadata` with
    /// `removeExpiredOffsets`): expired offsets are tombstoned, and an Empty group left without
    /// offsets goes Dead and is tombstoned too.
    pub(super) fn expire_offsets(&mut self) {
        let now = self.runtime.now();
        let retention = self.config.offsets_retention_ms;
        let mut tombstones = BTreeMap::new();
        for s in self.groups.slots() {
            let expired = self.group(s).expired_offsets(now, retention);
            self.cleanup_group(s, expired, &mut tombstones);
        }
        self.write_tombstones(tombstones);
    }

    /// topics_deleted removes every group's offsets of deleted topics (Kafka's
    /// `handleDeletedPartitions`), with tombstones; Empty groups left without offsets are
    /// deleted too.
    pub fn topics_deleted<'a>(
        &mut self,
        now: i64,
        topics: impl IntoIterator<Item = &'a str>,
    ) -> Vec<super::api::Effect> {
        self.enter(now);
        let topics: Vec<&str> = topics.into_iter().collect();
        if let Some(known) = &mut self.topics {
            for t in &topics {
                known.remove(*t);
            }
        }
        let mut tombstones = BTreeMap::new();
        for s in self.groups.slots() {
            let gone: Vec<(Arc<str>, i32)> = self
                .group(s)
                .offsets
                .all()
                .filter(|(t, _, _)| topics.contains(&&***t))
                .map(|(t, p, _)| (t.clone(), p))
                .collect();
            self.cleanup_group(s, gone, &mut tombstones);
        }
        self.write_tombstones(tombstones);
        self.run_timers();
        self.runtime.take_effects()
    }

    /// cleanup_group removes `offsets` from the group with tombstones, and drops the group (with
    /// a tombstone for its metadata once it had a generation) when it is Dead, or Empty without
    /// offsets left.
    pub(super) fn cleanup_group(
        &mut self,
        g: u32,
        offsets: Vec<(Arc<str>, i32)>,
        tombstones: &mut Tombstones,
    ) {
        let now = self.runtime.now();
        let group = self.group_mut(g);
        let partition = group.partition;
        let mut records = Vec::new();
        for (t, p) in offsets {
            if group.offsets.remove(&t, p) {
                records.push((
                    offset_commit_key(&group.id, &t, p).unwrap_or_default(),
                    None,
                ));
            }
        }
        if group.is(GroupState::Empty) && !group.offsets.has_offsets() {
            group.transition(GroupState::Dead, now);
        }
        if group.is(GroupState::Dead) {
            if group.generation > 0 {
                records.push((group_metadata_key(&group.id).unwrap_or_default(), None));
            }
            self.drop_group(g);
        }
        if !records.is_empty() {
            tombstones.entry(partition).or_default().extend(records);
        }
    }

    /// write_tombstones appends tombstones, one batch per partition; nothing waits on them
    /// (Kafka appends them with acks=0: a lost one is written again by the next expiry).
    pub(super) fn write_tombstones(&mut self, tombstones: Tombstones) {
        for (partition, records) in tombstones {
            self.append(partition, records, Pending::Nothing);
        }
    }

    /// complete_append does what waited on an append.
    pub(super) fn complete_append(
        &mut self,
        token: AppendToken,
        pending: Pending,
        error: ErrorCode,
    ) {
        match pending {
            Pending::Nothing => {}
            Pending::Commit {
                token: request,
                group,
                uid,
                mut response,
                offsets,
            } => {
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
                            .complete(&topic, partition, token, ok);
                    }
                    response.topics[ti].partitions[pi].error_code = outcome.code();
                }
                self.respond(request, GroupResponse::OffsetCommit(response));
            }
            Pending::Assignment {
                group,
                uid,
                generation,
                assignment,
            } => {
                if let Some(g) = self.slot_of_uid(&group, uid) {
                    self.complete_assignment(g, generation, &assignment, error);
                }
            }
            Pending::StaticRejoin(r) => self.complete_static_rejoin(*r, error),
        }
    }

    /// complete_static_rejoin ends the write of a static member's new id (Kafka's
    /// `updateStaticMemberAndRebalance` callback). On failure the replacement is reverted and the
    /// member is answered with the error and no member id; on success it gets the current
    /// generation: from v9 a leader is told so and to skip the assignment, before v9 the answer
    /// names the old leader id, which the new member id never equals, so that no member assigns.
    fn complete_static_rejoin(&mut self, r: StaticRejoin, error: ErrorCode) {
        let Some(g) = self.slot_of_uid(&r.group, r.uid) else {
            return;
        };
        let Some(slot) = self.group(g).slot(&r.new_member_id) else {
            return;
        };
        if self.group(g).member(slot).awaiting_join != Some(r.token) {
            // Answered already: a rebalance completed, or the member was fenced or removed.
            return;
        }
        if error != ErrorCode::None {
            let group = self.group_mut(g);
            group.update_member(
                slot,
                r.old_protocols,
                r.old_rebalance_timeout_ms,
                r.old_session_timeout_ms,
                None,
            );
            if group.static_slot(&r.instance_id) == Some(slot) {
                group.replace_static_member(slot, r.old_member_id.clone());
            }
            self.reschedule_session(g, slot);
            let group = self.group(g);
            let response = JoinGroupResponse {
                error_code: map_group_error(error).code(),
                generation_id: group.generation,
                protocol_type: group.protocol_type.as_deref().map(text),
                protocol_name: group.protocol_name.as_deref().map(text),
                leader: r.old_leader.as_deref().map_or_else(Default::default, text),
                ..Default::default()
            };
            self.respond(r.token, GroupResponse::JoinGroup(response));
            return;
        }
        self.group_mut(g).take_join(slot);
        // The answer restarts the session: its timer may have come and gone (satisfied) while
        // the JoinGroup was parked.
        self.reschedule_session(g, slot);
        let group = self.group(g);
        let is_leader = group.is_leader(slot);
        let response = if r.skip_assignment {
            JoinGroupResponse {
                generation_id: group.generation,
                protocol_type: group.protocol_type.as_deref().map(text),
                protocol_name: group.protocol_name.as_deref().map(text),
                leader: group
                    .leader_id()
                    .as_deref()
                    .map_or_else(Default::default, text),
                skip_assignment: is_leader,
                member_id: text(&r.new_member_id),
                members: if is_leader {
                    group.current_members()
                } else {
                    Vec::new()
                },
                ..Default::default()
            }
        } else {
            JoinGroupResponse {
                generation_id: group.generation,
                protocol_type: group.protocol_type.as_deref().map(text),
                protocol_name: group.protocol_name.as_deref().map(text),
                leader: r.old_leader.as_deref().map_or_else(Default::default, text),
                member_id: text(&r.new_member_id),
                ..Default::default()
            }
        };
        self.respond(r.token, GroupResponse::JoinGroup(response));
    }
}

/// restore fills a new group from its metadata record (Kafka's `readGroupMessageValue` and
/// `loadGroup`): Stable with members, Empty without.
fn restore(group: &mut Group, v: &GroupMetadataValue) {
    group.generation = v.generation;
    group.protocol_type = (!v.protocol_type.is_empty()).then(|| v.protocol_type.clone());
    group.protocol_name = v.protocol.clone();
    group.state_timestamp = (v.current_state_timestamp != -1).then_some(v.current_state_timestamp);
    for m in &v.members {
        let protocols = match &v.protocol {
            Some(p) => vec![Protocol {
                name: p.clone(),
                metadata: m.subscription.clone(),
            }],
            None => Vec::new(),
        };
        let member = Member {
            id: m.member_id.clone(),
            instance_id: m.group_instance_id.clone(),
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            rebalance_timeout_ms: if m.rebalance_timeout == -1 {
                m.session_timeout
            } else {
                m.rebalance_timeout
            },
            session_timeout_ms: m.session_timeout,
            protocol_type: v.protocol_type.clone(),
            protocols,
            assignment: if m.assignment.is_empty() {
                empty_bytes()
            } else {
                m.assignment.clone()
            },
            awaiting_join: None,
            awaiting_sync: None,
            is_new: false,
            pending_sync: false,
            heartbeat: Timer::default(),
            seq: 0,
        };
        // A record naming the same member or instance twice cannot come from Kafka; the last
        // one wins rather than leaving a member unreachable.
        if let Some(s) = group.slot(&m.member_id) {
            group.remove(s);
        }
        if let Some(s) = m
            .group_instance_id
            .as_deref()
            .and_then(|i| group.static_slot(i))
        {
            group.remove(s);
        }
        group.add(member);
    }
    let leader = v.leader.as_deref().and_then(|l| group.slot(l));
    group.leader = leader.or_else(|| group.ordered().first().copied());
    group.state = if group.members.is_empty() {
        GroupState::Empty
    } else {
        GroupState::Stable
    };
    group.subscribed_topics = group.compute_subscribed_topics();
}

impl Replay for LoadState {
    /// record keeps the last offset commit and group metadata record per key (a tombstone
    /// removes); offsets committed in a transaction wait for its marker.
    fn record(
        &mut self,
        producer_id: i64,
        transactional: bool,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<Replayed> {
        match read_key(key)? {
            RecordKey::OffsetCommit {
                group,
                topic,
                partition,
            } => {
                let k = (group, topic, partition);
                let v = match value {
                    Some(v) => Some(read_offset_commit_value(v)?),
                    None => None,
                };
                if transactional {
                    self.transactional
                        .entry(producer_id)
                        .or_default()
                        .insert(k, v);
                } else {
                    match v {
                        Some(o) => {
                            self.offsets.insert(k, o);
                        }
                        None => {
                            self.offsets.remove(&k);
                        }
                    }
                }
            }
            RecordKey::GroupMetadata { group } => {
                let v = match value {
                    Some(v) => Some(read_group_metadata_value(v)?),
                    None => None,
                };
                self.groups.insert(group, v);
            }
            RecordKey::Unknown { .. } => return Ok(Replayed::Unknown),
        }
        Ok(Replayed::Known)
    }

    /// control ends a transaction of `producer_id`: its offsets count on a commit marker and
    /// are dropped on any other.
    fn control(&mut self, producer_id: i64, kind: ControlRecordType) -> Result<()> {
        let done = self.transactional.remove(&producer_id);
        if kind == ControlRecordType::Commit {
            for (k, v) in done.into_iter().flatten() {
                match v {
                    Some(o) => {
                        self.offsets.insert(k, o);
                    }
                    None => {
                        self.offsets.remove(&k);
                    }
                }
            }
        }
        Ok(())
    }
}
