//! Java's ordering rules that Kafka's assignors depend on: `String.compareTo`, `String.hashCode`,
//! `TopicPartition.hashCode`, and the iteration order of `java.util.HashMap` / `HashSet`.
//!
//! Kafka's assignors iterate hash maps keyed by member id or topic name, and `HashSet`s of
//! partitions, so their output depends on the JDK's table layout. [`JavaHashTable`] replays that
//! layout exactly for chained bins: bucket `(h ^ h >>> 16) & (capacity - 1)`, the table doubling
//! when the size exceeds 0.75 of the capacity (or a bin reaching 9 entries while the table is
//! smaller than 64), `tableSizeFor` for sized constructors, and insertion order within a bin.
//! A bin of 9 or more entries in a table of 64 or more becomes a red-black tree in the JDK, whose
//! iteration starts at the tree root; [`JavaHashTable::exact`] turns false when that happens.

use std::cmp::Ordering;
use std::collections::BTreeMap;

/// java_string_hash is Java's `String.hashCode()`: `s[0]*31^(n-1) + ... + s[n-1]` over UTF-16
/// code units, in wrapping 32-bit arithmetic.
pub fn java_string_hash(s: &str) -> i32 {
    let mut h: i32 = 0;
    if s.is_ascii() {
        for &b in s.as_bytes() {
            h = h.wrapping_mul(31).wrapping_add(b as i32);
        }
    } else {
        for u in s.encode_utf16() {
            h = h.wrapping_mul(31).wrapping_add(u as i32);
        }
    }
    h
}

/// topic_partition_hash is Java's `TopicPartition.hashCode()`: `31 * (31 + partition) + topic.hashCode()`.
pub fn topic_partition_hash(topic_hash: i32, partition: i32) -> i32 {
    31i32
        .wrapping_mul(31i32.wrapping_add(partition))
        .wrapping_add(topic_hash)
}

/// java_cmp is Java's `String.compareTo`: lexicographic over UTF-16 code units, then by length.
/// It differs from Rust's `str` order (code points) when a character above U+FFFF meets one in
/// U+E000..U+FFFF.
pub fn java_cmp(a: &str, b: &str) -> Ordering {
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    let common = ab.iter().zip(bb).take_while(|(x, y)| x == y).count();
    if common == ab.len() || common == bb.len() {
        // One is a prefix of the other (in bytes, hence in characters and code units).
        return ab.len().cmp(&bb.len());
    }
    // Back up to the start of the character that differs.
    let mut start = common;
    while !a.is_char_boundary(start) {
        start -= 1;
    }
    let ca = a[start..].chars().next().map_or(0, first_unit);
    let cb = b[start..].chars().next().map_or(0, first_unit);
    match ca.cmp(&cb) {
        // Same leading unit: both are supplementary characters sharing a high surrogate, where
        // code point order equals UTF-16 order.
        Ordering::Equal => a[start..].cmp(&b[start..]),
        o => o,
    }
}

fn first_unit(c: char) -> u16 {
    let mut buf = [0u16; 2];
    c.encode_utf16(&mut buf)[0]
}

/// spread is `HashMap.hash`: the hash with its high half folded into the low half.
#[inline]
pub fn spread(h: i32) -> u32 {
    let h = h as u32;
    h ^ (h >> 16)
}

/// table_size_for is `HashMap.tableSizeFor`: the smallest power of two >= `c` (at least 1).
pub fn table_size_for(c: usize) -> usize {
    c.max(1).next_power_of_two().min(1 << 30)
}

const TREEIFY_THRESHOLD: usize = 8;
const MIN_TREEIFY_CAPACITY: usize = 64;

/// JavaHashTable replays the bucket layout of a `java.util.HashMap` (or the `HashSet` backed by
/// one) whose keys are small integer ids with caller-supplied Java hash codes. It answers the
/// one question the assignors need: in which order does Java iterate the keys present now?
#[derive(Debug, Clone)]
pub struct JavaHashTable {
    cap: usize,
    // Before the first insert: the capacity the table will be created with.
    initial: usize,
    size: usize,
    bins: BTreeMap<u32, Vec<u32>>,
    exact: bool,
}

