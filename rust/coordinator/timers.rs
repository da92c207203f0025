//! Timers: every deadline of a coordinator in one min-heap, keyed by what it belongs to.
//!
//! Each owner (for the group coordinator: a member's session, a pending member, a group's join
//! and sync phases, the retention check) holds a [`Timer`]: its deadline, and the one heap entry
//! it has armed. Moving a deadline later (a heartbeat) only writes the deadline; the armed entry,
//! when it comes up, sees the later deadline and re-arms itself there. Moving it earlier pushes a
//! new entry and forgets the old one. Cancelling clears the deadline. So a heartbeat costs no
//! heap operation, and the heap holds at most one live entry per owner; entries of owners that
//! are gone or have re-armed are dropped when they reach the top.
//!
//! The heap is generic over the key `K` a coordinator names its owners by (the group
//! coordinator's `TimerKey`); the coordinator finds an owner's [`Timer`] from its key through
//! [`Owners`]. Both are resolved at compile time: no dynamic dispatch on the hot path.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// Timer is one owner's deadline and the heap entry it has armed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timer {
    /// deadline is when the timer fires, or None when it is not set.
    pub deadline: Option<i64>,
    /// armed is the (time, sequence number) of this timer's live heap entry.
    armed: Option<(i64, u64)>,
}

impl Timer {
    /// is_set tells whether the timer has a deadline.
    pub fn is_set(&self) -> bool {
        self.deadline.is_some()
    }

    /// cancel clears the deadline; the armed entry is dropped when it reaches the top.
    pub fn cancel(&mut self) {
        self.deadline = None;
    }
}

/// Entry is one armed heap entry. Entries order by (time, sequence number) alone: sequence
/// numbers are unique, so the key never decides.
#[derive(Debug, Clone, Copy)]
struct Entry<K> {
    at: i64,
    seq: u64,
    key: K,
}

impl<K> PartialEq for Entry<K> {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}

impl<K> Eq for Entry<K> {}

impl<K> PartialOrd for Entry<K> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<K> Ord for Entry<K> {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

/// Due is what a popped entry means for its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Due {
    /// Fire: the deadline has come; the timer is now unset.
    Fire,
    /// Skip: the entry was stale, or the deadline moved later (the timer re-armed itself).
    Skip,
}

/// Owners finds the [`Timer`] a key names: None when its owner is gone. A key whose slot was
/// reused by another owner names that owner's timer, whose armed entry is not the stale one,
/// so a stale entry never fires.
pub trait Owners<K> {
    fn timer(&mut self, key: K) -> Option<&mut Timer>;
}

/// Timers is the heap of armed entries. Deterministic: entries due at the same time pop in the
/// order they were armed.
#[derive(Debug)]
pub struct Timers<K> {
    heap: BinaryHeap<Reverse<Entry<K>>>,
    seq: u64,
}

