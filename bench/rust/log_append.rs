//! The log's append and read throughput: 1 KB records in 16 KB and 1 MB batches, uncompressed
//! and zstd (kept as produced: `compression.type=producer`), plus zstd recompression of
//! uncompressed batches (`compression.type=zstd`), read MB/s, and the time of one fsync.
//!
//! `cargo bench --bench log_append`. A plain harness keeps the build light; the log lives under
//! /tmp and is deleted afterwards. Each append figure is the best of a few passes of at least
//! 256 MB of records (64 MB for recompression).

use std::time::Instant;

use kgroup::log::{Log, LogConfig};
use kgroup::protocol::records::{BatchFields, Compression, Record, RecordBatch};

const NOW: i64 = 1_700_000_000_000;
const RECORD: usize = 1024;

fn batch(records: usize, compression: Compression, seed: u64) -> Vec<u8> {
    // Half random, half repeated bytes: zstd compresses it about 2:1, like text-ish payloads.
    let mut x = seed | 1;
    let recs = (0..records)
        .map(|i| {
            let mut v = vec![b'x'; RECORD];
            for b in v.iter_mut().take(RECORD / 2) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = b'a' + (x % 26) as u8;
            }
            Record {
                offset: i as i64,
                timestamp: NOW,
                key: Some(format!("key-{i}").into_bytes()),
                value: Some(v),
                headers: vec![],
            }
        })
        .collect();
    let mut b = RecordBatch {
        fields: BatchFields {
            compression,
            ..BatchFields::default()
        },
        records: recs,
    };
    b.derive_from_records().unwrap();
    b.encode(None).unwrap()
}

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("kgroup-bench-log-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// append_mb_s appends `batch` until `total` bytes of records went in; best of `passes`.
fn append_mb_s(
    name: &str,
    batch: &[u8],
    records: usize,
    cfg: &[(&str, &str)],
    total: usize,
) -> f64 {
    let mut best = 0f64;
    for pass in 0..3 {
        let d = dir(&format!("{name}-{pass}"));
        let mut config = LogConfig::from_pairs(cfg.iter().copied()).unwrap();
        // 1 MB of 1 KB records with keys and framing is a little over Kafka's default 1 MB.
        config.max_message_bytes = 2 << 20;
        let (log, _) = Log::open(&d, config, NOW).unwrap();
        let n = total / (records * RECORD);
        let t = Instant::now();
        for _ in 0..n {
            log.append(batch, NOW, 0).unwrap();
        }
        let secs = t.elapsed().as_secs_f64();
        best = best.max((n * records * RECORD) as f64 / secs / 1e6);
        log.delete(None).unwrap();
    }
    best
}

fn main() {
    // `-- profile` runs only the uncompressed 16 KB append path, for perf record.
    if std::env::args().any(|a| a == "profile") {
        let b = batch(16, Compression::None, 7);
        let mb = append_mb_s("profile", &b, 16, &[], 1 << 30);
        println!("16 KB batches, none: {mb:.0} MB/s");
        return;
    }
    let total = 256 << 20;
    println!("log append, 1 KB records (MB/s of record payload, page cache, no fsync):");
    for (records, label) in [(16, "16 KB"), (1024, "1 MB")] {
        for c in [Compression::None, Compression::Zstd] {
            let b = batch(records, c, 7);
            let mb = append_mb_s(&format!("{records}-{}", c.name()), &b, records, &[], total);
            println!(
                "  {label:>6} batches, {:<5} as produced   {mb:>8.0} MB/s",
                c.name()
            );
        }
        let b = batch(records, Compression::None, 7);
        let mb = append_mb_s(
            &format!("{records}-recompress"),
            &b,
            records,
            &[("compression.type", "zstd")],
            64 << 20,
        );
        println!("  {label:>6} batches, none -> zstd (broker)  {mb:>8.0} MB/s");
    }

    // Read: whole batches through Log::read (pread into a Vec), 1 MB fetches.
    let d = dir("read");
    let (log, _) = Log::open(&d, LogConfig::default(), NOW).unwrap();
    let b = batch(16, Compression::None, 9);
    for _ in 0..(256 << 20) / b.len() {
        log.append(&b, NOW, 0).unwrap();
    }
    let end = log.log_end_offset();
    let mut best = 0f64;
    for _ in 0..3 {
        let t = Instant::now();
        let (mut offset, mut bytes) = (0i64, 0usize);
        while offset < end {
            let s = log.read(offset, 1 << 20, end, true).unwrap();
            let data = s.bytes().unwrap();
            bytes += data.len();
            // The next fetch starts after the last batch returned.
            let mut pos = 0;
            while pos < data.len() {
                let h = kgroup::protocol::records::BatchHeader::parse_with(&data[pos..], false)
                    .unwrap();
                offset = h.next_offset();
                pos += h.size();
            }
        }
        best = best.max(bytes as f64 / t.elapsed().as_secs_f64() / 1e6);
    }
    println!("log read, 1 MB fetches of 16 KB batches: {best:.0} MB/s");

    // One fsync: append one 16 KB batch, then flush; median of 20.
    let mut times = Vec::new();
    for _ in 0..20 {
        log.append(&b, NOW, 0).unwrap();
        let t = Instant::now();
        log.flush().unwrap();
        times.push(t.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(|a, b| a.total_cmp(b));
    println!(
        "flush after one 16 KB append (fsync of segment + indexes): median {:.2} ms, min {:.2} ms, max {:.2} ms",
        times[10], times[0], times[19]
    );
    log.delete(None).unwrap();
}
