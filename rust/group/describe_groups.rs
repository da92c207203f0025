//! DescribeGroups: v0-6. Groups' state and members (Kafka's `handleDescribeGroup`).
//!
//! An unknown group is described as Dead with nothing else before v6; from v6 (KIP-1043, Kafka
//! 4.0's `describeGroups`) it is answered with GROUP_ID_NOT_FOUND and "Group g not found.", still
//! in state Dead. Members carry their metadata and assignment only in a Stable group. v3+ can ask
//! for the authorized operations (the wire adapter fills them in); v4 adds the group instance id;
//! v5 flexible.

use std::sync::Arc;

use super::api::{
    DescribeGroups, DescribeGroupsResponse, DescribedGroup, DescribedMember, GroupResponse, Token,
    GROUP_OPERATIONS,
};
use super::classic_group::empty_bytes;
use super::coordinator::Coordinator;
use super::state::GroupState;
use crate::errors::ErrorCode;

impl Coordinator {
    pub(super) fn describe_groups(&mut self, token: Token, req: &DescribeGroups<'_>) {
        let groups = req
            .groups
            .iter()
            .map(|id| {
                let mut d = self.describe(id);
                if req.version >= 6 && d.error == ErrorCode::None && self.slot_of(id).is_none() {
                    d.error = ErrorCode::GroupIdNotFound;
                    d.error_message = Some(format!("Group {id} not found."));
                }
                // Without an authorizer every supported operation is allowed (Kafka's
                // `authorizedOperations`), reported for the groups described without error.
                if req.include_authorized_operations && d.error == ErrorCode::None {
                    d.authorized_operations = GROUP_OPERATIONS;
                }
                d
            })
            .collect();
        self.respond(
            token,
            GroupResponse::DescribeGroups(DescribeGroupsResponse { groups }),
        );
    }

    fn describe(&self, group_id: &str) -> DescribedGroup {
        let empty: Arc<str> = Arc::from("");
        let mut d = DescribedGroup {
            error: ErrorCode::None,
            error_message: None,
            group_id: group_id.to_string(),
            state: GroupState::Dead.name(),
            protocol_type: empty.clone(),
            protocol_data: empty.clone(),
            members: Vec::new(),
            authorized_operations: i32::MIN,
        };
        if let Some(e) = self.gate(group_id) {
            d.error = e;
            d.state = "";
            return d;
        }
        let Some(g) = self.slot_of(group_id) else {
            return d;
        };
        let group = self.group(g);
        d.state = group.state.name();
        d.protocol_type = group.protocol_type.clone().unwrap_or_else(|| empty.clone());
        let stable = group.is(GroupState::Stable);
        let protocol = group.protocol_name.clone().filter(|_| stable);
        d.protocol_data = protocol.clone().unwrap_or(empty);
        d.members = group
            .ordered()
            .into_iter()
            .map(|s| {
                let m = group.member(s);
                // Kafka's describeNoMetadata: a member's assignment is described in every
                // state (the last one synced, during a rebalance), its metadata only when
                // Stable.
                let metadata = match &protocol {
                    Some(p) => m.metadata(p).cloned().unwrap_or_else(empty_bytes),
                    None => empty_bytes(),
                };
                let assignment = m.assignment.clone();
                DescribedMember {
                    member_id: m.id.clone(),
                    group_instance_id: m.instance_id.clone(),
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    metadata,
                    assignment,
                }
            })
            .collect();
        d
    }
}
