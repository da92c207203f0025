//! Timers: every deadline of the coordinator in one min-heap, keyed by what it belongs to.
//!
//! Each owner (a member's session, a pending member, a group's join and sync phases, the
//! retention check) holds a [`Timer`]: its deadline, and the one heap entry it has armed. Moving
//! a deadline later (a heartbeat) only writes the deadline; the armed entry, when it comes up,
//! sees the later deadline and re-arms itself there. Moving it earlier pushes a new entry and
//! forgets the old one. Cancelling clears the deadline. So a heartbeat costs no heap operation,
//! and the heap holds at most one live entry per owner; entries of owners that are gone or have
//! re-armed are dropped when they reach the top.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// TimerKey names a timer's owner: groups and members by their slot in the coordinator's
/// tables. A slot reused by another owner holds a different [`Timer`], whose armed entry is
/// not this one, so a stale entry never fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum TimerKey {
    /// Heartbeat: a member's session (or new-member join) timeout.
    Heartbeat { group: u32, member: u32 },
    /// Pending: a KIP-394 pending member's expiry.
    Pending { group: u32, pending: u32 },
    /// Join: the group's delayed join (InitialDelayedJoin or DelayedJoin).
    Join { group: u32 },
    /// Sync: the group's sync timeout (DelayedSync).
    Sync { group: u32 },
    /// Retention: the periodic offset expiry check.
    Retention,
}

/// Timer is one owner's deadline and the heap entry it has armed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Timer {
    /// deadline is when the timer fires, or None when it is not set.
    pub deadline: Option<i64>,
    /// armed is the (time, sequence number) of this timer's live heap entry.
    armed: Option<(i64, u64)>,
}

impl Timer {
    /// is_set tells whether the timer has a deadline.
    #[cfg(test)]
    pub fn is_set(&self) -> bool {
        self.deadline.is_some()
    }

    /// cancel clears the deadline; the armed entry is dropped when it reaches the top.
    pub fn cancel(&mut self) {
        self.deadline = None;
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    at: i64,
    seq: u64,
    key: TimerKey,
}

/// Due is what a popped entry means for its owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Due {
    /// Fire: the deadline has come; the timer is now unset.
    Fire,
    /// Skip: the entry was stale, or the deadline moved later (the timer re-armed itself).
    Skip,
}

/// Timers is the heap of armed entries. Deterministic: entries due at the same time pop in the
/// order they were armed.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
}

impl Timers {
    /// set sets `timer`'s deadline to `at`, arming a heap entry only when none is armed at or
    /// before `at`.
    #[inline]
    pub fn set(&mut self, timer: &mut Timer, key: TimerKey, at: i64) {
        timer.deadline = Some(at);
        match timer.armed {
            Some((armed_at, _)) if armed_at <= at => {}
            _ => self.arm(timer, key, at),
        }
    }

    fn arm(&mut self, timer: &mut Timer, key: TimerKey, at: i64) {
        self.seq += 1;
        timer.armed = Some((at, self.seq));
        self.heap.push(Reverse(Entry {
            at,
            seq: self.seq,
            key,
        }));
    }

    /// peek is the key and time of the top entry, which may be stale.
    pub fn peek(&self) -> Option<(TimerKey, i64)> {
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

    /// len is the number of entries, stale ones included.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(t: &mut Timers, timers: &mut [Timer], now: i64) -> Vec<usize> {
        let mut fired = Vec::new();
        while let Some((key, at)) = t.peek() {
            if at > now {
                break;
            }
            let TimerKey::Join { group } = key else {
                unreachable!()
            };
            if t.settle(timers.get_mut(group as usize), now) == Due::Fire {
                fired.push(group as usize);
            }
        }
        fired
    }

    #[test]
    fn later_deadlines_rearm_and_earlier_ones_push() {
        let mut t = Timers::default();
        let mut timers = vec![Timer::default(); 3];
        let key = |g: u32| TimerKey::Join { group: g };
        t.set(&mut timers[0], key(0), 100);
        // Heartbeats: the deadline moves later without touching the heap.
        for at in [110, 120, 130] {
            t.set(&mut timers[0], key(0), at);
        }
        assert_eq!(t.len(), 1);
        t.set(&mut timers[1], key(1), 50);
        t.set(&mut timers[1], key(1), 40); // earlier: a new entry
        assert_eq!(t.len(), 3);
        t.set(&mut timers[2], key(2), 60);
        timers[2].cancel();
        assert_eq!(drain(&mut t, &mut timers, 99), vec![1]);
        // 0's entry at 100 re-arms at 130.
        assert_eq!(drain(&mut t, &mut timers, 100), Vec::<usize>::new());
        assert_eq!(t.peek().map(|p| p.1), Some(130));
        assert_eq!(drain(&mut t, &mut timers, 200), vec![0]);
        assert!(t.peek().is_none());
        assert!(!timers[0].is_set());
    }

    #[test]
    fn same_time_entries_fire_in_arming_order() {
        let mut t = Timers::default();
        let mut timers = vec![Timer::default(); 3];
        for g in [2u32, 0, 1] {
            t.set(&mut timers[g as usize], TimerKey::Join { group: g }, 10);
        }
        assert_eq!(drain(&mut t, &mut timers, 10), vec![2, 0, 1]);
    }
}
