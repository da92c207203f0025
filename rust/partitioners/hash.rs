//! Key hashes of the Kafka producers: Java's murmur2 and librdkafka's crc32 and fnv1a.
//!
//! Every function here is pure and deterministic across platforms (byte order is fixed).

use crate::errors::{Error, Result};

/// murmur2 is Kafka's MurmurHash2 (seed 0x9747b28c), as `Utils.murmur2(byte[])` returns it:
/// a signed Java int. Bytes are read unsigned and blocks little-endian on every platform.
#[inline]
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let len = data.len();
    let mut h: u32 = SEED ^ (len as u32);
    let mut chunks = data.chunks_exact(4);
    for c in &mut chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = chunks.remainder();
    // The tail cases fall through as in Java's switch; the multiply only runs for a non-empty tail.
    match tail.len() {
        3 => {
            h ^= (tail[2] as u32) << 16;
            h ^= (tail[1] as u32) << 8;
            h ^= tail[0] as u32;
            h = h.wrapping_mul(M);
        }
        2 => {
            h ^= (tail[1] as u32) << 8;
            h ^= tail[0] as u32;
            h = h.wrapping_mul(M);
        }
        1 => {
            h ^= tail[0] as u32;
            h = h.wrapping_mul(M);
        }
        _ => {}
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// to_positive is Kafka's `Utils.toPositive`: clears the sign bit. It is not `abs()`.
#[inline]
pub fn to_positive(x: i32) -> i32 {
    x & 0x7fff_ffff
}

/// crc32 is zlib's CRC-32 (IEEE), the hash of librdkafka's `consistent` partitioners.
#[inline]
pub fn crc32(data: &[u8]) -> u32 {
    crc32fast::hash(data)
}

/// fnv1a is librdkafka's `rd_fnv1a`: FNV-1a 32, then the absolute value of the signed result
/// (to match Sarama's hash partitioner). `i32::MIN` stays 0x80000000, as the C code leaves it.
#[inline]
pub fn fnv1a(data: &[u8]) -> u32 {
    const PRIME: u32 = 0x0100_0193;
    const OFFSET: u32 = 0x811c_9dc5;
    let mut h = OFFSET;
    for &b in data {
        h ^= b as u32;
        h = h.wrapping_mul(PRIME);
    }
    (h as i32).wrapping_abs() as u32
}

/// KeyHash names the keyed partitioner of a producer, so a key can be placed where that
/// producer would place it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHash {
    /// Java's producer (all versions), kafka-python, franz-go, librdkafka `murmur2(_random)`:
    /// `toPositive(murmur2(key)) % n`.
    Murmur2,
    /// librdkafka `consistent` and `consistent_random` (its default): `crc32(key) % n`, unsigned.
    Crc32,
    /// librdkafka `fnv1a(_random)` and Sarama's hash partitioner: `fnv1a(key) % n`, unsigned.
    Fnv1a,
}

/// HASH_NAMES lists the names [`KeyHash::from_name`] accepts, in the order errors print them.
pub const HASH_NAMES: [&str; 3] = ["murmur2", "crc32", "fnv1a"];

impl KeyHash {
    /// from_name parses a hash name; an unknown one is an error that lists the valid names.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "murmur2" => Ok(KeyHash::Murmur2),
            "crc32" => Ok(KeyHash::Crc32),
            "fnv1a" => Ok(KeyHash::Fnv1a),
            other => Err(Error::InvalidArgument(format!(
                "unknown hash {other:?}: expected one of {}",
                HASH_NAMES.join(", ")
            ))),
        }
    }

    /// name is the name [`KeyHash::from_name`] accepts for this hash.
    pub fn name(self) -> &'static str {
        match self {
            KeyHash::Murmur2 => "murmur2",
            KeyHash::Crc32 => "crc32",
            KeyHash::Fnv1a => "fnv1a",
        }
    }

    /// partition maps a (non-null) key to a partition in `0..num_partitions`.
    /// `num_partitions` must be at least 1 (callers check it once per batch).
    #[inline]
    pub fn partition(self, key: &[u8], num_partitions: u32) -> i32 {
        debug_assert!(num_partitions >= 1);
        match self {
            KeyHash::Murmur2 => (to_positive(murmur2(key)) as u32 % num_partitions) as i32,
            KeyHash::Crc32 => (crc32(key) % num_partitions) as i32,
            KeyHash::Fnv1a => (fnv1a(key) % num_partitions) as i32,
        }
    }
}

/// FastMod computes `a % n` for any u32 `a` with two multiplications instead of a division
/// (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019). Exact for every
/// `a` and every `n >= 1`; it pays off when one `n` serves a whole batch of keys.
#[derive(Debug, Clone, Copy)]
pub struct FastMod {
    m: u64,
    n: u32,
}

impl FastMod {
    /// new prepares the divisor `n` (at least 1).
    pub fn new(n: u32) -> Self {
        debug_assert!(n >= 1);
        FastMod {
            m: (u64::MAX / n as u64).wrapping_add(1),
            n,
        }
    }

    /// reduce is `a % n`.
    #[inline(always)]
    pub fn reduce(self, a: u32) -> u32 {
        let low = self.m.wrapping_mul(a as u64);
        ((low as u128 * self.n as u128) >> 64) as u32
    }
}

impl KeyHash {
    /// partition_fast is [`KeyHash::partition`] with a prepared divisor.
    #[inline(always)]
    pub fn partition_fast(self, key: &[u8], n: FastMod) -> i32 {
        let h = match self {
            KeyHash::Murmur2 => to_positive(murmur2(key)) as u32,
            KeyHash::Crc32 => crc32(key),
            KeyHash::Fnv1a => fnv1a(key),
        };
        n.reduce(h) as i32
    }
}

