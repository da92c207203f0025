//! ListGroups: v0-5. The groups this coordinator holds (Kafka's `handleListGroups`).
//!
//! v3 flexible; v4 filters by state (names compared ignoring case); v5 by type (`classic`,
//! `consumer` or `share`, ignoring case; any other type lists nothing). A consumer group is
//! listed with protocol type `consumer` and its KIP-848 state, a share group with protocol type
//! and type `share` and state Empty or Stable. While a partition loads, the
//! answer is COORDINATOR_LOAD_IN_PROGRESS with the groups known so far.

use super::api::{
    text, GroupResponse, ListGroups, ListGroupsResponse, ListGroupsResponseGroup, Token,
};
use super::coordinator::Coordinator;
use crate::errors::ErrorCode;

impl Coordinator {
    pub(super) fn list_groups(&mut self, token: Token, req: &ListGroups<'_>) {
        let wants = |kind: &str| {
            req.types_filter.is_empty()
                || req
                    .types_filter
                    .iter()
                    .any(|t| t.trim().eq_ignore_ascii_case(kind))
        };
        let (classic, consumer, share) = (wants("classic"), wants("consumer"), wants("share"));
        let state_ok = |state: &str| {
            req.states_filter.is_empty()
                || req
                    .states_filter
                    .iter()
                    .any(|s| s.trim().eq_ignore_ascii_case(state))
        };
        let mut groups: Vec<ListGroupsResponseGroup<'static>> = self
            .groups
            .iter()
            .filter_map(|(_, g)| match g.consumer.as_deref() {
                None if g.share.is_some() => {
                    let state = g.share.as_deref().map_or("Empty", |p| p.state());
                    (share && state_ok(state)).then(|| ListGroupsResponseGroup {
                        group_id: text(&g.id),
                        protocol_type: "share".into(),
                        group_state: state.into(),
                        group_type: "share".into(),
                        ..Default::default()
                    })
                }
                None => (classic
                    && (req.states_filter.is_empty()
                        || req.states_filter.iter().any(|s| g.state.matches(s))))
                .then(|| ListGroupsResponseGroup {
                    group_id: text(&g.id),
                    protocol_type: g
                        .protocol_type
                        .as_deref()
                        .map_or_else(Default::default, text),
                    group_state: g.state.name().into(),
                    group_type: "classic".into(),
                    ..Default::default()
                }),
                Some(part) => {
                    let state = part.group.state().name();
                    (consumer && state_ok(state)).then(|| ListGroupsResponseGroup {
                        group_id: text(&g.id),
                        protocol_type: "consumer".into(),
                        group_state: state.into(),
                        group_type: "consumer".into(),
                        ..Default::default()
                    })
                }
            })
            .collect();
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
