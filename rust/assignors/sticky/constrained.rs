//! The constrained builder: Java's `ConstrainedAssignmentBuilder`, used when every member
//! subscribes to the same topics (KAFKA-9987, reworked by KAFKA-12464, owned partitions sorted
//! by partition then topic since KAFKA-16277 in 3.8).
//!
//! With `T` partitions and `C` members, every member ends with `floor(T/C)` or `ceil(T/C)`
//! partitions, `T % C` of them with the larger count. Owned partitions are kept up to those
//! quotas (members in subscription-map order decide who keeps the larger count), the rest are
//! dealt round-robin to the members still below quota, in member-id order.

use std::collections::VecDeque;

use super::{id_ranks, Claims, NONE};
use crate::assignors::model::Model;
use crate::assignors::racks::Racks;

struct Builder<'m, 'a> {
    model: &'m Model<'a>,
    racks: Option<&'m Racks>,
    claims: &'m Claims,
    min_quota: usize,
    max_quota: usize,
    expected_over: usize,
    current_over: usize,
    assignment: Vec<Vec<u32>>,
    maybe_revoked: Vec<u32>,
    under: Vec<usize>,
    exactly_min: VecDeque<usize>,
    transferring: Vec<(u32, usize)>,
}

/// build returns each member's partitions (input order) in Java's list order, and the
/// partitions changing owner with their new owner.
pub(super) fn build(
    model: &Model<'_>,
    racks: Option<&Racks>,
    claims: &Claims,
) -> (Vec<Vec<u32>>, Vec<(u32, usize)>) {
    let n = model.input.members.len();
    let total = model.total();
    let mut b = Builder {
        model,
        racks,
        claims,
        min_quota: total / n,
        max_quota: total.div_ceil(n),
        expected_over: total % n,
        current_over: 0,
        assignment: vec![Vec::new(); n],
        maybe_revoked: vec![NONE; total],
        under: Vec::new(),
        exactly_min: VecDeque::new(),
        transferring: Vec::new(),
    };
    let mut assigned = vec![false; total];
    b.assign_owned(&mut assigned);
    let mut unassigned: Vec<u32> = (0..total as u32)
        .filter(|&p| !assigned[p as usize])
        .collect();
    drop(assigned);
    let rank = id_ranks(model);
    b.under.sort_by_key(|&m| rank[m]);
    b.exactly_min.make_contiguous().sort_by_key(|&m| rank[m]);
    if let Some(r) = racks {
        // Java's sortPartitionsByRackConsumers: fewest same-rack members first, stable.
        let mut per_rack = vec![0u32; r.num_racks];
        for rk in r.member_rack.iter().flatten() {
            per_rack[*rk as usize] += 1;
        }
        unassigned.sort_by_key(|&p| {
            r.partition_racks[p as usize]
                .iter()
                .map(|&k| per_rack[k as usize])
                .sum::<u32>()
        });
        b.assign_rack_aware_round_robin(&mut unassigned);
    }
    b.assign_round_robin(&unassigned);
    (b.assignment, b.transferring)
}

impl Builder<'_, '_> {
    fn mismatch(&self, m: usize, p: u32) -> bool {
        match self.racks.and_then(|r| r.member_rack[m].map(|k| (r, k))) {
            Some((r, k)) => !r.holds(p, k),
            None => false,
        }
    }

    /// assign_owned is Java's `assignOwnedPartitions`.
    fn assign_owned(&mut self, assigned: &mut [bool]) {
        let model = self.model;
        for &m in &model.java_members {
            let mut owned: Vec<u32> = Vec::with_capacity(self.claims.owned[m].len());
            for &p in &self.claims.owned[m] {
                if self.mismatch(m, p) {
                    self.maybe_revoked[p as usize] = m as u32;
                } else {
                    owned.push(p);
                }
            }
            // By partition number, then topic (KAFKA-16277); keys are distinct, so an unstable
            // sort gives the same order.
            let ptopic = model.ptopic();
            let mut keys: Vec<u64> = owned
                .iter()
                .map(|&p| {
                    let t = ptopic[p as usize];
                    ((p - model.offsets[t as usize]) as u64) << 32 | t as u64
                })
                .collect();
            keys.sort_unstable();
            owned.clear();
            owned.extend(
                keys.iter()
                    .map(|&k| model.offsets[(k & 0xffff_ffff) as usize] + (k >> 32) as u32),
            );
            owned.retain(|&p| !self.claims.is_multi(p));
            let keep = if owned.len() < self.min_quota {
                self.under.push(m);
                owned.len()
            } else if owned.len() >= self.max_quota && self.current_over < self.expected_over {
                self.current_over += 1;
                if self.current_over == self.expected_over {
                    self.exactly_min.clear();
                }
                self.max_quota
            } else {
                if self.current_over < self.expected_over {
                    self.exactly_min.push_back(m);
                }
                self.min_quota
            };
            for &p in &owned[keep..] {
                self.maybe_revoked[p as usize] = m as u32;
            }
            for &p in &owned[..keep] {
                assigned[p as usize] = true;
            }
            owned.truncate(keep);
            self.assignment[m] = owned;
        }
    }

