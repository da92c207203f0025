//! The general builder: Java's `GeneralAssignmentBuilder` (KIP-54's algorithm, optimised by
//! KAFKA-12675), used when members subscribe to different topics.
//!
//! Java's decisions are replayed one by one: unassigned partitions (topics with the fewest
//! subscribers first) go to the least loaded subscriber by (partition count, member id); then
//! `performReassignments` walks the partitions, giving a partition back to its previous owner
//! or to the least loaded subscriber while the assignment is not balanced, undoing earlier moves
//! where it can (`PartitionMovements`), and the whole balancing is reverted if it did not lower
//! the balance score.
//!
//! What differs is the data structures. Java keeps one `TreeSet` of all members and answers
//! "least loaded subscriber of topic T" by walking it, answers `isBalanced()` by scanning every
//! partition of every member's topics, and copies the whole assignment to be able to revert.
//! Here members with the same topics (and rack) form a group with its own ordered set, so the
//! least loaded subscriber is the best of a few group heads; `isBalanced()` is decided from
//! group minima and maxima (the answer is the same: some member below its maximum lacks a
//! partition of its topics whose owner has two more partitions than it); it is recomputed only
//! after a move; and a revert undoes a journal of the moves.

use std::collections::{BTreeSet, HashMap};

use super::movements::{Hashes, Movements};
use super::{id_ranks, Claims, Lookup, StickyAssignor, DEFAULT_GENERATION, NONE};
use crate::assignors::java::java_string_hash;
use crate::assignors::model::Model;
use crate::assignors::racks::Racks;

const TOMB: u32 = u32::MAX;

struct Group {
    topics: Vec<u32>,
    bits: Vec<u64>,
    rack: Option<u32>,
    max_size: u32,
    /// (size, id rank) of the participating members of this group.
    set: BTreeSet<(u32, u32)>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Relation {
    Disjoint,
    /// Every topic of the owners' group is a topic of the other group.
    Subset,
    Partial,
}

/// Loads counts participating members by load, for the smallest and largest load.
#[derive(Default)]
struct Loads {
    count: Vec<u32>,
    members: usize,
    min: u32,
    max: u32,
}

impl Loads {
    fn add(&mut self, s: u32) {
        let i = s as usize;
        if i >= self.count.len() {
            self.count.resize(i + 1, 0);
        }
        self.count[i] += 1;
        self.members += 1;
        if self.members == 1 {
            (self.min, self.max) = (s, s);
        } else {
            self.min = self.min.min(s);
            self.max = self.max.max(s);
        }
    }

    fn remove(&mut self, s: u32) {
        self.count[s as usize] -= 1;
        self.members -= 1;
        if self.members == 0 {
            return;
        }
        while self.count[self.min as usize] == 0 {
            self.min += 1;
        }
        while self.count[self.max as usize] == 0 {
            self.max -= 1;
        }
    }

    fn min(&self) -> Option<u32> {
        (self.members > 0).then_some(self.min)
    }

