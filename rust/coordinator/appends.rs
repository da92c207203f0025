//! Appends: the records a coordinator writes to its internal topic, and what waits on each
//! write until the host reports how it went (Kafka's `CoordinatorRuntime` holds a write's
//! response until the records are committed; here the host reports the outcome).

use super::effect::AppendToken;
use crate::assignors::fxhash::FxMap;
use crate::errors::{Error, Result};
use crate::protocol::records::{Record, RecordBatch};

/// Records are (key, value) pairs to append; a None value is a tombstone.
pub type Records = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// Appends is the work waiting on appends, by token: `P` is what a coordinator does once the
/// outcome is known (answer a commit, finish an assignment, or nothing). Tokens count from 1,
/// in the order the appends were asked for.
#[derive(Debug)]
pub struct Appends<P> {
    waiting: FxMap<AppendToken, P>,
    next: AppendToken,
}

impl<P> Default for Appends<P> {
    fn default() -> Self {
        Appends {
            waiting: FxMap::default(),
            next: 1,
        }
    }
}

impl<P> Appends<P> {
    /// add records `pending` as waiting on a new append; returns the append's token.
    pub fn add(&mut self, pending: P) -> AppendToken {
        let token = self.next;
        self.next += 1;
        self.waiting.insert(token, pending);
        token
    }

    /// take is what waits on the append of `token`, which is then no longer outstanding. An
    /// unknown or already reported token is [`Error::InvalidArgument`].
    pub fn take(&mut self, token: AppendToken) -> Result<P> {
        self.waiting.remove(&token).ok_or_else(|| {
            Error::InvalidArgument(format!("no append with token {token} is outstanding"))
        })
    }

    /// len is the number of appends whose outcome is not reported yet.
    pub fn len(&self) -> usize {
        self.waiting.len()
    }

    /// is_empty tells whether no append is outstanding.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }
}

/// Producer is the producer a transactional batch is written for: its id and epoch, as the
/// TxnOffsetCommit that asked for the write gave them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Producer {
    pub id: i64,
    pub epoch: i16,
}

/// batch is `records` as one v2 record batch of an internal topic: base offset 0, every record
/// stamped `now` (CreateTime; a time before the epoch as 0), no producer, no compression.
pub fn batch(now: i64, records: Records) -> Vec<u8> {
    encode(now, records, None)
}

/// transactional_batch is `records` as [`batch`] writes them, but as part of `producer`'s
/// transaction: the batch carries the producer id and epoch, no sequence (-1) and the
/// transactional flag, as Kafka's `CoordinatorRuntime` writes a transactional write's records.
/// They count once the transaction's commit marker follows them in the log.
pub fn transactional_batch(now: i64, producer: Producer, records: Records) -> Vec<u8> {
    encode(now, records, Some(producer))
}

fn encode(now: i64, records: Records, producer: Option<Producer>) -> Vec<u8> {
    let now = now.max(0);
    let mut batch = RecordBatch {
        records: records
            .into_iter()
            .enumerate()
            .map(|(i, (k, v))| Record {
                offset: i as i64,
                timestamp: now,
                key: Some(k),
                value: v,
                headers: Vec::new(),
            })
            .collect(),
        ..RecordBatch::default()
    };
    if let Some(p) = producer {
        batch.producer_id = p.id;
        batch.producer_epoch = p.epoch;
        batch.base_sequence = -1;
        batch.is_transactional = true;
    }
    // Offsets count from 0 and timestamps are equal: neither can fail.
    batch
        .derive_from_records()
        .and_then(|_| batch.encode(None))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::records::{decode_batches, DecodeOptions};

    #[test]
    fn tokens_count_from_one_and_are_taken_once() {
        let mut a = Appends::default();
        assert_eq!((a.add("first"), a.add("second")), (1, 2));
        assert_eq!(a.len(), 2);
        assert_eq!(a.take(2).unwrap(), "second");
        assert!(matches!(a.take(2), Err(Error::InvalidArgument(_))));
        assert!(matches!(a.take(7), Err(Error::InvalidArgument(_))));
        assert_eq!(a.take(1).unwrap(), "first");
        assert!(a.is_empty());
    }

    #[test]
    fn a_batch_holds_the_records_in_order_with_tombstones() {
        let bytes = batch(
            1_700_000_000_000,
            vec![
                (b"k1".to_vec(), Some(b"v1".to_vec())),
                (b"k2".to_vec(), None),
            ],
        );
        let batches = decode_batches(&bytes, &DecodeOptions::default()).unwrap();
        assert_eq!(batches.len(), 1);
        let b = &batches[0];
        assert_eq!((b.base_offset, b.producer_id), (0, -1));
        let got: Vec<_> = b
            .records
            .iter()
            .map(|r| (r.offset, r.timestamp, r.key.clone(), r.value.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    0,
                    1_700_000_000_000,
                    Some(b"k1".to_vec()),
                    Some(b"v1".to_vec())
                ),
                (1, 1_700_000_000_000, Some(b"k2".to_vec()), None),
            ]
        );
        // A clock before the epoch (none seen yet) stamps 0.
        let early = decode_batches(
            &batch(i64::MIN, vec![(b"k".to_vec(), None)]),
            &DecodeOptions::default(),
        )
        .unwrap();
        assert_eq!(early[0].records[0].timestamp, 0);
    }

    #[test]
    fn a_transactional_batch_carries_its_producer_without_a_sequence() {
        let producer = Producer { id: 4000, epoch: 7 };
        let bytes = transactional_batch(5, producer, vec![(b"k".to_vec(), Some(b"v".to_vec()))]);
        let batches = decode_batches(&bytes, &DecodeOptions::default()).unwrap();
        let b = &batches[0];
        assert_eq!(
            (b.producer_id, b.producer_epoch, b.base_sequence),
            (4000, 7, -1)
        );
        assert!(b.is_transactional && !b.is_control);
        assert_eq!(b.records[0].value.as_deref(), Some(&b"v"[..]));
        // A plain batch has none of it.
        let plain = decode_batches(
            &batch(5, vec![(b"k".to_vec(), None)]),
            &DecodeOptions::default(),
        )
        .unwrap();
        assert!(!plain[0].is_transactional);
        assert_eq!((plain[0].producer_id, plain[0].producer_epoch), (-1, -1));
    }
}
