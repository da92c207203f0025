//! The consumer's per-record work: [`decode_fetch`] turns one partition's Fetch `records` into a
//! [`Chunk`] of records ready to hand out, and [`FetchQueue`] buffers chunks between the thread
//! that fetches and the thread that polls.
//!
//! A chunk keeps each batch's record bytes once ([`BatchData`], shared through an `Arc`) and
//! locates every record in them with a [`RecordSpan`]: nothing is copied per record, so a
//! consumed message, a Python `bytes` or an Arrow column is made from the spans when asked for.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::errors::Result;
use crate::protocol::records::{
    batches, Budget, ControlRecordKey, ControlRecordType, DecodeOptions, RecordRef, RecordSpan,
    TimestampType,
};

/// Held is bytes a [`BatchData`] keeps alive: a `Vec`, or (in the bindings) the fetched
/// Python `bytes` itself, so that an uncompressed batch is never copied.
pub trait Held: AsRef<[u8]> + Send + Sync {}

impl<T: AsRef<[u8]> + Send + Sync> Held for T {}

/// BatchData is the record bytes of one decoded batch (decompressed, or a slice of the fetched
/// bytes) and what every record of the batch shares: its timestamp type and leader epoch.
pub struct BatchData {
    buf: Arc<dyn Held>,
    start: usize,
    end: usize,
    pub timestamp_type: TimestampType,
    /// partition_leader_epoch is -1 when the batch has none (magic 0 and 1 never do).
    pub partition_leader_epoch: i32,
}

impl std::fmt::Debug for BatchData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BatchData")
            .field("len", &(self.end - self.start))
            .field("timestamp_type", &self.timestamp_type)
            .field("partition_leader_epoch", &self.partition_leader_epoch)
            .finish()
    }
}

impl BatchData {
    /// bytes is the batch's record data, which the spans of its records index.
    pub fn bytes(&self) -> &[u8] {
        &(*self.buf).as_ref()[self.start..self.end]
    }

    /// record reads a record of this batch through its span.
    pub fn record(&self, span: &RecordSpan) -> RecordRef<'_> {
        span.get(self.bytes())
    }
}

/// FetchedRecord is one record of a [`Chunk`]: its span and the index of its batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchedRecord {
    pub span: RecordSpan,
    pub batch: u32,
}

impl FetchedRecord {
    /// size is what the record counts toward [`FetchQueue::buffered_bytes`]: key, value and
    /// header bytes, as librdkafka counts a message toward `queued.max.messages.kbytes`.
    pub fn size(&self) -> usize {
        let s = &self.span;
        s.key.map_or(0, |k| k.1) + s.value.map_or(0, |v| v.1) + s.headers.1
    }
}

/// Chunk is the records one [`decode_fetch`] call kept, in offset order.
#[derive(Debug, Default)]
pub struct Chunk {
    pub batches: Arc<[Arc<BatchData>]>,
    pub records: Vec<FetchedRecord>,
    /// next_fetch_offset is the last offset of the last complete batch + 1 (or the fetch
    /// offset when no batch was complete): where the next Fetch of the partition starts.
    pub next_fetch_offset: i64,
}

