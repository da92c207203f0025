//! The coordinator's inputs and outputs: typed requests (borrowing from the decoded frame),
//! typed responses (owned), and the effects a host carries out.
//!
//! [`super::requests`] decodes a request frame of any version straight into its generated
//! typed body and normalises the older versions' shapes; [`super::responses`] writes a
//! [`GroupResponse`] as the response frame of the request's version. The coordinator itself
//! knows versions only where Kafka's coordinator does (JoinGroup v4+ and v9+, SyncGroup v5+,
//! OffsetCommit v9+, DescribeGroups v6+).

use std::sync::Arc;

use super::state::GroupState;
use crate::errors::ErrorCode;
pub use crate::protocol::typed::delete_groups::DeleteGroupsRequest;
pub use crate::protocol::typed::describe_groups::DescribeGroupsRequest;
pub use crate::protocol::typed::heartbeat::HeartbeatRequest;
pub use crate::protocol::typed::join_group::{JoinGroupRequest, JoinGroupRequestProtocol};
pub use crate::protocol::typed::leave_group::{LeaveGroupRequest, LeaveGroupRequestMember};
pub use crate::protocol::typed::list_groups::ListGroupsRequest;
pub use crate::protocol::typed::offset_commit::{
    OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic,
};
pub use crate::protocol::typed::offset_delete::{
    OffsetDeleteRequest, OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
};
pub use crate::protocol::typed::offset_fetch::{
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestGroupTopic,
};
pub use crate::protocol::typed::sync_group::{SyncGroupRequest, SyncGroupRequestAssignment};

/// Token identifies a request the host handed in; its response comes back with it.
pub type Token = u64;

/// AppendToken identifies an [`Effect::Append`]; the host reports its outcome with it.
pub type AppendToken = u64;

/// Effect is what the host must do after a call.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Respond: send `response` to the request the host gave `token` with (once per token).
    Respond {
        token: Token,
        response: GroupResponse,
    },
    /// Append: append `records` (one v2 record batch, base offset 0, CreateTime, no producer) to
    /// partition `partition` of `__consumer_offsets`, then report the outcome with
    /// `Coordinator::appended(now, token, error)`. Responses that wait on it go out then.
    Append {
        token: AppendToken,
        partition: i32,
        records: Vec<u8>,
    },
}

/// Req is a request of a group api as the coordinator reads it: the body, typed as generated
/// from its declaration (`protocol::typed`) and normalised to the newest version's shape by
/// [`super::requests`], with what the header and the connection say. It derefs to the body.
#[derive(Debug, Clone, PartialEq)]
pub struct Req<'a, T> {
    /// version is the request's api version, for the few rules that depend on it: JoinGroup
    /// v4+ (MEMBER_ID_REQUIRED) and v9+ (skip the assignment), SyncGroup v5+ (protocol checked),
    /// OffsetCommit v9+ (GROUP_ID_NOT_FOUND), DescribeGroups v6+ (not-found errors).
    pub version: i16,
    /// client_id is the request header's client id ("" when null).
    pub client_id: &'a str,
    /// client_host is the peer's address as Kafka prints it (`/127.0.0.1`).
    pub client_host: &'a str,
    pub body: T,
}

impl<T> std::ops::Deref for Req<'_, T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        &self.body
    }
}

impl<'a, T> Req<'a, T> {
    /// new is a request at `version` from a client with no id, on no connection (tests, tools).
    pub fn new(version: i16, body: T) -> Self {
        Req {
            version,
            client_id: "",
            client_host: "",
            body,
        }
    }
}

/// The requests, each its generated body in a [`Req`].
pub type JoinGroup<'a> = Req<'a, JoinGroupRequest<'a>>;
pub type SyncGroup<'a> = Req<'a, SyncGroupRequest<'a>>;
pub type Heartbeat<'a> = Req<'a, HeartbeatRequest<'a>>;
/// LeaveGroup: before v3 its one member is moved into `members`.
pub type LeaveGroup<'a> = Req<'a, LeaveGroupRequest<'a>>;
/// OffsetCommit: `generation_id_or_member_epoch` is -1 for commits outside group management.
pub type OffsetCommit<'a> = Req<'a, OffsetCommitRequest<'a>>;
/// OffsetFetch: before v8 its one group is moved into `groups`; `topics` None asks for every
/// committed offset.
pub type OffsetFetch<'a> = Req<'a, OffsetFetchRequest<'a>>;
pub type OffsetDelete<'a> = Req<'a, OffsetDeleteRequest<'a>>;
pub type DescribeGroups<'a> = Req<'a, DescribeGroupsRequest<'a>>;
pub type ListGroups<'a> = Req<'a, ListGroupsRequest<'a>>;
pub type DeleteGroups<'a> = Req<'a, DeleteGroupsRequest<'a>>;

