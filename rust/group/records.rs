//! The records of `__consumer_offsets`: Kafka's own key and value schemas, so that Kafka's tools
//! (`kafka-console-consumer --formatter ...OffsetsMessageFormatter`, `kafka-dump-log
//! --offsets-decoder`) read what kgroup writes, and kgroup reads what Kafka wrote.
//!
//! Every record is a plain record of a compacted topic: the key is an INT16 version followed by
//! the key struct, the value an INT16 version followed by the value struct, and a tombstone
//! (a deleted offset or group) has a null value. The key's version doubles as the record type:
//! 0 and 1 are offset commits ([`OFFSET_COMMIT_KEY`]), 2 is group metadata
//! ([`GROUP_METADATA_KEY`]); 3 and up are KIP-848 and share-group records, which a reader skips.
//!
//! The four schemas are declared like the protocol messages
//! (`rust/protocol/messages/coordinator_records.rs`, from Kafka's
//! `group-coordinator/src/main/resources/common/message/` JSON) and read and written by their
//! generated typed structs (`protocol::typed::coordinator_records`). Versions written are Kafka's choices: OffsetCommitKey v1, OffsetCommitValue v3
//! (v1 when the offset carries an explicit expire timestamp, which only v1 can hold),
//! GroupMetadataKey v2 and GroupMetadataValue v3: the highest non-flexible versions. Values of a
//! version above the highest known (KIP-915: later versions only add tagged fields) are read as
//! the highest known one.

use std::borrow::Cow;
use std::sync::Arc;

use crate::errors::{Error, Result};
use crate::protocol::primitives::{Reader, Writer};
use crate::protocol::schema::Message;
use crate::protocol::typed::coordinator_records as typed;

pub use crate::protocol::messages::coordinator_records::{
    GROUP_METADATA_KEY, GROUP_METADATA_VALUE, OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE,
};

/// OFFSET_COMMIT_KEY_VERSION is the key version Kafka writes (`HIGHEST_SUPPORTED_VERSION`).
pub const OFFSET_COMMIT_KEY_VERSION: i16 = 1;
/// OFFSET_COMMIT_VALUE_VERSION is the value version Kafka writes: the highest non-flexible one.
pub const OFFSET_COMMIT_VALUE_VERSION: i16 = 3;
/// OFFSET_COMMIT_VALUE_EXPIRE_VERSION is the one value version that carries an expire
/// timestamp, written for commits that set one (OffsetCommit v1-4 with a retention time).
pub const OFFSET_COMMIT_VALUE_EXPIRE_VERSION: i16 = 1;
/// GROUP_METADATA_KEY_VERSION is the group metadata record type.
pub const GROUP_METADATA_KEY_VERSION: i16 = 2;
/// GROUP_METADATA_VALUE_VERSION is the value version Kafka writes: the highest non-flexible one.
pub const GROUP_METADATA_VALUE_VERSION: i16 = 3;

/// OffsetAndMetadata is a committed offset as Kafka keeps it (`OffsetAndMetadata`): the leader
/// epoch is -1 when the client sent none; `expire_timestamp` only comes from OffsetCommit v1-4
/// with a retention time (or a v1 record), and then overrides `offsets.retention.minutes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetAndMetadata {
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: Arc<str>,
    pub commit_timestamp: i64,
    pub expire_timestamp: Option<i64>,
}

/// MemberRecord is one member in a [`GroupMetadataValue`]: its subscription is its metadata for
/// the group's protocol, its assignment what the leader gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberRecord {
    pub member_id: Arc<str>,
    pub group_instance_id: Option<Arc<str>>,
    pub client_id: Arc<str>,
    pub client_host: Arc<str>,
    /// rebalance_timeout is -1 in a v0 record (read it as the session timeout, as Kafka does).
    pub rebalance_timeout: i32,
    pub session_timeout: i32,
    pub subscription: Arc<[u8]>,
    pub assignment: Arc<[u8]>,
}

/// GroupMetadataValue is a group's persisted state: generation, protocol, leader and members.
/// `protocol_type` is empty for a group without one; `current_state_timestamp` is -1 when
/// unknown (records before v2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadataValue {
    pub protocol_type: Arc<str>,
    pub generation: i32,
    pub protocol: Option<Arc<str>>,
    pub leader: Option<Arc<str>>,
    pub current_state_timestamp: i64,
    pub members: Vec<MemberRecord>,
}

