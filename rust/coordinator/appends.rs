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

/// batch is `records` as one v2 record batch of an internal topic: base offset 0, every record
/// stamped `now` (CreateTime; a time before the epoch as 0), no producer, no compression.
pub fn batch(now: i64, records: Records) -> Vec<u8> {
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
}
