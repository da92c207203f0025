//! Requests of the group apis, straight from their frame: the header read, the body decoded
//! once into its generated typed message, and the older versions' shapes normalised to the
//! newest one's, which is all the coordinator reads:
//!
//! - JoinGroup v0 has no rebalance timeout: the session timeout stands in, as Kafka's
//!   `JoinGroupRequest.maybeOverrideRebalanceTimeout` does.
//! - LeaveGroup before v3 names one member at the top level: it becomes the one entry of
//!   `members`.
//! - OffsetFetch before v8 asks for one group at the top level: it becomes the one entry of
//!   `groups`.
//!
//! Versions that Kafka 3.9 in KRaft mode no longer serves from its coordinator (OffsetCommit and
//! OffsetFetch v0, which went to ZooKeeper) are served like v1.

use std::borrow::Cow;

use super::api::*;
use crate::errors::{Error, Result};
use crate::protocol::primitives::Reader;
use crate::protocol::typed::leave_group::LeaveGroupRequestMember;
use crate::protocol::typed::offset_fetch::{OffsetFetchRequestGroup, OffsetFetchRequestGroupTopic};

/// GROUP_API_KEYS are the api keys the coordinator serves.
pub const GROUP_API_KEYS: [i16; 15] = [8, 9, 11, 12, 13, 14, 15, 16, 28, 42, 47, 68, 69, 76, 77];

/// is_group_api tells whether `api_key` is one the coordinator serves.
#[inline]
pub fn is_group_api(api_key: i16) -> bool {
    GROUP_API_KEYS.contains(&api_key)
}

/// Header is what a group request's header says that the coordinator and its answer need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    pub api_key: i16,
    pub version: i16,
    pub correlation_id: i32,
    pub client_id: &'a str,
}

/// header reads a request header (the bytes after the size prefix) and returns it with the
/// body's bytes. Request header v1, or v2 (a tagged section) for a flexible version; the client
/// id is an INT16 string in both.
pub fn header(frame: &[u8]) -> Result<(Header<'_>, &[u8])> {
    let mut r = Reader::new(frame);
    let api_key = r.i16()?;
    let version = r.i16()?;
    let correlation_id = r.i32()?;
    let client_id = r.nullable_string()?.unwrap_or("");
    let api = crate::protocol::frame::lookup(api_key, version)?;
    if api.request.is_flexible(version) && !r.skip_empty_tagged_fields() {
        r.tagged_fields()?;
    }
    let h = Header {
        api_key,
        version,
        correlation_id,
        client_id,
    };
    Ok((h, r.rest()))
}

/// decode reads a whole group request frame (the bytes after the size prefix).
pub fn decode<'a>(frame: &'a [u8], client_host: &'a str) -> Result<(Header<'a>, GroupRequest<'a>)> {
    let (h, body) = header(frame)?;
    let req = body_of(h.api_key, h.version, h.client_id, client_host, body)?;
    Ok((h, req))
}

/// body_of decodes the body of a group request and normalises it. Bytes after the body are
/// ignored, as Kafka's broker ignores them (its parser never checks for them).
pub fn body_of<'a>(
    api_key: i16,
    version: i16,
    client_id: &'a str,
    client_host: &'a str,
    body: &'a [u8],
) -> Result<GroupRequest<'a>> {
    let at = Req {
        version,
        client_id,
        client_host,
        body: (),
    };
    fn r<'a, T>(at: &Req<'a, ()>, body: T) -> Req<'a, T> {
        Req {
            version: at.version,
            client_id: at.client_id,
            client_host: at.client_host,
            body,
        }
    }
    Ok(match api_key {
        11 => {
            let mut b = JoinGroupRequest::read(&mut Reader::new(body), version)?;
            if version == 0 {
                b.rebalance_timeout_ms = b.session_timeout_ms;
            }
            GroupRequest::JoinGroup(r(&at, b))
        }
        14 => GroupRequest::SyncGroup(r(
            &at,
            SyncGroupRequest::read(&mut Reader::new(body), version)?,
        )),
        12 => GroupRequest::Heartbeat(r(
            &at,
            HeartbeatRequest::read(&mut Reader::new(body), version)?,
        )),
        13 => {
            let mut b = LeaveGroupRequest::read(&mut Reader::new(body), version)?;
            if version < 3 {
                b.members = vec![LeaveGroupRequestMember {
                    member_id: std::mem::take(&mut b.member_id),
                    ..Default::default()
                }];
            }
            GroupRequest::LeaveGroup(r(&at, b))
        }
        8 => GroupRequest::OffsetCommit(r(
            &at,
            OffsetCommitRequest::read(&mut Reader::new(body), version)?,
        )),
        9 => {
            let mut b = OffsetFetchRequest::read(&mut Reader::new(body), version)?;
            if version < 8 {
                let topics = b.topics.take().map(|ts| {
                    ts.into_iter()
                        .map(|t| OffsetFetchRequestGroupTopic {
                            name: t.name,
                            partition_indexes: t.partition_indexes,
                            ..Default::default()
                        })
                        .collect()
                });
                b.groups = vec![OffsetFetchRequestGroup {
                    group_id: std::mem::replace(&mut b.group_id, Cow::Borrowed("")),
                    topics,
                    ..Default::default()
                }];
            }
            GroupRequest::OffsetFetch(r(&at, b))
        }
        47 => GroupRequest::OffsetDelete(r(
            &at,
            OffsetDeleteRequest::read(&mut Reader::new(body), version)?,
        )),
        15 => GroupRequest::DescribeGroups(r(
            &at,
            DescribeGroupsRequest::read(&mut Reader::new(body), version)?,
        )),
        16 => GroupRequest::ListGroups(r(
            &at,
            ListGroupsRequest::read(&mut Reader::new(body), version)?,
        )),
        42 => GroupRequest::DeleteGroups(r(
            &at,
            DeleteGroupsRequest::read(&mut Reader::new(body), version)?,
        )),
        68 => GroupRequest::ConsumerGroupHeartbeat(r(
            &at,
            ConsumerGroupHeartbeatRequest::read(&mut Reader::new(body), version)?,
        )),
        69 => GroupRequest::ConsumerGroupDescribe(r(
            &at,
            ConsumerGroupDescribeRequest::read(&mut Reader::new(body), version)?,
        )),
        76 => GroupRequest::ShareGroupHeartbeat(r(
            &at,
            ShareGroupHeartbeatRequest::read(&mut Reader::new(body), version)?,
        )),
        77 => GroupRequest::ShareGroupDescribe(r(
            &at,
            ShareGroupDescribeRequest::read(&mut Reader::new(body), version)?,
        )),
        28 => GroupRequest::TxnOffsetCommit(r(
            &at,
            TxnOffsetCommitRequest::read(&mut Reader::new(body), version)?,
        )),
        k => {
            return Err(Error::InvalidArgument(format!(
                "api key {k} is not a group coordinator api"
            )))
        }
    })
}