    /// assign_new is Java's `assignNewPartition`: it records a change of owner.
    fn assign_new(&mut self, p: u32, m: usize) -> usize {
        self.assignment[m].push(p);
        let prev = self.maybe_revoked[p as usize];
        if (prev != NONE && prev != m as u32) || self.claims.is_multi(p) {
            self.transferring.push((p, m));
        }
        self.assignment[m].len()
    }

    fn next_rack_consumer(&self, p: u32, list: &[usize], first: usize) -> Option<usize> {
        let r = self.racks?;
        if r.partition_racks[p as usize].is_empty() {
            return None;
        }
        (0..list.len())
            .map(|i| (first + i) % list.len())
            .find(|&i| r.member_rack[list[i]].is_some_and(|k| r.holds(p, k)))
    }

    /// assign_rack_aware_round_robin is Java's `assignRackAwareRoundRobin`; it removes what it
    /// assigns from `unassigned`.
    fn assign_rack_aware_round_robin(&mut self, unassigned: &mut Vec<u32>) {
        let mut next = 0usize;
        let mut left = Vec::with_capacity(unassigned.len());
        for &p in unassigned.iter() {
            let mut chosen = None;
            if let Some(mut i) = self.next_rack_consumer(p, &self.under, next) {
                let m = self.under[i];
                let count = self.assignment[m].len() + 1;
                if count >= self.min_quota {
                    self.under.remove(i);
                    if count < self.max_quota && self.current_over < self.expected_over {
                        self.exactly_min.push_back(m);
                    }
                } else {
                    i += 1;
                }
                next = if self.under.is_empty() {
                    0
                } else {
                    i % self.under.len()
                };
                chosen = Some(m);
            } else if !self.exactly_min.is_empty() {
                let list: Vec<usize> = self.exactly_min.iter().copied().collect();
                if let Some(i) = self.next_rack_consumer(p, &list, 0) {
                    let m = list[i];
                    if self.assignment[m].len() + 1 == self.max_quota {
                        self.exactly_min.remove(i);
                        self.current_over += 1;
                        if self.current_over == self.expected_over {
                            self.exactly_min.clear();
                        }
                    }
                    chosen = Some(m);
                }
            }
            match chosen {
                Some(m) => {
                    self.assign_new(p, m);
                }
                None => left.push(p),
            }
        }
        *unassigned = left;
    }

    /// assign_round_robin is Java's `assignRoundRobin`: cycle through the members under
    /// `minQuota`, then hand out one more to members at exactly `minQuota`.
    fn assign_round_robin(&mut self, unassigned: &[u32]) {
        // `pos` is the iterator's cursor into `under`; `from_iter` says whether the current
        // member came from it (Java removes through the iterator only then).
        let mut pos = 0usize;
        for &p in unassigned {
            let (m, from_iter) = if pos < self.under.len() {
                pos += 1;
                (self.under[pos - 1], true)
            } else if self.under.is_empty() && self.exactly_min.is_empty() {
                // Java throws IllegalStateException here; the quotas make it unreachable with
                // valid claims. Stay valid: give the partition to the least loaded member.
                debug_assert!(false, "no member left below quota");
                let m = (0..self.assignment.len())
                    .min_by_key(|&m| self.assignment[m].len())
                    .unwrap_or(0);
                (m, false)
            } else if self.under.is_empty() {
                (self.exactly_min.pop_front().unwrap_or(0), false)
            } else {
                pos = 1;
                (self.under[0], true)
            };
            let count = self.assign_new(p, m);
            if count == self.min_quota {
                if from_iter {
                    pos -= 1;
                    self.under.remove(pos);
                }
                self.exactly_min.push_back(m);
            } else if count == self.max_quota {
                self.current_over += 1;
            }
        }
    }
}