    fn max(&self) -> Option<u32> {
        (self.members > 0).then_some(self.max)
    }
}

struct Journal {
    p: u32,
    old: u32,
    new: u32,
    old_pos: u32,
}

struct General<'m, 'a> {
    model: &'m Model<'a>,
    racks: Option<&'m Racks>,
    rank: Vec<u32>,
    by_rank: Vec<u32>,
    ptopic: Vec<u32>,
    potential: Vec<u32>,
    member_group: Vec<u32>,
    groups: Vec<Group>,
    topic_groups: Vec<Vec<u32>>,
    relations: HashMap<(u32, u32), Relation>,
    owner: Vec<u32>,
    pos: Vec<u32>,
    lists: Vec<Vec<u32>>,
    size: Vec<u32>,
    participating: Vec<bool>,
    /// Loads of the participating members: Java's `sortedCurrentSubscriptions` first and last.
    loads: Loads,
    prev: Vec<(u32, i32)>,
    movements: Movements,
    topic_hashes: Vec<i32>,
    journal: Option<Vec<Journal>>,
    balanced: Option<bool>,
    /// Partitions Java's stickiness rule gave back to a previous owner that no longer
    /// subscribes to their topic (kept only while that is still so).
    foreign: Vec<u32>,
}

/// build returns each member's partitions (input order) in Java's list order.
pub(super) fn build(
    model: &Model<'_>,
    racks: Option<&Racks>,
    claims: &Claims,
    assignor: &StickyAssignor,
    max_generation: i32,
) -> Vec<Vec<u32>> {
    let n = model.input.members.len();
    let total = model.total();
    let rank = id_ranks(model);
    let mut by_rank = vec![0u32; n];
    for (m, &r) in rank.iter().enumerate() {
        by_rank[r as usize] = m as u32;
    }
    let mut ptopic = vec![0u32; total];
    for t in 0..model.num_topics() {
        for p in model.offsets[t]..model.offsets[t + 1] {
            ptopic[p as usize] = t as u32;
        }
    }
    let mut potential = vec![0u32; model.num_topics()];
    for ts in &model.member_topics {
        for &t in ts.iter() {
            potential[t as usize] += 1;
        }
    }
    // Groups of members with the same topics and (when rack-aware) the same rack.
    let words = model.num_topics().div_ceil(64);
    let mut group_ids: HashMap<(&[u32], Option<u32>), u32> = HashMap::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut member_group = vec![0u32; n];
    for (m, slot) in member_group.iter_mut().enumerate() {
        let rack = racks.and_then(|r| r.member_rack[m]);
        let topics: &[u32] = &model.member_topics[m];
        let g = *group_ids.entry((topics, rack)).or_insert_with(|| {
            let mut bits = vec![0u64; words];
            for &t in topics {
                bits[t as usize / 64] |= 1 << (t % 64);
            }
            let max_size = topics.iter().map(|&t| model.counts[t as usize]).sum();
            groups.push(Group {
                topics: topics.to_vec(),
                bits,
                rack,
                max_size,
                set: BTreeSet::new(),
            });
            (groups.len() - 1) as u32
        });
        *slot = g;
    }
    let mut topic_groups = vec![Vec::new(); model.num_topics()];
    for (g, group) in groups.iter().enumerate() {
        for &t in &group.topics {
            topic_groups[t as usize].push(g as u32);
        }
    }
    let topic_hashes = model.topics.iter().map(|t| java_string_hash(t)).collect();
    let mut s = General {
        model,
        racks,
        rank,
        by_rank,
        ptopic,
        potential,
        member_group,
        groups,
        topic_groups,
        relations: HashMap::new(),
        owner: vec![NONE; total],
        pos: vec![0; total],
        lists: vec![Vec::new(); n],
        size: vec![0; n],
        participating: vec![true; n],
        loads: Loads::default(),
        prev: vec![(NONE, 0); total],
        movements: Movements::new(),
        topic_hashes,
        journal: None,
        balanced: None,
        foreign: Vec::new(),
    };
    s.prepopulate(assignor, max_generation);
    let revocation_required = s.assign_owned(claims);
    // sortedAllPartitions: topics by (number of subscribers, name), partitions ascending.
    let mut topic_order: Vec<u32> = (0..model.num_topics() as u32).collect();
    topic_order.sort_by_key(|&t| (s.potential[t as usize], t));
    let sorted_all: Vec<u32> = topic_order
        .iter()
        .flat_map(|&t| model.offsets[t as usize]..model.offsets[t as usize + 1])
        .collect();
    let unassigned: Vec<u32> = sorted_all
        .iter()
        .copied()
        .filter(|&p| s.owner[p as usize] == NONE)
        .collect();
    for m in 0..n {
        s.insert_sets(m);
    }
    s.balance(sorted_all, unassigned, revocation_required);
    s.lists
        .into_iter()
        .map(|l| l.into_iter().filter(|&p| p != TOMB).collect())
        .collect()
}

impl General<'_, '_> {
    fn subscribed(&self, m: usize, t: u32) -> bool {
        self.model.member_topics[m].binary_search(&t).is_ok()
    }

    fn key(&self, m: usize) -> (u32, u32) {
        (self.size[m], self.rank[m])
    }

    fn insert_sets(&mut self, m: usize) {
        let k = self.key(m);
        self.groups[self.member_group[m] as usize].set.insert(k);
        self.loads.add(k.0);
    }

    fn remove_sets(&mut self, m: usize) {
        let k = self.key(m);
        self.groups[self.member_group[m] as usize].set.remove(&k);
        self.loads.remove(k.0);
    }

