//! The coordinator's inputs and outputs: typed requests (borrowing from the decoded frame),
//! typed responses (owned), and the effects a host carries out.
//!
//! The wire adapter ([`super::wire`]) builds a [`GroupRequest`] from a decoded request of any
//! version and writes a [`GroupResponse`] back as the response body of that version; the
//! coordinator itself knows versions only where Kafka's coordinator does (JoinGroup v4+ and v9+,
//! SyncGroup v5+, OffsetCommit v9+).

use std::sync::Arc;

use super::state::GroupState;
use crate::errors::ErrorCode;

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

/// JoinGroup is a JoinGroup request (api key 11).
#[derive(Debug, Clone, PartialEq)]
pub struct JoinGroup<'a> {
    /// version is the request's api version: v4+ without an instance id gets MEMBER_ID_REQUIRED
    /// first (KIP-394), v9+ may be told to skip the assignment (KIP-814).
    pub version: i16,
    pub group_id: &'a str,
    pub session_timeout_ms: i32,
    /// rebalance_timeout_ms is the session timeout for v0, as Kafka reads it.
    pub rebalance_timeout_ms: i32,
    pub member_id: &'a str,
    pub group_instance_id: Option<&'a str>,
    pub protocol_type: &'a str,
    /// protocols are (name, metadata), by the member's preference.
    pub protocols: Vec<(&'a str, &'a [u8])>,
    /// client_id is the request header's client id ("" when null).
    pub client_id: &'a str,
    /// client_host is the peer's address as Kafka prints it (`/127.0.0.1`).
    pub client_host: &'a str,
    pub reason: Option<&'a str>,
}

/// SyncGroup is a SyncGroup request (api key 14).
#[derive(Debug, Clone, PartialEq)]
pub struct SyncGroup<'a> {
    /// version is the request's api version: v5+ must name the protocol type and name.
    pub version: i16,
    pub group_id: &'a str,
    pub generation_id: i32,
    pub member_id: &'a str,
    pub group_instance_id: Option<&'a str>,
    pub protocol_type: Option<&'a str>,
    pub protocol_name: Option<&'a str>,
    /// assignments are (member id, assignment), sent by the leader.
    pub assignments: Vec<(&'a str, &'a [u8])>,
}

/// Heartbeat is a Heartbeat request (api key 12).
#[derive(Debug, Clone, PartialEq)]
pub struct Heartbeat<'a> {
    pub group_id: &'a str,
    pub generation_id: i32,
    pub member_id: &'a str,
    pub group_instance_id: Option<&'a str>,
}

/// LeaveGroup is a LeaveGroup request (api key 13); before v3 it holds the one member.
#[derive(Debug, Clone, PartialEq)]
pub struct LeaveGroup<'a> {
    pub group_id: &'a str,
    pub members: Vec<LeavingMember<'a>>,
}

/// LeavingMember is one member leaving: by member id, or by instance id alone (admin removal).
#[derive(Debug, Clone, PartialEq)]
pub struct LeavingMember<'a> {
    pub member_id: &'a str,
    pub group_instance_id: Option<&'a str>,
    pub reason: Option<&'a str>,
}

/// OffsetCommit is an OffsetCommit request (api key 8).
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetCommit<'a> {
    /// version is the request's api version: v9+ answers GROUP_ID_NOT_FOUND for an unknown
    /// group instead of ILLEGAL_GENERATION.
    pub version: i16,
    pub group_id: &'a str,
    /// generation_id is -1 for commits outside group management (simple consumers, admin).
    pub generation_id: i32,
    pub member_id: &'a str,
    pub group_instance_id: Option<&'a str>,
    /// retention_time_ms is v2-4's retention (-1: the broker's `offsets.retention.minutes`).
    pub retention_time_ms: i64,
    pub topics: Vec<CommitTopic<'a>>,
}

/// CommitTopic is one topic of an OffsetCommit.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitTopic<'a> {
    pub name: &'a str,
    pub partitions: Vec<CommitPartition<'a>>,
}

/// CommitPartition is one partition's offset to commit.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitPartition<'a> {
    pub partition: i32,
    pub offset: i64,
    /// leader_epoch is -1 when the client sent none.
    pub leader_epoch: i32,
    /// commit_timestamp is v1's explicit timestamp, -1 for the broker's clock.
    pub commit_timestamp: i64,
    pub metadata: Option<&'a str>,
}

/// OffsetFetch is an OffsetFetch request (api key 9), one group or several (v8+).
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetFetch<'a> {
    pub groups: Vec<FetchGroup<'a>>,
    /// require_stable (v7+, KIP-447): a partition with a commit not yet appended answers
    /// UNSTABLE_OFFSET_COMMIT instead of an offset that may be about to change.
    pub require_stable: bool,
}

/// FetchGroup is one group of an OffsetFetch; `topics` None asks for every committed offset.
#[derive(Debug, Clone, PartialEq)]
pub struct FetchGroup<'a> {
    pub group_id: &'a str,
    pub topics: Option<Vec<(&'a str, Vec<i32>)>>,
}

/// OffsetDelete is an OffsetDelete request (api key 47).
#[derive(Debug, Clone, PartialEq)]
pub struct OffsetDelete<'a> {
    pub group_id: &'a str,
    pub topics: Vec<(&'a str, Vec<i32>)>,
}

/// DescribeGroups is a DescribeGroups request (api key 15).
#[derive(Debug, Clone, PartialEq)]
pub struct DescribeGroups<'a> {
    pub groups: Vec<&'a str>,
    /// include_authorized_operations (v3+) asks for each group's authorized operations.
    pub include_authorized_operations: bool,
    /// not_found_error (v6+, KIP-1043): a group that does not exist is answered with
    /// GROUP_ID_NOT_FOUND and a message, not described as Dead.
    pub not_found_error: bool,
}

/// ListGroups is a ListGroups request (api key 16); empty filters match everything.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ListGroups<'a> {
    /// states_filter (v4+) matches state names ignoring case.
    pub states_filter: Vec<&'a str>,
    /// types_filter (v5+) matches group types ignoring case; every group here is `classic`.
    pub types_filter: Vec<&'a str>,
}

/// DeleteGroups is a DeleteGroups request (api key 42).
#[derive(Debug, Clone, PartialEq)]
pub struct DeleteGroups<'a> {
    pub groups: Vec<&'a str>,
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
