//! SyncGroup: v0-5. Members wait for the leader's assignment and get their own (Kafka's
//! `handleSyncGroup`, `validateSyncGroup`, `doSyncGroup`).
//!
//! v3+ carries the group instance id; v5+ must name the protocol type and name (a v5+ request
//! without them is INCONSISTENT_GROUP_PROTOCOL, as Kafka's broker checks before its coordinator).

use std::sync::Arc;

use super::classic_group::empty_bytes;
use super::state::GroupState;
use crate::assignors::fxhash::FxMap;
use crate::errors::ErrorCode;
use crate::group::api::{
    bytes, sync_error, text, GroupResponse, SyncGroup, SyncGroupResponse, Token,
};
use crate::group::coordinator::Coordinator;
use crate::group::pending::Pending;

impl Coordinator {
    fn sync_error(&mut self, token: Token, error: ErrorCode) {
        self.respond(token, GroupResponse::SyncGroup(sync_error(error)));
    }

    pub(crate) fn sync_group(&mut self, token: Token, req: &SyncGroup<'_>) {
        if req.version >= 5 && (req.protocol_type.is_none() || req.protocol_name.is_none()) {
            return self.sync_error(token, ErrorCode::InconsistentGroupProtocol);
        }
        if req.group_id.is_empty() {
            return self.sync_error(token, ErrorCode::InvalidGroupId);
        }
        match self.gate(&req.group_id) {
            // The rebalance in flight is lost with the load: have the member rejoin, without
            // COORDINATOR_LOAD_IN_PROGRESS, which old clients do not expect.
            Some(ErrorCode::CoordinatorLoadInProgress) => {
                return self.sync_error(token, ErrorCode::RebalanceInProgress)
            }
            Some(e) => return self.sync_error(token, e),
            None => {}
        }
        let Some(g) = self.slot_of(&req.group_id) else {
            return self.sync_error(token, ErrorCode::UnknownMemberId);
        };
        if self.group(g).consumer.is_some() {
            return self.classic_sync_to_consumer_group(token, g, req);
        }
        if let Some(e) = self.validate_sync(g, req) {
            return self.sync_error(token, e);
        }
        let group = self.group(g);
        let slot = group.slot(&req.member_id).expect("validated");
        match group.state {
            GroupState::Empty => self.sync_error(token, ErrorCode::UnknownMemberId),
            GroupState::PreparingRebalance => {
                self.sync_error(token, ErrorCode::RebalanceInProgress)
            }
            GroupState::CompletingRebalance => {
                let group = self.group_mut(g);
                if let Some(old) = group.member_mut(slot).awaiting_sync.replace(token) {
                    // Kafka drops a SyncGroup replaced by another; answer it so that its
                    // connection does not wait forever.
                    self.sync_error(old, ErrorCode::RebalanceInProgress);
                }
                self.remove_pending_sync(g, slot);
                if self.group(g).is_leader(slot) {
                    let group = self.group(g);
                    // Members the leader left out get an empty assignment.
                    let mut assignment: FxMap<Arc<str>, Arc<[u8]>> = FxMap::default();
                    for a in &req.assignments {
                        if let Some(s) = group.slot(&a.member_id) {
                            assignment
                                .insert(group.member(s).id.clone(), Arc::from(&*a.assignment));
                        }
                    }
                    for (_, m) in group.members.iter() {
                        assignment.entry(m.id.clone()).or_insert_with(empty_bytes);
                    }
                    let pending = Pending::Assignment {
                        group: group.id.clone(),
                        uid: group.uid,
                        generation: group.generation,
                        assignment: assignment.clone(),
                    };
                    self.store_group(
                        g,
                        |m| assignment.get(&*m.id).cloned().unwrap_or_else(empty_bytes),
                        pending,
                    );
                }
            }
            GroupState::Stable => {
                self.remove_pending_sync(g, slot);
                let group = self.group(g);
                let response = SyncGroupResponse {
                    protocol_type: group.protocol_type.as_deref().map(text),
                    protocol_name: group.protocol_name.as_deref().map(text),
                    assignment: bytes(&group.member(slot).assignment),
                    ..Default::default()
                };
                self.respond(token, GroupResponse::SyncGroup(response));
                self.reschedule_session(g, slot);
            }
            GroupState::Dead => self.sync_error(token, ErrorCode::CoordinatorNotAvailable),
        }
    }

    /// validate_sync is Kafka's `validateSyncGroup`.
    fn validate_sync(&self, g: u32, req: &SyncGroup<'_>) -> Option<ErrorCode> {
        let group = self.group(g);
        if group.is(GroupState::Dead) {
            return Some(ErrorCode::CoordinatorNotAvailable);
        }
        if let Some(e) =
            self.validate_current_member(g, &req.member_id, req.group_instance_id.as_deref())
        {
            return Some(e);
        }
        if req.generation_id != group.generation {
            return Some(ErrorCode::IllegalGeneration);
        }
        let inconsistent = |asked: Option<&str>, have: &Option<Arc<str>>| {
            asked.is_some_and(|a| have.as_deref() != Some(a))
        };
        if inconsistent(req.protocol_type.as_deref(), &group.protocol_type)
            || inconsistent(req.protocol_name.as_deref(), &group.protocol_name)
        {
            return Some(ErrorCode::InconsistentGroupProtocol);
        }
        None
    }
}
