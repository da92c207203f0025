//! Coordinator: the group coordinator of every group of one broker, as a pure state machine.
//! The host hands it requests, append outcomes and the time; it answers with effects. Its
//! clock, timers, appends and loading partitions are the shared runtime's
//! ([`crate::coordinator::Runtime`]); it routes each request and each timer to its group type.
//!
//! The handlers live one module per api (as franz-go's kfake lays them out): the classic
//! group type's in `classic/` (`join_group.rs`, `sync_group.rs`, ..., with the rebalance
//! mechanics they share in `rebalance.rs`), the offsets' in `offsets/`, the admin apis beside
//! this module; loading and unloading are in `load.rs` (over `replay.rs`), offset expiry in
//! `cleanup.rs`. What waits on an append is a [`Pending`] (`pending.rs`); this module hands it
//! to its owner once the append ends. None of those modules is imported here: they extend
//! [`Coordinator`] with `impl` blocks, and this module names only the types it holds, so that
//! no two modules import each other.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::api::{AppendToken, Effect, GroupRequest, GroupResponse, ShareEffect, Token};
use super::assignors::TopicId;
use super::classic::classic_group::Group;
use super::classic::state::GroupState;
use super::config::{Config, GroupConfig};
use super::consumer::TopicInfo;
use super::name::Name;
use super::pending::Pending;
use super::records::partition_for;
use super::replay::LoadState;
use super::slab::Slab;
use super::timers::TimerKey;
use crate::assignors::fxhash::FxMap;
use crate::coordinator::appends::Records;
use crate::coordinator::runtime;
use crate::coordinator::timers::{Owners, Timer};
use crate::errors::{ErrorCode, Result};
use crate::rng::Rng;

/// Runtime is the coordinator runtime as the group coordinator plugs into it: timers keyed by
/// [`TimerKey`], [`GroupResponse`]s, [`Pending`] work waiting on appends to
/// `__consumer_offsets`, and a partition's [`LoadState`] while it loads.
pub(super) type Runtime =
    runtime::Runtime<TimerKey, GroupResponse, Pending, LoadState, ShareEffect>;

/// Coordinator is the group coordinator. Deterministic: the same calls with the same times
/// (and the same seed) give the same effects. Not thread-safe; a host serialises its calls.
///
/// Calls take the current time (`now`, ms); a time earlier than one seen before counts as the
/// later one. Each call first fires the timers that are due, then does its work, then fires
/// what its work made due at once; effects come back in the order they happened. `next_deadline` says when to call [`Coordinator::tick`]
/// next.
pub struct Coordinator {
    pub(super) config: Config,
    pub(super) groups: Slab<Group>,
    pub(super) index: FxMap<Name, u32>,
    /// runtime holds the clock, the timers, the appends waiting on the host, the partitions
    /// loading or given up, and the effects of the call in progress.
    pub(super) runtime: Runtime,
    pub(super) retention: Timer,
    pub(super) next_uid: u64,
    pub(super) rng: Rng,
    /// ticking is set while [`tick`](Coordinator::tick) runs: only then does a group's initial
    /// delayed join expire (see [`run_timers`](Coordinator::run_timers)).
    ticking: bool,
    /// to_activate are loaded groups (by uid) whose members' sessions start at the next clock.
    pub(super) to_activate: Vec<(Arc<str>, u64)>,
    pub(super) topics: Option<FxMap<Arc<str>, i32>>,
    /// topic_meta is every topic's id and partition count by name, for consumer groups' target
    /// assignments (see [`Coordinator::set_topic_metadata`]).
    pub(super) topic_meta: BTreeMap<String, TopicInfo>,
    /// topic_names is every topic's name by id.
    pub(super) topic_names: FxMap<TopicId, Arc<str>>,
    /// topic_version counts the changes of `topic_meta`: a consumer group rechecks its
    /// subscribed topics' metadata when it has not seen the latest.
    pub(super) topic_version: u64,
    /// group_configs are the groups' dynamic configs by group id (see
    /// [`Coordinator::set_group_config`]); a group may have them before it exists and keeps them
    /// whatever becomes of it, as Kafka keeps them in its metadata log.
    pub(super) group_configs: FxMap<Arc<str>, GroupConfig>,
    /// open_txns are the groups (id and uid) each producer's open transaction wrote offsets
    /// to, for [`Coordinator::end_transaction`]; an entry may outlive its group.
    pub(super) open_txns: FxMap<i64, Vec<(Arc<str>, u64)>>,
}

