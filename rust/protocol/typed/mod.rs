//! The typed messages: a Rust struct per message with decode straight from bytes and
//! encode straight to bytes, generated from the declarations of `rust/protocol/messages/`
//! by `generate.rs` (`make generate`). Do not edit the generated modules.

#[cfg(test)]
mod generate;
pub mod support;
#[cfg(test)]
mod tests;

pub mod add_offsets_to_txn;
pub mod add_partitions_to_txn;
pub mod alter_client_quotas;
pub mod alter_configs;
pub mod alter_share_group_offsets;
pub mod alter_user_scram_credentials;
pub mod api_versions;
pub mod consumer_group_describe;
pub mod consumer_group_heartbeat;
pub mod coordinator_records;
pub mod create_acls;
pub mod create_partitions;
pub mod create_topics;
pub mod delete_acls;
pub mod delete_groups;
pub mod delete_records;
pub mod delete_share_group_offsets;
pub mod delete_topics;
pub mod describe_acls;
pub mod describe_client_quotas;
pub mod describe_cluster;
pub mod describe_configs;
pub mod describe_groups;
pub mod describe_log_dirs;
pub mod describe_producers;
pub mod describe_share_group_offsets;
pub mod describe_transactions;
pub mod describe_user_scram_credentials;
pub mod end_txn;
pub mod fetch;
pub mod find_coordinator;
pub mod heartbeat;
pub mod incremental_alter_configs;
pub mod init_producer_id;
pub mod join_group;
pub mod leave_group;
pub mod list_config_resources;
pub mod list_groups;
pub mod list_offsets;
pub mod list_transactions;
pub mod metadata;
pub mod offset_commit;
pub mod offset_delete;
pub mod offset_fetch;
pub mod offset_for_leader_epoch;
pub mod produce;
pub mod sasl_authenticate;
pub mod sasl_handshake;
pub mod share_acknowledge;
pub mod share_fetch;
pub mod share_group_describe;
pub mod share_group_heartbeat;
pub mod sync_group;
pub mod txn_offset_commit;
pub mod write_txn_markers;

