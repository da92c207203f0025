//! The one-core limit of key partitioning: murmur2 over keys laid out contiguously (as in an
//! Arrow binary array), beside the same keys through `keys::partition_column`.
//!
//! `cargo bench --bench hash_loop` (or `make bench`). A plain harness keeps the build light:
//! each figure is the best of several timed passes over 1,000,000 keys.

use std::hint::black_box;
use std::time::Instant;

use kgroup::partitioners::keys::{partition_column, raw_murmur2_loop, KeyColumn};
use kgroup::KeyHash;

const N: usize = 1_000_000;
const PASSES: usize = 15;

fn keys(len: usize) -> (Vec<i32>, Vec<u8>) {
    // Random hex keys from a fixed-seed xorshift, as the Python benchmarks use.
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let hex = b"0123456789abcdef";
    let mut data = Vec::with_capacity(N * len);
    let mut offsets = Vec::with_capacity(N + 1);
    offsets.push(0);
    for _ in 0..N {
        for _ in 0..len {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            data.push(hex[(x & 15) as usize]);
        }
        offsets.push(data.len() as i32);
    }
    (offsets, data)
}

fn best<F: FnMut()>(mut f: F) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..PASSES {
        let t = Instant::now();
        f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    best
}

fn main() {
    println!("{:<40} {:>12} {:>10}", "case", "M keys/s", "ns/key");
    for len in [16usize, 100] {
        let (offsets, data) = keys(len);
        let mut out = vec![0i32; N];
        // The partition count arrives at run time, as it does from a caller.
        let n = black_box(12i32);
        let raw = best(|| {
            raw_murmur2_loop(&offsets, &data, n, &mut out);
            black_box(&out);
        });
        let col = KeyColumn::Offsets32 {
            offsets: &offsets,
            data: &data,
            validity: None,
        };
        let column = best(|| {
            partition_column(&col, KeyHash::Murmur2, 12, &mut out).unwrap();
            black_box(&out);
        });
        for (name, secs) in [
            ("raw murmur2 loop", raw),
            ("keys::partition_column", column),
        ] {
            println!(
                "{:<40} {:>12.1} {:>10.2}",
                format!("{name}, {len}-byte keys"),
                N as f64 / secs / 1e6,
                secs * 1e9 / N as f64
            );
        }
    }
}
