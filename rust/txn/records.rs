//! The records of `__transaction_state`: Kafka's own key and value schemas
//! (`TransactionLogKey`, `TransactionLogValue`, declared in
//! `rust/protocol/messages/coordinator_records.rs`), so that Kafka's tools read what kgroup
//! writes and kgroup reads what Kafka wrote.
//!
//! The key is an INT16 record type (0) and the transactional id; the value an INT16 version and
//! the metadata; a null value is a tombstone (an expired id). kgroup writes value version 0, as
//! Kafka does until `transaction.version` 1 (transaction protocol v1, which is what this
//! coordinator serves); it reads 0 and 1, and a later version as 1 (KIP-915: later versions
//! only add tagged fields).

use std::borrow::Cow;

use super::metadata::{Transit, TxnPartitions, NO_PRODUCER_EPOCH};
use super::state::TxnState;
use crate::errors::{Error, Result};
use crate::protocol::primitives::{Reader, Writer};
use crate::protocol::typed::coordinator_records as typed;

/// KEY_VERSION is the record type of a transaction log key.
pub const KEY_VERSION: i16 = 0;
/// VALUE_VERSION is the value version written.
pub const VALUE_VERSION: i16 = 0;
/// HIGHEST_VALUE_VERSION is the highest value version known.
pub const HIGHEST_VALUE_VERSION: i16 = 1;

fn versioned(version: i16, write: impl FnOnce(&mut Writer) -> Result<()>) -> Result<Vec<u8>> {
    let mut w = Writer::with_capacity(64);
    w.i16(version);
    write(&mut w)?;
    Ok(w.into_inner())
}

/// key is the key of `transactional_id`'s record.
pub fn key(transactional_id: &str) -> Result<Vec<u8>> {
    let k = typed::TransactionLogKey {
        transactional_id: Cow::Borrowed(transactional_id),
    };
    versioned(KEY_VERSION, |w| k.write(w, KEY_VERSION))
}

/// value is the value of a change (Kafka's `TransactionLog.valueToBytes`): partitions grouped
/// by topic, null in an Empty record.
pub fn value(t: &Transit) -> Result<Vec<u8>> {
    value_at(t, VALUE_VERSION)
}

/// value_at writes the value at `version` (tests write v1).
pub fn value_at(t: &Transit, version: i16) -> Result<Vec<u8>> {
    let partitions = (t.state != TxnState::Empty).then(|| {
        let mut out: Vec<typed::TransactionLogValueTransactionPartition<'_>> = Vec::new();
        for (topic, p) in &t.partitions {
            match out.last_mut() {
                Some(last) if last.topic == topic.as_str() => last.partition_ids.push(*p),
                _ => out.push(typed::TransactionLogValueTransactionPartition {
                    topic: Cow::Borrowed(topic),
                    partition_ids: vec![*p],
                    ..Default::default()
                }),
            }
        }
        out
    });
    let mut v = typed::TransactionLogValue {
        producer_id: t.producer_id,
        producer_epoch: t.producer_epoch,
        transaction_timeout_ms: t.timeout_ms,
        transaction_status: t.state.id(),
        transaction_partitions: partitions,
        transaction_last_update_timestamp_ms: t.update_timestamp,
        transaction_start_timestamp_ms: t.start_timestamp,
        ..Default::default()
    };
    v.fit(version);
    versioned(version, |w| v.write(w, version))
}

/// Key is a decoded key: a transactional id's, or another record type, which a loader skips
/// (Kafka's `readTxnRecordKey` answers an unknown key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Transaction(String),
    Unknown(i16),
}

fn split_version<'a>(bytes: &'a [u8], what: &str) -> Result<(i16, &'a [u8])> {
    let mut r = Reader::new(bytes);
    let version = r
        .i16()
        .map_err(|_| Error::malformed(format!("{what} is too short for its version")))?;
    Ok((version, r.rest()))
}

/// read_key reads a record key.
pub fn read_key(bytes: &[u8]) -> Result<Key> {
    let (version, rest) = split_version(bytes, "transaction log key")?;
    if version != KEY_VERSION {
        return Ok(Key::Unknown(version));
    }
    let k = typed::TransactionLogKey::decode(rest, version)?;
    Ok(Key::Transaction(k.transactional_id.into_owned()))
}

