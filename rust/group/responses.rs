//! Responses of the group apis, written straight into a frame: each [`GroupResponse`] becomes
//! its generated typed message, shaped for the request's version, and is written after the
//! response header with its size in front.
//!
//! Kafka's version rules, which the typed message alone does not know:
//! - JoinGroup's protocol name is "" before v7 and null for "" from v7;
//! - LeaveGroup before v3 carries the first member error at the top level;
//! - OffsetFetch before v8 answers one group at the top level, and before v2 (no top-level
//!   error) puts the group's error on every partition;
//! - everything a version lacks is left at its default ([`fit`](JoinGroupResponse::fit)).

use std::borrow::Cow;

use super::api::*;
use crate::errors::{ErrorCode, Result};
use crate::protocol::primitives::Writer;
use crate::protocol::typed::delete_groups::{
    DeleteGroupsResponse as DeleteGroupsOut, DeleteGroupsResponseResult,
};
use crate::protocol::typed::describe_groups::{
    DescribeGroupsResponse as DescribeGroupsOut, DescribeGroupsResponseGroup,
    DescribeGroupsResponseMember,
};
use crate::protocol::typed::heartbeat::HeartbeatResponse as HeartbeatOut;
use crate::protocol::typed::join_group::{
    JoinGroupResponse as JoinGroupOut, JoinGroupResponseMember,
};
use crate::protocol::typed::leave_group::{
    LeaveGroupResponse as LeaveGroupOut, LeaveGroupResponseMember,
};
use crate::protocol::typed::list_groups::{
    ListGroupsResponse as ListGroupsOut, ListGroupsResponseGroup,
};
use crate::protocol::typed::offset_commit::{
    OffsetCommitResponse as OffsetCommitOut, OffsetCommitResponsePartition,
    OffsetCommitResponseTopic,
};
use crate::protocol::typed::offset_delete::{
    OffsetDeleteResponse as OffsetDeleteOut, OffsetDeleteResponsePartition,
    OffsetDeleteResponseTopic,
};
use crate::protocol::typed::offset_fetch::{
    OffsetFetchResponse as OffsetFetchOut, OffsetFetchResponseGroup, OffsetFetchResponseGroupTopic,
    OffsetFetchResponseGroupTopicPartition, OffsetFetchResponsePartition, OffsetFetchResponseTopic,
};
use crate::protocol::typed::sync_group::SyncGroupResponse as SyncGroupOut;

fn s(v: &str) -> Cow<'_, str> {
    Cow::Borrowed(v)
}

fn opt(v: Option<&str>) -> Option<Cow<'_, str>> {
    v.map(Cow::Borrowed)
}

fn b(v: &[u8]) -> Cow<'_, [u8]> {
    Cow::Borrowed(v)
}

/// write_frame writes the whole response frame of `response` to a request of `version` with
/// `correlation_id` (size prefix, response header, body) at the end of `out`.
pub fn write_frame(
    response: &GroupResponse,
    version: i16,
    correlation_id: i32,
    out: &mut Vec<u8>,
) -> Result<()> {
    let start = out.len();
    let mut w = Writer::over(std::mem::take(out));
    w.i32(0);
    w.i32(correlation_id);
    let api = crate::protocol::frame::lookup(response.api_key(), version)?;
    if api.response_header_version(version) >= 1 {
        w.unsigned_varint(0);
    }
    let written = write_body(response, version, &mut w);
    *out = w.into_inner();
    if let Err(e) = written {
        out.truncate(start);
        return Err(e);
    }
    let size = (out.len() - start - 4) as i32;
    out[start..start + 4].copy_from_slice(&size.to_be_bytes());
    Ok(())
}

/// encode_response is the whole response frame as a vector of its own.
pub fn encode_response(
    response: &GroupResponse,
    version: i16,
    correlation_id: i32,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_frame(response, version, correlation_id, &mut out)?;
    Ok(out)
}

