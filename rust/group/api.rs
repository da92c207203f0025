//! The coordinator's inputs and outputs: typed requests (borrowing from the decoded frame),
//! typed responses (owned), and the effects a host carries out.
//!
//! [`super::requests`] decodes a request frame of any version straight into its generated
//! typed body and normalises the older versions' shapes; [`super::responses`] writes a
//! [`GroupResponse`] as the response frame of the request's version. The coordinator itself
//! knows versions only where Kafka's coordinator does (JoinGroup v4+ and v9+, SyncGroup v5+,
//! OffsetCommit v9+, DescribeGroups v6+).

use std::borrow::Cow;

use crate::errors::ErrorCode;
use crate::protocol::schema::Message;
pub use crate::protocol::typed::consumer_group_describe::{
    ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse,
    ConsumerGroupDescribeResponseAssignment, ConsumerGroupDescribeResponseGroup,
    ConsumerGroupDescribeResponseMember, ConsumerGroupDescribeResponseTopicPartition,
};
pub use crate::protocol::typed::consumer_group_heartbeat::{
    ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatRequestTopicPartition,
    ConsumerGroupHeartbeatResponse, ConsumerGroupHeartbeatResponseAssignment,
    ConsumerGroupHeartbeatResponseTopicPartition,
};
pub use crate::protocol::typed::delete_groups::{
    DeleteGroupsRequest, DeleteGroupsResponse, DeleteGroupsResponseResult,
};
pub use crate::protocol::typed::describe_groups::{
    DescribeGroupsRequest, DescribeGroupsResponse, DescribeGroupsResponseGroup,
    DescribeGroupsResponseMember,
};
pub use crate::protocol::typed::heartbeat::{HeartbeatRequest, HeartbeatResponse};
pub use crate::protocol::typed::join_group::{
    JoinGroupRequest, JoinGroupRequestProtocol, JoinGroupResponse, JoinGroupResponseMember,
};
pub use crate::protocol::typed::leave_group::{
    LeaveGroupRequest, LeaveGroupRequestMember, LeaveGroupResponse, LeaveGroupResponseMember,
};
pub use crate::protocol::typed::list_groups::{
    ListGroupsRequest, ListGroupsResponse, ListGroupsResponseGroup,
};
pub use crate::protocol::typed::offset_commit::{
    OffsetCommitRequest, OffsetCommitRequestPartition, OffsetCommitRequestTopic,
    OffsetCommitResponse, OffsetCommitResponsePartition, OffsetCommitResponseTopic,
};
pub use crate::protocol::typed::offset_delete::{
    OffsetDeleteRequest, OffsetDeleteRequestPartition, OffsetDeleteRequestTopic,
    OffsetDeleteResponse, OffsetDeleteResponsePartition, OffsetDeleteResponseTopic,
};
pub use crate::protocol::typed::offset_fetch::{
    OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestGroupTopic, OffsetFetchResponse,
    OffsetFetchResponseGroup, OffsetFetchResponseGroupTopic,
    OffsetFetchResponseGroupTopicPartition,
};
pub use crate::protocol::typed::share_group_describe::{
    ShareGroupDescribeRequest, ShareGroupDescribeResponse, ShareGroupDescribeResponseAssignment,
    ShareGroupDescribeResponseGroup, ShareGroupDescribeResponseMember,
    ShareGroupDescribeResponseTopicPartition,
};
pub use crate::protocol::typed::share_group_heartbeat::{
    ShareGroupHeartbeatRequest, ShareGroupHeartbeatResponse, ShareGroupHeartbeatResponseAssignment,
    ShareGroupHeartbeatResponseTopicPartition,
};
pub use crate::protocol::typed::sync_group::{
    SyncGroupRequest, SyncGroupRequestAssignment, SyncGroupResponse,
};
pub use crate::protocol::typed::txn_offset_commit::{
    TxnOffsetCommitRequest, TxnOffsetCommitRequestPartition, TxnOffsetCommitRequestTopic,
    TxnOffsetCommitResponse, TxnOffsetCommitResponsePartition, TxnOffsetCommitResponseTopic,
};