/// GroupRequest is one request to the coordinator.
#[derive(Debug, Clone, PartialEq)]
pub enum GroupRequest<'a> {
    JoinGroup(JoinGroup<'a>),
    SyncGroup(SyncGroup<'a>),
    Heartbeat(Heartbeat<'a>),
    LeaveGroup(LeaveGroup<'a>),
    OffsetCommit(OffsetCommit<'a>),
    OffsetFetch(OffsetFetch<'a>),
    OffsetDelete(OffsetDelete<'a>),
    DescribeGroups(DescribeGroups<'a>),
    ListGroups(ListGroups<'a>),
    DeleteGroups(DeleteGroups<'a>),
}

/// GroupResponse is the coordinator's answer to one [`GroupRequest`], of the same api.
#[derive(Debug, Clone, PartialEq)]
pub enum GroupResponse {
    JoinGroup(JoinGroupResponse),
    SyncGroup(SyncGroupResponse),
    Heartbeat(HeartbeatResponse),
    LeaveGroup(LeaveGroupResponse),
    OffsetCommit(OffsetCommitResponse),
    OffsetFetch(OffsetFetchResponse),
    OffsetDelete(OffsetDeleteResponse),
    DescribeGroups(DescribeGroupsResponse),
    ListGroups(ListGroupsResponse),
    DeleteGroups(DeleteGroupsResponse),
}

impl GroupResponse {
    /// api_key is the Kafka api key of the response.
    pub fn api_key(&self) -> i16 {
        match self {
            GroupResponse::JoinGroup(_) => 11,
            GroupResponse::SyncGroup(_) => 14,
            GroupResponse::Heartbeat(_) => 12,
            GroupResponse::LeaveGroup(_) => 13,
            GroupResponse::OffsetCommit(_) => 8,
            GroupResponse::OffsetFetch(_) => 9,
            GroupResponse::OffsetDelete(_) => 47,
            GroupResponse::DescribeGroups(_) => 15,
            GroupResponse::ListGroups(_) => 16,
            GroupResponse::DeleteGroups(_) => 42,
        }
    }
}

/// JoinGroupResponse answers a JoinGroup. The leader gets the members (with their metadata for
/// the chosen protocol); followers get none.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinGroupResponse {
    pub error: ErrorCode,
    pub generation_id: i32,
    pub protocol_type: Option<Arc<str>>,
    pub protocol_name: Option<Arc<str>>,
    /// leader is "" when there is none (errors).
    pub leader: Arc<str>,
    pub skip_assignment: bool,
    pub member_id: Arc<str>,
    pub members: Vec<JoinGroupMember>,
}

impl JoinGroupResponse {
    /// error is Kafka's `JoinGroupResult(memberId, error)`: generation -1, no protocol, no
    /// leader, no members.
    pub fn error(member_id: &str, error: ErrorCode) -> Self {
        JoinGroupResponse {
            error,
            generation_id: -1,
            protocol_type: None,
            protocol_name: None,
            leader: Arc::from(""),
            skip_assignment: false,
            member_id: Arc::from(member_id),
            members: Vec::new(),
        }
    }
}

/// JoinGroupMember is one member in the leader's JoinGroup response.
#[derive(Debug, Clone, PartialEq)]
pub struct JoinGroupMember {
    pub member_id: Arc<str>,
    pub group_instance_id: Option<Arc<str>>,
    pub metadata: Arc<[u8]>,
}

/// SyncGroupResponse answers a SyncGroup with the member's assignment.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncGroupResponse {
    pub error: ErrorCode,
    pub protocol_type: Option<Arc<str>>,
    pub protocol_name: Option<Arc<str>>,
    pub assignment: Arc<[u8]>,
}

impl SyncGroupResponse {
    /// error is Kafka's `SyncGroupResult(error)`: no protocol, an empty assignment.
    pub fn error(error: ErrorCode) -> Self {
        SyncGroupResponse {
            error,
            protocol_type: None,
            protocol_name: None,
            assignment: Arc::from(&[][..]),
        }
    }
}

/// HeartbeatResponse answers a Heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatResponse {
    pub error: ErrorCode,
}

/// LeaveGroupResponse answers a LeaveGroup: a top-level error and one entry per member (v3+;
/// before v3 the wire adapter lifts the member's error to the top level, as Kafka does).
#[derive(Debug, Clone, PartialEq)]
pub struct LeaveGroupResponse {
    pub error: ErrorCode,
    pub members: Vec<LeftMember>,
}

/// LeftMember is one member's outcome in a LeaveGroup response.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftMember {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub error: ErrorCode,
}

/// OffsetCommitResponse answers an OffsetCommit: an error per partition.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetCommitResponse {
    pub topics: Vec<(String, Vec<(i32, ErrorCode)>)>,
}

/// OffsetFetchResponse answers an OffsetFetch: one entry per group asked for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OffsetFetchResponse {
    pub groups: Vec<FetchedGroup>,
}

/// FetchedGroup is one group's committed offsets, or its error.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchedGroup {
    pub group_id: String,
    pub error: ErrorCode,
    pub topics: Vec<(String, Vec<FetchedOffset>)>,
}

/// FetchedOffset is one partition's committed offset: -1, no epoch (-1) and "" when none.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchedOffset {
    pub partition: i32,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Arc<str>,
    pub error: ErrorCode,
}

/// OffsetDeleteResponse answers an OffsetDelete: a group error, or an error per partition.
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetDeleteResponse {
    pub error: ErrorCode,
    pub topics: Vec<(String, Vec<(i32, ErrorCode)>)>,
}

/// DescribeGroupsResponse answers a DescribeGroups: one entry per group asked for.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DescribeGroupsResponse {
    pub groups: Vec<DescribedGroup>,
}

