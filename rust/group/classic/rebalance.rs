//! The rebalance mechanics the handlers share: starting a rebalance, completing the join phase,
//! propagating assignments, removing members, and the session, join and sync timeouts (Kafka's
//! `prepareRebalance`, `onCompleteJoin`, `propagateAssignment`, `removeMemberAndUpdateGroup`,
//! `DelayedJoin`, `InitialDelayedJoin`, `DelayedSync`, `DelayedHeartbeat`).

use std::sync::Arc;

use super::classic_group::{empty_bytes, Group, JoinPhase};
use super::state::GroupState;
use crate::errors::ErrorCode;
use crate::group::api::{
    bytes, join_error, sync_error, text, GroupResponse, JoinGroupResponse, SyncGroupResponse,
};
use crate::group::coordinator::Coordinator;
use crate::group::pending::Pending;
use crate::group::records::{
    group_metadata_key, group_metadata_value, GroupMetadataValue, MemberRecord,
};
use crate::group::timers::TimerKey;

impl Coordinator {
    /// reschedule_heartbeat restarts a member's session timer: `timeout_ms` from now.
    pub(crate) fn reschedule_heartbeat(&mut self, g: u32, slot: u32, timeout_ms: i64) {
        let at = self.runtime.now().saturating_add(timeout_ms.max(0));
        let Coordinator {
            groups, runtime, ..
        } = self;
        if let Some(m) = groups.get_mut(g).and_then(|g| g.members.get_mut(slot)) {
            runtime.timers.set(
                &mut m.heartbeat,
                TimerKey::Heartbeat {
                    group: g,
                    member: slot,
                },
                at,
            );
        }
    }

    /// reschedule_session restarts a member's session timer with its session timeout.
    pub(crate) fn reschedule_session(&mut self, g: u32, slot: u32) {
        let timeout = self.group(g).member(slot).session_timeout_ms as i64;
        self.reschedule_heartbeat(g, slot, timeout);
    }

    fn set_join_timer(&mut self, g: u32, delay_ms: i64) {
        let at = self.runtime.now().saturating_add(delay_ms.max(0));
        let Coordinator {
            groups, runtime, ..
        } = self;
        let group = groups.get_mut(g).expect("a group's slot");
        runtime
            .timers
            .set(&mut group.join_timer, TimerKey::Join { group: g }, at);
    }

    /// maybe_prepare_rebalance starts a rebalance if the group can (Kafka's
    /// `maybePrepareRebalance`).
    pub(crate) fn maybe_prepare_rebalance(&mut self, g: u32) {
        if self.group(g).state.can_rebalance() {
            self.prepare_rebalance(g);
        }
    }

    /// prepare_rebalance moves the group to PreparingRebalance (Kafka's `prepareRebalance`):
    /// parked SyncGroups are told REBALANCE_IN_PROGRESS, the sync timeout is cancelled, and a
    /// delayed join is armed: an initial one (`group.initial.rebalance.delay.ms`) for a group that
    /// was Empty, else one of the rebalance timeout, which completes at once if everyone is in.
    pub(crate) fn prepare_rebalance(&mut self, g: u32) {
        if self.group(g).is(GroupState::CompletingRebalance) {
            self.reset_and_propagate_assignment_error(g, ErrorCode::RebalanceInProgress);
        }
        self.remove_sync_expiration(g);
        let delay = self.config.initial_rebalance_delay_ms;
        let now = self.runtime.now();
        let group = self.group_mut(g);
        let initial = group.is(GroupState::Empty);
        let rebalance_timeout = group.rebalance_timeout_ms();
        let wait = if initial {
            group.join_phase = JoinPhase::Initial {
                delay_ms: delay,
                remaining_ms: (rebalance_timeout - delay).max(0),
            };
            delay
        } else {
            group.join_phase = JoinPhase::Regular;
            rebalance_timeout
        };
        group.new_member_added = false;
        group.transition(GroupState::PreparingRebalance, now);
        self.set_join_timer(g, wait);
        if !initial {
            self.try_complete_join(g);
        }
    }

    /// try_complete_join completes the join phase when every member has rejoined (Kafka's
    /// `DelayedJoin.tryComplete`); the initial delayed join never completes early.
    pub(crate) fn try_complete_join(&mut self, g: u32) {
        let group = self.group(g);
        if group.is(GroupState::PreparingRebalance)
            && group.join_phase == JoinPhase::Regular
            && group.has_all_members_joined()
        {
            self.complete_join(g);
        }
    }

