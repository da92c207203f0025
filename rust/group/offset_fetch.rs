//! OffsetFetch: v0-9. A group's committed offsets (Kafka's `handleFetchOffsets`, `getOffsets`).
//!
//! Offsets are returned whatever the group's state ("return offsets blindly"): -1 with no
//! metadata for a partition without one, an unknown group or a Dead one. v2+ null topics ask for
//! every committed offset and add a top-level error; v5 leader epochs; v7 `require_stable`
//! (KIP-447): a partition whose commit is still being appended answers UNSTABLE_OFFSET_COMMIT;
//! v8 several groups at once; v9 member id and epoch (KIP-848; classic groups ignore them).

use std::sync::Arc;

use super::api::{
    FetchedGroup, FetchedOffset, GroupResponse, OffsetFetch, OffsetFetchRequestGroup,
    OffsetFetchResponse, Token,
};
use super::coordinator::Coordinator;
use super::state::GroupState;
use crate::errors::ErrorCode;

fn none(partition: i32, error: ErrorCode) -> FetchedOffset {
    FetchedOffset {
        partition,
        offset: -1,
        leader_epoch: -1,
        metadata: Arc::from(""),
        error,
    }
}

impl Coordinator {
    pub(super) fn offset_fetch(&mut self, token: Token, req: &OffsetFetch<'_>) {
        let groups = req
            .groups
            .iter()
            .map(|g| self.fetch_group(g, req.require_stable))
            .collect();
        self.respond(
            token,
            GroupResponse::OffsetFetch(OffsetFetchResponse { groups }),
        );
    }

    fn fetch_group(&self, req: &OffsetFetchRequestGroup<'_>, require_stable: bool) -> FetchedGroup {
        let mut out = FetchedGroup {
            group_id: req.group_id.to_string(),
            error: ErrorCode::None,
            topics: Vec::new(),
        };
        if let Some(e) = self.gate(&req.group_id) {
            out.error = e;
            return out;
        }
        let group = self
            .slot_of(&req.group_id)
            .map(|g| self.group(g))
            .filter(|g| !g.is(GroupState::Dead));
        let fetch = |topic: &str, partition: i32| -> FetchedOffset {
            let Some(group) = group else {
                return none(partition, ErrorCode::None);
            };
            if require_stable && group.offsets.is_pending(topic, partition) {
                return none(partition, ErrorCode::UnstableOffsetCommit);
            }
            match group.offsets.get(topic, partition) {
                Some(o) => FetchedOffset {
                    partition,
                    offset: o.offset,
                    leader_epoch: o.leader_epoch,
                    metadata: o.metadata.clone(),
                    error: ErrorCode::None,
                },
                None => none(partition, ErrorCode::None),
            }
        };
        match &req.topics {
            Some(topics) => {
                for t in topics {
                    let parts = t
                        .partition_indexes
                        .iter()
                        .map(|p| fetch(&t.name, *p))
                        .collect();
                    out.topics.push((t.name.to_string(), parts));
                }
            }
            None => {
                if let Some(group) = group {
                    for (topic, p, _) in group.offsets.all() {
                        let o = fetch(topic, p);
                        match out.topics.last_mut() {
                            Some((name, parts)) if **name == **topic => parts.push(o),
                            _ => out.topics.push((topic.to_string(), vec![o])),
                        }
                    }
                }
            }
        }
        out
    }
}