/// RecordKey is a decoded key of `__consumer_offsets`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordKey {
    /// OffsetCommit: key versions 0 and 1.
    OffsetCommit {
        group: String,
        topic: String,
        partition: i32,
    },
    /// GroupMetadata: key version 2.
    GroupMetadata { group: String },
    /// Unknown: any other record type (KIP-848 consumer groups, share groups, a future one),
    /// which a classic coordinator skips, as Kafka's `readMessageKey` does (`UnknownKey`).
    Unknown { version: i16 },
}

/// partition_for is the partition of `__consumer_offsets` that holds a group (the shared
/// coordinator helper: Java's `String.hashCode`, `Utils.abs`, modulo the partition count).
pub use crate::coordinator::partition::partition_for;

/// versioned writes a record's INT16 version (or record type, for a key), then its body.
pub(in crate::group) fn versioned(
    version: i16,
    write: impl FnOnce(&mut Writer) -> Result<()>,
) -> Result<Vec<u8>> {
    let mut w = Writer::with_capacity(64);
    w.i16(version);
    write(&mut w)?;
    Ok(w.into_inner())
}

/// RecordParts is a record's type, its key's body and its value's body (None: a tombstone).
pub(in crate::group) type RecordParts<'a> = (i16, &'a [u8], Option<&'a [u8]>);

/// unversioned splits a record of `__consumer_offsets` into its type, its key's body and its
/// value's body (version stripped): `None` when `wanted` does not take the type. A key too short
/// for its type, a value too short for its version or of a negative version is
/// [`Error::Malformed`]. The group types' record readers share it.
pub(in crate::group) fn unversioned<'a>(
    key: &'a [u8],
    value: Option<&'a [u8]>,
    wanted: impl Fn(i16) -> bool,
) -> Result<Option<RecordParts<'a>>> {
    let mut r = Reader::new(key);
    let t = r
        .i16()
        .map_err(|_| Error::malformed("record key is too short for its type"))?;
    if !wanted(t) {
        return Ok(None);
    }
    let key = r.rest();
    let value = match value {
        None => None,
        Some(v) => {
            let mut r = Reader::new(v);
            let version = r
                .i16()
                .map_err(|_| Error::malformed("record value is too short for its version"))?;
            if version < 0 {
                return Err(Error::malformed(format!(
                    "record value version {version} is not a known version"
                )));
            }
            Some(r.rest())
        }
    };
    Ok(Some((t, key, value)))
}

/// offset_commit_key is the key of a committed offset: version 1, `(group, topic, partition)`.
pub fn offset_commit_key(group: &str, topic: &str, partition: i32) -> Result<Vec<u8>> {
    let key = typed::OffsetCommitKey {
        group: group.into(),
        topic: topic.into(),
        partition,
    };
    versioned(OFFSET_COMMIT_KEY_VERSION, |w| {
        key.write(w, OFFSET_COMMIT_KEY_VERSION)
    })
}

/// offset_commit_value is the value of a committed offset: version 3, or version 1 when the
/// offset has an expire timestamp (as Kafka's `offsetCommitValue` chooses).
pub fn offset_commit_value(o: &OffsetAndMetadata) -> Result<Vec<u8>> {
    let version = if o.expire_timestamp.is_some() {
        OFFSET_COMMIT_VALUE_EXPIRE_VERSION
    } else {
        OFFSET_COMMIT_VALUE_VERSION
    };
    offset_commit_value_at(o, version)
}

/// offset_commit_value_at writes the value at any version (tests write older and newer ones);
/// fields the version lacks are left at their defaults.
pub fn offset_commit_value_at(o: &OffsetAndMetadata, version: i16) -> Result<Vec<u8>> {
    let mut value = typed::OffsetCommitValue {
        offset: o.offset,
        leader_epoch: o.leader_epoch,
        metadata: Cow::Borrowed(&o.metadata),
        commit_timestamp: o.commit_timestamp,
        expire_timestamp: o.expire_timestamp.unwrap_or(-1),
        ..Default::default()
    };
    value.fit(version);
    versioned(version, |w| value.write(w, version))
}

