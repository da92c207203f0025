//! Heartbeat: v0-4. A member keeps its session alive and learns of rebalances (Kafka's
//! `handleHeartbeat`). v3+ carries the group instance id.
//!
//! This is the hot path: two hash lookups (group, member), a deadline write, no heap operation
//! and no allocation besides the response.

use super::state::GroupState;
use crate::errors::ErrorCode;
use crate::group::api::{GroupResponse, Heartbeat, HeartbeatResponse, Token};
use crate::group::coordinator::Coordinator;

impl Coordinator {
    pub(crate) fn heartbeat(&mut self, token: Token, req: &Heartbeat<'_>) {
        let error = self.heartbeat_error(req);
        self.respond(
            token,
            GroupResponse::Heartbeat(HeartbeatResponse {
                error_code: error.code(),
                ..Default::default()
            }),
        );
    }

    fn heartbeat_error(&mut self, req: &Heartbeat<'_>) -> ErrorCode {
        if req.group_id.is_empty() {
            return ErrorCode::InvalidGroupId;
        }
        match self.gate(&req.group_id) {
            // The group is still loading: answer blindly, as Kafka does.
            Some(ErrorCode::CoordinatorLoadInProgress) => return ErrorCode::None,
            Some(e) => return e,
            None => {}
        }
        let Some(g) = self.slot_of(&req.group_id) else {
            return ErrorCode::UnknownMemberId;
        };
        if self.group(g).consumer.is_some() {
            return self.classic_heartbeat_to_consumer_group(g, req);
        }
        let group = self.group(g);
        if group.is(GroupState::Dead) {
            return ErrorCode::CoordinatorNotAvailable;
        }
        let slot = match self.member_slot(g, &req.member_id, req.group_instance_id.as_deref()) {
            Ok(s) => s,
            Err(e) => return e,
        };
        if req.generation_id != group.generation {
            return ErrorCode::IllegalGeneration;
        }
        match group.state {
            GroupState::Empty => return ErrorCode::UnknownMemberId,
            GroupState::Dead => return ErrorCode::CoordinatorNotAvailable,
            _ => {}
        }
        let state = group.state;
        self.reschedule_session(g, slot);
        match state {
            GroupState::PreparingRebalance => ErrorCode::RebalanceInProgress,
            _ => ErrorCode::None,
        }
    }
}