    /// prepopulate is Java's `prepopulateCurrentAssignments`: for each partition, the claim of
    /// the highest generation among members whose generation is below the maximum.
    fn prepopulate(&mut self, assignor: &StickyAssignor, max_generation: i32) {
        let model = self.model;
        let mut lookup = Lookup::new(model);
        let mut claimed: Vec<u32> = Vec::new();
        for &m in &model.java_members {
            let data_generation = assignor.member_claims(
                &model.input.members[m].subscription,
                &mut lookup,
                &mut claimed,
            );
            let generation = match data_generation {
                Some(g) if g < max_generation => g,
                None if max_generation > DEFAULT_GENERATION => DEFAULT_GENERATION,
                _ => continue,
            };
            for &p in &claimed {
                let e = &mut self.prev[p as usize];
                if e.0 == NONE || generation > e.1 {
                    *e = (m as u32, generation);
                }
            }
        }
    }

    fn mismatch(&self, m: usize, p: u32) -> bool {
        match self.racks.and_then(|r| r.member_rack[m].map(|k| (r, k))) {
            Some((r, k)) => !r.holds(p, k),
            None => false,
        }
    }

    /// assign_owned is Java's `assignOwnedPartitions`: keep each member's claimed partitions
    /// of topics it still subscribes to (on a matching rack); report whether any were dropped.
    fn assign_owned(&mut self, claims: &Claims) -> bool {
        let mut revocation_required = false;
        for m in 0..self.lists.len() {
            for &p in &claims.owned[m] {
                let t = self.ptopic[p as usize];
                if !self.subscribed(m, t) || self.mismatch(m, p) {
                    revocation_required = true;
                } else {
                    self.append(p, m);
                }
            }
        }
        revocation_required
    }

    fn append(&mut self, p: u32, m: usize) {
        self.owner[p as usize] = m as u32;
        self.pos[p as usize] = self.lists[m].len() as u32;
        self.lists[m].push(p);
        self.size[m] += 1;
    }

    /// least_loaded is the first member of Java's `sortedCurrentSubscriptions` subscribed to
    /// the topic of `p`; with `rack_match`, only members whose rack holds `p` (or without one).
    fn least_loaded(&self, p: u32, rack_match: bool) -> Option<usize> {
        let t = self.ptopic[p as usize];
        let mut best: Option<(u32, u32)> = None;
        for &g in &self.topic_groups[t as usize] {
            let group = &self.groups[g as usize];
            if rack_match {
                if let (Some(k), Some(r)) = (group.rack, self.racks) {
                    if !r.holds(p, k) {
                        continue;
                    }
                }
            }
            if let Some(&k) = group.set.first() {
                if best.is_none_or(|b| k < b) {
                    best = Some(k);
                }
            }
        }
        best.map(|(_, r)| self.by_rank[r as usize] as usize)
    }

    /// min_subscriber_size is the smallest load among the participating subscribers of the
    /// topic of `p`; with `racks_of_p`, among those whose rack holds `p`.
    fn min_subscriber_size(&self, p: u32, racks_of_p: bool) -> Option<u32> {
        let t = self.ptopic[p as usize];
        let mut best: Option<u32> = None;
        for &g in &self.topic_groups[t as usize] {
            let group = &self.groups[g as usize];
            if racks_of_p {
                match (group.rack, self.racks) {
                    (Some(k), Some(r)) if r.holds(p, k) => {}
                    _ => continue,
                }
            }
            if let Some(&(s, _)) = group.set.first() {
                best = Some(best.map_or(s, |b| b.min(s)));
            }
        }
        best
    }

    /// maybe_assign is Java's `maybeAssign`: each partition to the least loaded subscriber.
    fn maybe_assign(&mut self, partitions: &mut Vec<u32>, rack_match: bool, remove_assigned: bool) {
        if !rack_match {
            self.assign_runs(partitions);
            return;
        }
        let mut left = Vec::new();
        for &p in partitions.iter() {
            match self.least_loaded(p, rack_match) {
                Some(m) => {
                    self.remove_sets(m);
                    self.append(p, m);
                    self.insert_sets(m);
                }
                None => left.push(p),
            }
        }
        if remove_assigned {
            *partitions = left;
        }
    }

    fn assign_one(&mut self, p: u32) {
        if let Some(m) = self.least_loaded(p, false) {
            self.remove_sets(m);
            self.append(p, m);
            self.insert_sets(m);
        }
    }

