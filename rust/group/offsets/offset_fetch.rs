//! OffsetFetch: v0-9. A group's committed offsets (Kafka's `handleFetchOffsets`, `getOffsets`).
//!
//! Offsets are returned whatever the group's state ("return offsets blindly"): -1 with no
//! metadata for a partition without one, an unknown group or a Dead one. v2+ null topics ask for
//! every committed offset and add a top-level error; v5 leader epochs; v7 `require_stable`
//! (KIP-447): a partition whose commit is still being appended, or for which an open
//! transaction committed an offset (TxnOffsetCommit), answers UNSTABLE_OFFSET_COMMIT with -1
//! and no metadata (offsets in open transactions are never returned, flag or not);
//! v8 several groups at once; v9 member id and epoch (KIP-848; classic groups ignore them).

use crate::errors::ErrorCode;
use crate::group::api::{
    text, GroupResponse, OffsetFetch, OffsetFetchRequestGroup, OffsetFetchResponse,
    OffsetFetchResponseGroup, OffsetFetchResponseGroupTopic,
    OffsetFetchResponseGroupTopicPartition as Fetched, Token,
};
use crate::group::classic::state::GroupState;
use crate::group::coordinator::Coordinator;

fn none(partition: i32, error: ErrorCode) -> Fetched<'static> {
    Fetched {
        partition_index: partition,
        committed_offset: -1,
        committed_leader_epoch: -1,
        metadata: Some(text("")),
        error_code: error.code(),
        ..Default::default()
    }
}

impl Coordinator {
    pub(crate) fn offset_fetch(&mut self, token: Token, req: &OffsetFetch<'_>) {
        let groups = req
            .groups
            .iter()
            .map(|g| self.fetch_group(g, req.require_stable))
            .collect();
        self.respond(
            token,
            GroupResponse::OffsetFetch(OffsetFetchResponse {
                groups,
                ..Default::default()
            }),
        );
    }

    fn fetch_group(
        &self,
        req: &OffsetFetchRequestGroup<'_>,
        require_stable: bool,
    ) -> OffsetFetchResponseGroup<'static> {
        let mut out = OffsetFetchResponseGroup {
            group_id: text(&req.group_id),
            ..Default::default()
        };
        if let Some(e) = self.gate(&req.group_id) {
            out.error_code = e.code();
            return out;
        }
        let group = self
            .slot_of(&req.group_id)
            .map(|g| self.group(g))
            .filter(|g| !g.is(GroupState::Dead));
        if group.is_some_and(|g| g.share.is_some()) {
            // Kafka's ShareGroup.validateOffsetFetch: a share group has no committed offsets.
            out.error_code = ErrorCode::GroupIdNotFound.code();
            return out;
        }
        if let Some(part) = group.and_then(|g| g.consumer.as_deref()) {
            // Kafka's ConsumerGroup.validateOffsetFetch: a member fetches at its epoch; a
            // request without member id and epoch (an admin) is always answered.
            if req.member_id.is_some() || req.member_epoch >= 0 {
                let id = req.member_id.as_deref().unwrap_or("");
                let error = match part.group.member(id) {
                    None => Some(ErrorCode::UnknownMemberId),
                    Some(m) if m.member_epoch != req.member_epoch => {
                        Some(ErrorCode::StaleMemberEpoch)
                    }
                    Some(_) => None,
                };
                if let Some(e) = error {
                    out.error_code = e.code();
                    return out;
                }
            }
        }
        let fetch = |topic: &str, partition: i32| -> Fetched<'static> {
            let Some(group) = group else {
                return none(partition, ErrorCode::None);
            };
            if require_stable && group.offsets.is_pending(topic, partition) {
                return none(partition, ErrorCode::UnstableOffsetCommit);
            }
            match group.offsets.get(topic, partition) {
                Some(o) => Fetched {
                    partition_index: partition,
                    committed_offset: o.offset,
                    committed_leader_epoch: o.leader_epoch,
                    metadata: Some(text(&o.metadata)),
                    ..Default::default()
                },
                None => none(partition, ErrorCode::None),
            }
        };
        let topic = |name: &str, partitions| OffsetFetchResponseGroupTopic {
            name: text(name),
            partitions,
            ..Default::default()
        };
        match &req.topics {
            Some(topics) => {
                for t in topics {
                    let parts = t
                        .partition_indexes
                        .iter()
                        .map(|p| fetch(&t.name, *p))
                        .collect();
                    out.topics.push(topic(&t.name, parts));
                }
            }
            None => {
                if let Some(group) = group {
                    for (name, p, _) in group.offsets.all() {
                        let o = fetch(name, p);
                        match out.topics.last_mut() {
                            Some(t) if *t.name == **name => t.partitions.push(o),
                            _ => out.topics.push(topic(name, vec![o])),
                        }
                    }
                }
            }
        }
        out
    }
}
