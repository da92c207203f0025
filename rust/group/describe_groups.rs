//! DescribeGroups: v0-6. Groups' state and members (Kafka's `handleDescribeGroup`).
//!
//! An unknown group is described as Dead with nothing else before v6; from v6 (KIP-1043, Kafka
//! 4.0's `describeGroups`) it is answered with GROUP_ID_NOT_FOUND and "Group g not found.", still
//! in state Dead. Members carry their metadata and assignment only in a Stable group. v3+ can ask
//! for the authorized operations (the wire adapter fills them in); v4 adds the group instance id;
//! v5 flexible. A consumer group (KIP-848) or a share group (KIP-932) is not a classic group:
//! Dead, and from v6
//! GROUP_ID_NOT_FOUND with "Group g is not a classic group." (Kafka's `classicGroup`).

use super::api::{
    bytes, text, DescribeGroups, DescribeGroupsResponse, DescribeGroupsResponseGroup,
    DescribeGroupsResponseMember, GroupResponse, Token, GROUP_OPERATIONS,
};
use super::classic::state::GroupState;
use super::coordinator::Coordinator;
use crate::errors::ErrorCode;

impl Coordinator {
    pub(super) fn describe_groups(&mut self, token: Token, req: &DescribeGroups<'_>) {
        let groups = req
            .groups
            .iter()
            .map(|id| {
                let mut d = self.describe(id);
                let ok = d.error_code == ErrorCode::None.code();
                if req.version >= 6 && ok {
                    match self.slot_of(id) {
                        None => {
                            d.error_code = ErrorCode::GroupIdNotFound.code();
                            d.error_message = Some(format!("Group {id} not found.").into());
                        }
                        Some(g)
                            if self.group(g).consumer.is_some()
                                || self.group(g).share.is_some() =>
                        {
                            d.error_code = ErrorCode::GroupIdNotFound.code();
                            d.error_message =
                                Some(format!("Group {id} is not a classic group.").into());
                        }
                        Some(_) => {}
                    }
                }
                // Without an authorizer every supported operation is allowed (Kafka's
                // `authorizedOperations`), reported for the groups described without error.
                if req.include_authorized_operations && d.error_code == ErrorCode::None.code() {
                    d.authorized_operations = GROUP_OPERATIONS;
                }
                d
            })
            .collect();
        self.respond(
            token,
            GroupResponse::DescribeGroups(DescribeGroupsResponse {
                groups,
                ..Default::default()
            }),
        );
    }

    /// describe is one group as DescribeGroups answers it: an unknown group is Dead with nothing
    /// else; the state is "" with an error, as Kafka's `EmptyGroup` summary.
    fn describe(&self, group_id: &str) -> DescribeGroupsResponseGroup<'static> {
        let mut d = DescribeGroupsResponseGroup {
            group_id: text(group_id),
            group_state: GroupState::Dead.name().into(),
            ..Default::default()
        };
        if let Some(e) = self.gate(group_id) {
            d.error_code = e.code();
            d.group_state = "".into();
            return d;
        }
        let Some(g) = self.slot_of(group_id) else {
            return d;
        };
        let group = self.group(g);
        if group.consumer.is_some() || group.share.is_some() {
            return d;
        }
        d.group_state = group.state.name().into();
        d.protocol_type = group
            .protocol_type
            .as_deref()
            .map_or_else(Default::default, text);
        let stable = group.is(GroupState::Stable);
        let protocol = group.protocol_name.clone().filter(|_| stable);
        d.protocol_data = protocol.as_deref().map_or_else(Default::default, text);
        d.members = group
            .ordered()
            .into_iter()
            .map(|s| {
                let m = group.member(s);
                // Kafka's describeNoMetadata: a member's assignment is described in every
                // state (the last one synced, during a rebalance), its metadata only when
                // Stable.
                let metadata = protocol.as_deref().and_then(|p| m.metadata(p));
                DescribeGroupsResponseMember {
                    member_id: text(&m.id),
                    group_instance_id: m.instance_id.as_deref().map(text),
                    client_id: text(&m.client_id),
                    client_host: text(&m.client_host),
                    member_metadata: metadata.map_or_else(Default::default, |b| bytes(b)),
                    member_assignment: bytes(&m.assignment),
                    ..Default::default()
                }
            })
            .collect();
        d
    }
}