/// reencode decodes `bytes` as the message named `name` at `version` with its typed code
/// and encodes the result again.
#[cfg(any(test, feature = "testing"))]
pub fn reencode(name: &str, version: i16, bytes: &[u8]) -> Option<crate::errors::Result<Vec<u8>>> {
    Some(match name {
        "ProduceRequest" => {
            produce::ProduceRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "ProduceResponse" => {
            produce::ProduceResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "FetchRequest" => {
            fetch::FetchRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "FetchResponse" => {
            fetch::FetchResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "ListOffsetsRequest" => {
            list_offsets::ListOffsetsRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "ListOffsetsResponse" => list_offsets::ListOffsetsResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "MetadataRequest" => {
            metadata::MetadataRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "MetadataResponse" => {
            metadata::MetadataResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "OffsetCommitRequest" => offset_commit::OffsetCommitRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "OffsetCommitResponse" => offset_commit::OffsetCommitResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "OffsetFetchRequest" => {
            offset_fetch::OffsetFetchRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "OffsetFetchResponse" => offset_fetch::OffsetFetchResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "FindCoordinatorRequest" => {
            find_coordinator::FindCoordinatorRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "FindCoordinatorResponse" => {
            find_coordinator::FindCoordinatorResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "JoinGroupRequest" => {
            join_group::JoinGroupRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "JoinGroupResponse" => {
            join_group::JoinGroupResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "HeartbeatRequest" => {
            heartbeat::HeartbeatRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "HeartbeatResponse" => {
            heartbeat::HeartbeatResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "LeaveGroupRequest" => {
            leave_group::LeaveGroupRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "LeaveGroupResponse" => {
            leave_group::LeaveGroupResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "SyncGroupRequest" => {
            sync_group::SyncGroupRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "SyncGroupResponse" => {
            sync_group::SyncGroupResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "DescribeGroupsRequest" => describe_groups::DescribeGroupsRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "DescribeGroupsResponse" => describe_groups::DescribeGroupsResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "ListGroupsRequest" => {
            list_groups::ListGroupsRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "ListGroupsResponse" => {
            list_groups::ListGroupsResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "SaslHandshakeRequest" => sasl_handshake::SaslHandshakeRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "SaslHandshakeResponse" => sasl_handshake::SaslHandshakeResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "ApiVersionsRequest" => {
            api_versions::ApiVersionsRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "ApiVersionsResponse" => api_versions::ApiVersionsResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "CreateTopicsRequest" => create_topics::CreateTopicsRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "CreateTopicsResponse" => create_topics::CreateTopicsResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "DeleteTopicsRequest" => delete_topics::DeleteTopicsRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "DeleteTopicsResponse" => delete_topics::DeleteTopicsResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "DeleteRecordsRequest" => delete_records::DeleteRecordsRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "DeleteRecordsResponse" => delete_records::DeleteRecordsResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "InitProducerIdRequest" => init_producer_id::InitProducerIdRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "InitProducerIdResponse" => {
            init_producer_id::InitProducerIdResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "OffsetForLeaderEpochRequest" => {
            offset_for_leader_epoch::OffsetForLeaderEpochRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "OffsetForLeaderEpochResponse" => {
            offset_for_leader_epoch::OffsetForLeaderEpochResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AddPartitionsToTxnRequest" => {
            add_partitions_to_txn::AddPartitionsToTxnRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AddPartitionsToTxnResponse" => {
            add_partitions_to_txn::AddPartitionsToTxnResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AddOffsetsToTxnRequest" => {
            add_offsets_to_txn::AddOffsetsToTxnRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AddOffsetsToTxnResponse" => {
            add_offsets_to_txn::AddOffsetsToTxnResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "EndTxnRequest" => {
            end_txn::EndTxnRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "EndTxnResponse" => {
            end_txn::EndTxnResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "WriteTxnMarkersRequest" => {
            write_txn_markers::WriteTxnMarkersRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "WriteTxnMarkersResponse" => {
            write_txn_markers::WriteTxnMarkersResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "TxnOffsetCommitRequest" => {
            txn_offset_commit::TxnOffsetCommitRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "TxnOffsetCommitResponse" => {
            txn_offset_commit::TxnOffsetCommitResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeAclsRequest" => describe_acls::DescribeAclsRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "DescribeAclsResponse" => describe_acls::DescribeAclsResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "CreateAclsRequest" => {
            create_acls::CreateAclsRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "CreateAclsResponse" => {
            create_acls::CreateAclsResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "DeleteAclsRequest" => {
            delete_acls::DeleteAclsRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "DeleteAclsResponse" => {
            delete_acls::DeleteAclsResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "DescribeConfigsRequest" => {
            describe_configs::DescribeConfigsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeConfigsResponse" => {
            describe_configs::DescribeConfigsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AlterConfigsRequest" => alter_configs::AlterConfigsRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "AlterConfigsResponse" => alter_configs::AlterConfigsResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "DescribeLogDirsRequest" => {
            describe_log_dirs::DescribeLogDirsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeLogDirsResponse" => {
            describe_log_dirs::DescribeLogDirsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "SaslAuthenticateRequest" => {
            sasl_authenticate::SaslAuthenticateRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "SaslAuthenticateResponse" => {
            sasl_authenticate::SaslAuthenticateResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "CreatePartitionsRequest" => {
            create_partitions::CreatePartitionsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "CreatePartitionsResponse" => {
            create_partitions::CreatePartitionsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DeleteGroupsRequest" => delete_groups::DeleteGroupsRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "DeleteGroupsResponse" => delete_groups::DeleteGroupsResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "IncrementalAlterConfigsRequest" => {
            incremental_alter_configs::IncrementalAlterConfigsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "IncrementalAlterConfigsResponse" => {
            incremental_alter_configs::IncrementalAlterConfigsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "OffsetDeleteRequest" => offset_delete::OffsetDeleteRequest::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "OffsetDeleteResponse" => offset_delete::OffsetDeleteResponse::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "DescribeClientQuotasRequest" => {
            describe_client_quotas::DescribeClientQuotasRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeClientQuotasResponse" => {
            describe_client_quotas::DescribeClientQuotasResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AlterClientQuotasRequest" => {
            alter_client_quotas::AlterClientQuotasRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AlterClientQuotasResponse" => {
            alter_client_quotas::AlterClientQuotasResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeUserScramCredentialsRequest" => {
            describe_user_scram_credentials::DescribeUserScramCredentialsRequest::decode(
                bytes, version,
            )
            .and_then(|m| m.to_vec(version))
        }
        "DescribeUserScramCredentialsResponse" => {
            describe_user_scram_credentials::DescribeUserScramCredentialsResponse::decode(
                bytes, version,
            )
            .and_then(|m| m.to_vec(version))
        }
        "AlterUserScramCredentialsRequest" => {
            alter_user_scram_credentials::AlterUserScramCredentialsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AlterUserScramCredentialsResponse" => {
            alter_user_scram_credentials::AlterUserScramCredentialsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeClusterRequest" => {
            describe_cluster::DescribeClusterRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeClusterResponse" => {
            describe_cluster::DescribeClusterResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeProducersRequest" => {
            describe_producers::DescribeProducersRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeProducersResponse" => {
            describe_producers::DescribeProducersResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeTransactionsRequest" => {
            describe_transactions::DescribeTransactionsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeTransactionsResponse" => {
            describe_transactions::DescribeTransactionsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ListTransactionsRequest" => {
            list_transactions::ListTransactionsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ListTransactionsResponse" => {
            list_transactions::ListTransactionsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupHeartbeatRequest" => {
            consumer_group_heartbeat::ConsumerGroupHeartbeatRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupHeartbeatResponse" => {
            consumer_group_heartbeat::ConsumerGroupHeartbeatResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupDescribeRequest" => {
            consumer_group_describe::ConsumerGroupDescribeRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupDescribeResponse" => {
            consumer_group_describe::ConsumerGroupDescribeResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ListConfigResourcesRequest" => {
            list_config_resources::ListConfigResourcesRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ListConfigResourcesResponse" => {
            list_config_resources::ListConfigResourcesResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupHeartbeatRequest" => {
            share_group_heartbeat::ShareGroupHeartbeatRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupHeartbeatResponse" => {
            share_group_heartbeat::ShareGroupHeartbeatResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupDescribeRequest" => {
            share_group_describe::ShareGroupDescribeRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupDescribeResponse" => {
            share_group_describe::ShareGroupDescribeResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareFetchRequest" => {
            share_fetch::ShareFetchRequest::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "ShareFetchResponse" => {
            share_fetch::ShareFetchResponse::decode(bytes, version).and_then(|m| m.to_vec(version))
        }
        "ShareAcknowledgeRequest" => {
            share_acknowledge::ShareAcknowledgeRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareAcknowledgeResponse" => {
            share_acknowledge::ShareAcknowledgeResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeShareGroupOffsetsRequest" => {
            describe_share_group_offsets::DescribeShareGroupOffsetsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DescribeShareGroupOffsetsResponse" => {
            describe_share_group_offsets::DescribeShareGroupOffsetsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AlterShareGroupOffsetsRequest" => {
            alter_share_group_offsets::AlterShareGroupOffsetsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "AlterShareGroupOffsetsResponse" => {
            alter_share_group_offsets::AlterShareGroupOffsetsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DeleteShareGroupOffsetsRequest" => {
            delete_share_group_offsets::DeleteShareGroupOffsetsRequest::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "DeleteShareGroupOffsetsResponse" => {
            delete_share_group_offsets::DeleteShareGroupOffsetsResponse::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "OffsetCommitKey" => coordinator_records::OffsetCommitKey::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "OffsetCommitValue" => coordinator_records::OffsetCommitValue::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "GroupMetadataKey" => coordinator_records::GroupMetadataKey::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "GroupMetadataValue" => coordinator_records::GroupMetadataValue::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "ConsumerGroupMetadataKey" => {
            coordinator_records::ConsumerGroupMetadataKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupMetadataValue" => {
            coordinator_records::ConsumerGroupMetadataValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupPartitionMetadataKey" => {
            coordinator_records::ConsumerGroupPartitionMetadataKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupPartitionMetadataValue" => {
            coordinator_records::ConsumerGroupPartitionMetadataValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupMemberMetadataKey" => {
            coordinator_records::ConsumerGroupMemberMetadataKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupMemberMetadataValue" => {
            coordinator_records::ConsumerGroupMemberMetadataValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupTargetAssignmentMetadataKey" => {
            coordinator_records::ConsumerGroupTargetAssignmentMetadataKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupTargetAssignmentMetadataValue" => {
            coordinator_records::ConsumerGroupTargetAssignmentMetadataValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupTargetAssignmentMemberKey" => {
            coordinator_records::ConsumerGroupTargetAssignmentMemberKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupTargetAssignmentMemberValue" => {
            coordinator_records::ConsumerGroupTargetAssignmentMemberValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupCurrentMemberAssignmentKey" => {
            coordinator_records::ConsumerGroupCurrentMemberAssignmentKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupCurrentMemberAssignmentValue" => {
            coordinator_records::ConsumerGroupCurrentMemberAssignmentValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupRegularExpressionKey" => {
            coordinator_records::ConsumerGroupRegularExpressionKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ConsumerGroupRegularExpressionValue" => {
            coordinator_records::ConsumerGroupRegularExpressionValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupMemberMetadataKey" => {
            coordinator_records::ShareGroupMemberMetadataKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupMemberMetadataValue" => {
            coordinator_records::ShareGroupMemberMetadataValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupMetadataKey" => {
            coordinator_records::ShareGroupMetadataKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupMetadataValue" => {
            coordinator_records::ShareGroupMetadataValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupTargetAssignmentMetadataKey" => {
            coordinator_records::ShareGroupTargetAssignmentMetadataKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupTargetAssignmentMetadataValue" => {
            coordinator_records::ShareGroupTargetAssignmentMetadataValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupTargetAssignmentMemberKey" => {
            coordinator_records::ShareGroupTargetAssignmentMemberKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupTargetAssignmentMemberValue" => {
            coordinator_records::ShareGroupTargetAssignmentMemberValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupCurrentMemberAssignmentKey" => {
            coordinator_records::ShareGroupCurrentMemberAssignmentKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupCurrentMemberAssignmentValue" => {
            coordinator_records::ShareGroupCurrentMemberAssignmentValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupStatePartitionMetadataKey" => {
            coordinator_records::ShareGroupStatePartitionMetadataKey::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareGroupStatePartitionMetadataValue" => {
            coordinator_records::ShareGroupStatePartitionMetadataValue::decode(bytes, version)
                .and_then(|m| m.to_vec(version))
        }
        "ShareSnapshotKey" => coordinator_records::ShareSnapshotKey::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "ShareSnapshotValue" => coordinator_records::ShareSnapshotValue::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "ShareUpdateKey" => coordinator_records::ShareUpdateKey::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "ShareUpdateValue" => coordinator_records::ShareUpdateValue::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "TransactionLogKey" => coordinator_records::TransactionLogKey::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        "TransactionLogValue" => coordinator_records::TransactionLogValue::decode(bytes, version)
            .and_then(|m| m.to_vec(version)),
        _ => return None,
    })
}
