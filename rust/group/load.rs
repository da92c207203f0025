//! Load: a partition of `__consumer_offsets` loaded back into groups, and a partition given up
//! (Kafka's `GroupMetadataManager.loadGroupsAndOffsets` and `onGroupLoaded`, and
//! `removeGroupsForPartition`). The runtime replays the records into a [`LoadState`]
//! (`replay.rs`); this turns it into groups.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::api::{join_error, sync_error, Effect, GroupResponse};
use super::classic_group::{empty_bytes, Group};
use super::coordinator::Coordinator;
use super::member::{Member, Protocol};
use super::records::{GroupMetadataValue, OffsetAndMetadata};
use super::state::GroupState;
use crate::coordinator::load::Counts;
use crate::coordinator::timers::Timer;
use crate::errors::{ErrorCode, Result};

/// LoadStats counts what a [`Coordinator::load`] call read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LoadStats {
    pub batches: usize,
    pub records: usize,
    /// unknown are records of a type a classic coordinator skips (KIP-848, share groups).
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
    /// are skipped, transactional offsets count once their commit marker is read. Loaded members'
    /// sessions start at the next call that gives a time. A corrupt batch or a record that does
    /// not decode fails the load (the partition's earlier chunks are dropped); groups the
    /// partition already held are replaced, their parked requests answered NOT_COORDINATOR.
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
        let mut offsets_by_group: BTreeMap<String, Vec<(String, i32, OffsetAndMetadata)>> =
            BTreeMap::new();
        for ((g, t, p), o) in state.offsets {
            offsets_by_group.entry(g).or_default().push((t, p, o));
        }
        let mut names: Vec<String> = state
            .groups
            .iter()
            .filter(|(_, v)| v.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        names.extend(offsets_by_group.keys().cloned());
        names.sort();
        names.dedup();
        for name in names {
            let value = state.groups.get(&name).and_then(|v| v.as_ref());
            let slot = self.create_group(&name);
            let group = self.groups.get_mut(slot).expect("just created");
            group.state_timestamp = None;
            if let Some(v) = value {
                restore(group, v);
            }
            for (t, p, o) in offsets_by_group.remove(&name).unwrap_or_default() {
                group.offsets.put(&t, p, o);
            }
            let uid = group.uid;
            self.to_activate.push((Arc::from(name.as_str()), uid));
            stats.groups += 1;
        }
        Ok(stats)
    }

    /// activate_loaded starts the sessions of loaded members (Kafka's `onGroupLoaded`) and
    /// rebalances a group above `group.max.size`.
    pub(super) fn activate_loaded(&mut self) {
        for (id, uid) in std::mem::take(&mut self.to_activate) {
            let Some(g) = self.slot_of_uid(&id, uid) else {
                continue;
            };
            for s in self.group(g).ordered() {
                self.reschedule_session(g, s);
            }
            if self.group(g).len() as i64 > self.config.max_size {
                self.prepare_rebalance(g);
            }
        }
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

    fn unload_group(&mut self, g: u32) {
        let now = self.runtime.now();
        for s in self.group(g).ordered() {
            let group = self.group_mut(g);
            let id = group.member(s).id.clone();
            let join = group.take_join(s);
            let sync = group.member_mut(s).awaiting_sync.take();
            if let Some(t) = join {
                self.respond(
                    t,
                    GroupResponse::JoinGroup(join_error(&id, ErrorCode::NotCoordinator)),
                );
            }
            if let Some(t) = sync {
                self.respond(
                    t,
                    GroupResponse::SyncGroup(sync_error(ErrorCode::NotCoordinator)),
                );
            }
        }
        self.group_mut(g).transition(GroupState::Dead, now);
        self.drop_group(g);
    }
}

/// restore fills a new group from its metadata record (Kafka's `readGroupMessageValue` and
/// `loadGroup`): Stable with members, Empty without.
fn restore(group: &mut Group, v: &GroupMetadataValue) {
    group.generation = v.generation;
    group.protocol_type = (!v.protocol_type.is_empty()).then(|| v.protocol_type.clone());
    group.protocol_name = v.protocol.clone();
    group.state_timestamp = (v.current_state_timestamp != -1).then_some(v.current_state_timestamp);
    for m in &v.members {
        let protocols = match &v.protocol {
            Some(p) => vec![Protocol {
                name: p.clone(),
                metadata: m.subscription.clone(),
            }],
            None => Vec::new(),
        };
        let member = Member {
            id: m.member_id.clone(),
            instance_id: m.group_instance_id.clone(),
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            rebalance_timeout_ms: if m.rebalance_timeout == -1 {
                m.session_timeout
            } else {
                m.rebalance_timeout
            },
            session_timeout_ms: m.session_timeout,
            protocol_type: v.protocol_type.clone(),
            protocols,
            assignment: if m.assignment.is_empty() {
                empty_bytes()
            } else {
                m.assignment.clone()
            },
            awaiting_join: None,
            awaiting_sync: None,
            is_new: false,
            pending_sync: false,
            heartbeat: Timer::default(),
            seq: 0,
        };
        // A record naming the same member or instance twice cannot come from Kafka; the last
        // one wins rather than leaving a member unreachable.
        if let Some(s) = group.slot(&m.member_id) {
            group.remove(s);
        }
        if let Some(s) = m
            .group_instance_id
            .as_deref()
            .and_then(|i| group.static_slot(i))
        {
            group.remove(s);
        }
        group.add(member);
    }
    let leader = v.leader.as_deref().and_then(|l| group.slot(l));
    group.leader = leader.or_else(|| group.ordered().first().copied());
    group.state = if group.members.is_empty() {
        GroupState::Empty
    } else {
        GroupState::Stable
    };
    group.subscribed_topics = group.compute_subscribed_topics();
}
