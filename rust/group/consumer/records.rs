//! The records of a consumer group in `__consumer_offsets` (record types 3 to 8 and 16): Kafka's
//! own key and value schemas (`rust/protocol/messages/coordinator_records.rs`), read and written
//! through their generated typed structs, so that Kafka's tools read what kgroup writes and
//! kgroup reads what Kafka 4.x wrote.
//!
//! A key is the INT16 record type followed by the key struct (non-flexible); a value is INT16
//! version 0 followed by the value struct (flexible), and a tombstone has no value. Values of a
//! later version are read as version 0 (KIP-915: later versions only add tagged fields).
//!
//! [`ConsumerGroupRecord`] is one such record decoded; [`ConsumerGroupRecord::key`] and
//! [`ConsumerGroupRecord::value`] write it back. Type 4 (the subscribed topics' metadata) is
//! Kafka 4.0's: 4.1 replaced it with the metadata hash of type 3 and only writes its tombstone,
//! as kgroup does; a type 4 value is read and its content dropped.

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::member::{ClassicMemberMetadata, ClassicProtocol, ConsumerMember, MemberState};
use crate::errors::Result;
use crate::group::assignors::{Assignment, TopicId};
use crate::group::records::{unversioned, versioned};
use crate::protocol::typed::coordinator_records as typed;

/// METADATA is record type 3: the group epoch.
pub const METADATA: i16 = 3;
/// PARTITION_METADATA is record type 4: the subscribed topics' metadata (Kafka 4.0).
pub const PARTITION_METADATA: i16 = 4;
/// MEMBER_METADATA is record type 5: a member's subscription and identity.
pub const MEMBER_METADATA: i16 = 5;
/// TARGET_ASSIGNMENT_METADATA is record type 6: the epoch of the target assignment.
pub const TARGET_ASSIGNMENT_METADATA: i16 = 6;
/// TARGET_ASSIGNMENT_MEMBER is record type 7: a member's target assignment.
pub const TARGET_ASSIGNMENT_MEMBER: i16 = 7;
/// CURRENT_MEMBER_ASSIGNMENT is record type 8: where a member's reconciliation stands.
pub const CURRENT_MEMBER_ASSIGNMENT: i16 = 8;
/// REGULAR_EXPRESSION is record type 16: a resolved regex subscription (Kafka 4.0).
pub const REGULAR_EXPRESSION: i16 = 16;

/// is_consumer_group_record tells whether a record type is a consumer group's.
pub fn is_consumer_group_record(record_type: i16) -> bool {
    matches!(record_type, 3..=8 | 16)
}

/// MemberMetadata is a member as record type 5 holds it: what it said of itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberMetadata {
    pub instance_id: Option<String>,
    pub rack_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    /// subscribed_topic_names, sorted (Kafka writes them sorted).
    pub subscribed_topic_names: Vec<String>,
    /// subscribed_topic_regex: None or "" for no regex (Kafka writes null for none).
    pub subscribed_topic_regex: Option<String>,
    pub rebalance_timeout_ms: i32,
    pub server_assignor: Option<String>,
    /// classic_member_metadata is set for a classic-protocol member inside a consumer group.
    pub classic_member_metadata: Option<ClassicMemberMetadata>,
}

impl MemberMetadata {
    /// of is what record type 5 holds of `m`.
    pub fn of(m: &ConsumerMember) -> Self {
        MemberMetadata {
            instance_id: m.instance_id.clone(),
            rack_id: m.rack_id.clone(),
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            subscribed_topic_names: m.subscribed_topic_names.iter().cloned().collect(),
            subscribed_topic_regex: (!m.subscribed_topic_regex.is_empty())
                .then(|| m.subscribed_topic_regex.clone()),
            rebalance_timeout_ms: m.rebalance_timeout_ms,
            server_assignor: m.server_assignor.clone(),
            classic_member_metadata: m.classic_member_metadata.clone(),
        }
    }

