//! JoinGroup: v0-9. A member joins, or rejoins, a group (Kafka's `handleJoinGroup`,
//! `doNewMemberJoinGroup`, `doCurrentMemberJoinGroup`, `updateStaticMemberAndRebalance`).
//!
//! v0 has no rebalance timeout (the session timeout stands in); v4+ hands a new dynamic member
//! its id with MEMBER_ID_REQUIRED and waits for it to come back (KIP-394); v5+ carries the group
//! instance id of static members (KIP-345); v7+ answers the protocol type; v9+ can tell a static
//! leader rejoining a Stable group to skip the assignment.

use std::sync::Arc;

use super::classic_group::{empty_bytes, JoinPhase};
use super::member::{Member, Protocol};
use super::rebalance::map_group_error;
use super::state::GroupState;
use crate::coordinator::timers::Timer;
use crate::errors::ErrorCode;
use crate::group::api::{
    join_error, sync_error, GroupResponse, JoinGroup, JoinGroupResponse, JoinGroupResponseMember,
    Token,
};
use crate::group::config::NEW_MEMBER_JOIN_TIMEOUT_MS;
use crate::group::coordinator::Coordinator;
use crate::group::pending::{Pending, StaticRejoin};
use crate::group::timers::TimerKey;

impl Coordinator {
    fn join_error(&mut self, token: Token, member_id: &str, error: ErrorCode) {
        self.respond(
            token,
            GroupResponse::JoinGroup(join_error(member_id, error)),
        );
    }

    pub(crate) fn join_group(&mut self, token: Token, req: &JoinGroup<'_>) {
        if req.group_id.is_empty() {
            return self.join_error(token, &req.member_id, ErrorCode::InvalidGroupId);
        }
        if let Some(e) = self.gate(&req.group_id) {
            return self.join_error(token, &req.member_id, e);
        }
        let session = req.session_timeout_ms as i64;
        if session < self.config.min_session_timeout_ms
            || session > self.config.max_session_timeout_ms
        {
            return self.join_error(token, &req.member_id, ErrorCode::InvalidSessionTimeout);
        }
        let unknown = req.member_id.is_empty();
        let g = match self.slot_of(&req.group_id) {
            Some(g) => g,
            None if unknown => self.create_group(&req.group_id),
            None => return self.join_error(token, &req.member_id, ErrorCode::UnknownMemberId),
        };
        if self.group(g).share.is_some() {
            // Kafka's classicGroupJoin: a share group's id is not a classic group's.
            return self.join_error(token, "", ErrorCode::InconsistentGroupProtocol);
        }
        if let Some(part) = self.group(g).consumer.as_deref() {
            if part.group.num_members() > 0 {
                // A classic member of a consumer group: KIP-848's migration bridge.
                return self.classic_join_to_consumer_group(token, g, req);
            }
            // An Empty consumer group becomes a classic group (Kafka's offline downgrade): its
            // records are tombstoned, its offsets stay.
            let records = crate::group::cleanup::consumer_group_tombstones(
                &self.group(g).id,
                part.group.resolved_regexes().keys(),
            );
            let group = self.group_mut(g);
            let partition = group.partition;
            group.consumer = None;
            self.append(partition, records, crate::group::pending::Pending::Nothing);
        }
        if !self.accept_joining_member(g, &req.member_id) {
            let group = self.group_mut(g);
            if !group.remove_pending(&req.member_id) {
                if let Some(s) = group.slot(&req.member_id) {
                    self.remove_member_quietly(g, s);
                }
            }
            self.join_error(token, "", ErrorCode::GroupMaxSizeReached);
        } else if unknown {
            self.join_new_member(g, token, req);
        } else {
            self.join_current_member(g, token, req);
        }
        if self.group(g).is(GroupState::PreparingRebalance) {
            self.try_complete_join(g);
        }
    }

