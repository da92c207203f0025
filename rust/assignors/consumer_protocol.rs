//! ConsumerProtocol: the Subscription and Assignment payloads that consumers put in JoinGroup
//! and SyncGroup (`ConsumerProtocolSubscription.json` / `ConsumerProtocolAssignment.json`,
//! versions 0 to 3, classic encoding), and the StickyAssignor user data (V0, V1).
//!
//! Encoding matches Java's `ConsumerProtocol` byte for byte: subscription topics sorted, owned
//! partitions sorted by (topic, partition) and grouped by topic; assignment partitions grouped by
//! topic in order of first appearance. Decoding follows Java's parser: a version above 3 is read
//! as 3 and bytes after the last known field are ignored; a negative version, a truncated field
//! or a null where Java forbids one is a [`Error::Malformed`].

use std::collections::HashMap;
use std::sync::Arc;

use super::java::{java_cmp, java_string_hash, JavaHashTable};
use super::{Assignment, Subscription, TopicPartition};
use crate::errors::{Error, Result};
use crate::protocol::primitives::{Reader, Writer};

/// HIGHEST_VERSION is the newest ConsumerProtocol version (3, Kafka 3.5+).
pub const HIGHEST_VERSION: i16 = 3;

fn check_encode_version(version: i16) -> Result<i16> {
    if version < 0 {
        return Err(Error::InvalidArgument(format!(
            "unsupported consumer protocol version {version}"
        )));
    }
    Ok(version.min(HIGHEST_VERSION))
}

fn check_decode_version(version: i16, what: &str) -> Result<i16> {
    if version < 0 {
        return Err(Error::malformed(format!(
            "unsupported {what} version {version}"
        )));
    }
    Ok(version.min(HIGHEST_VERSION))
}

fn put_string(w: &mut Writer, s: &str) -> Result<()> {
    if s.len() > i16::MAX as usize {
        return Err(Error::InvalidArgument(format!(
            "string of {} bytes is longer than 32767",
            s.len()
        )));
    }
    w.string(s);
    Ok(())
}

fn put_bytes(w: &mut Writer, b: Option<&[u8]>) -> Result<()> {
    if b.is_some_and(|b| b.len() > i32::MAX as usize) {
        return Err(Error::InvalidArgument(
            "user data is longer than 2^31-1 bytes".into(),
        ));
    }
    w.nullable_bytes(b);
    Ok(())
}

fn get_string(r: &mut Reader<'_>, field: &str) -> Result<Arc<str>> {
    match r.nullable_string()? {
        Some(s) => Ok(Arc::from(s)),
        None => Err(Error::malformed(format!(
            "non-nullable field {field} was serialized as null"
        ))),
    }
}

fn get_array_len(r: &mut Reader<'_>, field: &str, min_elem: usize) -> Result<usize> {
    r.array_len(min_elem)?.ok_or_else(|| {
        Error::malformed(format!("non-nullable field {field} was serialized as null"))
    })
}

/// group_by_topic groups partitions by topic in order of first appearance (the order Java's
/// `serializeAssignment` writes).
fn group_by_first_appearance(partitions: &[TopicPartition]) -> Vec<(&str, Vec<i32>)> {
    let mut groups: Vec<(&str, Vec<i32>)> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut last: Option<(&str, usize)> = None;
    for tp in partitions {
        let i = match last {
            Some((t, i)) if t == &*tp.topic => i,
            _ => *index.entry(&tp.topic).or_insert_with(|| {
                groups.push((&tp.topic, Vec::new()));
                groups.len() - 1
            }),
        };
        last = Some((&tp.topic, i));
        groups[i].1.push(tp.partition);
    }
    groups
}

fn put_topic_partitions(w: &mut Writer, groups: &[(&str, Vec<i32>)]) -> Result<()> {
    w.array_len(Some(groups.len()));
    for (topic, parts) in groups {
        put_string(w, topic)?;
        w.array_len(Some(parts.len()));
        for &p in parts {
            w.i32(p);
        }
    }
    Ok(())
}

fn get_topic_partitions(
    r: &mut Reader<'_>,
    field: &str,
    out: &mut Vec<TopicPartition>,
) -> Result<()> {
    let n = get_array_len(r, field, 6)?;
    for _ in 0..n {
        let topic = get_string(r, "topic")?;
        let m = get_array_len(r, "partitions", 4)?;
        out.reserve(m);
        for _ in 0..m {
            out.push(TopicPartition {
                topic: topic.clone(),
                partition: r.i32()?,
            });
        }
    }
    Ok(())
}

