//! ListGroups: v0-5. The groups this coordinator holds (Kafka's `handleListGroups`).
//!
//! v3 flexible; v4 filters by state (names compared ignoring case); v5 by type (every group
//! here is `classic`, so any other type filter lists nothing). While a partition loads, the
//! answer is COORDINATOR_LOAD_IN_PROGRESS with the groups known so far.

use super::api::{
    text, GroupResponse, ListGroups, ListGroupsResponse, ListGroupsResponseGroup, Token,
};
use super::coordinator::Coordinator;
use crate::errors::ErrorCode;

impl Coordinator {
    pub(super) fn list_groups(&mut self, token: Token, req: &ListGroups<'_>) {
        let classic = req.types_filter.is_empty()
            || req
                .types_filter
                .iter()
                .any(|t| t.eq_ignore_ascii_case("classic"));
        let mut groups: Vec<ListGroupsResponseGroup<'static>> = if classic {
            self.groups
                .iter()
                .filter(|(_, g)| {
                    req.states_filter.is_empty()
                        || req.states_filter.iter().any(|s| g.state.matches(s))
                })
                .map(|(_, g)| ListGroupsResponseGroup {
                    group_id: text(&g.id),
                    protocol_type: g
                        .protocol_type
                        .as_deref()
                        .map_or_else(Default::default, text),
                    group_state: g.state.name().into(),
                    group_type: "classic".into(),
                    ..Default::default()
                })
                .collect()
        } else {
            Vec::new()
        };
        groups.sort_by(|a, b| a.group_id.cmp(&b.group_id));
        let error = if self.runtime.partitions.any_loading() {
            ErrorCode::CoordinatorLoadInProgress
        } else {
            ErrorCode::None
        };
        self.respond(
            token,
            GroupResponse::ListGroups(ListGroupsResponse {
                error_code: error.code(),
                groups,
                ..Default::default()
            }),
        );
    }
}