    /// accept_joining_member is Kafka's `acceptJoiningMember`: while rebalancing, room is counted
    /// in members that have rejoined, so that the last ones to rejoin a group above
    /// `group.max.size` are the ones turned away.
    fn accept_joining_member(&self, g: u32, member_id: &str) -> bool {
        let group = self.group(g);
        let max = self.config.max_size;
        match group.state {
            GroupState::Empty | GroupState::Dead => true,
            GroupState::PreparingRebalance => {
                group
                    .slot(member_id)
                    .is_some_and(|s| group.member(s).awaiting_join.is_some())
                    || (group.num_awaiting_join() as i64) < max
            }
            GroupState::CompletingRebalance | GroupState::Stable => {
                group.slot(member_id).is_some() || (group.len() as i64) < max
            }
        }
    }

    fn join_new_member(&mut self, g: u32, token: Token, req: &JoinGroup<'_>) {
        let group = self.group(g);
        if group.is(GroupState::Dead) {
            return self.join_error(token, "", ErrorCode::CoordinatorNotAvailable);
        }
        if !group.supports_protocols(&req.protocol_type, &req.protocols) {
            return self.join_error(token, "", ErrorCode::InconsistentGroupProtocol);
        }
        let new_id = self.new_member_id(req.group_instance_id.as_deref().unwrap_or(req.client_id));
        match req.group_instance_id.as_deref() {
            Some(instance) => match self.group(g).static_slot(instance) {
                Some(slot) => self.rejoin_static_member(g, slot, new_id, token, req),
                None => self.add_member_and_rebalance(g, new_id, token, req),
            },
            None if req.version >= 4 => {
                let at = self
                    .runtime
                    .now()
                    .saturating_add(req.session_timeout_ms as i64);
                let Coordinator {
                    groups, runtime, ..
                } = self;
                let group = groups.get_mut(g).expect("a group's slot");
                let p = group.add_pending(new_id.clone());
                if let Some(pm) = group.pending.get_mut(p) {
                    runtime.timers.set(
                        &mut pm.expiry,
                        TimerKey::Pending {
                            group: g,
                            pending: p,
                        },
                        at,
                    );
                }
                self.join_error(token, &new_id, ErrorCode::MemberIdRequired);
            }
            None => self.add_member_and_rebalance(g, new_id, token, req),
        }
    }

    fn join_current_member(&mut self, g: u32, token: Token, req: &JoinGroup<'_>) {
        let group = self.group(g);
        if group.is(GroupState::Dead) {
            return self.join_error(token, &req.member_id, ErrorCode::CoordinatorNotAvailable);
        }
        if !group.supports_protocols(&req.protocol_type, &req.protocols) {
            return self.join_error(token, &req.member_id, ErrorCode::InconsistentGroupProtocol);
        }
        if group.is_pending(&req.member_id) {
            // A pending member id is never a static member's: Kafka fails such a request with
            // an IllegalStateException, which its clients see as UNKNOWN_SERVER_ERROR.
            if req.group_instance_id.is_some() {
                return self.join_error(token, &req.member_id, ErrorCode::UnknownServerError);
            }
            let id = Arc::from(&*req.member_id);
            return self.add_member_and_rebalance(g, id, token, req);
        }
        if let Some(e) =
            self.validate_current_member(g, &req.member_id, req.group_instance_id.as_deref())
        {
            return self.join_error(token, &req.member_id, e);
        }
        let group = self.group(g);
        let slot = group.slot(&req.member_id).expect("validated");
        let member = group.member(slot);
        match group.state {
            GroupState::PreparingRebalance => self.update_member_and_rebalance(g, slot, token, req),
            GroupState::CompletingRebalance if member.matches(&req.protocols) => {
                // The member lost its JoinGroup response: answer again for this generation.
                let members = if group.is_leader(slot) {
                    group.current_members()
                } else {
                    Vec::new()
                };
                self.answer_current_generation(g, slot, token, members);
            }
            GroupState::Stable if !group.is_leader(slot) && member.matches(&req.protocols) => {
                // A follower with nothing new: no rebalance, just this generation.
                self.answer_current_generation(g, slot, token, Vec::new());
            }
            // The leader (to let it force a rebalance, say on new topic metadata), or changed
            // metadata.
            GroupState::CompletingRebalance | GroupState::Stable => {
                self.update_member_and_rebalance(g, slot, token, req)
            }
            // The group lost its members meanwhile: make the client start over.
            GroupState::Empty | GroupState::Dead => {
                self.join_error(token, &req.member_id, ErrorCode::UnknownMemberId)
            }
        }
    }