/// TimerOwners finds the timer a [`TimerKey`] names among the groups and the retention check.
struct TimerOwners<'a> {
    groups: &'a mut Slab<Group>,
    retention: &'a mut Timer,
}

impl Owners<TimerKey> for TimerOwners<'_> {
    #[inline]
    fn timer(&mut self, key: TimerKey) -> Option<&mut Timer> {
        match key {
            TimerKey::Heartbeat { group, member } => self
                .groups
                .get_mut(group)?
                .members
                .get_mut(member)
                .map(|m| &mut m.heartbeat),
            TimerKey::Pending { group, pending } => self
                .groups
                .get_mut(group)?
                .pending
                .get_mut(pending)
                .map(|p| &mut p.expiry),
            TimerKey::Join { group } => self.groups.get_mut(group).map(|g| &mut g.join_timer),
            TimerKey::Sync { group } => self.groups.get_mut(group).map(|g| &mut g.sync_timer),
            TimerKey::ConsumerSession { group, member } => self
                .groups
                .get_mut(group)?
                .consumer
                .as_deref_mut()?
                .timers
                .get_mut(member)
                .map(|t| &mut t.session),
            TimerKey::ConsumerRebalance { group, member } => self
                .groups
                .get_mut(group)?
                .consumer
                .as_deref_mut()?
                .timers
                .get_mut(member)
                .map(|t| &mut t.rebalance),
            TimerKey::ShareSession { group, member } => self
                .groups
                .get_mut(group)?
                .share
                .as_deref_mut()?
                .timers
                .get_mut(member)
                .map(|t| &mut t.session),
            TimerKey::Retention => Some(self.retention),
        }
    }
}

impl Coordinator {
    /// new is a coordinator with `config`, drawing member ids' UUIDs from the process's
    /// randomness.
    pub fn new(config: Config) -> Coordinator {
        Coordinator::with_rng(config, Rng::new(None))
    }

    /// with_seed is a coordinator whose member ids are reproducible from `seed`.
    pub fn with_seed(config: Config, seed: u64) -> Coordinator {
        Coordinator::with_rng(config, Rng::new(Some(seed)))
    }

    fn with_rng(config: Config, rng: Rng) -> Coordinator {
        Coordinator {
            config,
            groups: Slab::default(),
            index: FxMap::default(),
            runtime: Runtime::default(),
            retention: Timer::default(),
            next_uid: 1,
            rng,
            ticking: false,
            to_activate: Vec::new(),
            topics: None,
            topic_meta: BTreeMap::new(),
            topic_names: FxMap::default(),
            topic_version: 1,
            group_configs: FxMap::default(),
            open_txns: FxMap::default(),
        }
    }

    /// config is the coordinator's configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// partition_for is the partition of `__consumer_offsets` that holds `group_id`.
    pub fn partition_for(&self, group_id: &str) -> i32 {
        partition_for(group_id, self.config.offsets_topic_num_partitions)
    }

    /// handle serves one request; `token` comes back with its response, now or later (a parked
    /// JoinGroup or SyncGroup, a commit waiting on its append).
    pub fn handle(&mut self, now: i64, token: Token, request: &GroupRequest<'_>) -> Vec<Effect> {
        let mut out = Vec::new();
        self.handle_into(now, token, request, &mut out);
        out
    }