impl Default for JavaHashTable {
    fn default() -> Self {
        Self::new()
    }
}

impl JavaHashTable {
    /// new is `new HashMap<>()`: capacity 16 on the first insert.
    pub fn new() -> Self {
        JavaHashTable {
            cap: 0,
            initial: 16,
            size: 0,
            bins: BTreeMap::new(),
            exact: true,
        }
    }

    /// with_capacity is `new HashMap<>(n)`: the table starts at `tableSizeFor(n)`.
    pub fn with_capacity(n: usize) -> Self {
        JavaHashTable {
            initial: table_size_for(n),
            ..Self::new()
        }
    }

    /// for_copy_of is `new HashMap<>(m)` for a map `m` of `n` entries.
    pub fn for_copy_of(n: usize) -> Self {
        if n == 0 {
            return Self::new();
        }
        let t = (n as f32 / 0.75f32 + 1.0f32) as usize;
        JavaHashTable {
            initial: table_size_for(t),
            ..Self::new()
        }
    }

    /// for_hash_set_of is `new HashSet<>(c)` for a collection of `n` elements.
    pub fn for_hash_set_of(n: usize) -> Self {
        Self::with_capacity(((n as f32 / 0.75f32) as usize + 1).max(16))
    }

    /// len is the number of keys present.
    pub fn len(&self) -> usize {
        self.size
    }

    /// is_empty says whether no key is present.
    pub fn is_empty(&self) -> bool {
        self.size == 0
    }

    /// exact is false once a bin became a red-black tree in the JDK, whose order is not replayed.
    pub fn exact(&self) -> bool {
        self.exact
    }

    fn threshold(&self) -> usize {
        (self.cap as f32 * 0.75f32) as usize
    }

    fn bucket(&self, hash: i32) -> u32 {
        spread(hash) & (self.cap as u32 - 1)
    }

    /// insert adds `key` (absent keys only: the caller knows membership) at the end of its bin,
    /// resizing as the JDK does.
    pub fn insert(&mut self, key: u32, hash: i32, hash_of: impl Fn(u32) -> i32) {
        if self.cap == 0 {
            self.cap = self.initial;
        }
        let b = self.bucket(hash);
        let bin = self.bins.entry(b).or_default();
        bin.push(key);
        let bin_len = bin.len();
        if bin_len > TREEIFY_THRESHOLD {
            if self.cap < MIN_TREEIFY_CAPACITY {
                self.resize(&hash_of);
            } else {
                self.exact = false;
            }
        }
        self.size += 1;
        if self.size > self.threshold() {
            self.resize(&hash_of);
        }
    }

    /// remove takes `key` out of its bin; the order of the others is unchanged.
    pub fn remove(&mut self, key: u32, hash: i32) -> bool {
        if self.cap == 0 {
            return false;
        }
        let b = self.bucket(hash);
        let Some(bin) = self.bins.get_mut(&b) else {
            return false;
        };
        let Some(i) = bin.iter().position(|&k| k == key) else {
            return false;
        };
        bin.remove(i);
        if bin.is_empty() {
            self.bins.remove(&b);
        }
        self.size -= 1;
        true
    }

    fn resize(&mut self, hash_of: &impl Fn(u32) -> i32) {
        self.cap *= 2;
        let old = std::mem::take(&mut self.bins);
        // Each new bin is filled from exactly one old bin, in its order: the JDK's lo/hi split.
        for (_, bin) in old {
            for k in bin {
                let b = self.bucket(hash_of(k));
                self.bins.entry(b).or_default().push(k);
            }
        }
    }

    /// first is `iterator().next()`: the first key of the lowest non-empty bin.
    pub fn first(&self) -> Option<u32> {
        self.bins.values().next().and_then(|b| b.first().copied())
    }

    /// iter walks the keys in Java's iteration order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.bins.values().flat_map(|b| b.iter().copied())
    }
}