    /// expire_join is the delayed join's timeout: the initial delay re-arms while members keep
    /// arriving and time remains (Kafka's `InitialDelayedJoin.onComplete`); otherwise the join
    /// phase completes.
    pub(crate) fn expire_join(&mut self, g: u32) {
        let delay = self.config.initial_rebalance_delay_ms;
        let group = self.group_mut(g);
        if !group.is(GroupState::PreparingRebalance) {
            return;
        }
        if let JoinPhase::Initial {
            delay_ms,
            remaining_ms,
        } = group.join_phase
        {
            if group.new_member_added && remaining_ms != 0 {
                group.new_member_added = false;
                let next = delay.min(remaining_ms);
                group.join_phase = JoinPhase::Initial {
                    delay_ms: next,
                    remaining_ms: (remaining_ms - delay_ms).max(0),
                };
                self.set_join_timer(g, next);
                return;
            }
        }
        self.complete_join(g);
    }

    /// complete_join ends the join phase (Kafka's `onCompleteJoin`): dynamic members that did not
    /// rejoin are dropped; if nobody rejoined but static members remain, the join waits another
    /// rebalance timeout; otherwise the next generation starts, every parked JoinGroup is
    /// answered (the leader with the member list) and the sync timeout is armed. A group left
    /// without members becomes Empty and its metadata is written.
    pub(crate) fn complete_join(&mut self, g: u32) {
        self.group_mut(g).join_timer.cancel();
        let gone: Vec<u32> = {
            let group = self.group(g);
            group
                .ordered()
                .into_iter()
                .filter(|s| {
                    let m = group.member(*s);
                    m.awaiting_join.is_none() && !m.is_static()
                })
                .collect()
        };
        for s in gone {
            self.remove_member_quietly(g, s);
        }
        if self.group(g).is(GroupState::Dead) {
            return;
        }
        if !self.group_mut(g).maybe_elect_new_joined_leader() && self.group(g).len() > 0 {
            // Only static members remain and none rejoined: wait for their sessions to end. A
            // zero rebalance timeout would spin, so the wait is at least 1 ms.
            let group = self.group_mut(g);
            group.join_phase = JoinPhase::Regular;
            let wait = group.rebalance_timeout_ms().max(1);
            self.set_join_timer(g, wait);
            return;
        }
        let now = self.runtime.now();
        self.group_mut(g).init_next_generation(now);
        if self.group(g).is(GroupState::Empty) {
            // Kafka only warns when this write fails: nothing waits on it.
            self.store_group(g, |_| empty_bytes(), Pending::Nothing);
            return;
        }
        for s in self.group(g).ordered() {
            if let Some(token) = self.group_mut(g).take_join(s) {
                let group = self.group(g);
                let members = if group.is_leader(s) {
                    group.current_members()
                } else {
                    Vec::new()
                };
                let leader = group.leader_id();
                let response = JoinGroupResponse {
                    members,
                    ..group.join_result(&group.member(s).id, leader.as_deref())
                };
                self.respond(token, GroupResponse::JoinGroup(response));
            }
            self.reschedule_session(g, s);
            let group = self.group_mut(g);
            group.member_mut(s).is_new = false;
            group.set_pending_sync(s, true);
        }
        let group = self.group_mut(g);
        group.sync_generation = group.generation;
        let at = now.saturating_add(group.rebalance_timeout_ms());
        let Coordinator {
            groups, runtime, ..
        } = self;
        let group = groups.get_mut(g).expect("a group's slot");
        runtime
            .timers
            .set(&mut group.sync_timer, TimerKey::Sync { group: g }, at);
    }

    /// remove_sync_expiration forgets who owes a SyncGroup and cancels the sync timeout.
    pub(crate) fn remove_sync_expiration(&mut self, g: u32) {
        let group = self.group_mut(g);
        group.clear_pending_sync();
        group.sync_timer.cancel();
    }

    /// remove_pending_sync notes a member's SyncGroup; the sync timeout ends with the last one.
    pub(crate) fn remove_pending_sync(&mut self, g: u32, slot: u32) {
        let group = self.group_mut(g);
        group.set_pending_sync(slot, false);
        if group.num_pending_sync() == 0 {
            group.sync_timer.cancel();
        }
    }