    /// handle_into is [`Coordinator::handle`] appending the effects to `out`.
    pub fn handle_into(
        &mut self,
        now: i64,
        token: Token,
        request: &GroupRequest<'_>,
        out: &mut Vec<Effect>,
    ) {
        self.enter(now);
        match request {
            GroupRequest::JoinGroup(r) => self.join_group(token, r),
            GroupRequest::SyncGroup(r) => self.sync_group(token, r),
            GroupRequest::Heartbeat(r) => self.heartbeat(token, r),
            GroupRequest::LeaveGroup(r) => self.leave_group(token, r),
            GroupRequest::OffsetCommit(r) => self.offset_commit(token, r),
            GroupRequest::OffsetFetch(r) => self.offset_fetch(token, r),
            GroupRequest::OffsetDelete(r) => self.offset_delete(token, r),
            GroupRequest::DescribeGroups(r) => self.describe_groups(token, r),
            GroupRequest::ListGroups(r) => self.list_groups(token, r),
            GroupRequest::DeleteGroups(r) => self.delete_groups(token, r),
            GroupRequest::ConsumerGroupHeartbeat(r) => self.consumer_group_heartbeat(token, r),
            GroupRequest::ConsumerGroupDescribe(r) => self.consumer_group_describe(token, r),
            GroupRequest::TxnOffsetCommit(r) => self.txn_offset_commit(token, r),
            GroupRequest::ShareGroupHeartbeat(r) => self.share_group_heartbeat(token, r),
            GroupRequest::ShareGroupDescribe(r) => self.share_group_describe(token, r),
        }
        // Work may have armed a timer due at once (a rebalance timeout of 0).
        self.run_timers();
        self.runtime.drain_into(out);
    }

    /// appended reports the outcome of the [`Effect::Append`] of `token`: `error` is NONE when
    /// the records are in the log, else the storage error (mapped to what each api answers, as
    /// Kafka's coordinator maps it). An unknown or already reported token is
    /// [`Error::InvalidArgument`](crate::errors::Error::InvalidArgument).
    pub fn appended(
        &mut self,
        now: i64,
        token: AppendToken,
        error: ErrorCode,
    ) -> Result<Vec<Effect>> {
        let mut out = Vec::new();
        self.appended_into(now, token, error, &mut out)?;
        Ok(out)
    }

    /// appended_into is [`Coordinator::appended`] appending the effects to `out`.
    pub fn appended_into(
        &mut self,
        now: i64,
        token: AppendToken,
        error: ErrorCode,
        out: &mut Vec<Effect>,
    ) -> Result<()> {
        let pending = self.runtime.appends.take(token)?;
        self.enter(now);
        self.complete_append(token, pending, error);
        self.run_timers();
        self.runtime.drain_into(out);
        Ok(())
    }

    /// tick fires every timer due at `now`.
    pub fn tick(&mut self, now: i64) -> Vec<Effect> {
        let mut out = Vec::new();
        self.tick_into(now, &mut out);
        out
    }

    /// tick_into is [`Coordinator::tick`] appending the effects to `out`.
    pub fn tick_into(&mut self, now: i64, out: &mut Vec<Effect>) {
        self.ticking = true;
        self.enter(now);
        self.ticking = false;
        self.runtime.drain_into(out);
    }

    /// next_deadline is when the next timer is due (ms, the clock the calls give), or None when
    /// none is set. Loaded groups waiting for their first clock make it due at once (`i64::MIN`).
    pub fn next_deadline(&mut self) -> Option<i64> {
        if !self.to_activate.is_empty() {
            return Some(i64::MIN);
        }
        self.runtime.timers.next_deadline(&mut TimerOwners {
            groups: &mut self.groups,
            retention: &mut self.retention,
        })
    }

    /// group_state is the state of a group, None when the coordinator has no such group.
    pub fn group_state(&self, group_id: &str) -> Option<GroupState> {
        self.index
            .get(group_id)
            .and_then(|s| self.groups.get(*s))
            .map(|g| g.state)
    }

