//! LeaveGroup: v0-5. Members leave a group (Kafka's `handleLeaveGroup`).
//!
//! v0-2 name one member; v3+ a batch, where a member given by group instance id alone (an empty
//! member id) is removed by an administrator; v5+ adds a reason per member. Before v3
//! `responses.rs` lifts the one member's error to the top level, as Kafka's `LeaveGroupResponse` does.

use super::state::GroupState;
use crate::errors::ErrorCode;
use crate::group::api::{
    text, GroupResponse, LeaveGroup, LeaveGroupRequestMember, LeaveGroupResponse,
    LeaveGroupResponseMember, Token,
};
use crate::group::coordinator::Coordinator;

impl Coordinator {
    pub(crate) fn leave_group(&mut self, token: Token, req: &LeaveGroup<'_>) {
        let top = if req.group_id.is_empty() {
            Some(ErrorCode::InvalidGroupId)
        } else {
            self.gate(&req.group_id)
        };
        if top.is_none() {
            if let Some(g) = self
                .slot_of(&req.group_id)
                .filter(|g| self.group(*g).consumer.is_some())
            {
                return self.leave_consumer_group(token, g, req);
            }
        }
        let response = match top {
            Some(error) => LeaveGroupResponse {
                error_code: error.code(),
                ..Default::default()
            },
            None => match self.slot_of(&req.group_id) {
                None => LeaveGroupResponse {
                    members: req
                        .members
                        .iter()
                        .map(|m| left(m, ErrorCode::UnknownMemberId))
                        .collect(),
                    ..Default::default()
                },
                Some(g) if self.group(g).is(GroupState::Dead) => LeaveGroupResponse {
                    error_code: ErrorCode::CoordinatorNotAvailable.code(),
                    ..Default::default()
                },
                Some(g) => {
                    let mut members = Vec::with_capacity(req.members.len());
                    for m in &req.members {
                        let error = self.leave_one(g, m);
                        members.push(left(m, error));
                    }
                    LeaveGroupResponse {
                        members,
                        ..Default::default()
                    }
                }
            },
        };
        self.respond(token, GroupResponse::LeaveGroup(response));
    }

    fn leave_one(&mut self, g: u32, m: &LeaveGroupRequestMember<'_>) -> ErrorCode {
        let group = self.group(g);
        if m.member_id.is_empty() {
            // Removal by group instance id (an administrator's).
            return match m
                .group_instance_id
                .as_deref()
                .and_then(|i| group.static_slot(i))
            {
                Some(s) => {
                    self.remove_member_and_update(g, s);
                    ErrorCode::None
                }
                None => ErrorCode::UnknownMemberId,
            };
        }
        if group.is_pending(&m.member_id) {
            self.remove_pending_and_update(g, &m.member_id);
            return ErrorCode::None;
        }
        if let Some(e) =
            self.validate_current_member(g, &m.member_id, m.group_instance_id.as_deref())
        {
            return e;
        }
        let s = self.group(g).slot(&m.member_id).expect("validated");
        self.remove_member_and_update(g, s);
        ErrorCode::None
    }
}

pub(crate) fn left(
    m: &LeaveGroupRequestMember<'_>,
    error: ErrorCode,
) -> LeaveGroupResponseMember<'static> {
    LeaveGroupResponseMember {
        member_id: text(&m.member_id),
        group_instance_id: m.group_instance_id.as_deref().map(text),
        error_code: error.code(),
        ..Default::default()
    }
}