    fn answer_current_generation(
        &mut self,
        g: u32,
        slot: u32,
        token: Token,
        members: Vec<JoinGroupResponseMember<'static>>,
    ) {
        let group = self.group(g);
        let response = JoinGroupResponse {
            members,
            ..group.join_result(&group.member(slot).id, group.leader_id().as_deref())
        };
        self.respond(token, GroupResponse::JoinGroup(response));
    }

    /// validate_current_member is Kafka's `validateCurrentMember`, shared by every api that
    /// names a member: an instance id mapped to another member id is FENCED_INSTANCE_ID, an
    /// unknown instance id or member id UNKNOWN_MEMBER_ID.
    pub(crate) fn validate_current_member(
        &self,
        g: u32,
        member_id: &str,
        instance_id: Option<&str>,
    ) -> Option<ErrorCode> {
        self.member_slot(g, member_id, instance_id).err()
    }

    /// member_slot is [`Coordinator::validate_current_member`] giving the member's slot.
    #[inline]
    pub(crate) fn member_slot(
        &self,
        g: u32,
        member_id: &str,
        instance_id: Option<&str>,
    ) -> Result<u32, ErrorCode> {
        let group = self.group(g);
        match instance_id {
            Some(i) => match group.static_slot(i) {
                Some(s) if &*group.member(s).id != member_id => Err(ErrorCode::FencedInstanceId),
                Some(s) => Ok(s),
                None => Err(ErrorCode::UnknownMemberId),
            },
            None => group.slot(member_id).ok_or(ErrorCode::UnknownMemberId),
        }
    }

    /// add_member_and_rebalance adds a member with its JoinGroup parked (Kafka's
    /// `addMemberAndRebalance`). Its session is the 5-minute new-member join timeout until the
    /// join completes; a member arriving during the initial delay extends it.
    fn add_member_and_rebalance(
        &mut self,
        g: u32,
        member_id: Arc<str>,
        token: Token,
        req: &JoinGroup<'_>,
    ) {
        let member = Member {
            id: member_id,
            instance_id: req.group_instance_id.as_deref().map(Arc::from),
            client_id: Arc::from(req.client_id),
            client_host: Arc::from(req.client_host),
            rebalance_timeout_ms: req.rebalance_timeout_ms,
            session_timeout_ms: req.session_timeout_ms,
            protocol_type: Arc::from(&*req.protocol_type),
            protocols: Protocol::list(&req.protocols),
            assignment: empty_bytes(),
            awaiting_join: Some(token),
            awaiting_sync: None,
            is_new: true,
            pending_sync: false,
            heartbeat: Timer::default(),
            seq: 0,
        };
        let group = self.group_mut(g);
        if group.is(GroupState::PreparingRebalance)
            && matches!(group.join_phase, JoinPhase::Initial { .. })
        {
            group.new_member_added = true;
        }
        let slot = group.add(member);
        self.reschedule_heartbeat(g, slot, NEW_MEMBER_JOIN_TIMEOUT_MS);
        self.maybe_prepare_rebalance(g);
    }

    /// update_member_and_rebalance takes a known member's new protocols and timeouts and parks
    /// its JoinGroup (Kafka's `updateMemberAndRebalance`). A JoinGroup the member had parked
    /// already is answered REBALANCE_IN_PROGRESS, which clients retry: Kafka drops it, but its
    /// connection would wait for it forever.
    fn update_member_and_rebalance(
        &mut self,
        g: u32,
        slot: u32,
        token: Token,
        req: &JoinGroup<'_>,
    ) {
        let before = self.group_mut(g).update_member(
            slot,
            Protocol::list(&req.protocols),
            req.rebalance_timeout_ms,
            req.session_timeout_ms,
            Some(token),
        );
        if let Some(old) = before {
            let id = self.group(g).member(slot).id.clone();
            self.join_error(old, &id, ErrorCode::RebalanceInProgress);
        }
        self.maybe_prepare_rebalance(g);
    }