/// hash_map_order returns the positions of `hashes` (distinct keys, in insertion order) in the
/// order a default-constructed `HashMap` filled in that order iterates them.
pub fn hash_map_order(hashes: &[i32]) -> Vec<usize> {
    order_in(JavaHashTable::new(), hashes)
}

/// order_in inserts the keys `0..hashes.len()` into `table` and returns its iteration order.
pub fn order_in(mut table: JavaHashTable, hashes: &[i32]) -> Vec<usize> {
    for (i, &h) in hashes.iter().enumerate() {
        table.insert(i as u32, h, |k| hashes[k as usize]);
    }
    table.iter().map(|k| k as usize).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_matches_java() {
        // Values of "x".hashCode() in Java.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99162322);
        assert_eq!(
            java_string_hash("member-10"),
            java_string_hash("member-1").wrapping_mul(31) + 48
        );
        // Polygenelubricants: Java's classic Integer.MIN_VALUE hash.
        assert_eq!(java_string_hash("polygenelubricants"), i32::MIN);
        // Non-BMP characters hash as two surrogate units.
        assert_eq!(java_string_hash("\u{1F600}"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn compare_is_utf16_order() {
        assert_eq!(java_cmp("a", "b"), Ordering::Less);
        assert_eq!(java_cmp("ab", "a"), Ordering::Greater);
        assert_eq!(java_cmp("c10", "c9"), Ordering::Less);
        // U+FF61 (one unit 0xFF61) sorts after U+1F600 (units 0xD83D 0xDE00) in Java, before in Rust.
        assert_eq!(java_cmp("\u{FF61}", "\u{1F600}"), Ordering::Greater);
        assert_eq!("\u{FF61}".cmp("\u{1F600}"), Ordering::Less);
        assert_eq!(java_cmp("x\u{1F600}", "x\u{1F601}"), Ordering::Less);
    }

    #[test]
    fn hash_map_order_matches_java_for_s3() {
        // From java-golden-vectors.txt S3: HashMap iteration order of [member-10, member-9, member-1]
        // is [member-1, member-9, member-10].
        let ids = ["member-10", "member-9", "member-1"];
        let hashes: Vec<i32> = ids.iter().map(|s| java_string_hash(s)).collect();
        let order: Vec<&str> = hash_map_order(&hashes)
            .into_iter()
            .map(|i| ids[i])
            .collect();
        assert_eq!(order, ["member-1", "member-9", "member-10"]);
        let ids = ["c0", "c1", "c2"];
        let hashes: Vec<i32> = ids.iter().map(|s| java_string_hash(s)).collect();
        assert_eq!(hash_map_order(&hashes), [0, 1, 2]);
    }

    #[test]
    fn table_grows_at_three_quarters() {
        let hashes: Vec<i32> = (0..13).map(|i| i * 16).collect();
        // 12 keys fit in 16 buckets; all hash to bucket 0 until the 13th doubles the table.
        let mut t = JavaHashTable::new();
        for (i, &h) in hashes.iter().enumerate().take(8) {
            t.insert(i as u32, h, |k| hashes[k as usize]);
        }
        assert_eq!(t.cap, 16);
        // The 9th entry in one bin makes the JDK resize a table smaller than 64.
        t.insert(8, hashes[8], |k| hashes[k as usize]);
        assert_eq!(t.cap, 32);
        assert_eq!(t.iter().collect::<Vec<_>>(), [0, 2, 4, 6, 8, 1, 3, 5, 7]);
        assert!(t.exact());
    }

    #[test]
    fn sizes_follow_table_size_for() {
        assert_eq!(table_size_for(0), 1);
        assert_eq!(table_size_for(17), 32);
        assert_eq!(JavaHashTable::for_hash_set_of(3).initial, 16);
        assert_eq!(JavaHashTable::for_hash_set_of(30).initial, 64);
        assert_eq!(JavaHashTable::for_copy_of(12).initial, 32);
    }
}