pub use crate::coordinator::effect::{AppendToken, Token};

/// Effect is what the host must do after a call of the group coordinator: send a
/// [`GroupResponse`], append records to a partition of `__consumer_offsets` and report the
/// outcome with `Coordinator::appended(now, token, error)` (the runtime's
/// [`Effect`](crate::coordinator::effect::Effect)), or carry out a [`ShareEffect`] (`Other`).
pub type Effect = crate::coordinator::effect::Effect<GroupResponse, ShareEffect>;

/// ShareEffect is what a share group asks of the host beyond responses and appends: the share
/// state of its partitions (Kafka's persister calls, `__share_group_state`), by group, topic id
/// and partitions. See the contract in `share/mod.rs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShareEffect {
    /// InitializeShareState: create the share state of these partitions (Kafka's
    /// InitializeShareGroupState: state epoch `state_epoch`, start offset -1, "not yet
    /// decided"), then report it with `Coordinator::share_state_initialized` (or
    /// `share_state_initialize_failed`). Emitted once the records naming them as
    /// initializing are in the log.
    InitializeShareState {
        group_id: String,
        topic_id: [u8; 16],
        partitions: Vec<i32>,
        state_epoch: i32,
    },
    /// DeleteShareState: delete the share state of these partitions (Kafka's
    /// DeleteShareGroupState); the group was deleted. Nothing is reported back.
    DeleteShareState {
        group_id: String,
        topic_id: [u8; 16],
        partitions: Vec<i32>,
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
pub type ConsumerGroupHeartbeat<'a> = Req<'a, ConsumerGroupHeartbeatRequest<'a>>;
pub type ConsumerGroupDescribe<'a> = Req<'a, ConsumerGroupDescribeRequest<'a>>;
pub type ShareGroupHeartbeat<'a> = Req<'a, ShareGroupHeartbeatRequest<'a>>;
pub type ShareGroupDescribe<'a> = Req<'a, ShareGroupDescribeRequest<'a>>;
/// TxnOffsetCommit: `generation_id` is -1 (and `member_id` "") for commits outside group
/// management and before v3.
pub type TxnOffsetCommit<'a> = Req<'a, TxnOffsetCommitRequest<'a>>;

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
    ConsumerGroupHeartbeat(ConsumerGroupHeartbeat<'a>),
    ConsumerGroupDescribe(ConsumerGroupDescribe<'a>),
    TxnOffsetCommit(TxnOffsetCommit<'a>),
    ShareGroupHeartbeat(ShareGroupHeartbeat<'a>),
    ShareGroupDescribe(ShareGroupDescribe<'a>),
}

/// GroupResponse is the coordinator's answer to one [`GroupRequest`], of the same api: the
/// api's generated typed response in the newest version's shape, owning its values.
/// [`super::responses`] shapes it for the request's version as it writes it.
#[derive(Debug, Clone, PartialEq)]
pub enum GroupResponse {
    JoinGroup(JoinGroupResponse<'static>),
    SyncGroup(SyncGroupResponse<'static>),
    Heartbeat(HeartbeatResponse<'static>),
    /// LeaveGroup: a top-level error and one entry per member.
    LeaveGroup(LeaveGroupResponse<'static>),
    OffsetCommit(OffsetCommitResponse<'static>),
    /// OffsetFetch: one entry of `groups` per group asked for.
    OffsetFetch(OffsetFetchResponse<'static>),
    OffsetDelete(OffsetDeleteResponse<'static>),
    DescribeGroups(DescribeGroupsResponse<'static>),
    ListGroups(ListGroupsResponse<'static>),
    DeleteGroups(DeleteGroupsResponse<'static>),
    ConsumerGroupHeartbeat(ConsumerGroupHeartbeatResponse<'static>),
    ConsumerGroupDescribe(ConsumerGroupDescribeResponse<'static>),
    /// TxnOffsetCommit: no top-level error; a group's error is on every partition.
    TxnOffsetCommit(TxnOffsetCommitResponse<'static>),
    ShareGroupHeartbeat(ShareGroupHeartbeatResponse<'static>),
    ShareGroupDescribe(ShareGroupDescribeResponse<'static>),
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
            GroupResponse::ConsumerGroupHeartbeat(_) => 68,
            GroupResponse::ConsumerGroupDescribe(_) => 69,
            GroupResponse::TxnOffsetCommit(_) => 28,
            GroupResponse::ShareGroupHeartbeat(_) => 76,
            GroupResponse::ShareGroupDescribe(_) => 77,
        }
    }

    /// message is the declaration of the response.
    #[inline]
    pub fn message(&self) -> &'static Message {
        match self {
            GroupResponse::JoinGroup(_) => JoinGroupResponse::MESSAGE,
            GroupResponse::SyncGroup(_) => SyncGroupResponse::MESSAGE,
            GroupResponse::Heartbeat(_) => HeartbeatResponse::MESSAGE,
            GroupResponse::LeaveGroup(_) => LeaveGroupResponse::MESSAGE,
            GroupResponse::OffsetCommit(_) => OffsetCommitResponse::MESSAGE,
            GroupResponse::OffsetFetch(_) => OffsetFetchResponse::MESSAGE,
            GroupResponse::OffsetDelete(_) => OffsetDeleteResponse::MESSAGE,
            GroupResponse::DescribeGroups(_) => DescribeGroupsResponse::MESSAGE,
            GroupResponse::ListGroups(_) => ListGroupsResponse::MESSAGE,
            GroupResponse::DeleteGroups(_) => DeleteGroupsResponse::MESSAGE,
            GroupResponse::ConsumerGroupHeartbeat(_) => ConsumerGroupHeartbeatResponse::MESSAGE,
            GroupResponse::ConsumerGroupDescribe(_) => ConsumerGroupDescribeResponse::MESSAGE,
            GroupResponse::TxnOffsetCommit(_) => TxnOffsetCommitResponse::MESSAGE,
            GroupResponse::ShareGroupHeartbeat(_) => ShareGroupHeartbeatResponse::MESSAGE,
            GroupResponse::ShareGroupDescribe(_) => ShareGroupDescribeResponse::MESSAGE,
        }
    }
}

/// text is an owned string of a response.
#[inline]
pub fn text(s: &str) -> Cow<'static, str> {
    Cow::Owned(s.to_owned())
}

/// bytes are owned bytes of a response.
#[inline]
pub fn bytes(b: &[u8]) -> Cow<'static, [u8]> {
    Cow::Owned(b.to_vec())
}

/// join_error is Kafka's `JoinGroupResult(memberId, error)`: generation -1, no protocol, no
/// leader, no members.
pub fn join_error(member_id: &str, error: ErrorCode) -> JoinGroupResponse<'static> {
    JoinGroupResponse {
        error_code: error.code(),
        generation_id: -1,
        member_id: text(member_id),
        ..Default::default()
    }
}

/// sync_error is Kafka's `SyncGroupResult(error)`: no protocol, an empty assignment.
pub fn sync_error(error: ErrorCode) -> SyncGroupResponse<'static> {
    SyncGroupResponse {
        error_code: error.code(),
        ..Default::default()
    }
}

/// GROUP_OPERATIONS is the authorized-operations bit field of a group without an authorizer:
/// READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10) and ALTER_CONFIGS (11), Kafka
/// 4's supported operations on a GROUP resource (AclEntry.supportedOperations; the config
/// ones came with KIP-848's group configs).
pub const GROUP_OPERATIONS: i32 = (1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11);