    /// expire_sync is the sync timeout (Kafka's `onExpirePendingSync`): members of this
    /// generation that never sent SyncGroup are removed and a rebalance starts.
    pub(crate) fn expire_sync(&mut self, g: u32) {
        let group = self.group(g);
        if group.generation != group.sync_generation
            || !matches!(
                group.state,
                GroupState::CompletingRebalance | GroupState::Stable
            )
            || group.num_pending_sync() == 0
        {
            return;
        }
        for s in group.pending_sync_slots() {
            self.remove_member_quietly(g, s);
        }
        self.prepare_rebalance(g);
    }

    /// expire_heartbeat is a member's session timeout (Kafka's `onExpireHeartbeat`): a member
    /// with a parked request (and not new) survives it; any other is removed.
    pub(crate) fn expire_heartbeat(&mut self, g: u32, slot: u32) {
        let group = self.group(g);
        if group.is(GroupState::Dead) {
            return;
        }
        if !group.member(slot).has_satisfied_heartbeat() {
            self.remove_member_and_update(g, slot);
        }
    }

    /// expire_pending drops a pending member whose member never came back with its id.
    pub(crate) fn expire_pending(&mut self, g: u32, pending: u32) {
        let Some(id) = self.group(g).pending.get(pending).map(|p| p.id.clone()) else {
            return;
        };
        self.remove_pending_and_update(g, &id);
    }

    /// remove_pending_and_update forgets a pending member; the join phase may now complete.
    pub(crate) fn remove_pending_and_update(&mut self, g: u32, id: &str) {
        self.group_mut(g).remove_pending(id);
        if self.group(g).is(GroupState::PreparingRebalance) {
            self.try_complete_join(g);
        }
    }

    /// remove_member_quietly removes a member without starting a rebalance; whatever it had
    /// parked is answered UNKNOWN_MEMBER_ID.
    pub(crate) fn remove_member_quietly(&mut self, g: u32, slot: u32) {
        let group = self.group_mut(g);
        let join = group.take_join(slot);
        let Some(m) = group.remove(slot) else {
            return;
        };
        if let Some(t) = join {
            self.respond(
                t,
                GroupResponse::JoinGroup(join_error("", ErrorCode::UnknownMemberId)),
            );
        }
        // Kafka leaves a removed member's parked SyncGroup unanswered; it cannot be parked in
        // the cases Kafka removes members in, but every parked request gets an answer here.
        if let Some(t) = m.awaiting_sync {
            self.respond(
                t,
                GroupResponse::SyncGroup(sync_error(ErrorCode::UnknownMemberId)),
            );
        }
    }

    /// remove_member_and_update removes a member (Kafka's `removeMemberAndUpdateGroup`): its
    /// parked JoinGroup gets UNKNOWN_MEMBER_ID, and a Stable or CompletingRebalance group
    /// rebalances; a PreparingRebalance group may now complete its join.
    pub(crate) fn remove_member_and_update(&mut self, g: u32, slot: u32) {
        self.remove_member_quietly(g, slot);
        match self.group(g).state {
            GroupState::Stable | GroupState::CompletingRebalance => self.maybe_prepare_rebalance(g),
            GroupState::PreparingRebalance => self.try_complete_join(g),
            GroupState::Empty | GroupState::Dead => {}
        }
    }

    /// propagate_assignment answers every parked SyncGroup with the member's assignment and
    /// `error` (protocol type and name only without an error), restarting their sessions.
    pub(crate) fn propagate_assignment(&mut self, g: u32, error: ErrorCode) {
        let (protocol_type, protocol_name) = if error == ErrorCode::None {
            let group = self.group(g);
            (group.protocol_type.clone(), group.protocol_name.clone())
        } else {
            (None, None)
        };
        for s in self.group(g).ordered() {
            let m = self.group_mut(g).member_mut(s);
            let Some(token) = m.awaiting_sync.take() else {
                continue;
            };
            let assignment = m.assignment.clone();
            self.respond(
                token,
                GroupResponse::SyncGroup(SyncGroupResponse {
                    error_code: error.code(),
                    protocol_type: protocol_type.as_deref().map(text),
                    protocol_name: protocol_name.as_deref().map(text),
                    assignment: bytes(&assignment),
                    ..Default::default()
                }),
            );
            self.reschedule_session(g, s);
        }
    }

