//! The wire adapter: a decoded request of a group api, at any version the codec speaks (Kafka
//! 3.9's ranges), to a [`GroupRequest`]; a [`GroupResponse`] to the response body, or the whole
//! frame, of the request's version.
//!
//! Fields are read and written by their position in the definitions of
//! `rust/protocol/messages/`, found by name at compile time: a renamed or moved field stops the
//! build. Responses leave every field a version lacks at its default, as the codec requires,
//! and follow Kafka's version rules: JoinGroup's protocol name is "" before v7 and null for ""
//! from v7; LeaveGroup before v3 carries the member's error at the top level; OffsetFetch before
//! v8 answers one group (before v2 with its error on every partition); DescribeGroups fills the
//! authorized operations when v3+ asks.
//!
//! Versions Kafka 3.9 in KRaft mode no longer serves from its coordinator (OffsetCommit and
//! OffsetFetch v0, which went to ZooKeeper) are served like v1 here.

use std::borrow::Cow;

use super::api::*;
use super::state::GroupState;
use crate::errors::{Error, ErrorCode, Result};
use crate::protocol::frame::{self, Request};
use crate::protocol::messages::{
    delete_groups, describe_groups, heartbeat, join_group, leave_group, list_groups, offset_commit,
    offset_delete, offset_fetch, sync_group,
};
use crate::protocol::schema::Field;
use crate::protocol::value::{default_value, Fields, Seq, Struct, Value};

/// GROUP_API_KEYS are the api keys the coordinator serves.
pub const GROUP_API_KEYS: [i16; 10] = [8, 9, 11, 12, 13, 14, 15, 16, 42, 47];

/// is_group_api tells whether `api_key` is one the coordinator serves.
pub fn is_group_api(api_key: i16) -> bool {
    GROUP_API_KEYS.contains(&api_key)
}

const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// at is the position of field `name` in `fields`; evaluated at compile time, where a missing
/// field stops the build.
const fn at(fields: &'static [Field], name: &str) -> usize {
    let mut i = 0;
    while i < fields.len() {
        if same(fields[i].name, name) {
            return i;
        }
        i += 1;
    }
    panic!("no such field in the message definition")
}

const fn sub(fields: &'static [Field], name: &str) -> &'static [Field] {
    fields[at(fields, name)].fields
}

// ---------------------------------------------------------------------------------------------
// reading requests

/// R reads the fields of one decoded struct.
#[derive(Clone, Copy)]
struct R<'b> {
    s: &'b Struct<'b>,
    what: &'static str,
}

impl<'b> R<'b> {
    fn new(s: &'b Struct<'b>, fields: &'static [Field], what: &'static str) -> Result<R<'b>> {
        if s.fields.len() != fields.len() {
            return Err(Error::InvalidArgument(format!(
                "the body is not a {what}: {} fields, the definition has {}",
                s.fields.len(),
                fields.len()
            )));
        }
        Ok(R { s, what })
    }

    #[cold]
    fn bad(&self, i: usize) -> Error {
        Error::InvalidArgument(format!(
            "{}: field {i} does not have its definition's type",
            self.what
        ))
    }

    fn str(&self, i: usize) -> Result<&'b str> {
        match &self.s.fields[i] {
            Value::String(s) => Ok(s),
            // A null where the version allows none reads as "".
            Value::Null => Ok(""),
            _ => Err(self.bad(i)),
        }
    }

    fn opt_str(&self, i: usize) -> Result<Option<&'b str>> {
        match &self.s.fields[i] {
            Value::String(s) => Ok(Some(s)),
            Value::Null => Ok(None),
            _ => Err(self.bad(i)),
        }
    }

    fn int(&self, i: usize) -> Result<i64> {
        self.s.fields[i].as_i64().ok_or_else(|| self.bad(i))
    }

    fn i32(&self, i: usize) -> Result<i32> {
        Ok(self.int(i)? as i32)
    }

    fn bool(&self, i: usize) -> Result<bool> {
        match self.s.fields[i] {
            Value::Bool(b) => Ok(b),
            _ => Err(self.bad(i)),
        }
    }

    fn bytes(&self, i: usize) -> Result<&'b [u8]> {
        match &self.s.fields[i] {
            Value::Bytes(b) => Ok(b),
            Value::Null => Ok(&[]),
            _ => Err(self.bad(i)),
        }
    }

    fn strings(&self, i: usize) -> Result<Vec<&'b str>> {
        match &self.s.fields[i] {
            Value::Array(a) => a
                .iter()
                .map(|v| match v {
                    Value::String(s) => Ok(&**s),
                    _ => Err(self.bad(i)),
                })
                .collect(),
            Value::Null => Ok(Vec::new()),
            _ => Err(self.bad(i)),
        }
    }

    fn int32s(&self, i: usize) -> Result<Vec<i32>> {
        match &self.s.fields[i] {
            Value::Int32s(a) => Ok(a.to_vec()),
            Value::Null => Ok(Vec::new()),
            _ => Err(self.bad(i)),
        }
    }

    /// structs reads an array of structs of `fields`; None when null.
    fn structs(
        &self,
        i: usize,
        fields: &'static [Field],
        what: &'static str,
    ) -> Result<Option<Vec<R<'b>>>> {
        match &self.s.fields[i] {
            Value::Array(a) => a
                .iter()
                .map(|v| match v {
                    Value::Struct(s) => R::new(s, fields, what),
                    _ => Err(self.bad(i)),
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Value::Null => Ok(None),
            _ => Err(self.bad(i)),
        }
    }
}