    /// group_count is the number of groups held.
    pub fn group_count(&self) -> usize {
        self.groups.len()
    }

    /// pending_appends is the number of appends whose outcome is not reported yet.
    pub fn pending_appends(&self) -> usize {
        self.runtime.appends.len()
    }

    /// set_topics gives the broker's topics (name, partition count): offsets committed to a topic
    /// or partition not in it are answered UNKNOWN_TOPIC_OR_PARTITION, as Kafka's broker does.
    /// None (the default) accepts every topic.
    pub fn set_topics<'a>(&mut self, topics: Option<impl IntoIterator<Item = (&'a str, i32)>>) {
        self.topics = topics.map(|t| t.into_iter().map(|(n, p)| (Arc::from(n), p)).collect());
    }

    /// set_group_config sets a group's dynamic configs (all of them: those left unset take the
    /// broker's values again). A consumer group's members read them at their next heartbeat:
    /// the interval the response tells, the session timer it arms, whether a new target may be
    /// computed, as Kafka's coordinator reads its `GroupConfigManager`.
    pub fn set_group_config(&mut self, group_id: &str, config: GroupConfig) {
        if config.is_empty() {
            self.group_configs.remove(group_id);
        } else {
            self.group_configs.insert(Arc::from(group_id), config);
        }
    }

    /// group_config is a group's dynamic configs, if it has any.
    pub fn group_config(&self, group_id: &str) -> Option<&GroupConfig> {
        self.group_configs.get(group_id)
    }

    /// consumer_session_timeout_ms is the session of `group_id`'s consumer-protocol members:
    /// its group config, else the broker's.
    pub(crate) fn consumer_session_timeout_ms(&self, group_id: &str) -> i64 {
        self.config
            .consumer_session_timeout_ms(self.group_config(group_id))
    }

    /// consumer_heartbeat_interval_ms is the interval `group_id`'s members are told.
    pub(crate) fn consumer_heartbeat_interval_ms(&self, group_id: &str) -> i64 {
        self.config
            .consumer_heartbeat_interval_ms(self.group_config(group_id))
    }

    /// consumer_assignment_interval_ms is how often `group_id`'s target may be computed.
    pub(crate) fn consumer_assignment_interval_ms(&self, group_id: &str) -> i64 {
        self.config
            .consumer_assignment_interval_ms(self.group_config(group_id))
    }

    /// set_topic_metadata gives the broker's topics with their ids: (name, topic id, partition
    /// count). Consumer groups resolve subscribed names through them and notice changes on
    /// their next heartbeat; commits are checked against them as [`Coordinator::set_topics`]
    /// does.
    pub fn set_topic_metadata<'a>(
        &mut self,
        topics: impl IntoIterator<Item = (&'a str, TopicId, i32)>,
    ) {
        let mut meta = BTreeMap::new();
        let mut names = FxMap::default();
        for (name, topic_id, partition_count) in topics {
            meta.insert(
                name.to_string(),
                TopicInfo {
                    topic_id,
                    partition_count,
                },
            );
            names.insert(topic_id, Arc::from(name));
        }
        self.topics = Some(
            meta.iter()
                .map(|(n, t)| (Arc::from(n.as_str()), t.partition_count))
                .collect(),
        );
        if meta != self.topic_meta {
            self.topic_meta = meta;
            self.topic_names = names;
            self.topic_version += 1;
        }
    }

    /// force_state puts a group in a state without a transition, as Kafka's tests do to reach
    /// states the coordinator never lingers in (a Dead group still cached).
    #[cfg(test)]
    pub(crate) fn force_state(&mut self, group_id: &str, state: GroupState) {
        if let Some(s) = self.slot_of(group_id) {
            self.group_mut(s).state = state;
        }
    }

    /// group_generation is a group's generation (tests).
    #[cfg(test)]
    pub(crate) fn group_generation(&self, group_id: &str) -> Option<i32> {
        self.slot_of(group_id).map(|s| self.group(s).generation)
    }

    /// check_invariants panics unless the coordinator's bookkeeping holds together: indexes,
    /// counters, leaders, where parked requests and timers may be.
    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        use super::classic::classic_group::JoinPhase;
        assert_eq!(self.index.len(), self.groups.len());
        for (slot, g) in self.groups.iter() {
            assert_eq!(self.index.get(&*g.id), Some(&slot));
            assert_ne!(
                g.state,
                GroupState::Dead,
                "{}: a Dead group is dropped",
                g.id
            );
            let members: Vec<(u32, &super::classic::member::Member)> = g.members.iter().collect();
            assert_eq!(g.leader.is_none(), members.is_empty(), "{}: leader", g.id);
            if let Some(l) = g.leader {
                assert!(
                    g.members.get(l).is_some(),
                    "{}: the leader is a member",
                    g.id
                );
            }
            if g.state == GroupState::Empty {
                assert!(members.is_empty(), "{}: Empty with members", g.id);
            }
            let mut awaiting = 0;
            let mut pending_sync = 0;
            for (s, m) in &members {
                assert_eq!(g.slot(&m.id), Some(*s), "{}: by id", g.id);
                if let Some(i) = &m.instance_id {
                    assert_eq!(g.static_slot(i), Some(*s), "{}: static {i}", g.id);
                }
                assert!(
                    !g.is_pending(&m.id),
                    "{}: {} member and pending",
                    g.id,
                    m.id
                );
                assert!(
                    m.awaiting_join.is_none() || m.awaiting_sync.is_none(),
                    "{}: {} parked in join and sync",
                    g.id,
                    m.id
                );
                if m.awaiting_join.is_some() {
                    awaiting += 1;
                    assert!(
                        matches!(g.state, GroupState::PreparingRebalance | GroupState::Stable),
                        "{}: a JoinGroup parked in {}",
                        g.id,
                        g.state
                    );
                }
                if m.awaiting_sync.is_some() {
                    assert_eq!(
                        g.state,
                        GroupState::CompletingRebalance,
                        "{}: sync parked",
                        g.id
                    );
                }
                if m.pending_sync {
                    pending_sync += 1;
                    assert!(matches!(
                        g.state,
                        GroupState::CompletingRebalance | GroupState::Stable
                    ));
                }
                if m.awaiting_join.is_none() && m.awaiting_sync.is_none() {
                    assert!(
                        m.heartbeat.deadline.is_some(),
                        "{}: {} has no session timer",
                        g.id,
                        m.id
                    );
                }
            }
            assert_eq!(awaiting, g.num_awaiting_join(), "{}: awaiting count", g.id);
            assert_eq!(
                pending_sync,
                g.num_pending_sync(),
                "{}: pending sync count",
                g.id
            );
            assert_eq!(
                g.join_timer.deadline.is_some(),
                g.state == GroupState::PreparingRebalance,
                "{}: join timer in {}",
                g.id,
                g.state
            );
            if g.sync_timer.deadline.is_some() {
                assert!(matches!(
                    g.state,
                    GroupState::CompletingRebalance | GroupState::Stable
                ));
            }
            if g.state == GroupState::PreparingRebalance && g.join_phase == JoinPhase::Regular {
                assert!(
                    !g.has_all_members_joined(),
                    "{}: a complete join left open",
                    g.id
                );
            }
            if let Some(part) = g.share.as_deref() {
                assert!(g.consumer.is_none(), "{}: share and consumer", g.id);
                assert!(
                    members.is_empty(),
                    "{}: a share group's classic members",
                    g.id
                );
                assert!(
                    part.assignment_epoch <= part.group_epoch,
                    "{}: epochs",
                    g.id
                );
                if self.to_activate.is_empty() {
                    for id in part.members.keys() {
                        let armed = part
                            .timer_slot(id)
                            .and_then(|s| part.timers.get(s))
                            .is_some_and(|t| t.session.deadline.is_some());
                        assert!(armed, "{}: share member {id} has no session", g.id);
                    }
                }
            }
            for d in members.iter().filter_map(|(_, m)| m.heartbeat.deadline) {
                assert!(
                    d > self.runtime.now(),
                    "{}: a session deadline in the past",
                    g.id
                );
            }
        }
    }

    // -----------------------------------------------------------------------------------------
    // internals shared by the handlers

    /// complete_append does what waited on an append.
    fn complete_append(&mut self, token: AppendToken, pending: Pending, error: ErrorCode) {
        match pending {
            Pending::Nothing => {}
            Pending::Commit(c) => self.complete_commit(token, c, error),
            Pending::TxnCommit(c) => self.complete_txn_commit(token, c, error),
            Pending::Assignment {
                group,
                uid,
                generation,
                assignment,
            } => {
                if let Some(g) = self.slot_of_uid(&group, uid) {
                    self.complete_assignment(g, generation, &assignment, error);
                }
            }
            Pending::StaticRejoin(r) => self.complete_static_rejoin(*r, error),
            Pending::Consumer(w) => self.complete_consumer_write(*w, error),
            Pending::Share(w) => self.complete_share_write(*w, error),
        }
    }

    /// enter advances the clock and fires what is due.
    pub(super) fn enter(&mut self, now: i64) {
        if self.runtime.advance(now) {
            let at = self
                .runtime
                .now()
                .saturating_add(self.config.offsets_retention_check_interval_ms);
            self.runtime
                .timers
                .set(&mut self.retention, TimerKey::Retention, at);
        }
        if !self.to_activate.is_empty() {
            self.activate_loaded();
        }
        self.run_timers();
    }

    /// run_timers fires every timer due by now, but for a group's initial delayed join
    /// (InitialDelayedJoin) outside [`tick`](Coordinator::tick): Kafka's coordinator runs that
    /// expiry as an event of its own, after the requests already queued, so that members
    /// joining at the same moment (as a group's consumers started together do) make one
    /// generation even with group.initial.rebalance.delay.ms=0. Served within the request that
    /// armed it, the join would complete with its first member alone, and the others would
    /// wait for a heartbeat to learn of the next rebalance. Such a timer stays due; the host's
    /// next tick fires it. Likewise a tick fires each initial join once: one that re-arms
    /// itself at once (a member joined meanwhile, delay 0) waits for the next tick, as Kafka's
    /// re-armed timer is another event behind the requests that came in meanwhile.
    pub(super) fn run_timers(&mut self) {
        let now = self.runtime.now();
        let mut held: Vec<u32> = Vec::new();
        let mut fired: Vec<u32> = Vec::new();
        while let Some(key) = self.runtime.timers.pop_due(
            now,
            &mut TimerOwners {
                groups: &mut self.groups,
                retention: &mut self.retention,
            },
        ) {
            match key {
                TimerKey::Join { group } if self.initial_join(group) => {
                    if self.ticking && !fired.contains(&group) {
                        fired.push(group);
                        self.fire(key);
                    } else {
                        held.push(group);
                    }
                }
                _ => self.fire(key),
            }
        }
        for g in held {
            let Coordinator {
                groups, runtime, ..
            } = self;
            if let Some(group) = groups.get_mut(g) {
                runtime
                    .timers
                    .set(&mut group.join_timer, TimerKey::Join { group: g }, now);
            }
        }
    }

    fn initial_join(&self, g: u32) -> bool {
        self.groups.get(g).is_some_and(|group| {
            matches!(
                group.join_phase,
                super::classic::classic_group::JoinPhase::Initial { .. }
            )
        })
    }

    fn fire(&mut self, key: TimerKey) {
        match key {
            TimerKey::Heartbeat { group, member } => self.expire_heartbeat(group, member),
            TimerKey::Pending { group, pending } => self.expire_pending(group, pending),
            TimerKey::Join { group } => self.expire_join(group),
            TimerKey::Sync { group } => self.expire_sync(group),
            TimerKey::ConsumerSession { group, member } => {
                self.expire_consumer_session(group, member)
            }
            TimerKey::ConsumerRebalance { group, member } => {
                self.expire_consumer_rebalance(group, member)
            }
            TimerKey::ShareSession { group, member } => self.expire_share_session(group, member),
            TimerKey::Retention => {
                self.expire_offsets();
                let at = self
                    .runtime
                    .now()
                    .saturating_add(self.config.offsets_retention_check_interval_ms);
                self.runtime
                    .timers
                    .set(&mut self.retention, TimerKey::Retention, at);
            }
        }
    }

    /// respond queues a response.
    #[inline]
    pub(super) fn respond(&mut self, token: Token, response: GroupResponse) {
        self.runtime.respond(token, response);
    }

    /// gate is the pre-check every group api shares after the group id (Kafka's
    /// `validateGroupStatus`): COORDINATOR_LOAD_IN_PROGRESS while the group's partition loads,
    /// NOT_COORDINATOR once it was unloaded.
    #[inline]
    pub(super) fn gate(&self, group_id: &str) -> Option<ErrorCode> {
        if self.runtime.partitions.all_served() {
            return None;
        }
        self.runtime.partitions.error(self.partition_for(group_id))
    }

    /// slot_of is the slot of a group by id.
    #[inline]
    pub(super) fn slot_of(&self, group_id: &str) -> Option<u32> {
        self.index.get(group_id).copied()
    }

    /// slot_of_uid is the slot of a group by id, if it is still the group `uid` names.
    pub(super) fn slot_of_uid(&self, group_id: &str, uid: u64) -> Option<u32> {
        let s = self.slot_of(group_id)?;
        (self.groups.get(s)?.uid == uid).then_some(s)
    }

    #[inline]
    pub(super) fn group(&self, slot: u32) -> &Group {
        self.groups.get(slot).expect("a group's slot")
    }

    #[inline]
    pub(super) fn group_mut(&mut self, slot: u32) -> &mut Group {
        self.groups.get_mut(slot).expect("a group's slot")
    }

    /// create_group adds an Empty group (Kafka's `getOrMaybeCreateGroup`).
    pub(super) fn create_group(&mut self, group_id: &str) -> u32 {
        let id: Arc<str> = Arc::from(group_id);
        let partition = self.partition_for(group_id);
        let uid = self.next_uid;
        self.next_uid += 1;
        let slot = self.groups.insert(Group::new(
            uid,
            id.clone(),
            partition,
            Some(self.runtime.now()),
        ));
        self.index.insert(Name::from(group_id), slot);
        slot
    }

    /// drop_group forgets a group; its timers go stale.
    pub(super) fn drop_group(&mut self, slot: u32) -> Option<Group> {
        let g = self.groups.remove(slot)?;
        self.index.remove(&*g.id);
        Some(g)
    }

    /// new_member_id is Kafka's `generateMemberId`: the client id (or the group instance id)
    /// and a random UUID, joined by "-".
    pub(super) fn new_member_id(&mut self, prefix: &str) -> Arc<str> {
        let hi = self.rng.next_u64();
        let lo = self.rng.next_u64();
        // UUID version 4, variant 1 (Java's UUID.randomUUID).
        let hi = (hi & !0xf000) | 0x4000;
        let lo = (lo & !(0xc000_0000_0000_0000)) | 0x8000_0000_0000_0000;
        Arc::from(format!(
            "{prefix}-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
            hi >> 32,
            (hi >> 16) & 0xffff,
            hi & 0xffff,
            lo >> 48,
            lo & 0xffff_ffff_ffff
        ))
    }

    /// append queues an append of `records` ((key, value) pairs) to `partition`, with `pending`
    /// waiting on it; returns its token.
    pub(super) fn append(
        &mut self,
        partition: i32,
        records: Records,
        pending: Pending,
    ) -> AppendToken {
        self.runtime.append(partition, records, pending)
    }
}
