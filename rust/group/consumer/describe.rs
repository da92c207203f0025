//! ConsumerGroupDescribe (api 69) v0-1: consumer groups as their members and assignments stand
//! (Kafka's `GroupMetadataManager.consumerGroupDescribe` and `ConsumerGroup.asDescribedGroup`).
//! Groups are answered in the order asked; a group that is missing or of another type is
//! GROUP_ID_NOT_FOUND, an empty id INVALID_GROUP_ID.

use std::borrow::Cow;

use super::member::ConsumerMember;
use crate::errors::ErrorCode;
use crate::group::api::{
    text, ConsumerGroupDescribe, ConsumerGroupDescribeResponse,
    ConsumerGroupDescribeResponseAssignment, ConsumerGroupDescribeResponseGroup,
    ConsumerGroupDescribeResponseMember, ConsumerGroupDescribeResponseTopicPartition,
    GroupResponse, Token, GROUP_OPERATIONS,
};
use crate::group::assignors::Assignment;
use crate::group::coordinator::Coordinator;

impl Coordinator {
    /// consumer_group_describe serves a ConsumerGroupDescribe.
    pub(crate) fn consumer_group_describe(&mut self, token: Token, r: &ConsumerGroupDescribe<'_>) {
        let groups = r
            .group_ids
            .iter()
            .map(|id| self.describe_consumer_group(id, r.include_authorized_operations))
            .collect();
        self.respond(
            token,
            GroupResponse::ConsumerGroupDescribe(ConsumerGroupDescribeResponse {
                groups,
                ..Default::default()
            }),
        );
    }

    fn describe_consumer_group(
        &self,
        group_id: &str,
        authorized_operations: bool,
    ) -> ConsumerGroupDescribeResponseGroup<'static> {
        let error = |code: ErrorCode, message: Option<String>| ConsumerGroupDescribeResponseGroup {
            error_code: code.code(),
            error_message: message.map(Cow::Owned),
            group_id: text(group_id),
            authorized_operations: i32::MIN,
            ..Default::default()
        };
        if group_id.is_empty() {
            return error(ErrorCode::InvalidGroupId, None);
        }
        if !self.config.consumer_enabled() {
            return error(ErrorCode::UnsupportedVersion, None);
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
        let Some(part) = self.group(g).consumer.as_deref() else {
            return error(
                ErrorCode::GroupIdNotFound,
                Some(format!("Group {group_id} is not a consumer group.")),
            );
        };
        let group = &part.group;
        let default = self
            .config
            .consumer_assignors
            .first()
            .map(String::as_str)
            .unwrap_or("uniform");
        let empty = Assignment::new();
        ConsumerGroupDescribeResponseGroup {
            group_id: text(group_id),
            group_state: Cow::Borrowed(group.state().name()),
            group_epoch: group.group_epoch(),
            assignment_epoch: group.assignment_epoch(),
            assignor_name: text(group.preferred_server_assignor(default)),
            members: group
                .members()
                .values()
                .map(|m| self.describe_member(m, group.target(&m.member_id).unwrap_or(&empty)))
                .collect(),
            authorized_operations: if authorized_operations {
                GROUP_OPERATIONS
            } else {
                i32::MIN
            },
            ..Default::default()
        }
    }

    fn describe_member(
        &self,
        m: &ConsumerMember,
        target: &Assignment,
    ) -> ConsumerGroupDescribeResponseMember<'static> {
        // The assignment holds the partitions pending revocation too: the member is still
        // responsible for them.
        let mut owned = m.assigned_partitions.topics().clone();
        for (t, p) in m.partitions_pending_revocation.iter() {
            owned.entry(*t).or_default().extend_from_slice(p);
        }
        let owned = Assignment::from_map(owned);
        ConsumerGroupDescribeResponseMember {
            member_id: text(&m.member_id),
            instance_id: m.instance_id.as_deref().map(text),
            rack_id: m.rack_id.as_deref().map(text),
            member_epoch: m.member_epoch,
            client_id: text(&m.client_id),
            client_host: text(&m.client_host),
            subscribed_topic_names: m.subscribed_topic_names.iter().map(|n| text(n)).collect(),
            // "" without a regex, not null: Kafka's ConsumerGroupMember starts from "".
            subscribed_topic_regex: Some(text(&m.subscribed_topic_regex)),
            assignment: self.describe_assignment(&owned),
            target_assignment: self.describe_assignment(target),
            member_type: if m.classic_member_metadata.is_some() {
                0
            } else {
                1
            },
            ..Default::default()
        }
    }

    /// describe_assignment names each topic of `a`; topics no longer known are left out, as
    /// Kafka leaves out topics missing from its metadata image.
    fn describe_assignment(
        &self,
        a: &Assignment,
    ) -> ConsumerGroupDescribeResponseAssignment<'static> {
        ConsumerGroupDescribeResponseAssignment {
            topic_partitions: a
                .iter()
                .filter_map(|(t, p)| {
                    let name = self.topic_names.get(t)?;
                    Some(ConsumerGroupDescribeResponseTopicPartition {
                        topic_id: *t,
                        topic_name: text(name),
                        partitions: p.to_vec(),
                        ..Default::default()
                    })
                })
                .collect(),
            ..Default::default()
        }
    }
}