/// read_value reads a record value (not a tombstone) as the [`Transit`] it wrote. The last
/// epoch is not persisted (-1), and `prev_producer_id` is the tagged previous producer id (-1
/// in v0). An unknown state or a negative version is [`Error::Malformed`].
pub fn read_value(bytes: &[u8]) -> Result<Transit> {
    let (version, rest) = split_version(bytes, "transaction log value")?;
    if version < 0 {
        return Err(Error::malformed(format!(
            "transaction log value version {version} is not a known version"
        )));
    }
    let version = version.min(HIGHEST_VALUE_VERSION);
    let v = typed::TransactionLogValue::decode(rest, version)?;
    let state = TxnState::from_id(v.transaction_status).ok_or_else(|| {
        Error::malformed(format!(
            "transaction log value: unknown state {}",
            v.transaction_status
        ))
    })?;
    let mut partitions = TxnPartitions::new();
    for t in v.transaction_partitions.iter().flatten() {
        for p in &t.partition_ids {
            partitions.insert((t.topic.to_string(), *p));
        }
    }
    Ok(Transit {
        producer_id: v.producer_id,
        prev_producer_id: v.previous_producer_id,
        producer_epoch: v.producer_epoch,
        last_producer_epoch: NO_PRODUCER_EPOCH,
        timeout_ms: v.transaction_timeout_ms,
        state,
        partitions,
        start_timestamp: v.transaction_start_timestamp_ms,
        update_timestamp: v.transaction_last_update_timestamp_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ongoing() -> Transit {
        Transit {
            producer_id: 1000,
            prev_producer_id: -1,
            producer_epoch: 3,
            last_producer_epoch: -1,
            timeout_ms: 60_000,
            state: TxnState::Ongoing,
            partitions: [
                ("a".to_string(), 1),
                ("a".to_string(), 0),
                ("b".to_string(), 2),
            ]
            .into(),
            start_timestamp: 10,
            update_timestamp: 20,
        }
    }

    #[test]
    fn a_key_is_type_zero_and_a_classic_string() {
        // Kafka's TransactionLog.keyToBytes: the coordinator record type, then an INT16 string.
        assert_eq!(key("tx").unwrap(), vec![0, 0, 0, 2, b't', b'x']);
        assert_eq!(
            read_key(&key("tx").unwrap()).unwrap(),
            Key::Transaction("tx".into())
        );
        assert_eq!(read_key(&[0, 5, 0, 0]).unwrap(), Key::Unknown(5));
        assert!(read_key(&[0]).is_err());
    }

    // Kafka's TransactionLogTest.shouldReadWriteMessages: values round-trip at v0 and v1.
    #[test]
    fn values_round_trip_at_both_versions() {
        for version in [0, 1] {
            let t = ongoing();
            let back = read_value(&value_at(&t, version).unwrap()).unwrap();
            assert_eq!(back, t, "v{version}");
        }
        // A later version reads as v1.
        let mut bytes = value_at(&ongoing(), 1).unwrap();
        bytes[1] = 2;
        assert_eq!(read_value(&bytes).unwrap(), ongoing());
    }

    // Kafka's TransactionLog.valueToBytes: Empty has null partitions, v0 is not flexible.
    #[test]
    fn an_empty_record_has_null_partitions() {
        let t = Transit {
            state: TxnState::Empty,
            partitions: TxnPartitions::new(),
            start_timestamp: -1,
            ..ongoing()
        };
        let bytes = value(&t).unwrap();
        // version, pid, epoch, timeout, status, then the array length -1.
        assert_eq!(&bytes[..2], &[0, 0]);
        assert_eq!(bytes[2 + 8 + 2 + 4], 0);
        assert_eq!(&bytes[2 + 8 + 2 + 4 + 1..2 + 8 + 2 + 4 + 1 + 4], &[0xff; 4]);
        assert_eq!(read_value(&bytes).unwrap(), t);
    }

    #[test]
    fn bad_values_are_malformed_not_panics() {
        let mut bytes = value(&ongoing()).unwrap();
        bytes[2 + 8 + 2 + 4] = 9;
        assert!(read_value(&bytes).is_err());
        assert!(read_value(&[0xff, 0xff]).is_err());
        assert!(read_value(&[0, 0, 1]).is_err());
    }
}