/// write_body writes the body of `response` at `version`.
pub fn write_body(response: &GroupResponse, version: i16, w: &mut Writer) -> Result<()> {
    let v = version;
    match response {
        GroupResponse::Heartbeat(r) => HeartbeatOut {
            error_code: r.error.code(),
            ..Default::default()
        }
        .write(w, v),
        GroupResponse::JoinGroup(r) => {
            let protocol_name = match (v < 7, r.protocol_name.as_deref()) {
                (true, n) => Some(s(n.unwrap_or(""))),
                (false, None | Some("")) => None,
                (false, Some(n)) => Some(s(n)),
            };
            let mut m = JoinGroupOut {
                error_code: r.error.code(),
                generation_id: r.generation_id,
                protocol_type: opt(r.protocol_type.as_deref()),
                protocol_name,
                leader: s(&r.leader),
                skip_assignment: r.skip_assignment,
                member_id: s(&r.member_id),
                members: r
                    .members
                    .iter()
                    .map(|m| JoinGroupResponseMember {
                        member_id: s(&m.member_id),
                        group_instance_id: opt(m.group_instance_id.as_deref()),
                        metadata: b(&m.metadata),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            m.fit(v);
            m.write(w, v)
        }
        GroupResponse::SyncGroup(r) => {
            let mut m = SyncGroupOut {
                error_code: r.error.code(),
                protocol_type: opt(r.protocol_type.as_deref()),
                protocol_name: opt(r.protocol_name.as_deref()),
                assignment: b(&r.assignment),
                ..Default::default()
            };
            m.fit(v);
            m.write(w, v)
        }
        GroupResponse::LeaveGroup(r) => {
            let mut m = LeaveGroupOut {
                error_code: r.error.code(),
                members: r
                    .members
                    .iter()
                    .map(|m| LeaveGroupResponseMember {
                        member_id: s(&m.member_id),
                        group_instance_id: opt(m.group_instance_id.as_deref()),
                        error_code: m.error.code(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            if v < 3 && r.error == ErrorCode::None {
                // Before v3: the top-level error, else the first member's.
                let lifted = r
                    .members
                    .iter()
                    .map(|m| m.error)
                    .find(|e| *e != ErrorCode::None);
                m.error_code = lifted.unwrap_or(ErrorCode::None).code();
            }
            m.fit(v);
            m.write(w, v)
        }
        GroupResponse::OffsetCommit(r) => {
            let mut m = OffsetCommitOut {
                topics: r
                    .topics
                    .iter()
                    .map(|(name, parts)| OffsetCommitResponseTopic {
                        name: s(name),
                        partitions: parts
                            .iter()
                            .map(|(p, e)| OffsetCommitResponsePartition {
                                partition_index: *p,
                                error_code: e.code(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            m.fit(v);
            m.write(w, v)
        }
        GroupResponse::OffsetFetch(r) => {
            let mut m = OffsetFetchOut::default();
            if v >= 8 {
                m.groups = r
                    .groups
                    .iter()
                    .map(|g| OffsetFetchResponseGroup {
                        group_id: s(&g.group_id),
                        error_code: g.error.code(),
                        topics: g
                            .topics
                            .iter()
                            .map(|(name, parts)| OffsetFetchResponseGroupTopic {
                                name: s(name),
                                partitions: parts
                                    .iter()
                                    .map(|p| OffsetFetchResponseGroupTopicPartition {
                                        partition_index: p.partition,
                                        committed_offset: p.offset,
                                        committed_leader_epoch: p.leader_epoch,
                                        metadata: Some(s(&p.metadata)),
                                        error_code: p.error.code(),
                                        ..Default::default()
                                    })
                                    .collect(),
                                ..Default::default()
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect();
            } else if let Some(g) = r.groups.first() {
                // Before v2 there is no top-level error: the group's goes on every partition.
                let on_partitions = (v < 2 && g.error != ErrorCode::None).then_some(g.error);
                m.error_code = g.error.code();
                m.topics = g
                    .topics
                    .iter()
                    .map(|(name, parts)| OffsetFetchResponseTopic {
                        name: s(name),
                        partitions: parts
                            .iter()
                            .map(|p| match on_partitions {
                                Some(e) => OffsetFetchResponsePartition {
                                    partition_index: p.partition,
                                    committed_offset: -1,
                                    committed_leader_epoch: -1,
                                    metadata: Some(s("")),
                                    error_code: e.code(),
                                    ..Default::default()
                                },
                                None => OffsetFetchResponsePartition {
                                    partition_index: p.partition,
                                    committed_offset: p.offset,
                                    committed_leader_epoch: p.leader_epoch,
                                    metadata: Some(s(&p.metadata)),
                                    error_code: p.error.code(),
                                    ..Default::default()
                                },
                            })
                            .collect(),
                        ..Default::default()
                    })
                    .collect();
            }
            m.fit(v);
            m.write(w, v)
        }
        GroupResponse::OffsetDelete(r) => {
            let mut m = OffsetDeleteOut {
                error_code: r.error.code(),
                topics: r
                    .topics
                    .iter()
                    .map(|(name, parts)| OffsetDeleteResponseTopic {
                        name: s(name),
                        partitions: parts
                            .iter()
                            .map(|(p, e)| OffsetDeleteResponsePartition {
                                partition_index: *p,
                                error_code: e.code(),
                            })
                            .collect(),
                    })
                    .collect(),
                ..Default::default()
            };
            m.fit(v);
            m.write(w, v)
        }
        GroupResponse::DescribeGroups(r) => {
            let mut m = DescribeGroupsOut {
                groups: r
                    .groups
                    .iter()
                    .map(|g| DescribeGroupsResponseGroup {
                        error_code: g.error.code(),
                        error_message: opt(g.error_message.as_deref()),
                        group_id: s(&g.group_id),
                        group_state: s(g.state),
                        protocol_type: s(&g.protocol_type),
                        protocol_data: s(&g.protocol_data),
                        members: g
                            .members
                            .iter()
                            .map(|m| DescribeGroupsResponseMember {
                                member_id: s(&m.member_id),
                                group_instance_id: opt(m.group_instance_id.as_deref()),
                                client_id: s(&m.client_id),
                                client_host: s(&m.client_host),
                                member_metadata: b(&m.metadata),
                                member_assignment: b(&m.assignment),
                                ..Default::default()
                            })
                            .collect(),
                        authorized_operations: g.authorized_operations,
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            m.fit(v);
            m.write(w, v)
        }
        GroupResponse::ListGroups(r) => {
            let mut m = ListGroupsOut {
                error_code: r.error.code(),
                groups: r
                    .groups
                    .iter()
                    .map(|g| ListGroupsResponseGroup {
                        group_id: s(&g.group_id),
                        protocol_type: s(&g.protocol_type),
                        group_state: s(g.state.name()),
                        group_type: s("classic"),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            m.fit(v);
            m.write(w, v)
        }
        GroupResponse::DeleteGroups(r) => {
            let mut m = DeleteGroupsOut {
                results: r
                    .results
                    .iter()
                    .map(|(id, e)| DeleteGroupsResponseResult {
                        group_id: s(id),
                        error_code: e.code(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            };
            m.fit(v);
            m.write(w, v)
        }
    }
}