/// encode_subscription writes `sub` as Java's `ConsumerProtocol.serializeSubscription(sub, version)`
/// does: versions above 3 are written as 3; fields the version lacks are dropped.
pub fn encode_subscription(sub: &Subscription, version: i16) -> Result<Vec<u8>> {
    let version = check_encode_version(version)?;
    let mut w = Writer::with_capacity(64);
    w.i16(version);
    let mut topics: Vec<&str> = sub.topics.iter().map(|t| &**t).collect();
    topics.sort_by(|a, b| java_cmp(a, b));
    w.array_len(Some(topics.len()));
    for t in topics {
        put_string(&mut w, t)?;
    }
    put_bytes(&mut w, sub.user_data.as_deref())?;
    if version >= 1 {
        let mut owned: Vec<&TopicPartition> = sub.owned_partitions.iter().collect();
        owned.sort_by(|a, b| java_cmp(&a.topic, &b.topic).then(a.partition.cmp(&b.partition)));
        let mut groups: Vec<(&str, Vec<i32>)> = Vec::new();
        for tp in owned {
            match groups.last_mut() {
                Some((t, ps)) if *t == &*tp.topic => ps.push(tp.partition),
                _ => groups.push((&tp.topic, vec![tp.partition])),
            }
        }
        put_topic_partitions(&mut w, &groups)?;
    }
    if version >= 2 {
        w.i32(sub.generation().unwrap_or(-1));
    }
    if version >= 3 {
        match &sub.rack_id {
            Some(r) => put_string(&mut w, r)?,
            None => w.i16(-1),
        }
    }
    Ok(w.into_inner())
}

/// decode_subscription reads a Subscription of any version (above 3 read as 3, trailing bytes
/// ignored), returning it with the version found. A negative generation becomes -1 (absent) and
/// an empty rack id becomes `None`, as Java's parser does; `group_instance_id` is not part of
/// the payload and is `None`.
pub fn decode_subscription(data: &[u8]) -> Result<(Subscription, i16)> {
    let mut r = Reader::new(data);
    let found = r.i16().map_err(|_| {
        Error::malformed("buffer underflow while parsing consumer protocol's header")
    })?;
    let version = check_decode_version(found, "subscription")?;
    let n = get_array_len(&mut r, "topics", 2)?;
    let mut topics = Vec::with_capacity(n);
    for _ in 0..n {
        topics.push(get_string(&mut r, "topics")?);
    }
    let user_data = r.nullable_bytes()?.map(|b| b.to_vec());
    let mut owned_partitions = Vec::new();
    if version >= 1 {
        get_topic_partitions(&mut r, "ownedPartitions", &mut owned_partitions)?;
    }
    let mut generation_id = -1;
    if version >= 2 {
        generation_id = r.i32()?.max(-1);
    }
    let mut rack_id = None;
    if version >= 3 {
        rack_id = r
            .nullable_string()?
            .filter(|s| !s.is_empty())
            .map(Arc::from);
    }
    let sub = Subscription {
        topics,
        user_data,
        owned_partitions,
        generation_id,
        rack_id,
        group_instance_id: None,
    };
    Ok((sub, found))
}

/// encode_assignment writes `a` as Java's `ConsumerProtocol.serializeAssignment(a, version)`:
/// partitions grouped by topic in order of first appearance, each group in list order.
pub fn encode_assignment(a: &Assignment, version: i16) -> Result<Vec<u8>> {
    let version = check_encode_version(version)?;
    let mut w = Writer::with_capacity(32 + a.partitions.len() * 4);
    w.i16(version);
    put_topic_partitions(&mut w, &group_by_first_appearance(&a.partitions))?;
    put_bytes(&mut w, a.user_data.as_deref())?;
    Ok(w.into_inner())
}

/// decode_assignment reads an Assignment of any version (above 3 read as 3, trailing bytes
/// ignored), returning it with the version found.
pub fn decode_assignment(data: &[u8]) -> Result<(Assignment, i16)> {
    let mut r = Reader::new(data);
    let found = r.i16().map_err(|_| {
        Error::malformed("buffer underflow while parsing consumer protocol's header")
    })?;
    check_decode_version(found, "assignment")?;
    let mut partitions = Vec::new();
    get_topic_partitions(&mut r, "assignedPartitions", &mut partitions)?;
    let user_data = r.nullable_bytes()?.map(|b| b.to_vec());
    Ok((
        Assignment {
            partitions,
            user_data,
        },
        found,
    ))
}

/// encode_sticky_user_data writes the StickyAssignor's user data: V0 is `previous_assignment`
/// (topic, partitions) groups, V1 adds `generation`. Java's writer groups by topic through a
/// `HashMap` (`CollectionUtils.groupPartitionsByTopic`), so topics come in Java hash order and
/// partitions in list order; so do they here.
pub fn encode_sticky_user_data(
    partitions: &[TopicPartition],
    generation: Option<i32>,
) -> Result<Vec<u8>> {
    let mut keys: Vec<(&str, Vec<i32>)> = Vec::new();
    let mut hashes: Vec<i32> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut table = JavaHashTable::new();
    for tp in partitions {
        let i = *index.entry(&tp.topic).or_insert_with(|| {
            keys.push((&tp.topic, Vec::new()));
            hashes.push(java_string_hash(&tp.topic));
            let k = keys.len() - 1;
            table.insert(k as u32, hashes[k], |j| hashes[j as usize]);
            k
        });
        keys[i].1.push(tp.partition);
    }
    let groups: Vec<(&str, Vec<i32>)> = table
        .iter()
        .map(|k| std::mem::take(&mut keys[k as usize]))
        .collect();
    let mut w = Writer::with_capacity(16 + partitions.len() * 4);
    put_topic_partitions(&mut w, &groups)?;
    if let Some(g) = generation {
        w.i32(g);
    }
    Ok(w.into_inner())
}