/// decode_fetch decodes every complete batch of one partition's Fetch `records`, as Kafka's
/// consumer does (`CompletedFetch`): records before `fetch_offset` are skipped (a batch may
/// start before it), control batches are skipped, and with `read_committed` the records of
/// aborted transactions are dropped (`aborted` holds the response's aborted transactions as
/// `(producer_id, first_offset)`). A truncated last batch ends the decoding quietly. A bad CRC
/// or a malformed batch fails the whole call with [`Error::CorruptRecord`](crate::Error).
///
/// `hold` gives an owner of bytes equal to `records`, which the uncompressed batches then
/// share; it is called at most once, when such a batch keeps a record.
pub fn decode_fetch(
    records: &[u8],
    hold: impl FnOnce() -> Arc<dyn Held>,
    fetch_offset: i64,
    read_committed: bool,
    aborted: &[(i64, i64)],
) -> Result<Chunk> {
    let opts = DecodeOptions::default();
    let mut budget = Budget::new(opts.max_decompressed_size);
    // Kafka's rule: the aborted transactions whose first offset is at or below a batch's last
    // offset are open for that batch; a producer's ABORT marker closes its transaction.
    let mut pending: Vec<(i64, i64)> = if read_committed {
        aborted.to_vec()
    } else {
        Vec::new()
    };
    pending.sort_by_key(|&(pid, first)| (first, pid));
    let mut pending = pending.into_iter().peekable();
    let mut aborted_producers: HashSet<i64> = HashSet::new();

    let mut hold = Some(hold);
    let mut shared: Option<Arc<dyn Held>> = None;
    let mut out_batches: Vec<Arc<BatchData>> = Vec::new();
    let mut out: Vec<FetchedRecord> = Vec::new();
    let mut next = fetch_offset;

    for raw in batches(records) {
        let raw = raw?;
        let d = raw.decode(&opts, &mut budget)?;
        let f = d.batch.fields;
        next = next.max(f.next_offset());
        if f.last_offset() < fetch_offset {
            continue;
        }
        if read_committed && f.producer_id >= 0 {
            while let Some((pid, _)) = pending.next_if(|&(_, first)| first <= f.last_offset()) {
                aborted_producers.insert(pid);
            }
            if f.is_control {
                let first = d.records().next();
                if let Some(r) = first {
                    if ControlRecordKey::parse(r.key)?.kind == ControlRecordType::Abort {
                        aborted_producers.remove(&f.producer_id);
                    }
                }
                continue;
            }
            if f.is_transactional && aborted_producers.contains(&f.producer_id) {
                continue;
            }
        }
        if f.is_control {
            continue;
        }
        let first_kept = d.spans.partition_point(|s| s.offset < fetch_offset);
        if first_kept == d.spans.len() {
            continue;
        }
        let data = match d.data {
            std::borrow::Cow::Borrowed(b) => {
                let buf = match &shared {
                    Some(b) => b.clone(),
                    None => {
                        let b = hold
                            .take()
                            .map_or_else(|| Arc::new(records.to_vec()) as Arc<dyn Held>, |h| h());
                        shared.insert(b).clone()
                    }
                };
                // `b` lies inside `records`, whose bytes `buf` holds.
                let start = b.as_ptr() as usize - records.as_ptr() as usize;
                BatchData {
                    buf,
                    start,
                    end: start + b.len(),
                    timestamp_type: f.timestamp_type,
                    partition_leader_epoch: f.partition_leader_epoch,
                }
            }
            std::borrow::Cow::Owned(v) => {
                let end = v.len();
                BatchData {
                    buf: Arc::new(v),
                    start: 0,
                    end,
                    timestamp_type: f.timestamp_type,
                    partition_leader_epoch: f.partition_leader_epoch,
                }
            }
        };
        let index = out_batches.len() as u32;
        out_batches.push(Arc::new(data));
        out.extend(
            d.spans[first_kept..]
                .iter()
                .map(|&span| FetchedRecord { span, batch: index }),
        );
    }
    Ok(Chunk {
        batches: out_batches.into(),
        records: out,
        next_fetch_offset: next,
    })
}

/// Run is a stretch of consecutive records of one partition taken from a [`FetchQueue`].
#[derive(Debug, Clone)]
pub struct Run {
    pub topic: Arc<str>,
    pub partition: i32,
    pub batches: Arc<[Arc<BatchData>]>,
    pub records: Vec<FetchedRecord>,
}

impl Run {
    /// len is the number of records.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }
}

/// Popped is one record taken from a [`FetchQueue`].
#[derive(Debug, Clone)]
pub struct Popped {
    pub topic: Arc<str>,
    pub partition: i32,
    pub batch: Arc<BatchData>,
    pub span: RecordSpan,
}

