//! DeleteGroups: v0-2. Delete Empty groups and their offsets (Kafka's `handleDeleteGroups`).
//!
//! An Empty group goes Dead: its offsets and (once it had a generation) its metadata are
//! tombstoned; a group with members answers NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.
//! The response does not wait for the tombstones (Kafka appends them with acks=0). v2 flexible.
//! A share group must be Empty too; its share state is deleted by the host
//! ([`ShareEffect::DeleteShareState`](super::api::ShareEffect), before its tombstones).

use std::collections::BTreeMap;

use super::api::{
    text, DeleteGroups, DeleteGroupsResponse, DeleteGroupsResponseResult, GroupResponse, Token,
};
use super::classic::state::GroupState;
use super::coordinator::Coordinator;
use crate::errors::ErrorCode;

impl Coordinator {
    pub(super) fn delete_groups(&mut self, token: Token, req: &DeleteGroups<'_>) {
        let mut results: Vec<DeleteGroupsResponseResult<'static>> = Vec::new();
        let mut tombstones = BTreeMap::new();
        for id in &req.groups_names {
            // Kafka takes the ids as a set.
            if results.iter().any(|r| r.group_id == *id) {
                continue;
            }
            let error = match (self.gate(id), self.slot_of(id)) {
                (Some(e), _) => e,
                (None, None) => ErrorCode::GroupIdNotFound,
                (None, Some(g))
                    if self
                        .group(g)
                        .consumer
                        .as_deref()
                        .is_some_and(|p| p.group.num_members() > 0) =>
                {
                    ErrorCode::NonEmptyGroup
                }
                (None, Some(g))
                    if self
                        .group(g)
                        .share
                        .as_deref()
                        .is_some_and(|p| !p.is_empty()) =>
                {
                    ErrorCode::NonEmptyGroup
                }
                (None, Some(g)) => match self.group(g).state {
                    GroupState::Dead => ErrorCode::GroupIdNotFound,
                    GroupState::Empty => {
                        let now = self.runtime.now();
                        let group = self.group_mut(g);
                        group.transition(GroupState::Dead, now);
                        group.offsets.clear_pending();
                        let offsets = group.offsets.partitions();
                        self.cleanup_group(g, offsets, &mut tombstones);
                        ErrorCode::None
                    }
                    _ => ErrorCode::NonEmptyGroup,
                },
            };
            results.push(DeleteGroupsResponseResult {
                group_id: text(id),
                error_code: error.code(),
                ..Default::default()
            });
        }
        self.write_tombstones(tombstones);
        self.respond(
            token,
            GroupResponse::DeleteGroups(DeleteGroupsResponse {
                results,
                ..Default::default()
            }),
        );
    }
}