mod jg {
    use super::*;
    pub const F: &[Field] = join_group::REQUEST.fields;
    pub const GROUP_ID: usize = at(F, "group_id");
    pub const SESSION: usize = at(F, "session_timeout_ms");
    pub const REBALANCE: usize = at(F, "rebalance_timeout_ms");
    pub const MEMBER_ID: usize = at(F, "member_id");
    pub const INSTANCE: usize = at(F, "group_instance_id");
    pub const PROTOCOL_TYPE: usize = at(F, "protocol_type");
    pub const PROTOCOLS: usize = at(F, "protocols");
    pub const PF: &[Field] = sub(F, "protocols");
    pub const P_NAME: usize = at(PF, "name");
    pub const P_METADATA: usize = at(PF, "metadata");
    pub const REASON: usize = at(F, "reason");
}

mod sg {
    use super::*;
    pub const F: &[Field] = sync_group::REQUEST.fields;
    pub const GROUP_ID: usize = at(F, "group_id");
    pub const GENERATION: usize = at(F, "generation_id");
    pub const MEMBER_ID: usize = at(F, "member_id");
    pub const INSTANCE: usize = at(F, "group_instance_id");
    pub const PROTOCOL_TYPE: usize = at(F, "protocol_type");
    pub const PROTOCOL_NAME: usize = at(F, "protocol_name");
    pub const ASSIGNMENTS: usize = at(F, "assignments");
    pub const AF: &[Field] = sub(F, "assignments");
    pub const A_MEMBER: usize = at(AF, "member_id");
    pub const A_ASSIGNMENT: usize = at(AF, "assignment");
}

mod hb {
    use super::*;
    pub const F: &[Field] = heartbeat::REQUEST.fields;
    pub const GROUP_ID: usize = at(F, "group_id");
    pub const GENERATION: usize = at(F, "generation_id");
    pub const MEMBER_ID: usize = at(F, "member_id");
    pub const INSTANCE: usize = at(F, "group_instance_id");
}

mod lg {
    use super::*;
    pub const F: &[Field] = leave_group::REQUEST.fields;
    pub const GROUP_ID: usize = at(F, "group_id");
    pub const MEMBER_ID: usize = at(F, "member_id");
    pub const MEMBERS: usize = at(F, "members");
    pub const MF: &[Field] = sub(F, "members");
    pub const M_MEMBER: usize = at(MF, "member_id");
    pub const M_INSTANCE: usize = at(MF, "group_instance_id");
    pub const M_REASON: usize = at(MF, "reason");
}

mod oc {
    use super::*;
    pub const F: &[Field] = offset_commit::REQUEST.fields;
    pub const GROUP_ID: usize = at(F, "group_id");
    pub const GENERATION: usize = at(F, "generation_id_or_member_epoch");
    pub const MEMBER_ID: usize = at(F, "member_id");
    pub const INSTANCE: usize = at(F, "group_instance_id");
    pub const RETENTION: usize = at(F, "retention_time_ms");
    pub const TOPICS: usize = at(F, "topics");
    pub const TF: &[Field] = sub(F, "topics");
    pub const T_NAME: usize = at(TF, "name");
    pub const T_PARTITIONS: usize = at(TF, "partitions");
    pub const PF: &[Field] = sub(TF, "partitions");
    pub const P_INDEX: usize = at(PF, "partition_index");
    pub const P_OFFSET: usize = at(PF, "committed_offset");
    pub const P_EPOCH: usize = at(PF, "committed_leader_epoch");
    pub const P_TIMESTAMP: usize = at(PF, "commit_timestamp");
    pub const P_METADATA: usize = at(PF, "committed_metadata");
}

mod of {
    use super::*;
    pub const F: &[Field] = offset_fetch::REQUEST.fields;
    pub const GROUP_ID: usize = at(F, "group_id");
    pub const TOPICS: usize = at(F, "topics");
    pub const TF: &[Field] = sub(F, "topics");
    pub const T_NAME: usize = at(TF, "name");
    pub const T_PARTITIONS: usize = at(TF, "partition_indexes");
    pub const GROUPS: usize = at(F, "groups");
    pub const GF: &[Field] = sub(F, "groups");
    pub const G_ID: usize = at(GF, "group_id");
    pub const G_TOPICS: usize = at(GF, "topics");
    pub const GTF: &[Field] = sub(GF, "topics");
    pub const GT_NAME: usize = at(GTF, "name");
    pub const GT_PARTITIONS: usize = at(GTF, "partition_indexes");
    pub const REQUIRE_STABLE: usize = at(F, "require_stable");
}

mod od {
    use super::*;
    pub const F: &[Field] = offset_delete::REQUEST.fields;
    pub const GROUP_ID: usize = at(F, "group_id");
    pub const TOPICS: usize = at(F, "topics");
    pub const TF: &[Field] = sub(F, "topics");
    pub const T_NAME: usize = at(TF, "name");
    pub const T_PARTITIONS: usize = at(TF, "partitions");
    pub const PF: &[Field] = sub(TF, "partitions");
    pub const P_INDEX: usize = at(PF, "partition_index");
}

mod dg {
    use super::*;
    pub const F: &[Field] = describe_groups::REQUEST.fields;
    pub const GROUPS: usize = at(F, "groups");
    pub const INCLUDE_OPS: usize = at(F, "include_authorized_operations");
}

mod li {
    use super::*;
    pub const F: &[Field] = list_groups::REQUEST.fields;
    pub const STATES: usize = at(F, "states_filter");
    pub const TYPES: usize = at(F, "types_filter");
}