struct Queued {
    topic: Arc<str>,
    partition: i32,
    chunk: Chunk,
    pos: usize,
    /// popped is the position after the last record popped from this chunk, kept here (not in
    /// `State::positions`) until the chunk leaves the queue, so that a pop hashes nothing.
    popped: Option<i64>,
}

#[derive(Default)]
struct State {
    chunks: VecDeque<Queued>,
    len: usize,
    bytes: usize,
    woken: bool,
    positions: HashMap<(Arc<str>, i32), i64>,
}

impl State {
    /// finish_front drops the exhausted chunk at the front. Its partition's position is then
    /// where its fetch ended: past the control batches, aborted records and records before
    /// the fetch offset it skipped after its last record, as Java's consumer moves its
    /// position to a drained fetch's next offset.
    fn finish_front(&mut self) {
        if self
            .chunks
            .front()
            .is_some_and(|q| q.pos == q.chunk.records.len())
        {
            if let Some(mut q) = self.chunks.pop_front() {
                if q.popped.is_some() {
                    q.popped = q.popped.max(Some(q.chunk.next_fetch_offset));
                }
                self.leave(q);
            }
        }
    }

    /// leave keeps the position of a chunk that leaves the queue.
    fn leave(&mut self, q: Queued) {
        if let Some(p) = q.popped {
            self.positions.insert((q.topic, q.partition), p);
        }
    }
}

/// FetchQueue buffers fetched records between threads: one thread pushes chunks, others pop
/// records in the order they were pushed (per partition, offset order). Every method is
/// thread-safe; the pop methods wait on a condition variable for a push or a [`wake`].
///
/// [`wake`]: FetchQueue::wake
#[derive(Default)]
pub struct FetchQueue {
    state: Mutex<State>,
    ready: Condvar,
}

/// Waited is how a wait for records ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// Records are buffered.
    Ready,
    /// [`FetchQueue::wake`] was called (the wake is used up).
    Woken,
    /// The timeout passed with nothing buffered.
    TimedOut,
}