/// check_partitions turns a partition count from a caller into the divisor the loops use.
pub fn check_partitions(num_partitions: i64) -> Result<u32> {
    if num_partitions < 1 || num_partitions > i32::MAX as i64 {
        return Err(Error::InvalidArgument(format!(
            "num_partitions must be between 1 and {}, got {num_partitions}",
            i32::MAX
        )));
    }
    Ok(num_partitions as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors from Kafka's UtilsTest.testMurmur2.
    #[test]
    fn murmur2_kafka_utils_test() {
        let cases: [(&[u8], i32); 6] = [
            (b"21", -973932308),
            (b"foobar", -790332482),
            (b"a-little-bit-long-string", -985981536),
            (b"a-little-bit-longer-string", -1486304829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58897971,
            ),
            (b"abc", 479470107),
        ];
        for (k, want) in cases {
            assert_eq!(murmur2(k), want, "{:?}", std::str::from_utf8(k));
        }
    }

    // Vectors from librdkafka's src/rdmurmur2.c unittest_murmur2 (hex, as unsigned).
    #[test]
    fn murmur2_librdkafka_unittest() {
        let cases: [(&str, u32); 11] = [
            ("kafka", 0xd067cf64),
            ("giberish123456789", 0x8f552b0c),
            ("1234", 0x9fc97b14),
            ("234", 0xe7c009ca),
            ("34", 0x873930da),
            ("4", 0x5a4b5ca1),
            ("PreAmbleWillBeRemoved,ThePrePartThatIs", 0x78424f1c),
            ("reAmbleWillBeRemoved,ThePrePartThatIs", 0x4a62b377),
            ("eAmbleWillBeRemoved,ThePrePartThatIs", 0xe0e4e09e),
            ("AmbleWillBeRemoved,ThePrePartThatIs", 0x62b8b43f),
            ("", 0x106e08d9),
        ];
        for (k, want) in cases {
            assert_eq!(murmur2(k.as_bytes()) as u32, want, "{k}");
        }
    }

    // Vectors from librdkafka's src/rdfnv1a.c unittest_fnv1a ("acquired via Go hash/fnv").
    #[test]
    fn fnv1a_librdkafka_unittest() {
        let cases: [(&str, u32); 11] = [
            ("kafka", 0x0d33c4e1),
            ("giberish123456789", 0x77a58295),
            ("1234", 0x023bdd03),
            ("234", 0x2dea3cd2),
            ("34", 0x740fa83e),
            ("4", 0x310ca263),
            ("PreAmbleWillBeRemoved,ThePrePartThatIs", 0x65cbd69c),
            ("reAmbleWillBeRemoved,ThePrePartThatIs", 0x6e49c79a),
            ("eAmbleWillBeRemoved,ThePrePartThatIs", 0x69eed356),
            ("AmbleWillBeRemoved,ThePrePartThatIs", 0x6abcc023),
            ("", 0x7ee3623b),
        ];
        for (k, want) in cases {
            assert_eq!(fnv1a(k.as_bytes()), want, "{k}");
        }
    }

    // kafka-python test/test_partitioner.py::test_murmur2_java_compatibility (N = 1000).
    #[test]
    fn partition_kafka_python_java_vectors() {
        let cases: [(&[u8], i32); 6] = [
            (b"", 681),
            (b"a", 524),
            (b"ab", 434),
            (b"abc", 107),
            (b"123456789", 566),
            (b"\x00 ", 742),
        ];
        for (k, want) in cases {
            assert_eq!(KeyHash::Murmur2.partition(k, 1000), want);
        }
    }

    // confluent-kafka-python#1481: Java 40, librdkafka's default crc32 36 (N = 50);
    // kafkajs#1154: Java 10, crc32 9 (N = 15).
    #[test]
    fn partition_java_vs_crc32_issue_vectors() {
        let k = br#"Struct{documentKey={"_id": "638d1b94ce8def06be68b439"}}"#;
        assert_eq!(KeyHash::Murmur2.partition(k, 50), 40);
        assert_eq!(KeyHash::Crc32.partition(k, 50), 36);
        assert_eq!(KeyHash::Murmur2.partition(b"TT0124", 15), 10);
        assert_eq!(KeyHash::Crc32.partition(b"TT0124", 15), 9);
    }

    #[test]
    fn fast_mod_equals_rem() {
        let mut x: u64 = 88172645463325252;
        for n in [1u32, 2, 3, 7, 12, 1000, 65_537, i32::MAX as u32, u32::MAX] {
            let f = FastMod::new(n);
            for a in [0u32, 1, n - 1, n, u32::MAX, u32::MAX - 1, i32::MAX as u32] {
                assert_eq!(f.reduce(a), a % n, "{a} % {n}");
            }
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let a = x as u32;
                assert_eq!(f.reduce(a), a % n, "{a} % {n}");
            }
        }
    }

    #[test]
    fn crc32_is_zlib() {
        assert_eq!(crc32(b""), 0);
        assert_eq!(crc32(b"123456789"), 0xcbf43926);
    }

    #[test]
    fn to_positive_is_not_abs() {
        assert_eq!(to_positive(-1), i32::MAX);
        assert_eq!(to_positive(i32::MIN), 0);
        assert_eq!(to_positive(5), 5);
    }

    #[test]
    fn hash_names_round_trip_and_reject_unknown() {
        for n in HASH_NAMES {
            assert_eq!(KeyHash::from_name(n).unwrap().name(), n);
        }
        let err = KeyHash::from_name("md5").unwrap_err().to_string();
        assert!(err.contains("murmur2, crc32, fnv1a"), "{err}");
    }
}
