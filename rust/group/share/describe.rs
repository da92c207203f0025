//! ShareGroupDescribe (api 77) v1: share groups as their members and assignments stand (Kafka's
//! `GroupMetadataManager.shareGroupDescribe` and `ShareGroup.asDescribedGroup`, reference
//! §1.3). Groups are answered in the order asked; a group that is missing or of another type
//! is GROUP_ID_NOT_FOUND, an empty id INVALID_GROUP_ID.

use std::borrow::Cow;

use crate::errors::ErrorCode;
use crate::group::api::{
    text, GroupResponse, ShareGroupDescribe, ShareGroupDescribeResponse,
    ShareGroupDescribeResponseAssignment, ShareGroupDescribeResponseGroup,
    ShareGroupDescribeResponseMember, ShareGroupDescribeResponseTopicPartition, Token,
    GROUP_OPERATIONS,
};
use crate::group::assignors::simple;
use crate::group::coordinator::Coordinator;

impl Coordinator {
    /// share_group_describe serves a ShareGroupDescribe.
    pub(crate) fn share_group_describe(&mut self, token: Token, r: &ShareGroupDescribe<'_>) {
        let groups = r
            .group_ids
            .iter()
            .map(|id| self.describe_share_group(id, r.include_authorized_operations))
            .collect();
        self.respond(
            token,
            GroupResponse::ShareGroupDescribe(ShareGroupDescribeResponse {
                groups,
                ..Default::default()
            }),
        );
    }

    fn describe_share_group(
        &self,
        group_id: &str,
        authorized_operations: bool,
    ) -> ShareGroupDescribeResponseGroup<'static> {
        let error = |code: ErrorCode, message: Option<String>| ShareGroupDescribeResponseGroup {
            error_code: code.code(),
            error_message: message.map(Cow::Owned),
            group_id: text(group_id),
            authorized_operations: i32::MIN,
            ..Default::default()
        };
        if group_id.is_empty() {
            return error(ErrorCode::InvalidGroupId, None);
        }
        if let Some(e) = self.gate(group_id) {
            return error(e, None);
        }
        let Some(g) = self.slot_of(group_id) else {
            return error(
                ErrorCode::GroupIdNotFound,
                Some(format!("Group {group_id} not found.")),
            );
        };
        let Some(part) = self.group(g).share.as_deref() else {
            return error(
                ErrorCode::GroupIdNotFound,
                Some(format!("Group {group_id} is not a share group.")),
            );
        };
        ShareGroupDescribeResponseGroup {
            group_id: text(group_id),
            group_state: Cow::Borrowed(part.state()),
            group_epoch: part.group_epoch,
            assignment_epoch: part.assignment_epoch,
            assignor_name: Cow::Borrowed(simple::NAME),
            members: part
                .members
                .values()
                .map(|m| ShareGroupDescribeResponseMember {
                    member_id: text(&m.member_id),
                    rack_id: m.rack_id.as_deref().map(text),
                    member_epoch: m.member_epoch,
                    client_id: text(&m.client_id),
                    client_host: text(&m.client_host),
                    subscribed_topic_names: m
                        .subscribed_topic_names
                        .iter()
                        .map(|n| text(n))
                        .collect(),
                    // Topics no longer known are left out, as Kafka leaves out those missing
                    // from its metadata image.
                    assignment: ShareGroupDescribeResponseAssignment {
                        topic_partitions: m
                            .assigned_partitions
                            .iter()
                            .filter_map(|(t, p)| {
                                let name = self.topic_names.get(t)?;
                                Some(ShareGroupDescribeResponseTopicPartition {
                                    topic_id: *t,
                                    topic_name: text(name),
                                    partitions: p.to_vec(),
                                    ..Default::default()
                                })
                            })
                            .collect(),
                        ..Default::default()
                    },
                    ..Default::default()
                })
                .collect(),
            authorized_operations: if authorized_operations {
                GROUP_OPERATIONS
            } else {
                i32::MIN
            },
            ..Default::default()
        }
    }
}
