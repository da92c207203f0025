//! PartitionMovements: Java's record of partitions moved during the general path's
//! reassignments, used to undo a move instead of making a second one (`getTheActualPartitionToBeMoved`).
//!
//! When a partition of topic T is about to move from A to B while some partition of T earlier
//! moved from B to A, Java moves that one back instead, picking it with
//! `HashSet.iterator().next()`. Each such set is replayed with [`JavaHashTable`], so the pick
//! is Java's.

use std::collections::HashMap;

use crate::assignors::java::{topic_partition_hash, JavaHashTable};

/// Movements tracks, per partition, where it was first taken from and where it is now.
pub(crate) struct Movements {
    /// partition -> (source, destination)
    moves: HashMap<u32, (u32, u32)>,
    /// (topic, source, destination) -> the partitions that moved that way
    by_pair: HashMap<(u32, u32, u32), JavaHashTable>,
    /// number of (source, destination) pairs recorded per topic
    pairs_per_topic: HashMap<u32, u32>,
}

/// PartitionHash gives the Java hash and topic of a global partition index.
pub(crate) trait PartitionHash {
    fn topic_of(&self, p: u32) -> u32;
    fn java_hash(&self, p: u32) -> i32;
}

/// Hashes is a [`PartitionHash`] over the model's layout.
pub(crate) struct Hashes<'a> {
    pub offsets: &'a [u32],
    pub topic_hashes: &'a [i32],
}

impl PartitionHash for Hashes<'_> {
    fn topic_of(&self, p: u32) -> u32 {
        (self.offsets.partition_point(|&o| o <= p) - 1) as u32
    }
    fn java_hash(&self, p: u32) -> i32 {
        let t = self.topic_of(p) as usize;
        topic_partition_hash(self.topic_hashes[t], (p - self.offsets[t]) as i32)
    }
}

impl Movements {
    pub fn new() -> Self {
        Movements {
            moves: HashMap::new(),
            by_pair: HashMap::new(),
            pairs_per_topic: HashMap::new(),
        }
    }

    fn remove_record(&mut self, p: u32, h: &impl PartitionHash) -> (u32, u32) {
        let (src, dst) = self.moves.remove(&p).expect("a recorded move");
        let t = h.topic_of(p);
        let key = (t, src, dst);
        let set = self.by_pair.get_mut(&key).expect("a recorded pair");
        set.remove(p, h.java_hash(p));
        if set.is_empty() {
            self.by_pair.remove(&key);
            let n = self.pairs_per_topic.get_mut(&t).expect("a recorded topic");
            *n -= 1;
            if *n == 0 {
                self.pairs_per_topic.remove(&t);
            }
        }
        (src, dst)
    }

    fn add_record(&mut self, p: u32, src: u32, dst: u32, h: &impl PartitionHash) {
        self.moves.insert(p, (src, dst));
        let t = h.topic_of(p);
        let set = self.by_pair.entry((t, src, dst)).or_insert_with(|| {
            *self.pairs_per_topic.entry(t).or_insert(0) += 1;
            JavaHashTable::new()
        });
        set.insert(p, h.java_hash(p), |k| h.java_hash(k));
    }

    /// move_partition is Java's `movePartition`: record that `p` goes from `old` to `new`; a
    /// partition going back where it came from has no record left.
    pub fn move_partition(&mut self, p: u32, old: u32, new: u32, h: &impl PartitionHash) {
        if self.moves.contains_key(&p) {
            let (src, _) = self.remove_record(p, h);
            if src != new {
                self.add_record(p, src, new, h);
            }
        } else {
            self.add_record(p, old, new, h);
        }
    }

    /// actual_partition_to_move is Java's `getTheActualPartitionToBeMoved`.
    pub fn actual_partition_to_move(
        &self,
        p: u32,
        old: u32,
        new: u32,
        h: &impl PartitionHash,
    ) -> u32 {
        let t = h.topic_of(p);
        if !self.pairs_per_topic.contains_key(&t) {
            return p;
        }
        let old = match self.moves.get(&p) {
            Some(&(src, _)) => src,
            None => old,
        };
        match self.by_pair.get(&(t, new, old)) {
            Some(set) => set.first().unwrap_or(p),
            None => p,
        }
    }
}