/// group_metadata_key is the key of a group's metadata: version 2, `(group)`.
pub fn group_metadata_key(group: &str) -> Result<Vec<u8>> {
    let key = typed::GroupMetadataKey {
        group: group.into(),
    };
    versioned(GROUP_METADATA_KEY_VERSION, |w| {
        key.write(w, GROUP_METADATA_KEY_VERSION)
    })
}

/// group_metadata_value is the value of a group's metadata at version 3.
pub fn group_metadata_value(g: &GroupMetadataValue) -> Result<Vec<u8>> {
    group_metadata_value_at(g, GROUP_METADATA_VALUE_VERSION)
}

/// group_metadata_value_at writes the value at any version (tests write older and newer ones);
/// fields the version lacks are left at their defaults.
pub fn group_metadata_value_at(g: &GroupMetadataValue, version: i16) -> Result<Vec<u8>> {
    let mut value = typed::GroupMetadataValue {
        protocol_type: Cow::Borrowed(&g.protocol_type),
        generation: g.generation,
        protocol: g.protocol.as_deref().map(Cow::Borrowed),
        leader: g.leader.as_deref().map(Cow::Borrowed),
        current_state_timestamp: g.current_state_timestamp,
        members: g
            .members
            .iter()
            .map(|m| typed::GroupMetadataValueMember {
                member_id: Cow::Borrowed(&m.member_id),
                group_instance_id: m.group_instance_id.as_deref().map(Cow::Borrowed),
                client_id: Cow::Borrowed(&m.client_id),
                client_host: Cow::Borrowed(&m.client_host),
                rebalance_timeout: m.rebalance_timeout,
                session_timeout: m.session_timeout,
                subscription: Cow::Borrowed(&m.subscription),
                assignment: Cow::Borrowed(&m.assignment),
                ..Default::default()
            })
            .collect(),
        ..Default::default()
    };
    value.fit(version);
    versioned(version, |w| value.write(w, version))
}

fn split_version<'a>(bytes: &'a [u8], what: &str) -> Result<(i16, &'a [u8])> {
    let mut r = Reader::new(bytes);
    let version = r
        .i16()
        .map_err(|_| Error::malformed(format!("{what} is too short for its version")))?;
    Ok((version, r.rest()))
}

/// read_key reads a record key. Offset commit keys (versions 0, 1) and group metadata keys
/// (version 2) are decoded; any other version is [`RecordKey::Unknown`]. A key too short for
/// its version, or that does not decode, is [`Error::Malformed`].
pub fn read_key(key: &[u8]) -> Result<RecordKey> {
    let (version, rest) = split_version(key, "record key")?;
    match version {
        0 | 1 => {
            let k = typed::OffsetCommitKey::decode(rest, version)?;
            Ok(RecordKey::OffsetCommit {
                group: k.group.into_owned(),
                topic: k.topic.into_owned(),
                partition: k.partition,
            })
        }
        2 => {
            let k = typed::GroupMetadataKey::decode(rest, version)?;
            Ok(RecordKey::GroupMetadata {
                group: k.group.into_owned(),
            })
        }
        v => Ok(RecordKey::Unknown { version: v }),
    }
}

/// readable is the version a value of `version` is read at: itself, or the highest known one for
/// a later version (KIP-915: later versions only add tagged fields). Negative versions are
/// malformed.
fn readable(msg: &Message, version: i16) -> Result<i16> {
    if version < msg.valid.lo {
        return Err(Error::malformed(format!(
            "{} version {version} is not a known version",
            msg.name
        )));
    }
    Ok(version.min(msg.valid.hi))
}

/// read_offset_commit_value reads the value of an offset commit record (not a tombstone).
pub fn read_offset_commit_value(value: &[u8]) -> Result<OffsetAndMetadata> {
    let (version, rest) = split_version(value, "offset commit value")?;
    let version = readable(&OFFSET_COMMIT_VALUE, version)?;
    let v = typed::OffsetCommitValue::decode(rest, version)?;
    Ok(OffsetAndMetadata {
        offset: v.offset,
        leader_epoch: v.leader_epoch,
        metadata: Arc::from(&*v.metadata),
        commit_timestamp: v.commit_timestamp,
        expire_timestamp: (v.expire_timestamp != -1).then_some(v.expire_timestamp),
    })
}