/// decode_sticky_user_data reads StickyAssignor user data the way Java does: as V1 first, then
/// as V0 (generation `None`). Bytes that are neither are a [`Error::Malformed`] (Java's assignor then
/// ignores the member's previous assignment).
pub fn decode_sticky_user_data(data: &[u8]) -> Result<(Vec<TopicPartition>, Option<i32>)> {
    let mut r = Reader::new(data);
    let mut partitions = Vec::new();
    get_topic_partitions(&mut r, "previous_assignment", &mut partitions)?;
    let generation = r.i32().ok();
    Ok((partitions, generation))
}

/// decode_cooperative_user_data reads the CooperativeStickyAssignor's user data: one int32
/// generation (`-1` before the first assignment).
pub fn decode_cooperative_user_data(data: &[u8]) -> Result<i32> {
    Reader::new(data).i32()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unhex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn tp(t: &str, p: i32) -> TopicPartition {
        TopicPartition::new(t, p)
    }

    // Vectors A to F from java-golden-vectors.txt (made by running Kafka trunk's ConsumerProtocol).
    #[test]
    fn subscription_vectors() {
        let a = Subscription {
            topics: vec!["topic1".into(), "topic0".into()],
            user_data: Some(vec![0, 0, 0, 5]),
            owned_partitions: vec![tp("topic0", 1), tp("topic0", 0)],
            generation_id: 5,
            rack_id: Some("rack-a".into()),
            group_instance_id: None,
        };
        let hex_a = "0003000000020006746f706963300006746f706963310000000400000005000000010006746f706963300000000200000000000000010000000500067261636b2d61";
        assert_eq!(encode_subscription(&a, 3).unwrap(), unhex(hex_a));
        let b = Subscription::new(["t"]);
        assert_eq!(
            encode_subscription(&b, 0).unwrap(),
            unhex("000000000001000174ffffffff")
        );
        assert_eq!(
            encode_subscription(&b, 3).unwrap(),
            unhex("000300000001000174ffffffff00000000ffffffffffff")
        );
        let (back, v) = decode_subscription(&unhex(hex_a)).unwrap();
        assert_eq!(v, 3);
        assert_eq!(&*back.topics[0], "topic0");
        assert_eq!(
            back.owned_partitions,
            vec![tp("topic0", 0), tp("topic0", 1)]
        );
        assert_eq!(
            (back.generation_id, back.rack_id.as_deref()),
            (5, Some("rack-a"))
        );
    }

    #[test]
    fn assignment_vectors() {
        let d = Assignment {
            partitions: vec![tp("topic1", 0), tp("topic0", 2), tp("topic1", 1)],
            user_data: None,
        };
        let hex_d = "0003000000020006746f706963310000000200000000000000010006746f706963300000000100000002ffffffff";
        assert_eq!(encode_assignment(&d, 3).unwrap(), unhex(hex_d));
        assert_eq!(
            encode_assignment(&d, 0).unwrap(),
            unhex(&format!("0000{}", &hex_d[4..]))
        );
        let (back, _) = decode_assignment(&unhex(hex_d)).unwrap();
        assert_eq!(
            back.partitions,
            vec![tp("topic1", 0), tp("topic1", 1), tp("topic0", 2)]
        );
    }

    #[test]
    fn user_data_vectors() {
        let e = encode_sticky_user_data(&[tp("t", 0), tp("t", 1)], Some(3)).unwrap();
        assert_eq!(e, unhex("0000000100017400000002000000000000000100000003"));
        assert_eq!(
            decode_sticky_user_data(&e).unwrap(),
            (vec![tp("t", 0), tp("t", 1)], Some(3))
        );
        let v0 = encode_sticky_user_data(&[tp("t", 0)], None).unwrap();
        assert_eq!(
            decode_sticky_user_data(&v0).unwrap(),
            (vec![tp("t", 0)], None)
        );
        assert_eq!(decode_cooperative_user_data(&unhex("00000005")).unwrap(), 5);
    }

    #[test]
    fn decoding_is_lenient_like_java_and_strict_on_damage() {
        // Version 7 reads as 3 and trailing bytes are ignored.
        let mut future = unhex("000700000001000174ffffffff00000000ffffffffffff");
        future.extend_from_slice(b"extra");
        let (s, v) = decode_subscription(&future).unwrap();
        assert_eq!((v, s.topics.len()), (7, 1));
        assert!(decode_subscription(&unhex("ffff00000000")).is_err());
        assert!(decode_subscription(&unhex("0000ffffffff")).is_err());
        assert!(decode_subscription(&unhex("00000000")).is_err());
        assert!(decode_subscription(&[0]).is_err());
        assert!(decode_assignment(&unhex("00037fffffff")).is_err());
    }
}