impl FetchQueue {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves the state consistent (every update is a single
        // step), so a poisoned lock is used as it is.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// push appends a chunk of `topic`/`partition` (nothing if it has no records) and wakes the
    /// waiting pops. It returns the number of records added.
    pub fn push(&self, topic: Arc<str>, partition: i32, chunk: Chunk) -> usize {
        let n = chunk.records.len();
        if n == 0 {
            // Nothing to deliver, but the fetch may have passed offsets (a transaction's
            // markers, an aborted transaction under read_committed): the position moves past
            // them once what is buffered before them is popped.
            let mut s = self.lock();
            let next = chunk.next_fetch_offset;
            let same = |q: &Queued| q.partition == partition && q.topic == topic;
            if let Some(q) = s.chunks.iter_mut().rev().find(|q| same(q)) {
                q.chunk.next_fetch_offset = q.chunk.next_fetch_offset.max(next);
            } else {
                let key = (topic, partition);
                let pos = s.positions.get(&key).copied().unwrap_or(i64::MIN).max(next);
                s.positions.insert(key, pos);
            }
            return 0;
        }
        let bytes: usize = chunk.records.iter().map(FetchedRecord::size).sum();
        let mut s = self.lock();
        s.len += n;
        s.bytes += bytes;
        s.chunks.push_back(Queued {
            topic,
            partition,
            chunk,
            pos: 0,
            popped: None,
        });
        drop(s);
        self.ready.notify_all();
        n
    }

    /// wait waits until records are buffered, [`wake`](Self::wake) is called (now or since the
    /// last wait that ended empty) or `timeout` passes (`None`: no limit).
    pub fn wait(&self, timeout: Option<Duration>) -> Waited {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut s = self.lock();
        loop {
            if s.len > 0 {
                return Waited::Ready;
            }
            if s.woken {
                s.woken = false;
                return Waited::Woken;
            }
            s = match deadline {
                None => self.ready.wait(s).unwrap_or_else(|e| e.into_inner()),
                Some(d) => {
                    let now = Instant::now();
                    if d <= now {
                        return Waited::TimedOut;
                    }
                    self.ready
                        .wait_timeout(s, d - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                }
            };
        }
    }

    /// pop takes the next record, if any, and records its partition's position.
    pub fn pop(&self) -> Option<Popped> {
        let mut s = self.lock();
        let q = s.chunks.front_mut()?;
        let r = q.chunk.records[q.pos];
        q.pos += 1;
        q.popped = Some(r.span.offset + 1);
        let p = Popped {
            topic: q.topic.clone(),
            partition: q.partition,
            batch: q.chunk.batches[r.batch as usize].clone(),
            span: r.span,
        };
        s.len -= 1;
        s.bytes -= r.size();
        s.finish_front();
        Some(p)
    }

    /// pop_runs takes up to `max` records, as runs of one partition each, in order, and stops
    /// before the record that would take their [`size`](FetchedRecord::size) over `max_bytes`
    /// (it takes the first record whatever its size).
    pub fn pop_runs(&self, max: usize, max_bytes: usize) -> Vec<Run> {
        let mut runs = Vec::new();
        let mut left = max;
        let mut bytes_left = max_bytes;
        let mut taken = 0usize;
        let mut s = self.lock();
        while left > 0 {
            let Some(q) = s.chunks.front_mut() else {
                break;
            };
            let mut end = q.pos;
            let limit = (q.pos + left).min(q.chunk.records.len());
            while end < limit {
                let n = q.chunk.records[end].size();
                if n > bytes_left && taken > 0 {
                    break;
                }
                bytes_left = bytes_left.saturating_sub(n);
                taken += 1;
                end += 1;
            }
            if end == q.pos {
                break;
            }
            let records = q.chunk.records[q.pos..end].to_vec();
            q.pos = end;
            if let Some(r) = records.last() {
                q.popped = Some(r.span.offset + 1);
            }
            let run = Run {
                topic: q.topic.clone(),
                partition: q.partition,
                batches: q.chunk.batches.clone(),
                records,
            };
            let bytes: usize = run.records.iter().map(FetchedRecord::size).sum();
            s.len -= run.len();
            s.bytes -= bytes;
            left -= run.len();
            s.finish_front();
            runs.push(run);
        }
        runs
    }

    /// wake makes a waiting pop return now, or the next one that would wait.
    pub fn wake(&self) {
        self.lock().woken = true;
        self.ready.notify_all();
    }

    /// purge drops the buffered records of one partition and returns how many.
    pub fn purge(&self, topic: &str, partition: i32) -> usize {
        let mut s = self.lock();
        let mut dropped = 0;
        let mut bytes = 0;
        let (gone, kept): (VecDeque<Queued>, VecDeque<Queued>) = std::mem::take(&mut s.chunks)
            .into_iter()
            .partition(|q| q.partition == partition && &*q.topic == topic);
        s.chunks = kept;
        for q in gone {
            let rest = &q.chunk.records[q.pos..];
            dropped += rest.len();
            bytes += rest.iter().map(FetchedRecord::size).sum::<usize>();
            s.leave(q);
        }
        s.len -= dropped;
        s.bytes -= bytes;
        dropped
    }

    /// clear drops every buffered record (positions stay).
    pub fn clear(&self) {
        let mut s = self.lock();
        for q in std::mem::take(&mut s.chunks) {
            s.leave(q);
        }
        s.len = 0;
        s.bytes = 0;
    }

    /// positions is, per partition popped from since it was last forgotten, the offset of its
    /// last popped record + 1.
    pub fn positions(&self) -> Vec<(Arc<str>, i32, i64)> {
        let s = self.lock();
        let mut all = s.positions.clone();
        for q in &s.chunks {
            if let Some(p) = q.popped {
                all.insert((q.topic.clone(), q.partition), p);
            }
        }
        all.into_iter().map(|((t, p), o)| (t, p, o)).collect()
    }

    /// forget drops a partition's position.
    pub fn forget(&self, topic: &str, partition: i32) {
        let mut s = self.lock();
        s.positions.remove(&(Arc::<str>::from(topic), partition));
        for q in s.chunks.iter_mut() {
            if q.partition == partition && &*q.topic == topic {
                q.popped = None;
            }
        }
    }

    /// len is the number of buffered records.
    pub fn len(&self) -> usize {
        self.lock().len
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// buffered_bytes is the key, value and header bytes of the buffered records.
    pub fn buffered_bytes(&self) -> usize {
        self.lock().bytes
    }

    /// buffered_partitions are the partitions with records buffered.
    pub fn buffered_partitions(&self) -> Vec<(Arc<str>, i32)> {
        let s = self.lock();
        let set: HashSet<(Arc<str>, i32)> = s
            .chunks
            .iter()
            .map(|q| (q.topic.clone(), q.partition))
            .collect();
        set.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::records::{
        BatchFields, Compression, EndTransactionMarker, Record, RecordBatch,
    };

    fn batch(base: i64, n: i64, f: BatchFields) -> Vec<u8> {
        let mut b = RecordBatch {
            fields: BatchFields {
                base_offset: base,
                ..f
            },
            records: (0..n)
                .map(|i| Record {
                    offset: base + i,
                    timestamp: 1000 + i,
                    key: Some(vec![b'k'; 3]),
                    value: Some(vec![b'v'; 10]),
                    headers: Vec::new(),
                })
                .collect(),
        };
        b.derive_from_records().unwrap();
        b.encode(None).unwrap()
    }

    fn txn(pid: i64) -> BatchFields {
        BatchFields {
            is_transactional: true,
            producer_id: pid,
            producer_epoch: 0,
            ..BatchFields::default()
        }
    }

    fn offsets(c: &Chunk) -> Vec<i64> {
        c.records.iter().map(|r| r.span.offset).collect()
    }

    fn hold_copy(b: &[u8]) -> impl FnOnce() -> Arc<dyn Held> + '_ {
        move || Arc::new(b.to_vec())
    }

    #[test]
    fn skips_before_fetch_offset_and_stops_at_a_truncated_batch() {
        let mut data = batch(0, 5, BatchFields::default());
        let lz4 = BatchFields {
            compression: Compression::Lz4,
            ..BatchFields::default()
        };
        data.extend(batch(5, 5, lz4));
        let third = batch(10, 5, BatchFields::default());
        data.extend(&third[..third.len() - 1]);
        let c = decode_fetch(&data, hold_copy(&data), 3, false, &[]).unwrap();
        assert_eq!(offsets(&c), vec![3, 4, 5, 6, 7, 8, 9]);
        assert_eq!(c.next_fetch_offset, 10);
        let c = decode_fetch(&third[..20], hold_copy(&third), 10, false, &[]).unwrap();
        assert_eq!((c.records.len(), c.next_fetch_offset), (0, 10));
    }

    #[test]
    fn read_committed_drops_aborted_transactions() {
        // Kafka's FetcherTest.testReadCommittedWithCommittedAndAbortedTransactions, in short.
        let mut data = batch(0, 2, txn(1));
        data.extend(batch(2, 2, txn(2)));
        let abort = EndTransactionMarker {
            commit: false,
            coordinator_epoch: 0,
        };
        let mut m = abort.batch(4, 1000, -1, 1, 0);
        m.derive_from_records().unwrap();
        data.extend(m.encode(None).unwrap());
        data.extend(batch(5, 2, txn(1)));
        let c = decode_fetch(&data, hold_copy(&data), 0, true, &[(1, 0)]).unwrap();
        // Producer 1's transaction from offset 0 ends at its ABORT marker (4); its batch at 5
        // starts a transaction that the response does not list as aborted.
        assert_eq!(offsets(&c), vec![2, 3, 5, 6]);
        assert_eq!(c.next_fetch_offset, 7);
        let c = decode_fetch(&data, hold_copy(&data), 0, false, &[(1, 0)]).unwrap();
        assert_eq!(offsets(&c), vec![0, 1, 2, 3, 5, 6]);
    }

    #[test]
    fn the_position_passes_what_a_fetch_skipped() {
        // Java's consumer moves its position to a drained fetch's next offset: past a
        // trailing aborted transaction and its marker, and past a fetch that held nothing to
        // deliver (FetcherTest.testReturnAbortedTransactionsInUncommittedMode's counterpart).
        let abort = EndTransactionMarker {
            commit: false,
            coordinator_epoch: 0,
        };
        let mut data = batch(0, 2, BatchFields::default());
        data.extend(batch(2, 2, txn(1)));
        let mut m = abort.batch(4, 1000, -1, 1, 0);
        m.derive_from_records().unwrap();
        data.extend(m.encode(None).unwrap());
        let q = FetchQueue::new();
        let c = decode_fetch(&data, hold_copy(&data), 0, true, &[(1, 2)]).unwrap();
        assert_eq!((offsets(&c), c.next_fetch_offset), (vec![0, 1], 5));
        // An empty fetch behind it raises where the queued chunk ends.
        let empty = |next| Chunk {
            next_fetch_offset: next,
            ..Chunk::default()
        };
        let later = empty(9);
        assert_eq!(q.push("t".into(), 0, c), 2);
        assert_eq!(q.push("t".into(), 0, later), 0);
        assert_eq!(q.pop().map(|p| p.span.offset), Some(0));
        assert_eq!(q.positions(), vec![("t".into(), 0, 1)]);
        assert_eq!(q.pop().map(|p| p.span.offset), Some(1));
        assert_eq!(q.positions(), vec![("t".into(), 0, 9)]);
        // With nothing queued, an empty fetch moves the position at once.
        assert_eq!(q.push("t".into(), 0, empty(12)), 0);
        assert_eq!(q.positions(), vec![("t".into(), 0, 12)]);
    }

    #[test]
    fn queue_pops_in_order_and_limits_bytes() {
        let data = batch(0, 4, BatchFields::default());
        let q = FetchQueue::new();
        let c = decode_fetch(&data, hold_copy(&data), 0, false, &[]).unwrap();
        assert_eq!(q.push("t".into(), 0, c), 4);
        assert_eq!(q.buffered_bytes(), 4 * 13);
        let runs = q.pop_runs(10, 30);
        assert_eq!(runs.iter().map(Run::len).sum::<usize>(), 2);
        assert_eq!(q.pop().map(|p| p.span.offset), Some(2));
        assert_eq!(q.wait(Some(Duration::ZERO)), Waited::Ready);
        assert_eq!(q.purge("t", 0), 1);
        assert_eq!(q.wait(Some(Duration::ZERO)), Waited::TimedOut);
        q.wake();
        assert_eq!(q.wait(None), Waited::Woken);
        assert_eq!(q.positions(), vec![("t".into(), 0, 3)]);
    }

    #[test]
    fn arrow_export_releases_without_an_importer() {
        let data = batch(0, 3, BatchFields::default());
        let q = FetchQueue::new();
        q.push(
            "t".into(),
            0,
            decode_fetch(&data, hold_copy(&data), 0, false, &[]).unwrap(),
        );
        let e = super::super::arrow::export(&q.pop_runs(10, usize::MAX));
        assert_eq!(
            (e.array.length, e.array.n_children, e.schema.n_children),
            (3, 8, 8)
        );
        drop(e);
    }
}
