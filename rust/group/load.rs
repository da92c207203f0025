//! Load: a partition of `__consumer_offsets` loaded back into groups, and a partition given up
//! (Kafka's `GroupMetadataManager.loadGroupsAndOffsets` and `onGroupLoaded`, and
//! `removeGroupsForPartition`). The runtime replays the records into a
//! [`LoadState`](super::replay::LoadState) (`replay.rs`); this turns it into groups, and the
//! classic group type restores each one's members (`classic/load.rs`).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::api::Effect;
use super::classic::load::restore;
use super::coordinator::Coordinator;
use super::offsets::offsets::Position;
use super::records::OffsetAndMetadata;
use crate::coordinator::load::Counts;
use crate::errors::Result;

/// Loaded is an offset read back for a group: the producer whose open transaction wrote it
/// (None: committed), topic, partition, the offset, and its position in the log.
type Loaded = (Option<i64>, String, i32, OffsetAndMetadata, Position);

/// LoadStats counts what a [`Coordinator::load`] call read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    pub batches: usize,
    pub records: usize,
    /// unknown are records of a type the coordinator skips (streams groups).
    pub unknown: usize,
    /// groups is the number of groups the partition holds once loaded (0 until the last call).
    pub groups: usize,
}

impl Coordinator {
    /// load replays record batches of one partition of `__consumer_offsets` (as the log holds
    /// them, from its start), rebuilding its groups, generations, members and committed offsets.
    /// Call it once with the whole log, or once per chunk in order with `last` set on the final
    /// one; meanwhile the partition's groups answer COORDINATOR_LOAD_IN_PROGRESS. The records
    /// take effect when `last` is set: later records and tombstones win, unknown record types
    /// are skipped, transactional offsets count once their commit marker is read (a transaction
    /// without its marker in the log stays open, its offsets pending until `end_transaction`).
    /// Loaded members' sessions start at the next call that gives a time. A corrupt batch or a
    /// record that does not decode fails the load (the partition's earlier chunks are dropped);
    /// groups the partition already held are replaced, their parked requests answered
    /// NOT_COORDINATOR.
    pub fn load(&mut self, partition: i32, data: &[u8], last: bool) -> Result<LoadStats> {
        let mut counts = Counts::default();
        let loaded = self.runtime.load(partition, data, last, &mut counts)?;
        let mut stats = LoadStats {
            batches: counts.batches,
            records: counts.records,
            unknown: counts.unknown,
            groups: 0,
        };
        let Some(state) = loaded else {
            return Ok(stats);
        };
        // Groups already here are replaced by what the log says.
        let existing: Vec<u32> = self
            .groups
            .iter()
            .filter(|(_, g)| g.partition == partition)
            .map(|(s, _)| s)
            .collect();
        for s in existing {
            self.unload_group(s);
        }
        // Offsets by group: committed ones (no producer), and those of transactions whose
        // marker the log does not hold yet, which stay open: the transaction coordinator ends
        // them later with their marker (`end_transaction`).
        let mut offsets_by_group: BTreeMap<String, Vec<Loaded>> = BTreeMap::new();
        for ((g, t, p), (o, at)) in state.offsets {
            offsets_by_group
                .entry(g)
                .or_default()
                .push((None, t, p, o, at));
        }
        for (pid, offsets) in state.transactional {
            for ((g, t, p), (o, at)) in offsets {
                offsets_by_group
                    .entry(g)
                    .or_default()
                    .push((Some(pid), t, p, o, at));
            }
        }
        let mut names: Vec<String> = state
            .groups
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        names.extend(offsets_by_group.keys().cloned());
        names.extend(state.consumer.keys().cloned());
        names.extend(state.share.keys().cloned());
        let mut consumer = state.consumer;
        let mut share = state.share;
        names.sort();
        names.dedup();
        let mut open = Vec::new();
        for name in names {
            let value = state.groups.get(&name).and_then(|v| v.as_ref());
            let slot = self.create_group(&name);
            let group = self.groups.get_mut(slot).expect("just created");
            group.state_timestamp = None;
            match consumer.remove(&name) {
                // A consumer group's own records came after any classic metadata of its name.
                Some(part) => group.consumer = Some(Box::new(part)),
                None if share.contains_key(&name) => {
                    group.share = share.remove(&name).map(Box::new);
                }
                None => {
                    if let Some(v) = value {
                        restore(group, v);
                    }
                }
            }
            let uid = group.uid;
            let id = group.id.clone();
            for (pid, t, p, o, at) in offsets_by_group.remove(&name).unwrap_or_default() {
                match pid {
                    None => group.offsets.put(&t, p, o, at),
                    Some(pid) => {
                        group.offsets.put_transactional(pid, &t, p, o, at);
                        open.push(pid);
                    }
                }
            }
            for pid in open.drain(..) {
                self.track_transaction(pid, &id, uid);
            }
            self.to_activate.push((Arc::from(name.as_str()), uid));
            stats.groups += 1;
        }
        Ok(stats)
    }

    /// unload gives up a partition (Kafka's `onResignation`): its groups go Dead and are dropped,
    /// parked JoinGroups and SyncGroups are answered NOT_COORDINATOR, and its groups answer
    /// NOT_COORDINATOR until it is loaded again. A host shutting down unloads every partition so
    /// that no request stays parked.
    pub fn unload(&mut self, now: i64, partition: i32) -> Vec<Effect> {
        self.enter(now);
        self.runtime.partitions.unload(partition);
        let slots: Vec<u32> = self
            .groups
            .iter()
            .filter(|(_, g)| g.partition == partition)
            .map(|(s, _)| s)
            .collect();
        for s in slots {
            self.unload_group(s);
        }
        self.run_timers();
        self.runtime.take_effects()
    }
}