/// DescribedGroup is one group's state. An unknown group is `Dead` with nothing else (and from
/// v6 GROUP_ID_NOT_FOUND); members carry metadata and assignment only when the group is Stable.
#[derive(Debug, Clone, PartialEq)]
pub struct DescribedGroup {
    pub error: ErrorCode,
    /// error_message (v6+) says what the error is about (Kafka's "Group g not found.").
    pub error_message: Option<String>,
    pub group_id: String,
    /// state is the state's name ("" with an error, as Kafka's `EmptyGroup` summary).
    pub state: &'static str,
    pub protocol_type: Arc<str>,
    pub protocol_data: Arc<str>,
    pub members: Vec<DescribedMember>,
    /// authorized_operations is the bit field of operations the client may do on the group
    /// (asked for in v3+; `i32::MIN` when not asked for, Kafka's default).
    pub authorized_operations: i32,
}

/// GROUP_OPERATIONS is the authorized-operations bit field of a group without an authorizer:
/// READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10) and ALTER_CONFIGS (11), Kafka
/// 4's supported operations on a GROUP resource (AclEntry.supportedOperations; the config
/// ones came with KIP-848's group configs).
pub const GROUP_OPERATIONS: i32 = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);

/// DescribedMember is one member of a described group.
#[derive(Debug, Clone, PartialEq)]
pub struct DescribedMember {
    pub member_id: Arc<str>,
    pub group_instance_id: Option<Arc<str>>,
    pub client_id: Arc<str>,
    pub client_host: Arc<str>,
    pub metadata: Arc<[u8]>,
    pub assignment: Arc<[u8]>,
}

/// ListGroupsResponse answers a ListGroups.
#[derive(Debug, Clone, PartialEq)]
pub struct ListGroupsResponse {
    pub error: ErrorCode,
    pub groups: Vec<ListedGroup>,
}

/// ListedGroup is one group in a ListGroups response; its type is always `classic`.
#[derive(Debug, Clone, PartialEq)]
pub struct ListedGroup {
    pub group_id: Arc<str>,
    pub protocol_type: Arc<str>,
    pub state: GroupState,
}

/// DeleteGroupsResponse answers a DeleteGroups: an error per group.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeleteGroupsResponse {
    pub results: Vec<(String, ErrorCode)>,
}