    /// apply sets these fields on `m`, as replay does (the rest of `m` is left as it was).
    pub fn apply(&self, m: &mut ConsumerMember) {
        m.instance_id = self.instance_id.clone();
        m.rack_id = self.rack_id.clone();
        m.client_id = self.client_id.clone();
        m.client_host = self.client_host.clone();
        m.subscribed_topic_names = self.subscribed_topic_names.iter().cloned().collect();
        m.subscribed_topic_regex = self.subscribed_topic_regex.clone().unwrap_or_default();
        m.rebalance_timeout_ms = self.rebalance_timeout_ms;
        m.server_assignor = self.server_assignor.clone();
        m.classic_member_metadata = self.classic_member_metadata.clone();
    }
}

/// CurrentAssignment is a member's reconciliation as record type 8 holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentAssignment {
    pub member_epoch: i32,
    pub previous_member_epoch: i32,
    pub state: MemberState,
    pub assigned_partitions: Assignment,
    pub partitions_pending_revocation: Assignment,
    /// assignment_epochs are [`ConsumerMember::assignment_epochs`]: every partition of both
    /// lists has one (KIP-1251; a record of Kafka before 4.3 has none, and its partitions are
    /// read at the member epoch, as Kafka reads them).
    pub assignment_epochs: BTreeMap<(TopicId, i32), i32>,
}

impl CurrentAssignment {
    /// of is what record type 8 holds of `m`.
    pub fn of(m: &ConsumerMember) -> Self {
        CurrentAssignment {
            member_epoch: m.member_epoch,
            previous_member_epoch: m.previous_member_epoch,
            state: m.state,
            assigned_partitions: m.assigned_partitions.clone(),
            partitions_pending_revocation: m.partitions_pending_revocation.clone(),
            assignment_epochs: m.assignment_epochs.clone(),
        }
    }

    /// apply sets these fields on `m`, as replay does.
    pub fn apply(&self, m: &mut ConsumerMember) {
        m.member_epoch = self.member_epoch;
        m.previous_member_epoch = self.previous_member_epoch;
        m.state = self.state;
        m.assigned_partitions = self.assigned_partitions.clone();
        m.partitions_pending_revocation = self.partitions_pending_revocation.clone();
        m.assignment_epochs = self.assignment_epochs.clone();
    }
}

/// epochs_of is the `AssignmentEpochs` list of `partitions` of `topic`, in their order.
fn epochs_of(
    epochs: &BTreeMap<(TopicId, i32), i32>,
    topic: TopicId,
    partitions: &[i32],
) -> Vec<i32> {
    partitions
        .iter()
        .map(|p| epochs.get(&(topic, *p)).copied().unwrap_or_default())
        .collect()
}

/// read_epochs adds the assignment epochs of one record topic to `epochs`: its own when it has
/// one per partition, else `default` for each (Kafka's assignmentFromTopicPartitions: the
/// member epoch, never below 0).
fn read_epochs(
    epochs: &mut BTreeMap<(TopicId, i32), i32>,
    topic: TopicId,
    partitions: &[i32],
    own: Option<&[i32]>,
    default: i32,
) {
    match own {
        Some(own) if own.len() == partitions.len() => {
            for (p, e) in partitions.iter().zip(own) {
                epochs.insert((topic, *p), *e);
            }
        }
        _ => {
            for p in partitions {
                epochs.insert((topic, *p), default.max(0));
            }
        }
    }
}

/// ResolvedRegex is record type 16's value: the topics a regex matched, the metadata version
/// (Kafka's metadata image offset) and the time of that resolution.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedRegex {
    pub topics: Vec<String>,
    pub version: i64,
    pub timestamp: i64,
}

/// ConsumerGroupRecord is one consumer group record of `__consumer_offsets`: its key's identity
/// and its value, `None` for a tombstone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsumerGroupRecord {
    /// Type 3: the group epoch and the hash of the subscribed topics' metadata (4.1+, 0 when
    /// not computed).
    Metadata {
        group: String,
        value: Option<(i32, i64)>,
    },
    /// Type 4 (4.0): written as a tombstone only; a value read is dropped (`true` if present).
    PartitionMetadata { group: String, present: bool },
    /// Type 5.
    MemberMetadata {
        group: String,
        member: String,
        value: Option<MemberMetadata>,
    },
    /// Type 6: the assignment epoch and the time its target was computed (KIP-1263's
    /// tagged `assignment_timestamp`, 0 when unknown).
    TargetAssignmentMetadata {
        group: String,
        value: Option<(i32, i64)>,
    },
    /// Type 7.
    TargetAssignmentMember {
        group: String,
        member: String,
        value: Option<Assignment>,
    },
    /// Type 8.
    CurrentMemberAssignment {
        group: String,
        member: String,
        value: Option<CurrentAssignment>,
    },
    /// Type 16.
    RegularExpression {
        group: String,
        regex: String,
        value: Option<ResolvedRegex>,
    },
}

