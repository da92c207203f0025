//! Rng: the seedable random source behind the null-key partitioners.
//!
//! Java draws from `ThreadLocalRandom`, which cannot be reproduced; the partitioners
//! reproduce Kafka's *policy* and take their randomness from here, seeded for tests.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

/// Rng is SplitMix64: small, fast, and good enough for picking partitions. Deterministic for a
/// given seed; not for cryptography.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// new seeds the generator; `None` draws a seed from the process's hash randomness.
    pub fn new(seed: Option<u64>) -> Self {
        let state = seed.unwrap_or_else(|| {
            let mut h = RandomState::new().build_hasher();
            h.write_u64(std::process::id() as u64);
            h.finish()
        });
        Rng { state }
    }

    /// next_u64 returns the next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// next_int is Java's `Random.nextInt()`: any i32.
    pub fn next_int(&mut self) -> i32 {
        (self.next_u64() >> 32) as i32
    }

    /// next_positive is Kafka's `Utils.toPositive(ThreadLocalRandom.current().nextInt())`.
    pub fn next_positive(&mut self) -> i32 {
        crate::partitioners::hash::to_positive(self.next_int())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_is_reproducible_and_spread() {
        let mut a = Rng::new(Some(7));
        let mut b = Rng::new(Some(7));
        let xs: Vec<i32> = (0..100).map(|_| a.next_positive()).collect();
        let ys: Vec<i32> = (0..100).map(|_| b.next_positive()).collect();
        assert_eq!(xs, ys);
        assert!(xs.iter().all(|&x| x >= 0));
        let mut counts = [0u32; 4];
        for _ in 0..40_000 {
            counts[(a.next_positive() % 4) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }
}