    /// reset_and_propagate_assignment_error clears every assignment and answers parked
    /// SyncGroups with `error`.
    pub(crate) fn reset_and_propagate_assignment_error(&mut self, g: u32, error: ErrorCode) {
        for (_, m) in self.group_mut(g).members.iter_mut() {
            m.assignment = empty_bytes();
        }
        self.propagate_assignment(g, error);
    }

    /// group_record is the group's metadata record, each member with the assignment `assign`
    /// gives it.
    pub(crate) fn group_record(
        group: &Group,
        assign: impl Fn(&super::member::Member) -> Arc<[u8]>,
    ) -> (Vec<u8>, Option<Vec<u8>>) {
        let protocol = group.protocol_name.clone();
        let value = GroupMetadataValue {
            protocol_type: group.protocol_type.clone().unwrap_or_else(|| Arc::from("")),
            generation: group.generation,
            protocol: protocol.clone(),
            leader: group.leader_id(),
            current_state_timestamp: group.state_timestamp.unwrap_or(-1),
            members: group
                .ordered()
                .into_iter()
                .map(|s| {
                    let m = group.member(s);
                    MemberRecord {
                        member_id: m.id.clone(),
                        group_instance_id: m.instance_id.clone(),
                        client_id: m.client_id.clone(),
                        client_host: m.client_host.clone(),
                        rebalance_timeout: m.rebalance_timeout_ms,
                        session_timeout: m.session_timeout_ms,
                        subscription: protocol
                            .as_deref()
                            .and_then(|p| m.metadata(p).cloned())
                            .unwrap_or_else(empty_bytes),
                        assignment: assign(m),
                    }
                })
                .collect(),
        };
        // Strings and arrays in a group come from requests that decoded, so they fit.
        (
            group_metadata_key(&group.id).unwrap_or_default(),
            group_metadata_value(&value).ok(),
        )
    }

    /// store_group writes the group's metadata record, with `pending` waiting on it.
    pub(crate) fn store_group(
        &mut self,
        g: u32,
        assign: impl Fn(&super::member::Member) -> Arc<[u8]>,
        pending: Pending,
    ) {
        let group = self.group(g);
        let partition = group.partition;
        let record = Self::group_record(group, assign);
        self.append(partition, vec![record], pending);
    }

    /// complete_assignment ends the append of a leader's assignment (Kafka's `storeGroup`
    /// callback in `doSyncGroup`): if the group is still completing that generation, success
    /// hands every member its assignment and makes the group Stable; failure answers the parked
    /// SyncGroups with the error and rebalances.
    pub(crate) fn complete_assignment(
        &mut self,
        g: u32,
        generation: i32,
        assignment: &crate::assignors::fxhash::FxMap<Arc<str>, Arc<[u8]>>,
        error: ErrorCode,
    ) {
        let group = self.group(g);
        if !group.is(GroupState::CompletingRebalance) || group.generation != generation {
            return;
        }
        if error != ErrorCode::None {
            self.reset_and_propagate_assignment_error(g, map_group_error(error));
            self.maybe_prepare_rebalance(g);
        } else {
            for (_, m) in self.group_mut(g).members.iter_mut() {
                m.assignment = assignment.get(&*m.id).cloned().unwrap_or_else(empty_bytes);
            }
            self.propagate_assignment(g, ErrorCode::None);
            let now = self.runtime.now();
            self.group_mut(g).transition(GroupState::Stable, now);
        }
    }
}

/// map_group_error maps a storage error to what a group metadata write answers (Kafka's
/// `storeGroup` callback).
pub(crate) fn map_group_error(e: ErrorCode) -> ErrorCode {
    use ErrorCode::*;
    match e {
        UnknownTopicOrPartition | NotEnoughReplicas | NotEnoughReplicasAfterAppend => {
            CoordinatorNotAvailable
        }
        NotLeaderOrFollower | KafkaStorageError => NotCoordinator,
        RequestTimedOut => RebalanceInProgress,
        MessageTooLarge | RecordListTooLarge | InvalidFetchSize => UnknownServerError,
        other => other,
    }
}
