//! OffsetDelete: v0. Delete a group's committed offsets for some partitions (Kafka's
//! `handleDeleteOffsets`).
//!
//! An Empty group loses the offsets asked for; a consumer group with members keeps those of the
//! topics it consumes (GROUP_SUBSCRIBED_TO_TOPIC) and loses the others; any other group with
//! members answers NON_EMPTY_GROUP. Deleted offsets are tombstoned; the response does not wait
//! for the tombstones (Kafka appends them with acks=0).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::errors::ErrorCode;
use crate::group::api::{
    text, GroupResponse, OffsetDelete, OffsetDeleteResponse, OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic, Token,
};
use crate::group::classic::state::GroupState;
use crate::group::coordinator::Coordinator;

impl Coordinator {
    pub(crate) fn offset_delete(&mut self, token: Token, req: &OffsetDelete<'_>) {
        let response = self.delete_offsets(req);
        self.respond(token, GroupResponse::OffsetDelete(response));
    }

    fn delete_offsets(&mut self, req: &OffsetDelete<'_>) -> OffsetDeleteResponse<'static> {
        let error = |error: ErrorCode| OffsetDeleteResponse {
            error_code: error.code(),
            ..Default::default()
        };
        if let Some(e) = self.gate(&req.group_id) {
            return error(e);
        }
        let Some(g) = self.slot_of(&req.group_id) else {
            return error(ErrorCode::GroupIdNotFound);
        };
        let group = self.group(g);
        if group.share.is_some() {
            // Kafka's ShareGroup.validateOffsetDelete.
            return error(ErrorCode::GroupIdNotFound);
        }
        let check_subscribed = match group.state {
            GroupState::Dead => return error(ErrorCode::GroupIdNotFound),
            GroupState::Empty => false,
            _ if group.is_consumer_group() => true,
            _ => return error(ErrorCode::NonEmptyGroup),
        };
        let mut topics = Vec::new();
        let mut gone = Vec::new();
        for t in &req.topics {
            let name: &str = &t.name;
            let keep = check_subscribed && group.is_subscribed_to_topic(name);
            // Kafka answers partitions the broker does not have before its coordinator sees
            // the request (KafkaApis.handleOffsetDeleteRequest).
            let count = self.topics.as_ref().map(|k| k.get(name).copied());
            let parts = t
                .partitions
                .iter()
                .map(|p| {
                    let p = p.partition_index;
                    let known = match count {
                        None => true,
                        Some(n) => n.is_some_and(|n| p >= 0 && p < n),
                    };
                    let error = if !known {
                        ErrorCode::UnknownTopicOrPartition
                    } else if keep {
                        ErrorCode::GroupSubscribedToTopic
                    } else {
                        gone.push((Arc::<str>::from(name), p));
                        ErrorCode::None
                    };
                    OffsetDeleteResponsePartition {
                        partition_index: p,
                        error_code: error.code(),
                    }
                })
                .collect();
            topics.push(OffsetDeleteResponseTopic {
                name: text(name),
                partitions: parts,
            });
        }
        let mut tombstones = BTreeMap::new();
        if !gone.is_empty() {
            self.cleanup_group(g, gone, &mut tombstones);
        }
        self.write_tombstones(tombstones);
        OffsetDeleteResponse {
            topics,
            ..Default::default()
        }
    }
}