fn topic_partitions<T>(a: &Assignment, make: impl Fn(TopicId, Vec<i32>) -> T) -> Vec<T> {
    a.iter().map(|(t, p)| make(*t, p.to_vec())).collect()
}

fn assignment(items: impl Iterator<Item = (TopicId, Vec<i32>)>) -> Assignment {
    let mut map: BTreeMap<TopicId, Vec<i32>> = BTreeMap::new();
    for (t, p) in items {
        map.entry(t).or_default().extend(p);
    }
    Assignment::from_map(map)
}

fn owned(s: &str) -> String {
    s.to_string()
}

impl ConsumerGroupRecord {
    /// group is the group the record belongs to.
    pub fn group(&self) -> &str {
        match self {
            ConsumerGroupRecord::Metadata { group, .. }
            | ConsumerGroupRecord::PartitionMetadata { group, .. }
            | ConsumerGroupRecord::MemberMetadata { group, .. }
            | ConsumerGroupRecord::TargetAssignmentMetadata { group, .. }
            | ConsumerGroupRecord::TargetAssignmentMember { group, .. }
            | ConsumerGroupRecord::CurrentMemberAssignment { group, .. }
            | ConsumerGroupRecord::RegularExpression { group, .. } => group,
        }
    }

    /// record_type is the key's record type.
    pub fn record_type(&self) -> i16 {
        match self {
            ConsumerGroupRecord::Metadata { .. } => METADATA,
            ConsumerGroupRecord::PartitionMetadata { .. } => PARTITION_METADATA,
            ConsumerGroupRecord::MemberMetadata { .. } => MEMBER_METADATA,
            ConsumerGroupRecord::TargetAssignmentMetadata { .. } => TARGET_ASSIGNMENT_METADATA,
            ConsumerGroupRecord::TargetAssignmentMember { .. } => TARGET_ASSIGNMENT_MEMBER,
            ConsumerGroupRecord::CurrentMemberAssignment { .. } => CURRENT_MEMBER_ASSIGNMENT,
            ConsumerGroupRecord::RegularExpression { .. } => REGULAR_EXPRESSION,
        }
    }

    /// is_tombstone tells whether the record deletes its key.
    pub fn is_tombstone(&self) -> bool {
        match self {
            ConsumerGroupRecord::Metadata { value, .. } => value.is_none(),
            ConsumerGroupRecord::PartitionMetadata { present, .. } => !present,
            ConsumerGroupRecord::MemberMetadata { value, .. } => value.is_none(),
            ConsumerGroupRecord::TargetAssignmentMetadata { value, .. } => value.is_none(),
            ConsumerGroupRecord::TargetAssignmentMember { value, .. } => value.is_none(),
            ConsumerGroupRecord::CurrentMemberAssignment { value, .. } => value.is_none(),
            ConsumerGroupRecord::RegularExpression { value, .. } => value.is_none(),
        }
    }