mod dl {
    use super::*;
    pub const F: &[Field] = delete_groups::REQUEST.fields;
    pub const GROUPS: usize = at(F, "groups_names");
}

/// request reads a decoded request of a group api into the coordinator's input. `client_host`
/// is the peer's address as Kafka prints it (`/127.0.0.1`), kept for DescribeGroups. A request
/// of another api is [`Error::InvalidArgument`].
pub fn request<'b>(req: &'b Request<'b>, client_host: &'b str) -> Result<GroupRequest<'b>> {
    request_from(
        req.header.api_key,
        req.header.api_version,
        req.header.client_id.as_deref(),
        client_host,
        &req.body,
    )
}

/// request_from is [`request`] from the pieces of a decoded request: its api key and version,
/// the header's client id and the body (a struct of the api's request definition at `version`).
pub fn request_from<'b>(
    api_key: i16,
    version: i16,
    client_id: Option<&'b str>,
    client_host: &'b str,
    body: &'b Struct<'b>,
) -> Result<GroupRequest<'b>> {
    Ok(match api_key {
        11 => {
            let r = R::new(body, jg::F, "JoinGroupRequest")?;
            let session = r.i32(jg::SESSION)?;
            let protocols = r
                .structs(jg::PROTOCOLS, jg::PF, "JoinGroupRequestProtocol")?
                .unwrap_or_default()
                .into_iter()
                .map(|p| Ok((p.str(jg::P_NAME)?, p.bytes(jg::P_METADATA)?)))
                .collect::<Result<Vec<_>>>()?;
            GroupRequest::JoinGroup(JoinGroup {
                version,
                group_id: r.str(jg::GROUP_ID)?,
                session_timeout_ms: session,
                // JoinGroupRequest.maybeOverrideRebalanceTimeout: v0 has none.
                rebalance_timeout_ms: if version == 0 {
                    session
                } else {
                    r.i32(jg::REBALANCE)?
                },
                member_id: r.str(jg::MEMBER_ID)?,
                group_instance_id: r.opt_str(jg::INSTANCE)?,
                protocol_type: r.str(jg::PROTOCOL_TYPE)?,
                protocols,
                client_id: client_id.unwrap_or(""),
                client_host,
                reason: r.opt_str(jg::REASON)?,
            })
        }
        14 => {
            let r = R::new(body, sg::F, "SyncGroupRequest")?;
            let assignments = r
                .structs(sg::ASSIGNMENTS, sg::AF, "SyncGroupRequestAssignment")?
                .unwrap_or_default()
                .into_iter()
                .map(|a| Ok((a.str(sg::A_MEMBER)?, a.bytes(sg::A_ASSIGNMENT)?)))
                .collect::<Result<Vec<_>>>()?;
            GroupRequest::SyncGroup(SyncGroup {
                version,
                group_id: r.str(sg::GROUP_ID)?,
                generation_id: r.i32(sg::GENERATION)?,
                member_id: r.str(sg::MEMBER_ID)?,
                group_instance_id: r.opt_str(sg::INSTANCE)?,
                protocol_type: r.opt_str(sg::PROTOCOL_TYPE)?,
                protocol_name: r.opt_str(sg::PROTOCOL_NAME)?,
                assignments,
            })
        }
        12 => {
            let r = R::new(body, hb::F, "HeartbeatRequest")?;
            GroupRequest::Heartbeat(Heartbeat {
                group_id: r.str(hb::GROUP_ID)?,
                generation_id: r.i32(hb::GENERATION)?,
                member_id: r.str(hb::MEMBER_ID)?,
                group_instance_id: r.opt_str(hb::INSTANCE)?,
            })
        }
        13 => {
            let r = R::new(body, lg::F, "LeaveGroupRequest")?;
            let members = if version < 3 {
                vec![LeavingMember {
                    member_id: r.str(lg::MEMBER_ID)?,
                    group_instance_id: None,
                    reason: None,
                }]
            } else {
                r.structs(lg::MEMBERS, lg::MF, "MemberIdentity")?
                    .unwrap_or_default()
                    .into_iter()
                    .map(|m| {
                        Ok(LeavingMember {
                            member_id: m.str(lg::M_MEMBER)?,
                            group_instance_id: m.opt_str(lg::M_INSTANCE)?,
                            reason: m.opt_str(lg::M_REASON)?,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?
            };
            GroupRequest::LeaveGroup(LeaveGroup {
                group_id: r.str(lg::GROUP_ID)?,
                members,
            })
        }
        8 => {
            let r = R::new(body, oc::F, "OffsetCommitRequest")?;
            let topics = r
                .structs(oc::TOPICS, oc::TF, "OffsetCommitRequestTopic")?
                .unwrap_or_default()
                .into_iter()
                .map(|t| {
                    let partitions = t
                        .structs(oc::T_PARTITIONS, oc::PF, "OffsetCommitRequestPartition")?
                        .unwrap_or_default()
                        .into_iter()
                        .map(|p| {
                            Ok(CommitPartition {
                                partition: p.i32(oc::P_INDEX)?,
                                offset: p.int(oc::P_OFFSET)?,
                                leader_epoch: p.i32(oc::P_EPOCH)?,
                                commit_timestamp: p.int(oc::P_TIMESTAMP)?,
                                metadata: p.opt_str(oc::P_METADATA)?,
                            })
                        })
                        .collect::<Result<Vec<_>>>()?;
                    Ok(CommitTopic {
                        name: t.str(oc::T_NAME)?,
                        partitions,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            GroupRequest::OffsetCommit(OffsetCommit {
                version,
                group_id: r.str(oc::GROUP_ID)?,
                generation_id: r.i32(oc::GENERATION)?,
                member_id: r.str(oc::MEMBER_ID)?,
                group_instance_id: r.opt_str(oc::INSTANCE)?,
                retention_time_ms: r.int(oc::RETENTION)?,
                topics,
            })
        }
        9 => {
            let r = R::new(body, of::F, "OffsetFetchRequest")?;
            let topics_of = |list: Option<Vec<R<'b>>>, name: usize, parts: usize| {
                list.map(|ts| {
                    ts.into_iter()
                        .map(|t| Ok((t.str(name)?, t.int32s(parts)?)))
                        .collect::<Result<Vec<_>>>()
                })
                .transpose()
            };
            let groups = if version < 8 {
                let topics = r.structs(of::TOPICS, of::TF, "OffsetFetchRequestTopic")?;
                vec![FetchGroup {
                    group_id: r.str(of::GROUP_ID)?,
                    topics: topics_of(topics, of::T_NAME, of::T_PARTITIONS)?,
                }]
            } else {
                r.structs(of::GROUPS, of::GF, "OffsetFetchRequestGroup")?
                    .unwrap_or_default()
                    .into_iter()
                    .map(|g| {
                        let topics =
                            g.structs(of::G_TOPICS, of::GTF, "OffsetFetchRequestTopics")?;
                        Ok(FetchGroup {
                            group_id: g.str(of::G_ID)?,
                            topics: topics_of(topics, of::GT_NAME, of::GT_PARTITIONS)?,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?
            };
            GroupRequest::OffsetFetch(OffsetFetch {
                groups,
                require_stable: version >= 7 && r.bool(of::REQUIRE_STABLE)?,
            })
        }
        47 => {
            let r = R::new(body, od::F, "OffsetDeleteRequest")?;
            let topics = r
                .structs(od::TOPICS, od::TF, "OffsetDeleteRequestTopic")?
                .unwrap_or_default()
                .into_iter()
                .map(|t| {
                    let parts = t
                        .structs(od::T_PARTITIONS, od::PF, "OffsetDeleteRequestPartition")?
                        .unwrap_or_default()
                        .into_iter()
                        .map(|p| p.i32(od::P_INDEX))
                        .collect::<Result<Vec<_>>>()?;
                    Ok((t.str(od::T_NAME)?, parts))
                })
                .collect::<Result<Vec<_>>>()?;
            GroupRequest::OffsetDelete(OffsetDelete {
                group_id: r.str(od::GROUP_ID)?,
                topics,
            })
        }
        15 => {
            let r = R::new(body, dg::F, "DescribeGroupsRequest")?;
            GroupRequest::DescribeGroups(DescribeGroups {
                groups: r.strings(dg::GROUPS)?,
                include_authorized_operations: version >= 3 && r.bool(dg::INCLUDE_OPS)?,
            })
        }
        16 => {
            let r = R::new(body, li::F, "ListGroupsRequest")?;
            GroupRequest::ListGroups(ListGroups {
                states_filter: r.strings(li::STATES)?,
                types_filter: r.strings(li::TYPES)?,
            })
        }
        42 => {
            let r = R::new(body, dl::F, "DeleteGroupsRequest")?;
            GroupRequest::DeleteGroups(DeleteGroups {
                groups: r.strings(dl::GROUPS)?,
            })
        }
        k => {
            return Err(Error::InvalidArgument(format!(
                "api key {k} is not a group coordinator api"
            )))
        }
    })
}

// ---------------------------------------------------------------------------------------------
// writing responses

/// W builds one struct of a response at a version, every field starting at its default; a
/// field the version lacks stays so.
struct W<'a> {
    fields: &'static [Field],
    values: Vec<Value<'a>>,
    version: i16,
}

impl<'a> W<'a> {
    fn new(fields: &'static [Field], version: i16) -> W<'a> {
        W {
            fields,
            values: fields.iter().map(default_value).collect(),
            version,
        }
    }

    #[inline]
    fn set(&mut self, i: usize, v: Value<'a>) -> &mut Self {
        if self.fields[i].versions.contains(self.version) {
            self.values[i] = v;
        }
        self
    }

    fn has(&self, i: usize) -> bool {
        self.fields[i].versions.contains(self.version)
    }

    fn build(self) -> Struct<'a> {
        Struct {
            fields: Fields::Owned(self.values),
            unknown_tagged: Seq::default(),
        }
    }

    fn value(self) -> Value<'a> {
        Value::Struct(self.build())
    }
}

fn s(v: &str) -> Value<'_> {
    Value::String(Cow::Borrowed(v))
}

fn opt(v: Option<&str>) -> Value<'_> {
    v.map_or(Value::Null, s)
}

fn b(v: &[u8]) -> Value<'_> {
    Value::Bytes(Cow::Borrowed(v))
}

fn e(code: ErrorCode) -> Value<'static> {
    Value::Int16(code.code())
}

fn array(v: Vec<Value<'_>>) -> Value<'_> {
    Value::Array(Seq::Owned(v))
}

mod r_jg {
    use super::*;
    pub const F: &[Field] = join_group::RESPONSE.fields;
    pub const ERROR: usize = at(F, "error_code");
    pub const GENERATION: usize = at(F, "generation_id");
    pub const PROTOCOL_TYPE: usize = at(F, "protocol_type");
    pub const PROTOCOL_NAME: usize = at(F, "protocol_name");
    pub const LEADER: usize = at(F, "leader");
    pub const SKIP: usize = at(F, "skip_assignment");
    pub const MEMBER_ID: usize = at(F, "member_id");
    pub const MEMBERS: usize = at(F, "members");
    pub const MF: &[Field] = sub(F, "members");
    pub const M_ID: usize = at(MF, "member_id");
    pub const M_INSTANCE: usize = at(MF, "group_instance_id");
    pub const M_METADATA: usize = at(MF, "metadata");
}

mod r_sg {
    use super::*;
    pub const F: &[Field] = sync_group::RESPONSE.fields;
    pub const ERROR: usize = at(F, "error_code");
    pub const PROTOCOL_TYPE: usize = at(F, "protocol_type");
    pub const PROTOCOL_NAME: usize = at(F, "protocol_name");
    pub const ASSIGNMENT: usize = at(F, "assignment");
}

mod r_hb {
    use super::*;
    pub const F: &[Field] = heartbeat::RESPONSE.fields;
    pub const ERROR: usize = at(F, "error_code");
}

mod r_lg {
    use super::*;
    pub const F: &[Field] = leave_group::RESPONSE.fields;
    pub const ERROR: usize = at(F, "error_code");
    pub const MEMBERS: usize = at(F, "members");
    pub const MF: &[Field] = sub(F, "members");
    pub const M_ID: usize = at(MF, "member_id");
    pub const M_INSTANCE: usize = at(MF, "group_instance_id");
    pub const M_ERROR: usize = at(MF, "error_code");
}

mod r_oc {
    use super::*;
    pub const F: &[Field] = offset_commit::RESPONSE.fields;
    pub const TOPICS: usize = at(F, "topics");
    pub const TF: &[Field] = sub(F, "topics");
    pub const T_NAME: usize = at(TF, "name");
    pub const T_PARTITIONS: usize = at(TF, "partitions");
    pub const PF: &[Field] = sub(TF, "partitions");
    pub const P_INDEX: usize = at(PF, "partition_index");
    pub const P_ERROR: usize = at(PF, "error_code");
}

mod r_of {
    use super::*;
    pub const F: &[Field] = offset_fetch::RESPONSE.fields;
    pub const TOPICS: usize = at(F, "topics");
    pub const ERROR: usize = at(F, "error_code");
    pub const GROUPS: usize = at(F, "groups");
    // Before v8: topics, partitions.
    pub const TF: &[Field] = sub(F, "topics");
    pub const T_NAME: usize = at(TF, "name");
    pub const T_PARTITIONS: usize = at(TF, "partitions");
    pub const PF: &[Field] = sub(TF, "partitions");
    // v8+: groups, topics, partitions.
    pub const GF: &[Field] = sub(F, "groups");
    pub const G_ID: usize = at(GF, "group_id");
    pub const G_TOPICS: usize = at(GF, "topics");
    pub const G_ERROR: usize = at(GF, "error_code");
    pub const GTF: &[Field] = sub(GF, "topics");
    pub const GT_NAME: usize = at(GTF, "name");
    pub const GT_PARTITIONS: usize = at(GTF, "partitions");
    pub const GPF: &[Field] = sub(GTF, "partitions");
}

/// Partition fields of OffsetFetch responses, before v8 and from v8: the same names.
struct FetchPartitionFields {
    fields: &'static [Field],
    index: usize,
    offset: usize,
    epoch: usize,
    metadata: usize,
    error: usize,
}

const FETCH_PARTITION: FetchPartitionFields = FetchPartitionFields {
    fields: r_of::PF,
    index: at(r_of::PF, "partition_index"),
    offset: at(r_of::PF, "committed_offset"),
    epoch: at(r_of::PF, "committed_leader_epoch"),
    metadata: at(r_of::PF, "metadata"),
    error: at(r_of::PF, "error_code"),
};

const FETCH_GROUP_PARTITION: FetchPartitionFields = FetchPartitionFields {
    fields: r_of::GPF,
    index: at(r_of::GPF, "partition_index"),
    offset: at(r_of::GPF, "committed_offset"),
    epoch: at(r_of::GPF, "committed_leader_epoch"),
    metadata: at(r_of::GPF, "metadata"),
    error: at(r_of::GPF, "error_code"),
};

mod r_od {
    use super::*;
    pub const F: &[Field] = offset_delete::RESPONSE.fields;
    pub const ERROR: usize = at(F, "error_code");
    pub const TOPICS: usize = at(F, "topics");
    pub const TF: &[Field] = sub(F, "topics");
    pub const T_NAME: usize = at(TF, "name");
    pub const T_PARTITIONS: usize = at(TF, "partitions");
    pub const PF: &[Field] = sub(TF, "partitions");
    pub const P_INDEX: usize = at(PF, "partition_index");
    pub const P_ERROR: usize = at(PF, "error_code");
}

mod r_dg {
    use super::*;
    pub const F: &[Field] = describe_groups::RESPONSE.fields;
    pub const GROUPS: usize = at(F, "groups");
    pub const GF: &[Field] = sub(F, "groups");
    pub const G_ERROR: usize = at(GF, "error_code");
    pub const G_MESSAGE: usize = at(GF, "error_message");
    pub const G_ID: usize = at(GF, "group_id");
    pub const G_STATE: usize = at(GF, "group_state");
    pub const G_PROTOCOL_TYPE: usize = at(GF, "protocol_type");
    pub const G_PROTOCOL_DATA: usize = at(GF, "protocol_data");
    pub const G_MEMBERS: usize = at(GF, "members");
    pub const G_OPS: usize = at(GF, "authorized_operations");
    pub const MF: &[Field] = sub(GF, "members");
    pub const M_ID: usize = at(MF, "member_id");
    pub const M_INSTANCE: usize = at(MF, "group_instance_id");
    pub const M_CLIENT_ID: usize = at(MF, "client_id");
    pub const M_CLIENT_HOST: usize = at(MF, "client_host");
    pub const M_METADATA: usize = at(MF, "member_metadata");
    pub const M_ASSIGNMENT: usize = at(MF, "member_assignment");
}

mod r_li {
    use super::*;
    pub const F: &[Field] = list_groups::RESPONSE.fields;
    pub const ERROR: usize = at(F, "error_code");
    pub const GROUPS: usize = at(F, "groups");
    pub const GF: &[Field] = sub(F, "groups");
    pub const G_ID: usize = at(GF, "group_id");
    pub const G_PROTOCOL_TYPE: usize = at(GF, "protocol_type");
    pub const G_STATE: usize = at(GF, "group_state");
    pub const G_TYPE: usize = at(GF, "group_type");
}

mod r_dl {
    use super::*;
    pub const F: &[Field] = delete_groups::RESPONSE.fields;
    pub const RESULTS: usize = at(F, "results");
    pub const RF: &[Field] = sub(F, "results");
    pub const R_ID: usize = at(RF, "group_id");
    pub const R_ERROR: usize = at(RF, "error_code");
}

fn fetched_partitions<'a>(
    parts: &'a [FetchedOffset],
    f: &FetchPartitionFields,
    version: i16,
    group_error: Option<ErrorCode>,
) -> Value<'a> {
    array(
        parts
            .iter()
            .map(|p| {
                let mut w = W::new(f.fields, version);
                w.set(f.index, Value::Int32(p.partition));
                match group_error {
                    // Before v2 there is no top-level error: the group's goes on every
                    // partition (Kafka's OffsetFetchResponse).
                    Some(err) => {
                        w.set(f.offset, Value::Int64(-1))
                            .set(f.epoch, Value::Int32(-1))
                            .set(f.metadata, s(""))
                            .set(f.error, e(err));
                    }
                    None => {
                        w.set(f.offset, Value::Int64(p.offset))
                            .set(f.epoch, Value::Int32(p.leader_epoch))
                            .set(f.metadata, s(&p.metadata))
                            .set(f.error, e(p.error));
                    }
                }
                w.value()
            })
            .collect(),
    )
}

/// response_body is the body of `response` at `version`, borrowing its strings and bytes.
pub fn response_body(response: &GroupResponse, version: i16) -> Struct<'_> {
    match response {
        GroupResponse::JoinGroup(r) => {
            let mut w = W::new(r_jg::F, version);
            // JoinGroupResponse's constructor: "" before v7, null for "" from v7.
            let name = match (version < 7, r.protocol_name.as_deref()) {
                (true, n) => s(n.unwrap_or("")),
                (false, None | Some("")) => Value::Null,
                (false, Some(n)) => s(n),
            };
            let members = r
                .members
                .iter()
                .map(|m| {
                    let mut mw = W::new(r_jg::MF, version);
                    mw.set(r_jg::M_ID, s(&m.member_id))
                        .set(r_jg::M_INSTANCE, opt(m.group_instance_id.as_deref()))
                        .set(r_jg::M_METADATA, b(&m.metadata));
                    mw.value()
                })
                .collect();
            w.set(r_jg::ERROR, e(r.error))
                .set(r_jg::GENERATION, Value::Int32(r.generation_id))
                .set(r_jg::PROTOCOL_TYPE, opt(r.protocol_type.as_deref()))
                .set(r_jg::PROTOCOL_NAME, name)
                .set(r_jg::LEADER, s(&r.leader))
                .set(r_jg::SKIP, Value::Bool(r.skip_assignment))
                .set(r_jg::MEMBER_ID, s(&r.member_id))
                .set(r_jg::MEMBERS, array(members));
            w.build()
        }
        GroupResponse::SyncGroup(r) => {
            let mut w = W::new(r_sg::F, version);
            w.set(r_sg::ERROR, e(r.error))
                .set(r_sg::PROTOCOL_TYPE, opt(r.protocol_type.as_deref()))
                .set(r_sg::PROTOCOL_NAME, opt(r.protocol_name.as_deref()))
                .set(r_sg::ASSIGNMENT, b(&r.assignment));
            w.build()
        }
        GroupResponse::Heartbeat(r) => {
            let mut w = W::new(r_hb::F, version);
            w.set(r_hb::ERROR, e(r.error));
            w.build()
        }
        GroupResponse::LeaveGroup(r) => {
            let mut w = W::new(r_lg::F, version);
            if w.has(r_lg::MEMBERS) {
                let members = r
                    .members
                    .iter()
                    .map(|m| {
                        let mut mw = W::new(r_lg::MF, version);
                        mw.set(r_lg::M_ID, s(&m.member_id))
                            .set(r_lg::M_INSTANCE, opt(m.group_instance_id.as_deref()))
                            .set(r_lg::M_ERROR, e(m.error));
                        mw.value()
                    })
                    .collect();
                w.set(r_lg::ERROR, e(r.error))
                    .set(r_lg::MEMBERS, array(members));
            } else {
                // LeaveGroupResponse before v3: the top-level error, else the first member's.
                let lifted = if r.error != ErrorCode::None {
                    r.error
                } else {
                    r.members
                        .iter()
                        .map(|m| m.error)
                        .find(|e| *e != ErrorCode::None)
                        .unwrap_or(ErrorCode::None)
                };
                w.set(r_lg::ERROR, e(lifted));
            }
            w.build()
        }
        GroupResponse::OffsetCommit(r) => {
            let mut w = W::new(r_oc::F, version);
            let topics = r
                .topics
                .iter()
                .map(|(name, parts)| {
                    let mut tw = W::new(r_oc::TF, version);
                    let parts = parts
                        .iter()
                        .map(|(p, err)| {
                            let mut pw = W::new(r_oc::PF, version);
                            pw.set(r_oc::P_INDEX, Value::Int32(*p))
                                .set(r_oc::P_ERROR, e(*err));
                            pw.value()
                        })
                        .collect();
                    tw.set(r_oc::T_NAME, s(name))
                        .set(r_oc::T_PARTITIONS, array(parts));
                    tw.value()
                })
                .collect();
            w.set(r_oc::TOPICS, array(topics));
            w.build()
        }
        GroupResponse::OffsetFetch(r) => {
            let mut w = W::new(r_of::F, version);
            if w.has(r_of::GROUPS) {
                let groups = r
                    .groups
                    .iter()
                    .map(|g| {
                        let mut gw = W::new(r_of::GF, version);
                        let topics = g
                            .topics
                            .iter()
                            .map(|(name, parts)| {
                                let mut tw = W::new(r_of::GTF, version);
                                tw.set(r_of::GT_NAME, s(name)).set(
                                    r_of::GT_PARTITIONS,
                                    fetched_partitions(
                                        parts,
                                        &FETCH_GROUP_PARTITION,
                                        version,
                                        None,
                                    ),
                                );
                                tw.value()
                            })
                            .collect();
                        gw.set(r_of::G_ID, s(&g.group_id))
                            .set(r_of::G_TOPICS, array(topics))
                            .set(r_of::G_ERROR, e(g.error));
                        gw.value()
                    })
                    .collect();
                w.set(r_of::GROUPS, array(groups));
            } else if let Some(g) = r.groups.first() {
                let top_level = w.has(r_of::ERROR);
                let on_partitions = (!top_level && g.error != ErrorCode::None).then_some(g.error);
                let topics = g
                    .topics
                    .iter()
                    .map(|(name, parts)| {
                        let mut tw = W::new(r_of::TF, version);
                        tw.set(r_of::T_NAME, s(name)).set(
                            r_of::T_PARTITIONS,
                            fetched_partitions(parts, &FETCH_PARTITION, version, on_partitions),
                        );
                        tw.value()
                    })
                    .collect();
                w.set(r_of::TOPICS, array(topics))
                    .set(r_of::ERROR, e(g.error));
            }
            w.build()
        }
        GroupResponse::OffsetDelete(r) => {
            let mut w = W::new(r_od::F, version);
            let topics = r
                .topics
                .iter()
                .map(|(name, parts)| {
                    let mut tw = W::new(r_od::TF, version);
                    let parts = parts
                        .iter()
                        .map(|(p, err)| {
                            let mut pw = W::new(r_od::PF, version);
                            pw.set(r_od::P_INDEX, Value::Int32(*p))
                                .set(r_od::P_ERROR, e(*err));
                            pw.value()
                        })
                        .collect();
                    tw.set(r_od::T_NAME, s(name))
                        .set(r_od::T_PARTITIONS, array(parts));
                    tw.value()
                })
                .collect();
            w.set(r_od::ERROR, e(r.error))
                .set(r_od::TOPICS, array(topics));
            w.build()
        }
        GroupResponse::DescribeGroups(r) => {
            let mut w = W::new(r_dg::F, version);
            let groups = r
                .groups
                .iter()
                .map(|g| {
                    let mut gw = W::new(r_dg::GF, version);
                    let members = g
                        .members
                        .iter()
                        .map(|m| {
                            let mut mw = W::new(r_dg::MF, version);
                            mw.set(r_dg::M_ID, s(&m.member_id))
                                .set(r_dg::M_INSTANCE, opt(m.group_instance_id.as_deref()))
                                .set(r_dg::M_CLIENT_ID, s(&m.client_id))
                                .set(r_dg::M_CLIENT_HOST, s(&m.client_host))
                                .set(r_dg::M_METADATA, b(&m.metadata))
                                .set(r_dg::M_ASSIGNMENT, b(&m.assignment));
                            mw.value()
                        })
                        .collect();
                    // v6+ (KIP-1043): a group the coordinator does not know is
                    // GROUP_ID_NOT_FOUND with Kafka's message, not a Dead group.
                    let unknown = version >= 6
                        && g.error == ErrorCode::None
                        && g.state == GroupState::Dead.name();
                    let message = match unknown {
                        true => {
                            Value::String(Cow::Owned(format!("Group {} not found.", g.group_id)))
                        }
                        false => Value::Null,
                    };
                    let error = if unknown {
                        ErrorCode::GroupIdNotFound
                    } else {
                        g.error
                    };
                    gw.set(r_dg::G_ERROR, e(error))
                        .set(r_dg::G_MESSAGE, message)
                        .set(r_dg::G_ID, s(&g.group_id))
                        .set(r_dg::G_STATE, s(g.state))
                        .set(r_dg::G_PROTOCOL_TYPE, s(&g.protocol_type))
                        .set(r_dg::G_PROTOCOL_DATA, s(&g.protocol_data))
                        .set(r_dg::G_MEMBERS, array(members))
                        .set(
                            r_dg::G_OPS,
                            Value::Int32(match unknown {
                                true => i32::MIN,
                                false => g.authorized_operations,
                            }),
                        );
                    gw.value()
                })
                .collect();
            w.set(r_dg::GROUPS, array(groups));
            w.build()
        }
        GroupResponse::ListGroups(r) => {
            let mut w = W::new(r_li::F, version);
            let groups = r
                .groups
                .iter()
                .map(|g| {
                    let mut gw = W::new(r_li::GF, version);
                    gw.set(r_li::G_ID, s(&g.group_id))
                        .set(r_li::G_PROTOCOL_TYPE, s(&g.protocol_type))
                        .set(r_li::G_STATE, s(g.state.name()))
                        .set(r_li::G_TYPE, s("classic"));
                    gw.value()
                })
                .collect();
            w.set(r_li::ERROR, e(r.error))
                .set(r_li::GROUPS, array(groups));
            w.build()
        }
        GroupResponse::DeleteGroups(r) => {
            let mut w = W::new(r_dl::F, version);
            let results = r
                .results
                .iter()
                .map(|(id, err)| {
                    let mut rw = W::new(r_dl::RF, version);
                    rw.set(r_dl::R_ID, s(id)).set(r_dl::R_ERROR, e(*err));
                    rw.value()
                })
                .collect();
            w.set(r_dl::RESULTS, array(results));
            w.build()
        }
    }
}

/// encode_response writes the whole response frame of `response` to a request of `version` with
/// `correlation_id`: size prefix, header (the version's), body.
pub fn encode_response(
    response: &GroupResponse,
    version: i16,
    correlation_id: i32,
) -> Result<Vec<u8>> {
    if let GroupResponse::Heartbeat(r) = response {
        if let Some((buf, n)) = heartbeat_frame(r.error, version, correlation_id) {
            return Ok(buf[..n].to_vec());
        }
    }
    let body = response_body(response, version);
    frame::prepare_response(response.api_key(), version, correlation_id, &[], &body)?.to_vec()
}

/// heartbeat_frame is the whole response frame of a Heartbeat, written directly: the one
/// response on the hot path, whose bytes the generic codec would spend most of a heartbeat's
/// time on. A test pins it to the codec's bytes at every version. None for a version the codec
/// does not speak.
#[inline]
pub fn heartbeat_frame(
    error: ErrorCode,
    version: i16,
    correlation_id: i32,
) -> Option<([u8; 16], usize)> {
    if !(0..=4).contains(&version) {
        return None;
    }
    let mut buf = [0u8; 16];
    let mut n = 4;
    let mut put = |bytes: &[u8]| {
        buf[n..n + bytes.len()].copy_from_slice(bytes);
        n += bytes.len();
    };
    put(&correlation_id.to_be_bytes());
    let flexible = version >= 4;
    if flexible {
        put(&[0]); // response header v1: no tagged fields
    }
    if version >= 1 {
        put(&0i32.to_be_bytes()); // throttle_time_ms
    }
    put(&error.code().to_be_bytes());
    if flexible {
        put(&[0]); // no tagged fields
    }
    buf[..4].copy_from_slice(&((n - 4) as i32).to_be_bytes());
    Some((buf, n))
}

/// error_response is the answer to a request of a group api that the coordinator could not
/// take (a body that is not the api's): `error` where the api puts one, the request's group ids
/// echoed where it lists groups.
pub fn error_response(request: &GroupRequest<'_>, error: ErrorCode) -> GroupResponse {
    match request {
        GroupRequest::JoinGroup(r) => {
            GroupResponse::JoinGroup(JoinGroupResponse::error(r.member_id, error))
        }
        GroupRequest::SyncGroup(_) => GroupResponse::SyncGroup(SyncGroupResponse::error(error)),
        GroupRequest::Heartbeat(_) => GroupResponse::Heartbeat(HeartbeatResponse { error }),
        GroupRequest::LeaveGroup(_) => GroupResponse::LeaveGroup(LeaveGroupResponse {
            error,
            members: Vec::new(),
        }),
        GroupRequest::OffsetCommit(r) => GroupResponse::OffsetCommit(OffsetCommitResponse {
            topics: r
                .topics
                .iter()
                .map(|t| {
                    (
                        t.name.to_string(),
                        t.partitions.iter().map(|p| (p.partition, error)).collect(),
                    )
                })
                .collect(),
        }),
        GroupRequest::OffsetFetch(r) => GroupResponse::OffsetFetch(OffsetFetchResponse {
            groups: r
                .groups
                .iter()
                .map(|g| FetchedGroup {
                    group_id: g.group_id.to_string(),
                    error,
                    topics: Vec::new(),
                })
                .collect(),
        }),
        GroupRequest::OffsetDelete(_) => GroupResponse::OffsetDelete(OffsetDeleteResponse {
            error,
            topics: Vec::new(),
        }),
        GroupRequest::DescribeGroups(r) => GroupResponse::DescribeGroups(DescribeGroupsResponse {
            groups: r
                .groups
                .iter()
                .map(|g| DescribedGroup {
                    error,
                    group_id: g.to_string(),
                    state: "",
                    protocol_type: "".into(),
                    protocol_data: "".into(),
                    members: Vec::new(),
                    authorized_operations: i32::MIN,
                })
                .collect(),
        }),
        GroupRequest::ListGroups(_) => GroupResponse::ListGroups(ListGroupsResponse {
            error,
            groups: Vec::new(),
        }),
        GroupRequest::DeleteGroups(r) => GroupResponse::DeleteGroups(DeleteGroupsResponse {
            results: r.groups.iter().map(|g| (g.to_string(), error)).collect(),
        }),
    }
}
