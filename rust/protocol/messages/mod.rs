//! The message definitions: one module per API with its request and response, plus the two
//! headers, each transcribed from Kafka 3.9's JSON message specs
//! (`clients/src/main/resources/common/message/<Name>{Request,Response,Header}.json`).
//!
//! Field names are Kafka's in snake_case; every field states its versions, and where Kafka's
//! spec does, its nullable versions, tag, default and ignorability. These tables are the one
//! declaration of each message: the generic codec reads them at run time, and
//! `rust/protocol/typed/` is generated from them (`make generate`).
//! `scripts/check_protocol_spec.py` compares them with Kafka's JSON specs, read from Kafka's
//! jars (Maven Central) in CI (`tests/protocol/test_spec_check.py`) or from a checkout.

use super::schema::{f, Api, Kind, Message, Versions, INT16, INT32, STRING};

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

pub use super::schema::API_VERSIONS_KEY;

/// REQUEST_HEADER is RequestHeader.json. v0 (no client id) is only used by ControlledShutdown
/// v0, which kgroup does not speak; requests use v1, or v2 in flexible versions. `client_id`
/// stays an INT16-length string even in v2, so that any broker can read the header of a request
/// it does not understand.
pub static REQUEST_HEADER: Message = Message {
    name: "RequestHeader",
    api_key: -1,
    kind: Kind::Header,
    valid: Versions::parse("0-2"),
    flexible: Versions::parse("2+"),
    fields: &[
        f("request_api_key", INT16, "0+"),
        f("request_api_version", INT16, "0+"),
        f("correlation_id", INT32, "0+"),
        f("client_id", STRING, "1+")
            .nullable("1+")
            .flexible("none")
            .ignorable(),
    ],
};

/// RESPONSE_HEADER is ResponseHeader.json: v0 for non-flexible responses (and every ApiVersions
/// response), v1 with a tagged-field section otherwise.
pub static RESPONSE_HEADER: Message = Message {
    name: "ResponseHeader",
    api_key: -1,
    kind: Kind::Header,
    valid: Versions::parse("0-1"),
    flexible: Versions::parse("1+"),
    fields: &[f("correlation_id", INT32, "0+")],
};

macro_rules! apis {
    ($($name:literal => $module:ident),* $(,)?) => {
        /// APIS is every API kgroup speaks, by ascending key.
        pub static APIS: &[Api] = &[
            $(Api { name: $name, key: $module::REQUEST.api_key, request: &$module::REQUEST, response: &$module::RESPONSE },)*
        ];
    };
}

apis! {
    "Produce" => produce,
    "Fetch" => fetch,
    "ListOffsets" => list_offsets,
    "Metadata" => metadata,
    "OffsetCommit" => offset_commit,
    "OffsetFetch" => offset_fetch,
    "FindCoordinator" => find_coordinator,
    "JoinGroup" => join_group,
    "Heartbeat" => heartbeat,
    "LeaveGroup" => leave_group,
    "SyncGroup" => sync_group,
    "DescribeGroups" => describe_groups,
    "ListGroups" => list_groups,
    "SaslHandshake" => sasl_handshake,
    "ApiVersions" => api_versions,
    "CreateTopics" => create_topics,
    "DeleteTopics" => delete_topics,
    "DeleteRecords" => delete_records,
    "InitProducerId" => init_producer_id,
    "OffsetForLeaderEpoch" => offset_for_leader_epoch,
    "AddPartitionsToTxn" => add_partitions_to_txn,
    "AddOffsetsToTxn" => add_offsets_to_txn,
    "EndTxn" => end_txn,
    "WriteTxnMarkers" => write_txn_markers,
    "TxnOffsetCommit" => txn_offset_commit,
    "DescribeAcls" => describe_acls,
    "CreateAcls" => create_acls,
    "DeleteAcls" => delete_acls,
    "DescribeConfigs" => describe_configs,
    "AlterConfigs" => alter_configs,
    "DescribeLogDirs" => describe_log_dirs,
    "SaslAuthenticate" => sasl_authenticate,
    "CreatePartitions" => create_partitions,
    "DeleteGroups" => delete_groups,
    "IncrementalAlterConfigs" => incremental_alter_configs,
    "OffsetDelete" => offset_delete,
    "DescribeClientQuotas" => describe_client_quotas,
    "AlterClientQuotas" => alter_client_quotas,
    "DescribeUserScramCredentials" => describe_user_scram_credentials,
    "AlterUserScramCredentials" => alter_user_scram_credentials,
    "DescribeCluster" => describe_cluster,
    "DescribeProducers" => describe_producers,
    "DescribeTransactions" => describe_transactions,
    "ListTransactions" => list_transactions,
    "ConsumerGroupHeartbeat" => consumer_group_heartbeat,
    "ConsumerGroupDescribe" => consumer_group_describe,
    "ListConfigResources" => list_config_resources,
    "ShareGroupHeartbeat" => share_group_heartbeat,
    "ShareGroupDescribe" => share_group_describe,
    "ShareFetch" => share_fetch,
    "ShareAcknowledge" => share_acknowledge,
    "DescribeShareGroupOffsets" => describe_share_group_offsets,
    "AlterShareGroupOffsets" => alter_share_group_offsets,
    "DeleteShareGroupOffsets" => delete_share_group_offsets,
}

/// api finds an API by key; `None` for a key kgroup does not speak.
#[inline]
pub fn api(key: i16) -> Option<&'static Api> {
    // Keys run 0..=92 with gaps: an index by key, built once, holding each API's place + 1.
    static INDEX: std::sync::OnceLock<[u8; 128]> = std::sync::OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut index = [0u8; 128];
        for (i, a) in APIS.iter().enumerate() {
            index[a.key as usize] = i as u8 + 1;
        }
        index
    });
    let i = *index.get(usize::try_from(key).ok()?)?;
    APIS.get(usize::from(i).checked_sub(1)?)
}

/// api_by_name finds an API by Kafka's name (`"JoinGroup"`).
pub fn api_by_name(name: &str) -> Option<&'static Api> {
    APIS.iter().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_and_consistent() {
        for w in APIS.windows(2) {
            assert!(w[0].key < w[1].key, "{} before {}", w[0].name, w[1].name);
        }
        for a in APIS {
            assert_eq!(a.request.api_key, a.response.api_key, "{}", a.name);
            assert_eq!(a.request.kind, Kind::Request);
            assert_eq!(a.response.kind, Kind::Response);
            assert_eq!(a.request.valid, a.response.valid, "{}", a.name);
            assert_eq!(a.request.name, format!("{}Request", a.name));
            assert_eq!(a.response.name, format!("{}Response", a.name));
        }
        assert_eq!(APIS.len(), 54);
        assert!(APIS.iter().all(|a| (0..128).contains(&a.key)));
        for a in APIS {
            assert_eq!(api(a.key).map(|x| x.key), Some(a.key));
        }
        assert!(api(-1).is_none() && api(4).is_none() && api(200).is_none());
    }
}