impl<K> Default for Timers<K> {
    fn default() -> Self {
        Timers {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<K: Copy> Timers<K> {
    /// set sets `timer`'s deadline to `at`, arming a heap entry only when none is armed at or
    /// before `at`.
    #[inline]
    pub fn set(&mut self, timer: &mut Timer, key: K, at: i64) {
        timer.deadline = Some(at);
        match timer.armed {
            Some((armed_at, _)) if armed_at <= at => {}
            _ => self.arm(timer, key, at),
        }
    }

    fn arm(&mut self, timer: &mut Timer, key: K, at: i64) {
        self.seq += 1;
        timer.armed = Some((at, self.seq));
        self.heap.push(Reverse(Entry {
            at,
            seq: self.seq,
            key,
        }));
    }

    /// peek is the key and time of the top entry, which may be stale.
    #[inline]
    pub fn peek(&self) -> Option<(K, i64)> {
        self.heap.peek().map(|Reverse(e)| (e.key, e.at))
    }

    /// settle pops the top entry, whose owner's timer is `timer` (None when the owner is gone),
    /// and says whether it fires at `now`. A stale entry is dropped; a live one whose deadline
    /// moved later re-arms there.
    pub fn settle(&mut self, timer: Option<&mut Timer>, now: i64) -> Due {
        let Some(Reverse(e)) = self.heap.pop() else {
            return Due::Skip;
        };
        let Some(timer) = timer else {
            return Due::Skip;
        };
        if timer.armed.map(|a| a.1) != Some(e.seq) {
            return Due::Skip;
        }
        timer.armed = None;
        match timer.deadline {
            None => Due::Skip,
            Some(d) if d > now => {
                self.arm(timer, e.key, d);
                Due::Skip
            }
            Some(_) => {
                timer.deadline = None;
                Due::Fire
            }
        }
    }

    /// pop_due is the key of the next timer that fires at `now`, its timer now unset; None when
    /// nothing more is due. Stale entries and deadlines moved later are settled on the way.
    /// Call it again after acting on a key: the action may arm timers due at once.
    #[inline]
    pub fn pop_due(&mut self, now: i64, owners: &mut impl Owners<K>) -> Option<K> {
        while let Some((key, at)) = self.peek() {
            if at > now {
                return None;
            }
            if self.settle(owners.timer(key), now) == Due::Fire {
                return Some(key);
            }
        }
        None
    }

    /// next_deadline is when the next timer is due, or None when none is set. Entries at the
    /// top that are stale, or whose deadline moved later, are settled on the way (nothing fires:
    /// their deadline is later than the entry's time).
    pub fn next_deadline(&mut self, owners: &mut impl Owners<K>) -> Option<i64> {
        loop {
            let (key, at) = self.peek()?;
            let live = matches!(owners.timer(key), Some(t) if t.deadline == Some(at));
            if live {
                return Some(at);
            }
            let due = self.settle(owners.timer(key), at);
            debug_assert_eq!(due, Due::Skip);
        }
    }

    /// len is the number of entries, stale ones included.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slots are timers keyed by their index, as a coordinator's tables key theirs.
    struct Slots(Vec<Timer>);

    impl Owners<usize> for Slots {
        fn timer(&mut self, key: usize) -> Option<&mut Timer> {
            self.0.get_mut(key)
        }
    }

    fn drain(t: &mut Timers<usize>, timers: &mut Slots, now: i64) -> Vec<usize> {
        let mut fired = Vec::new();
        while let Some(key) = t.pop_due(now, timers) {
            fired.push(key);
        }
        fired
    }

    #[test]
    fn later_deadlines_rearm_and_earlier_ones_push() {
        let mut t = Timers::default();
        let mut timers = Slots(vec![Timer::default(); 3]);
        let s = &mut timers.0;
        t.set(&mut s[0], 0, 100);
        // Heartbeats: the deadline moves later without touching the heap.
        for at in [110, 120, 130] {
            t.set(&mut s[0], 0, at);
        }
        assert_eq!(t.len(), 1);
        t.set(&mut s[1], 1, 50);
        t.set(&mut s[1], 1, 40); // earlier: a new entry
        assert_eq!(t.len(), 3);
        t.set(&mut s[2], 2, 60);
        s[2].cancel();
        assert_eq!(drain(&mut t, &mut timers, 99), vec![1]);
        // 0's entry at 100 re-arms at 130.
        assert_eq!(drain(&mut t, &mut timers, 100), Vec::<usize>::new());
        assert_eq!(t.peek().map(|p| p.1), Some(130));
        assert_eq!(drain(&mut t, &mut timers, 200), vec![0]);
        assert!(t.peek().is_none());
        assert!(!timers.0[0].is_set());
    }

    #[test]
    fn same_time_entries_fire_in_arming_order() {
        let mut t = Timers::default();
        let mut timers = Slots(vec![Timer::default(); 3]);
        for g in [2usize, 0, 1] {
            t.set(&mut timers.0[g], g, 10);
        }
        assert_eq!(drain(&mut t, &mut timers, 10), vec![2, 0, 1]);
    }

    #[test]
    fn next_deadline_skips_stale_and_moved_entries() {
        let mut t = Timers::default();
        let mut timers = Slots(vec![Timer::default(); 2]);
        t.set(&mut timers.0[0], 0, 10);
        t.set(&mut timers.0[1], 1, 20);
        // 0 moves later (its entry at 10 re-arms at 30), then its owner is gone.
        t.set(&mut timers.0[0], 0, 30);
        assert_eq!(t.next_deadline(&mut timers), Some(20));
        timers.0.truncate(1);
        timers.0[0].cancel();
        assert_eq!(t.next_deadline(&mut timers), None);
        assert_eq!(t.len(), 0);
    }
}
