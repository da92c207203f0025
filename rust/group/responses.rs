//! Responses of the group apis, written straight into a frame: the coordinator's typed response
//! (the newest version's shape) shaped for the request's version, written after the response
//! header with its size in front.
//!
//! Kafka's version rules, which the typed message alone does not know:
//! - JoinGroup's protocol name is "" before v7 and null for "" from v7;
//! - LeaveGroup before v3 carries the first member error at the top level;
//! - OffsetFetch before v8 answers one group at the top level, and before v2 (no top-level
//!   error) puts the group's error on every partition;
//! - TxnOffsetCommit before v2 answers COORDINATOR_NOT_AVAILABLE for
//!   COORDINATOR_LOAD_IN_PROGRESS, which clients before KAFKA-7296 did not expect (Kafka's
//!   `handleTxnOffsetCommitRequest`), and before v4 INVALID_TXN_STATE for TRANSACTION_ABORTABLE
//!   (KIP-890: a failed transaction check that the host reports as the append's error);
//! - everything a version lacks is left at its default (each typed message's `fit`).

use std::borrow::Cow;

use super::api::*;
use crate::coordinator::frame;
use crate::errors::{ErrorCode, Result};
use crate::protocol::primitives::Writer;
use crate::protocol::typed::offset_fetch::{
    OffsetFetchResponsePartition, OffsetFetchResponseTopic,
};

/// write_frame writes the whole response frame of `response` to a request of `version` with
/// `correlation_id` (size prefix, response header, body) at the end of `out`.
pub fn write_frame(
    response: &GroupResponse,
    version: i16,
    correlation_id: i32,
    out: &mut Vec<u8>,
) -> Result<()> {
    let flexible = response.message().is_flexible(version);
    frame::write_frame(flexible, correlation_id, out, |w| {
        write_body(response, version, w)
    })
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

/// write_body writes the body of `response` at `version`. The common case (the newest shape
/// written as is) borrows the response; the older shapes are built from it.
pub fn write_body(response: &GroupResponse, version: i16, w: &mut Writer) -> Result<()> {
    let v = version;
    match response {
        GroupResponse::Heartbeat(r) => r.write(w, v),
        GroupResponse::JoinGroup(r) => {
            let name = r.protocol_name.as_deref();
            let renamed = match (v < 7, name) {
                (true, None) => Some(Some(Cow::Borrowed(""))),
                (false, Some("")) => Some(None),
                _ => None,
            };
            match renamed {
                None => fitted(response, v, w),
                Some(name) => {
                    let mut m = r.clone();
                    m.protocol_name = name;
                    m.fit(v);
                    m.write(w, v)
                }
            }
        }
        GroupResponse::LeaveGroup(r) if v < 3 => {
            // Before v3: the top-level error, else the first member's.
            let ok = ErrorCode::None.code();
            let lifted = r.members.iter().map(|m| m.error_code).find(|e| *e != ok);
            LeaveGroupResponse {
                error_code: if r.error_code != ok {
                    r.error_code
                } else {
                    lifted.unwrap_or(ok)
                },
                ..Default::default()
            }
            .write(w, v)
        }
        GroupResponse::OffsetFetch(r) if v < 8 => one_group(r, v).write(w, v),
        GroupResponse::TxnOffsetCommit(r) if v < 4 => {
            let mut m = r.clone();
            for p in m.topics.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
                p.error_code = match ErrorCode::for_code(p.error_code) {
                    ErrorCode::CoordinatorLoadInProgress if v < 2 => {
                        ErrorCode::CoordinatorNotAvailable.code()
                    }
                    ErrorCode::TransactionAbortable => ErrorCode::InvalidTxnState.code(),
                    _ => p.error_code,
                };
            }
            m.fit(v);
            m.write(w, v)
        }
        r => fitted(r, v, w),
    }
}

/// fitted writes a response whose shape every version shares: as it is, or, when it holds a
/// value in a field the version lacks (which the typed writer refuses), a copy fitted to `v`.
fn fitted(response: &GroupResponse, v: i16, w: &mut Writer) -> Result<()> {
    macro_rules! fit {
        ($r:expr) => {{
            let mark = w.buf.len();
            if $r.write(w, v).is_ok() {
                return Ok(());
            }
            w.buf.truncate(mark);
            let mut m = $r.clone();
            m.fit(v);
            m.write(w, v)
        }};
    }
    match response {
        GroupResponse::Heartbeat(r) => fit!(r),
        GroupResponse::JoinGroup(r) => fit!(r),
        GroupResponse::SyncGroup(r) => fit!(r),
        GroupResponse::LeaveGroup(r) => fit!(r),
        GroupResponse::OffsetCommit(r) => fit!(r),
        GroupResponse::OffsetFetch(r) => fit!(r),
        GroupResponse::OffsetDelete(r) => fit!(r),
        GroupResponse::DescribeGroups(r) => fit!(r),
        GroupResponse::ListGroups(r) => fit!(r),
        GroupResponse::DeleteGroups(r) => fit!(r),
        GroupResponse::ConsumerGroupHeartbeat(r) => fit!(r),
        GroupResponse::ConsumerGroupDescribe(r) => fit!(r),
        GroupResponse::TxnOffsetCommit(r) => fit!(r),
        GroupResponse::ShareGroupHeartbeat(r) => fit!(r),
        GroupResponse::ShareGroupDescribe(r) => fit!(r),
    }
}

/// one_group is an OffsetFetch response before v8: the one group at the top level, its error
/// on every partition before v2 (no top-level error there).
fn one_group<'a>(r: &'a OffsetFetchResponse<'_>, v: i16) -> OffsetFetchResponse<'a> {
    let mut m = OffsetFetchResponse::default();
    let Some(g) = r.groups.first() else {
        return m;
    };
    let ok = ErrorCode::None.code();
    let on_partitions = (v < 2 && g.error_code != ok).then_some(g.error_code);
    m.error_code = g.error_code;
    m.topics = g
        .topics
        .iter()
        .map(|t| OffsetFetchResponseTopic {
            name: Cow::Borrowed(&t.name),
            partitions: t
                .partitions
                .iter()
                .map(|p| match on_partitions {
                    Some(e) => OffsetFetchResponsePartition {
                        partition_index: p.partition_index,
                        committed_offset: -1,
                        committed_leader_epoch: -1,
                        metadata: Some(Cow::Borrowed("")),
                        error_code: e,
                        ..Default::default()
                    },
                    None => OffsetFetchResponsePartition {
                        partition_index: p.partition_index,
                        committed_offset: p.committed_offset,
                        committed_leader_epoch: p.committed_leader_epoch,
                        metadata: p.metadata.as_deref().map(Cow::Borrowed),
                        error_code: p.error_code,
                        ..Default::default()
                    },
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    m.fit(v);
    m
}
