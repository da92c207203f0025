//! TimerKey: what each of the group coordinator's timers belongs to. The heap itself is the
//! runtime's ([`crate::coordinator::timers`]); `coordinator.rs` finds a key's timer.

/// TimerKey names a timer's owner: groups and members by their slot in the coordinator's
/// tables. A slot reused by another owner holds a different [`Timer`](crate::coordinator::Timer),
/// whose armed entry is not this one, so a stale entry never fires.
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
    /// ConsumerSession: a consumer group member's session timeout (by its timer slot).
    ConsumerSession { group: u32, member: u32 },
    /// ConsumerRebalance: a consumer group member's rebalance timeout.
    ConsumerRebalance { group: u32, member: u32 },
    /// ShareSession: a share group member's session timeout (by its timer slot).
    ShareSession { group: u32, member: u32 },
    /// Retention: the periodic offset expiry check.
    Retention,
}