    /// assign_runs is `maybe_assign` without rack matching. Consecutive partitions whose topics
    /// have the same subscriber groups form a run; in a long run the successive least loaded
    /// members come from two sorted queues per group (the members not yet picked, and those
    /// picked, in the order picked, which is sorted too since picks only grow), instead of
    /// reordering a tree after every partition. The picks are the same as one at a time.
    fn assign_runs(&mut self, partitions: &[u32]) {
        const RUN_MIN: usize = 64;
        let mut i = 0;
        while i < partitions.len() {
            let t = self.ptopic[partitions[i] as usize];
            let mut j = i + 1;
            while j < partitions.len() {
                let u = self.ptopic[partitions[j] as usize];
                if u != t && self.topic_groups[u as usize] != self.topic_groups[t as usize] {
                    break;
                }
                j += 1;
            }
            let groups = self.topic_groups[t as usize].clone();
            if j - i < RUN_MIN || groups.is_empty() {
                for &p in &partitions[i..j] {
                    self.assign_one(p);
                }
            } else {
                self.assign_run(&partitions[i..j], &groups);
            }
            i = j;
        }
    }

    fn assign_run(&mut self, run: &[u32], groups: &[u32]) {
        let mut fresh: Vec<(Vec<(u32, u32)>, usize)> = Vec::with_capacity(groups.len());
        let mut picked: Vec<(Vec<(u32, u32)>, usize)> = Vec::with_capacity(groups.len());
        for &g in groups {
            let set = std::mem::take(&mut self.groups[g as usize].set);
            fresh.push((set.into_iter().collect(), 0));
            picked.push((Vec::new(), 0));
        }
        for &p in run {
            let mut best: Option<((u32, u32), usize, bool)> = None;
            for k in 0..groups.len() {
                let (f, fi) = &fresh[k];
                if let Some(&key) = f.get(*fi) {
                    if best.is_none_or(|(b, _, _)| key < b) {
                        best = Some((key, k, false));
                    }
                }
                let (q, qi) = &picked[k];
                if let Some(&key) = q.get(*qi) {
                    if best.is_none_or(|(b, _, _)| key < b) {
                        best = Some((key, k, true));
                    }
                }
            }
            let Some(((size, rank), k, from_picked)) = best else {
                break;
            };
            if from_picked {
                picked[k].1 += 1;
            } else {
                fresh[k].1 += 1;
            }
            let m = self.by_rank[rank as usize] as usize;
            self.loads.remove(size);
            self.append(p, m);
            self.loads.add(size + 1);
            picked[k].0.push((size + 1, rank));
        }
        for (k, &g) in groups.iter().enumerate() {
            let (f, fi) = &fresh[k];
            let (q, qi) = &picked[k];
            let mut merged: Vec<(u32, u32)> = Vec::with_capacity(f.len() - fi + q.len() - qi);
            merged.extend_from_slice(&f[*fi..]);
            merged.extend_from_slice(&q[*qi..]);
            merged.sort_unstable();
            self.groups[g as usize].set = merged.into_iter().collect();
        }
    }

    fn can_participate(&self, m: usize) -> bool {
        let max_size = self.groups[self.member_group[m] as usize].max_size;
        if self.size[m] < max_size {
            return true;
        }
        self.lists[m]
            .iter()
            .any(|&p| p != TOMB && self.potential[self.ptopic[p as usize] as usize] >= 2)
    }

    fn score(&self) -> i64 {
        let mut sizes: Vec<i64> = (0..self.size.len())
            .filter(|&m| self.participating[m])
            .map(|m| self.size[m] as i64)
            .collect();
        sizes.sort_unstable();
        let k = sizes.len() as i64;
        sizes
            .iter()
            .enumerate()
            .map(|(i, &s)| s * (2 * i as i64 - (k - 1)))
            .sum()
    }

    /// balance is Java's `balance`.
    fn balance(
        &mut self,
        mut sorted_all: Vec<u32>,
        unassigned: Vec<u32>,
        revocation_required: bool,
    ) {
        let initializing = self.loads.max().is_none_or(|s| s == 0);
        let mut to_assign = unassigned.clone();
        if self.racks.is_some() {
            self.maybe_assign(&mut to_assign, true, true);
        }
        self.maybe_assign(&mut to_assign, false, false);

        let fixed_topic = |s: &Self, p: u32| s.potential[s.ptopic[p as usize] as usize] < 2;
        sorted_all.retain(|&p| !fixed_topic(self, p));
        let mut unassigned = unassigned;
        unassigned.retain(|&p| !fixed_topic(self, p));
        for m in 0..self.lists.len() {
            if !self.can_participate(m) {
                self.remove_sets(m);
                self.participating[m] = false;
            }
        }

        let score_before = self.score();
        self.journal = Some(Vec::new());
        if !revocation_required {
            self.perform_reassignments(&unassigned);
        }
        let performed = self.perform_reassignments(&sorted_all);
        if !initializing && performed && self.score() >= score_before {
            self.undo();
        }
        self.settle_foreign();
    }