/// read_group_metadata_value reads the value of a group metadata record (not a tombstone). A v0
/// record's members have no rebalance timeout (-1).
pub fn read_group_metadata_value(value: &[u8]) -> Result<GroupMetadataValue> {
    let (version, rest) = split_version(value, "group metadata value")?;
    let version = readable(&GROUP_METADATA_VALUE, version)?;
    let v = typed::GroupMetadataValue::decode(rest, version)?;
    let text = |s: &str| Arc::<str>::from(s);
    Ok(GroupMetadataValue {
        protocol_type: text(&v.protocol_type),
        generation: v.generation,
        protocol: v.protocol.as_deref().map(text),
        leader: v.leader.as_deref().map(text),
        current_state_timestamp: v.current_state_timestamp,
        members: v
            .members
            .iter()
            .map(|m| MemberRecord {
                member_id: text(&m.member_id),
                group_instance_id: m.group_instance_id.as_deref().map(text),
                client_id: text(&m.client_id),
                client_host: text(&m.client_host),
                rebalance_timeout: m.rebalance_timeout,
                session_timeout: m.session_timeout,
                subscription: Arc::from(&*m.subscription),
                assignment: Arc::from(&*m.assignment),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignors::java::java_string_hash;

    fn offset(expire: Option<i64>) -> OffsetAndMetadata {
        OffsetAndMetadata {
            offset: 23,
            leader_epoch: 7,
            metadata: Arc::from("meta"),
            commit_timestamp: 1_000,
            expire_timestamp: expire,
        }
    }

    fn group() -> GroupMetadataValue {
        GroupMetadataValue {
            protocol_type: Arc::from("consumer"),
            generation: 935,
            protocol: Some(Arc::from("range")),
            leader: Some(Arc::from("98098230493")),
            current_state_timestamp: 1_234,
            members: vec![MemberRecord {
                member_id: Arc::from("98098230493"),
                group_instance_id: Some(Arc::from("instance")),
                client_id: Arc::from("client"),
                client_host: Arc::from("/127.0.0.1"),
                rebalance_timeout: 300_000,
                session_timeout: 10_000,
                subscription: Arc::from(&b"sub"[..]),
                assignment: Arc::from(&b"assign"[..]),
            }],
        }
    }

    /// Vectors from the reference (§2), computed with Kafka's formula: Java's String.hashCode,
    /// Utils.abs, 50 partitions.
    #[test]
    fn partition_for_matches_kafkas_vectors() {
        for (group, hash, partition) in [
            ("my-group", -1906497762, 12),
            ("test-group", 627841412, 12),
            ("g1", 3242, 42),
            ("console-consumer-12345", 158455506, 6),
            ("", 0, 0),
            ("groupé", -1237460406, 6),
        ] {
            assert_eq!(java_string_hash(group), hash, "{group}");
            assert_eq!(partition_for(group, 50), partition, "{group}");
        }
        // Utils.abs(Integer.MIN_VALUE) is 0, where Math.abs would stay negative.
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        assert_eq!(partition_for("polygenelubricants", 50), 0);
        assert_eq!(partition_for("anything", 1), 0);
    }

    /// Kafka's testSerializeOffsetCommitValueToHighestNonFlexibleVersion and the v1 choice for an
    /// explicit expire timestamp.
    #[test]
    fn offset_commit_value_is_written_at_kafkas_versions() {
        let v = offset_commit_value(&offset(None)).unwrap();
        assert_eq!(&v[..2], &[0, 3]);
        assert_eq!(read_offset_commit_value(&v).unwrap(), offset(None));
        let v = offset_commit_value(&offset(Some(99))).unwrap();
        assert_eq!(&v[..2], &[0, 1]);
        let back = read_offset_commit_value(&v).unwrap();
        // v1 has no leader epoch.
        assert_eq!(back.expire_timestamp, Some(99));
        assert_eq!(back.leader_epoch, -1);
        let k = offset_commit_key("g", "t", 3).unwrap();
        assert_eq!(&k[..2], &[0, 1]);
        assert_eq!(
            read_key(&k).unwrap(),
            RecordKey::OffsetCommit {
                group: "g".into(),
                topic: "t".into(),
                partition: 3
            }
        );
    }

    /// The exact bytes of a v3 offset commit value, as Java's generated
    /// `OffsetCommitValue.write` lays them out.
    #[test]
    fn offset_commit_value_v3_bytes() {
        let v = offset_commit_value(&OffsetAndMetadata {
            offset: 1,
            leader_epoch: -1,
            metadata: Arc::from("m"),
            commit_timestamp: 2,
            expire_timestamp: None,
        })
        .unwrap();
        let want: Vec<u8> = [
            &[0u8, 3][..],
            &1i64.to_be_bytes(),
            &(-1i32).to_be_bytes(),
            &[0, 1, b'm'],
            &2i64.to_be_bytes(),
        ]
        .concat();
        assert_eq!(v, want);
        let k = group_metadata_key("g").unwrap();
        assert_eq!(k, vec![0, 2, 0, 1, b'g']);
    }

    /// Kafka's testSerializeGroupMetadataValueToHighestNonFlexibleVersion, and a round trip of
    /// every field.
    #[test]
    fn group_metadata_value_is_written_at_v3() {
        let v = group_metadata_value(&group()).unwrap();
        assert_eq!(&v[..2], &[0, 3]);
        assert_eq!(read_group_metadata_value(&v).unwrap(), group());
        let k = group_metadata_key("grp").unwrap();
        assert_eq!(
            read_key(&k).unwrap(),
            RecordKey::GroupMetadata {
                group: "grp".into()
            }
        );
    }

    /// Kafka's testCurrentStateTimestampForAllGroupMetadataVersions and
    /// testReadFromOldGroupMetadata: v0 and v1 carry no timestamp, v0 no rebalance timeout,
    /// before v3 no instance id.
    #[test]
    fn older_group_metadata_versions_read() {
        for version in 0..=4 {
            let v = group_metadata_value_at(&group(), version).unwrap();
            let back = read_group_metadata_value(&v).unwrap();
            assert_eq!(back.generation, 935);
            assert_eq!(back.protocol.as_deref(), Some("range"));
            let ts = if version >= 2 { 1_234 } else { -1 };
            assert_eq!(back.current_state_timestamp, ts, "v{version}");
            let m = &back.members[0];
            assert_eq!(m.rebalance_timeout, if version >= 1 { 300_000 } else { -1 });
            assert_eq!(
                m.group_instance_id.as_deref(),
                (version >= 3).then_some("instance")
            );
        }
    }

    /// Kafka's testDeserializeFutureOffsetCommitValue: a v4 value with tagged fields the schema
    /// does not know reads, and so does a version above the highest known (read as v4).
    #[test]
    fn future_values_read_as_the_highest_known() {
        let mut w = Writer::new();
        w.i16(4);
        w.i64(1000);
        w.i32(100);
        w.compact_string("metadata");
        w.i64(2000);
        w.tagged_fields(&[(0, &[4, b'f', b'o', b'o'][..]), (1, &4000i32.to_be_bytes())]);
        let v4 = w.into_inner();
        let o = read_offset_commit_value(&v4).unwrap();
        assert_eq!(
            (o.offset, o.leader_epoch, &*o.metadata, o.commit_timestamp),
            (1000, 100, "metadata", 2000)
        );
        let mut v9 = v4.clone();
        v9[1] = 9;
        assert_eq!(read_offset_commit_value(&v9).unwrap(), o);
        let mut g = group_metadata_value_at(&group(), 4).unwrap();
        g[1] = 7;
        assert_eq!(read_group_metadata_value(&g).unwrap(), group());
        assert!(read_offset_commit_value(&[0xff, 0xff]).is_err());
        assert!(read_offset_commit_value(&[0]).is_err());
    }

    /// Kafka's testReadMessageKeyCanReadUnknownMessage: an unknown record type is not an error.
    #[test]
    fn unknown_key_versions_are_reported_not_failed() {
        for version in [3i16, 5, 8, 11, 100, -1] {
            let mut key = version.to_be_bytes().to_vec();
            key.extend_from_slice(&[0, 1, b'x']);
            assert_eq!(read_key(&key).unwrap(), RecordKey::Unknown { version });
        }
        assert!(read_key(&[0]).is_err());
        assert!(read_key(&[0, 1, 0]).is_err());
    }
}