    /// key is the record's key: its type, then the key struct.
    pub fn key(&self) -> Result<Vec<u8>> {
        let t = self.record_type();
        let g = Cow::Borrowed(self.group());
        match self {
            ConsumerGroupRecord::Metadata { .. } => versioned(t, |w| {
                typed::ConsumerGroupMetadataKey { group_id: g }.write(w, t)
            }),
            ConsumerGroupRecord::PartitionMetadata { .. } => versioned(t, |w| {
                typed::ConsumerGroupPartitionMetadataKey { group_id: g }.write(w, t)
            }),
            ConsumerGroupRecord::MemberMetadata { member, .. } => versioned(t, |w| {
                typed::ConsumerGroupMemberMetadataKey {
                    group_id: g,
                    member_id: Cow::Borrowed(member),
                }
                .write(w, t)
            }),
            ConsumerGroupRecord::TargetAssignmentMetadata { .. } => versioned(t, |w| {
                typed::ConsumerGroupTargetAssignmentMetadataKey { group_id: g }.write(w, t)
            }),
            ConsumerGroupRecord::TargetAssignmentMember { member, .. } => versioned(t, |w| {
                typed::ConsumerGroupTargetAssignmentMemberKey {
                    group_id: g,
                    member_id: Cow::Borrowed(member),
                }
                .write(w, t)
            }),
            ConsumerGroupRecord::CurrentMemberAssignment { member, .. } => versioned(t, |w| {
                typed::ConsumerGroupCurrentMemberAssignmentKey {
                    group_id: g,
                    member_id: Cow::Borrowed(member),
                }
                .write(w, t)
            }),
            ConsumerGroupRecord::RegularExpression { regex, .. } => versioned(t, |w| {
                typed::ConsumerGroupRegularExpressionKey {
                    group_id: g,
                    regular_expression: Cow::Borrowed(regex),
                }
                .write(w, t)
            }),
        }
    }