    fn is_foreign(&self, p: u32) -> bool {
        let o = self.owner[p as usize];
        o != NONE && !self.subscribed(o as usize, self.ptopic[p as usize])
    }

    /// settle_foreign moves any partition still held by a member not subscribed to its topic
    /// (Java would hand it out like that) to the least loaded subscriber.
    fn settle_foreign(&mut self) {
        let mut foreign = std::mem::take(&mut self.foreign);
        foreign.sort_unstable();
        foreign.dedup();
        for p in foreign {
            if self.is_foreign(p) {
                let old = self.owner[p as usize] as usize;
                if let Some(new) = self.least_loaded(p, false).or_else(|| {
                    (0..self.lists.len())
                        .filter(|&m| self.subscribed(m, self.ptopic[p as usize]))
                        .min_by_key(|&m| self.key(m))
                }) {
                    self.journal = None;
                    if self.participating[old] {
                        self.remove_sets(old);
                    }
                    let pos = self.pos[p as usize];
                    self.lists[old][pos as usize] = TOMB;
                    self.size[old] -= 1;
                    if self.participating[old] {
                        self.insert_sets(old);
                    }
                    let part = self.participating[new];
                    if part {
                        self.remove_sets(new);
                    }
                    self.append(p, new);
                    if part {
                        self.insert_sets(new);
                    }
                }
            }
        }
    }

    fn perform_reassignments(&mut self, partitions: &[u32]) -> bool {
        let mut performed = false;
        loop {
            let mut modified = false;
            for &p in partitions {
                if self.is_balanced() {
                    break;
                }
                let c = self.owner[p as usize] as usize;
                let (prev, _) = self.prev[p as usize];
                // Give the partition back to its previous owner when that restores balance. Java
                // does so even when that member no longer subscribes to the topic (the partition
                // usually moves on later; if not, `settle_foreign` moves it); when that member
                // cannot take part in the reassignment, Java throws a NullPointerException and
                // kgroup skips the rule.
                if prev != NONE
                    && self.participating[prev as usize]
                    && self.size[c] > self.size[prev as usize] + 1
                {
                    if !self.subscribed(prev as usize, self.ptopic[p as usize]) {
                        self.foreign.push(p);
                    }
                    self.reassign_to(p, prev as usize);
                    performed = true;
                    modified = true;
                    continue;
                }
                let mut found = false;
                if let (Some(r), Some(k)) = (self.racks, self.racks.and_then(|r| r.member_rack[c]))
                {
                    if !r.partition_racks[p as usize].is_empty() && r.holds(p, k) {
                        if let Some(min) = self.min_subscriber_size(p, true) {
                            if self.size[c] > min + 1 {
                                self.reassign(p);
                                performed = true;
                                modified = true;
                                found = true;
                            }
                        }
                    }
                }
                if !found {
                    if let Some(min) = self.min_subscriber_size(p, false) {
                        if self.size[c] > min + 1 {
                            self.reassign(p);
                            performed = true;
                            modified = true;
                        }
                    }
                }
            }
            if !modified {
                return performed;
            }
        }
    }

    /// reassign is Java's one-argument `reassignPartition`: to the least loaded subscriber.
    fn reassign(&mut self, p: u32) {
        if let Some(new) = self.least_loaded(p, false) {
            self.reassign_to(p, new);
        }
    }

    fn hashes(&self) -> Hashes<'_> {
        Hashes {
            offsets: &self.model.offsets,
            topic_hashes: &self.topic_hashes,
        }
    }

    /// reassign_to is Java's two-argument `reassignPartition`.
    fn reassign_to(&mut self, p: u32, new: usize) {
        let c = self.owner[p as usize];
        let q = {
            let h = self.hashes();
            self.movements
                .actual_partition_to_move(p, c, new as u32, &h)
        };
        self.process_movement(q, new);
    }

    /// process_movement is Java's `processPartitionMovement`.
    fn process_movement(&mut self, p: u32, new: usize) {
        let old = self.owner[p as usize] as usize;
        self.remove_sets(old);
        if new != old {
            self.remove_sets(new);
        }
        {
            let h = Hashes {
                offsets: &self.model.offsets,
                topic_hashes: &self.topic_hashes,
            };
            self.movements.move_partition(p, old as u32, new as u32, &h);
        }
        let old_pos = self.pos[p as usize];
        self.lists[old][old_pos as usize] = TOMB;
        self.size[old] -= 1;
        self.append(p, new);
        if let Some(j) = &mut self.journal {
            j.push(Journal {
                p,
                old: old as u32,
                new: new as u32,
                old_pos,
            });
        }
        self.insert_sets(new);
        if new != old {
            self.insert_sets(old);
        }
        self.balanced = None;
    }