    /// rejoin_static_member serves a known static member that rejoins without its member id (a
    /// restart): it takes a new member id, and whatever the old id had parked is fenced. In a
    /// Stable group whose protocol would not change, there is no rebalance: the group's metadata
    /// is written with the new id and the member gets the current generation once it is in the
    /// log. A CompletingRebalance group rebalances (the leader's assignment would name the old
    /// id: KAFKA-9801); a PreparingRebalance group simply counts the member in.
    fn rejoin_static_member(
        &mut self,
        g: u32,
        slot: u32,
        new_id: Arc<str>,
        token: Token,
        req: &JoinGroup<'_>,
    ) {
        let old_leader = self.group(g).leader_id();
        let (old_id, join, sync) = self
            .group_mut(g)
            .replace_static_member(slot, new_id.clone());
        if let Some(t) = join {
            self.join_error(t, &old_id, ErrorCode::FencedInstanceId);
        }
        if let Some(t) = sync {
            self.respond(
                t,
                GroupResponse::SyncGroup(sync_error(ErrorCode::FencedInstanceId)),
            );
        }
        self.reschedule_session(g, slot);
        let group = self.group_mut(g);
        let m = group.member(slot);
        let (old_protocols, old_rebalance, old_session) = (
            m.protocols.clone(),
            m.rebalance_timeout_ms,
            m.session_timeout_ms,
        );
        group.update_member(
            slot,
            Protocol::list(&req.protocols),
            req.rebalance_timeout_ms,
            req.session_timeout_ms,
            Some(token),
        );
        match group.state {
            GroupState::Stable => {
                if group.select_protocol() == group.protocol_name {
                    let pending = Pending::StaticRejoin(Box::new(StaticRejoin {
                        token,
                        group: group.id.clone(),
                        uid: group.uid,
                        instance_id: Arc::from(req.group_instance_id.as_deref().unwrap_or("")),
                        old_member_id: old_id,
                        new_member_id: new_id,
                        old_protocols,
                        old_rebalance_timeout_ms: old_rebalance,
                        old_session_timeout_ms: old_session,
                        old_leader,
                        skip_assignment: req.version >= 9,
                    }));
                    self.store_group(g, |m| m.assignment.clone(), pending);
                } else {
                    self.maybe_prepare_rebalance(g);
                }
            }
            GroupState::CompletingRebalance => self.prepare_rebalance(g),
            GroupState::PreparingRebalance => {}
            // A group with a static member is neither Empty nor Dead.
            GroupState::Empty | GroupState::Dead => {
                debug_assert!(false, "static member rejoined a {} group", group.state)
            }
        }
    }

    /// complete_static_rejoin ends the write of a static member's new id (Kafka's
    /// `updateStaticMemberAndRebalance` callback). On failure the replacement is reverted and the
    /// member is answered with the error and no member id; on success it gets the current
    /// generation: from v9 a leader is told so and to skip the assignment, before v9 the answer
    /// names the old leader id, which the new member id never equals, so that no member assigns.
    pub(crate) fn complete_static_rejoin(&mut self, r: StaticRejoin, error: ErrorCode) {
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
                ..group.join_result("", r.old_leader.as_deref())
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
                skip_assignment: is_leader,
                members: if is_leader {
                    group.current_members()
                } else {
                    Vec::new()
                },
                ..group.join_result(&r.new_member_id, group.leader_id().as_deref())
            }
        } else {
            group.join_result(&r.new_member_id, r.old_leader.as_deref())
        };
        self.respond(r.token, GroupResponse::JoinGroup(response));
    }
}