    /// value is the record's value (version 0), `None` for a tombstone.
    pub fn value(&self) -> Result<Option<Vec<u8>>> {
        let v = 0;
        let bytes = match self {
            ConsumerGroupRecord::Metadata { value: None, .. }
            | ConsumerGroupRecord::PartitionMetadata { present: false, .. }
            | ConsumerGroupRecord::MemberMetadata { value: None, .. }
            | ConsumerGroupRecord::TargetAssignmentMetadata { value: None, .. }
            | ConsumerGroupRecord::TargetAssignmentMember { value: None, .. }
            | ConsumerGroupRecord::CurrentMemberAssignment { value: None, .. }
            | ConsumerGroupRecord::RegularExpression { value: None, .. } => return Ok(None),
            ConsumerGroupRecord::Metadata {
                value: Some((epoch, hash)),
                ..
            } => versioned(v, |w| {
                typed::ConsumerGroupMetadataValue {
                    epoch: *epoch,
                    metadata_hash: *hash,
                    ..Default::default()
                }
                .write(w, v)
            }),
            ConsumerGroupRecord::PartitionMetadata { .. } => versioned(v, |w| {
                typed::ConsumerGroupPartitionMetadataValue::default().write(w, v)
            }),
            ConsumerGroupRecord::MemberMetadata { value: Some(m), .. } => versioned(v, |w| {
                fn s(x: &str) -> Cow<'_, str> {
                    Cow::Borrowed(x)
                }
                typed::ConsumerGroupMemberMetadataValue {
                    instance_id: m.instance_id.as_deref().map(s),
                    rack_id: m.rack_id.as_deref().map(s),
                    client_id: s(&m.client_id),
                    client_host: s(&m.client_host),
                    subscribed_topic_names: m.subscribed_topic_names.iter().map(|x| s(x)).collect(),
                    subscribed_topic_regex: m.subscribed_topic_regex.as_deref().map(s),
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    server_assignor: m.server_assignor.as_deref().map(s),
                    classic_member_metadata: m.classic_member_metadata.as_ref().map(|c| {
                        typed::ConsumerGroupMemberMetadataValueClassicMemberMetadata {
                            session_timeout_ms: c.session_timeout_ms,
                            supported_protocols: c
                                .supported_protocols
                                .iter()
                                .map(
                                    |p| typed::ConsumerGroupMemberMetadataValueSupportedProtocol {
                                        name: s(&p.name),
                                        metadata: Cow::Borrowed(&p.metadata),
                                        ..Default::default()
                                    },
                                )
                                .collect(),
                            ..Default::default()
                        }
                    }),
                    ..Default::default()
                }
                .write(w, v)
            }),
            ConsumerGroupRecord::TargetAssignmentMetadata {
                value: Some((epoch, timestamp)),
                ..
            } => versioned(v, |w| {
                typed::ConsumerGroupTargetAssignmentMetadataValue {
                    assignment_epoch: *epoch,
                    assignment_timestamp: *timestamp,
                    ..Default::default()
                }
                .write(w, v)
            }),
            ConsumerGroupRecord::TargetAssignmentMember { value: Some(a), .. } => {
                versioned(v, |w| {
                    typed::ConsumerGroupTargetAssignmentMemberValue {
                        topic_partitions: topic_partitions(a, |topic_id, partitions| {
                            typed::ConsumerGroupTargetAssignmentMemberValueTopicPartition {
                                topic_id,
                                partitions,
                                ..Default::default()
                            }
                        }),
                        ..Default::default()
                    }
                    .write(w, v)
                })
            }
            ConsumerGroupRecord::CurrentMemberAssignment { value: Some(c), .. } => {
                versioned(v, |w| {
                    let tp = |topic_id, partitions: Vec<i32>| {
                        typed::ConsumerGroupCurrentMemberAssignmentValueAssignedPartition {
                            topic_id,
                            assignment_epochs: Some(epochs_of(
                                &c.assignment_epochs,
                                topic_id,
                                &partitions,
                            )),
                            partitions,
                            ..Default::default()
                        }
                    };
                    typed::ConsumerGroupCurrentMemberAssignmentValue {
                        member_epoch: c.member_epoch,
                        previous_member_epoch: c.previous_member_epoch,
                        state: c.state.as_i8(),
                        assigned_partitions: topic_partitions(&c.assigned_partitions, tp),
                        partitions_pending_revocation: topic_partitions(
                            &c.partitions_pending_revocation,
                            tp,
                        ),
                        ..Default::default()
                    }
                    .write(w, v)
                })
            }
            ConsumerGroupRecord::RegularExpression { value: Some(r), .. } => versioned(v, |w| {
                typed::ConsumerGroupRegularExpressionValue {
                    topics: r.topics.iter().map(|t| Cow::Borrowed(t.as_str())).collect(),
                    version: r.version,
                    timestamp: r.timestamp,
                    ..Default::default()
                }
                .write(w, v)
            }),
        };
        bytes.map(Some)
    }

    /// read decodes a record of `__consumer_offsets`: `None` when its type is not a consumer
    /// group's. A key or value that does not decode is [`Error::Malformed`]; a value of a
    /// negative version too.
    pub fn read(key: &[u8], value: Option<&[u8]>) -> Result<Option<ConsumerGroupRecord>> {
        let Some((t, key, value)) = unversioned(key, value, is_consumer_group_record)? else {
            return Ok(None);
        };
        // Every value schema has version 0 only; later versions add tagged fields alone.
        let v = 0;
        Ok(Some(match t {
            METADATA => {
                let k = typed::ConsumerGroupMetadataKey::decode(key, t)?;
                let value = value
                    .map(|b| typed::ConsumerGroupMetadataValue::decode(b, v))
                    .transpose()?
                    .map(|x| (x.epoch, x.metadata_hash));
                ConsumerGroupRecord::Metadata {
                    group: owned(&k.group_id),
                    value,
                }
            }
            PARTITION_METADATA => {
                let k = typed::ConsumerGroupPartitionMetadataKey::decode(key, t)?;
                if let Some(b) = value {
                    typed::ConsumerGroupPartitionMetadataValue::decode(b, v)?;
                }
                ConsumerGroupRecord::PartitionMetadata {
                    group: owned(&k.group_id),
                    present: value.is_some(),
                }
            }
            MEMBER_METADATA => {
                let k = typed::ConsumerGroupMemberMetadataKey::decode(key, t)?;
                let value = value
                    .map(|b| typed::ConsumerGroupMemberMetadataValue::decode(b, v))
                    .transpose()?
                    .map(|m| {
                        let s = |x: &Cow<'_, str>| x.to_string();
                        let mut names: Vec<String> =
                            m.subscribed_topic_names.iter().map(s).collect();
                        names.sort();
                        MemberMetadata {
                            instance_id: m.instance_id.as_ref().map(s),
                            rack_id: m.rack_id.as_ref().map(s),
                            client_id: s(&m.client_id),
                            client_host: s(&m.client_host),
                            subscribed_topic_names: names,
                            subscribed_topic_regex: m.subscribed_topic_regex.as_ref().map(s),
                            rebalance_timeout_ms: m.rebalance_timeout_ms,
                            server_assignor: m.server_assignor.as_ref().map(s),
                            classic_member_metadata: m.classic_member_metadata.as_ref().map(|c| {
                                ClassicMemberMetadata {
                                    session_timeout_ms: c.session_timeout_ms,
                                    supported_protocols: c
                                        .supported_protocols
                                        .iter()
                                        .map(|p| ClassicProtocol {
                                            name: s(&p.name),
                                            metadata: p.metadata.to_vec(),
                                        })
                                        .collect(),
                                }
                            }),
                        }
                    });
                ConsumerGroupRecord::MemberMetadata {
                    group: owned(&k.group_id),
                    member: owned(&k.member_id),
                    value,
                }
            }
            TARGET_ASSIGNMENT_METADATA => {
                let k = typed::ConsumerGroupTargetAssignmentMetadataKey::decode(key, t)?;
                let value = value
                    .map(|b| typed::ConsumerGroupTargetAssignmentMetadataValue::decode(b, v))
                    .transpose()?
                    .map(|x| (x.assignment_epoch, x.assignment_timestamp));
                ConsumerGroupRecord::TargetAssignmentMetadata {
                    group: owned(&k.group_id),
                    value,
                }
            }
            TARGET_ASSIGNMENT_MEMBER => {
                let k = typed::ConsumerGroupTargetAssignmentMemberKey::decode(key, t)?;
                let value = value
                    .map(|b| typed::ConsumerGroupTargetAssignmentMemberValue::decode(b, v))
                    .transpose()?
                    .map(|x| {
                        assignment(
                            x.topic_partitions
                                .into_iter()
                                .map(|tp| (tp.topic_id, tp.partitions)),
                        )
                    });
                ConsumerGroupRecord::TargetAssignmentMember {
                    group: owned(&k.group_id),
                    member: owned(&k.member_id),
                    value,
                }
            }
            CURRENT_MEMBER_ASSIGNMENT => {
                let k = typed::ConsumerGroupCurrentMemberAssignmentKey::decode(key, t)?;
                let value = value
                    .map(|b| typed::ConsumerGroupCurrentMemberAssignmentValue::decode(b, v))
                    .transpose()?
                    .map(|x| {
                        let mut assignment_epochs = BTreeMap::new();
                        for tp in x
                            .assigned_partitions
                            .iter()
                            .chain(&x.partitions_pending_revocation)
                        {
                            read_epochs(
                                &mut assignment_epochs,
                                tp.topic_id,
                                &tp.partitions,
                                tp.assignment_epochs.as_deref(),
                                x.member_epoch,
                            );
                        }
                        CurrentAssignment {
                            member_epoch: x.member_epoch,
                            previous_member_epoch: x.previous_member_epoch,
                            state: MemberState::from_i8(x.state),
                            assigned_partitions: assignment(
                                x.assigned_partitions
                                    .into_iter()
                                    .map(|tp| (tp.topic_id, tp.partitions)),
                            ),
                            partitions_pending_revocation: assignment(
                                x.partitions_pending_revocation
                                    .into_iter()
                                    .map(|tp| (tp.topic_id, tp.partitions)),
                            ),
                            assignment_epochs,
                        }
                    });
                ConsumerGroupRecord::CurrentMemberAssignment {
                    group: owned(&k.group_id),
                    member: owned(&k.member_id),
                    value,
                }
            }
            _ => {
                let k = typed::ConsumerGroupRegularExpressionKey::decode(key, t)?;
                let value = value
                    .map(|b| typed::ConsumerGroupRegularExpressionValue::decode(b, v))
                    .transpose()?
                    .map(|x| ResolvedRegex {
                        topics: x.topics.iter().map(|t| t.to_string()).collect(),
                        version: x.version,
                        timestamp: x.timestamp,
                    });
                ConsumerGroupRecord::RegularExpression {
                    group: owned(&k.group_id),
                    regex: owned(&k.regular_expression),
                    value,
                }
            }
        }))
    }
}

#[cfg(test)]
mod tests;