    /// undo reverts every move made since the snapshot, restoring each list's order.
    fn undo(&mut self) {
        let journal = self.journal.take().unwrap_or_default();
        for j in journal.into_iter().rev() {
            let (p, old, new) = (j.p, j.old as usize, j.new as usize);
            let popped = self.lists[new].pop();
            debug_assert_eq!(popped, Some(p));
            self.size[new] -= 1;
            self.lists[old][j.old_pos as usize] = p;
            self.size[old] += 1;
            self.owner[p as usize] = old as u32;
            self.pos[p as usize] = j.old_pos;
        }
    }

    fn relation(&mut self, g: u32, h: u32) -> Relation {
        if let Some(&r) = self.relations.get(&(g, h)) {
            return r;
        }
        let (a, b) = (&self.groups[g as usize].bits, &self.groups[h as usize].bits);
        let mut inter = false;
        let mut subset = true;
        for (x, y) in a.iter().zip(b) {
            inter |= x & y != 0;
            subset &= y & !x == 0;
        }
        let r = if !inter {
            Relation::Disjoint
        } else if subset {
            Relation::Subset
        } else {
            Relation::Partial
        };
        self.relations.insert((g, h), r);
        r
    }

    /// is_balanced is Java's `isBalanced`, cached until the next move.
    fn is_balanced(&mut self) -> bool {
        if let Some(b) = self.balanced {
            return b;
        }
        let b = self.compute_balanced();
        self.balanced = Some(b);
        b
    }

    fn compute_balanced(&mut self) -> bool {
        let (Some(min), Some(max)) = (self.loads.min(), self.loads.max()) else {
            return true;
        };
        if min + 1 >= max {
            return true;
        }
        // Java: false when some member below its maximum lacks a partition of its topics owned
        // by a member with at least two more partitions. Per group, only the least loaded
        // member below its maximum needs checking.
        let mut lows: Vec<(u32, u32)> = Vec::new();
        let mut highs: Vec<(u32, u32)> = Vec::new();
        for (g, group) in self.groups.iter().enumerate() {
            if let (Some(&(lo, _)), Some(&(hi, _))) = (group.set.first(), group.set.last()) {
                if lo < group.max_size {
                    lows.push((lo, g as u32));
                }
                highs.push((hi, g as u32));
            }
        }
        highs.sort_unstable_by(|a, b| b.cmp(a));
        // Partitions held by members not subscribed to their topic (see perform_reassignments).
        self.foreign.retain(|&p| {
            let o = self.owner[p as usize];
            o != NONE && !self.model.member_topics[o as usize].contains(&self.ptopic[p as usize])
        });
        let any_foreign = !self.foreign.is_empty();
        for &p in &self.foreign {
            let o = self.owner[p as usize] as usize;
            for &g in &self.topic_groups[self.ptopic[p as usize] as usize] {
                let group = &self.groups[g as usize];
                if let Some(&(lo, _)) = group.set.first() {
                    if lo < group.max_size && self.size[o] >= lo + 2 {
                        return false;
                    }
                }
            }
        }
        for &(lo, g) in &lows {
            for &(hi, h) in &highs {
                if hi < lo + 2 {
                    break;
                }
                let relation = match self.relation(g, h) {
                    // With foreign partitions around, a member of `h` may hold fewer partitions
                    // of its own topics than its size says: look at its partitions.
                    Relation::Subset if any_foreign => Relation::Partial,
                    r => r,
                };
                match relation {
                    Relation::Disjoint => {}
                    Relation::Subset => return false,
                    Relation::Partial => {
                        let bits = &self.groups[g as usize].bits;
                        for &(s, r) in self.groups[h as usize].set.iter().rev() {
                            if s < lo + 2 {
                                break;
                            }
                            let o = self.by_rank[r as usize] as usize;
                            let owns = self.lists[o].iter().any(|&p| {
                                p != TOMB && {
                                    let t = self.ptopic[p as usize];
                                    bits[t as usize / 64] & (1 << (t % 64)) != 0
                                }
                            });
                            if owns {
                                return false;
                            }
                        }
                    }
                }
            }
        }
        true
    }
}
