//! ConsumerGroup: a KIP-848 consumer group as plain data, with the indexes and derived views
//! its handlers read (Kafka 4.2's `ConsumerGroup` and `ModernGroup` without request handling),
//! and the target assignment computation (Kafka's `TargetAssignmentBuilder`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::member::{ConsumerMember, MemberState};
use super::partition_epochs::{PartitionEpochConflict, PartitionEpochs};
use super::records::ResolvedRegex;
use crate::errors::ErrorCode;
use crate::group::assignors::{
    Assignment, AssignorError, GroupSpec, MemberSpec, ServerAssignor, SubscriptionType, TopicId,
};

/// ConsumerGroupState is a consumer group's state (Kafka's `ConsumerGroup.ConsumerGroupState`).
/// It is derived from the group on every read, never stored (reference §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConsumerGroupState {
    /// Empty: the group has no members.
    ///
    /// action: none; the group waits for offsets cleanup or DeleteGroups.
    /// transition: a member joins → Assigning (its join bumps the group epoch).
    Empty,
    /// Assigning: the group epoch is ahead of the assignment epoch; the target must be
    /// recomputed.
    ///
    /// action: the next heartbeat computes the target assignment.
    /// transition: target computed → Reconciling (or Stable if every member is there already).
    Assigning,
    /// Reconciling: the target is current but some member is not Stable at the assignment
    /// epoch.
    ///
    /// action: heartbeats reconcile members towards their targets.
    /// transition: all members Stable at the assignment epoch → Stable; an epoch bump →
    /// Assigning; last member leaves → Empty.
    Reconciling,
    /// Stable: every member is Stable at the assignment epoch.
    ///
    /// action: none.
    /// transition: an epoch bump → Assigning; last member leaves → Empty.
    Stable,
}

impl ConsumerGroupState {
    /// name is Kafka's name of the state as ConsumerGroupDescribe and ListGroups report it
    /// (`Empty`, `Assigning`, `Reconciling`, `Stable`).
    pub fn name(self) -> &'static str {
        match self {
            ConsumerGroupState::Empty => "Empty",
            ConsumerGroupState::Assigning => "Assigning",
            ConsumerGroupState::Reconciling => "Reconciling",
            ConsumerGroupState::Stable => "Stable",
        }
    }
}

/// TopicInfo is what the target computation needs of one topic of the cluster metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TopicInfo {
    pub topic_id: TopicId,
    pub partition_count: i32,
}

/// TargetChange is the member change a target computation accounts for, on top of the group
/// as it stands (the heartbeat computes before its records are replayed).
#[derive(Debug, Clone, Copy)]
pub enum TargetChange<'a> {
    /// None: the group's members as they are.
    None,
    /// Update: this member replaces the entry of its member id, or joins. A static member whose
    /// instance id is held by another member id replaces that member and inherits its target.
    Update(&'a ConsumerMember),
    /// Remove: the member with this id leaves.
    Remove(&'a str),
}

/// TargetAssignment is the answer of [`ConsumerGroup::compute_target_assignment`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetAssignment {
    /// targets is the new target of every member of the group after the change, by member id.
    pub targets: BTreeMap<String, Assignment>,
    /// changed is the member ids, ascending, whose new target differs from the previous one
    /// (a member without a target, a replacing static member included, always counts): one
    /// ConsumerGroupTargetAssignmentMember record each, before the TargetAssignmentMetadata.
    pub changed: Vec<String>,
}

/// TargetAssignmentError is a failed target computation. The heartbeat is answered
/// UNKNOWN_SERVER_ERROR ([`TargetAssignmentError::error_code`]) and nothing is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetAssignmentError {
    /// Assignor: the assignor failed (Kafka's `PartitionAssignorException`).
    Assignor(AssignorError),
    /// WrongMemberCount: the assignor answered a number of assignments other than the number
    /// of members it was given.
    WrongMemberCount { expected: usize, got: usize },
}

impl TargetAssignmentError {
    /// error_code is the Kafka error the heartbeat is answered with: UNKNOWN_SERVER_ERROR.
    pub fn error_code(&self) -> ErrorCode {
        ErrorCode::UnknownServerError
    }
}

impl fmt::Display for TargetAssignmentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TargetAssignmentError::Assignor(e) => write!(f, "{e}"),
            TargetAssignmentError::WrongMemberCount { expected, got } => write!(
                f,
                "the assignor returned {got} assignments for {expected} members"
            ),
        }
    }
}

impl std::error::Error for TargetAssignmentError {}

impl From<AssignorError> for TargetAssignmentError {
    fn from(e: AssignorError) -> Self {
        TargetAssignmentError::Assignor(e)
    }
}

/// ConsumerGroup is one consumer group: its epochs, members, target assignment and the indexes
/// kept over them. Plain data, single-threaded; every map is ordered, so every iteration and
/// every answer is deterministic.
///
/// The indexes (partition epochs, inverted target, static members, subscribed-name counts,
/// assignor votes, classic member count) are kept right by [`ConsumerGroup::update_member`],
/// [`ConsumerGroup::remove_member`], [`ConsumerGroup::set_target`] and
/// [`ConsumerGroup::remove_target`], the calls record replay makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerGroup {
    group_id: String,
    group_epoch: i32,
    assignment_epoch: i32,
    /// assignment_timestamp is when the target was computed (KIP-1263), 0 when unknown: a new
    /// group's, an emptied one's, a converted classic group's.
    assignment_timestamp: i64,
    members: BTreeMap<String, ConsumerMember>,
    targets: BTreeMap<String, Assignment>,
    inverted_targets: BTreeMap<TopicId, BTreeMap<i32, String>>,
    partition_epochs: PartitionEpochs,
    static_members: BTreeMap<String, String>,
    subscribed_topic_names: BTreeMap<String, usize>,
    subscribed_regexes: BTreeMap<String, usize>,
    resolved_regexes: BTreeMap<String, ResolvedRegex>,
    server_assignors: BTreeMap<String, usize>,
    classic_members: usize,
}

impl ConsumerGroup {
    /// new is an empty group at group epoch 1 with the empty target of epoch 1, as Kafka 4.3+
    /// starts a group (KAFKA-20268): its first computed target is epoch 2, and a member
    /// joining before that reconciles towards epoch 1.
    pub fn new(group_id: impl Into<String>) -> Self {
        ConsumerGroup {
            group_id: group_id.into(),
            group_epoch: 1,
            assignment_epoch: 1,
            assignment_timestamp: 0,
            members: BTreeMap::new(),
            targets: BTreeMap::new(),
            inverted_targets: BTreeMap::new(),
            partition_epochs: PartitionEpochs::new(),
            static_members: BTreeMap::new(),
            subscribed_topic_names: BTreeMap::new(),
            subscribed_regexes: BTreeMap::new(),
            resolved_regexes: BTreeMap::new(),
            server_assignors: BTreeMap::new(),
            classic_members: 0,
        }
    }

    /// group_id is the group's id.
    pub fn group_id(&self) -> &str {
        &self.group_id
    }

    /// group_epoch is the epoch of the group's membership and subscriptions.
    pub fn group_epoch(&self) -> i32 {
        self.group_epoch
    }

    /// set_group_epoch replays a ConsumerGroupMetadata record.
    pub fn set_group_epoch(&mut self, epoch: i32) {
        self.group_epoch = epoch;
    }

    /// assignment_epoch is the group epoch the target was computed at; -1 once its record is
    /// tombstoned.
    pub fn assignment_epoch(&self) -> i32 {
        self.assignment_epoch
    }

    /// set_assignment_epoch sets the assignment epoch alone.
    pub fn set_assignment_epoch(&mut self, epoch: i32) {
        self.assignment_epoch = epoch;
    }

    /// assignment_timestamp is when the target was computed (ms), 0 when unknown.
    pub fn assignment_timestamp(&self) -> i64 {
        self.assignment_timestamp
    }

    /// set_target_assignment_metadata replays a ConsumerGroupTargetAssignmentMetadata record:
    /// its epoch and timestamp (-1 and 0 for its tombstone).
    pub fn set_target_assignment_metadata(&mut self, epoch: i32, timestamp: i64) {
        self.assignment_epoch = epoch;
        self.assignment_timestamp = timestamp;
    }

    /// can_compute_next_target_assignment tells whether a new target may be computed `now`
    /// (Kafka's `GroupMetadataManager.canComputeNextTargetAssignment`, 4.3+): at once when the
    /// time of the last one is unknown (0) or the interval is 0, else once `interval_ms` has
    /// passed since it.
    pub fn can_compute_next_target_assignment(
        assignment_timestamp: i64,
        interval_ms: i64,
        now: i64,
    ) -> bool {
        assignment_timestamp == 0
            || interval_ms == 0
            || now >= assignment_timestamp.saturating_add(interval_ms)
    }

    /// members is the members by member id, ascending.
    pub fn members(&self) -> &BTreeMap<String, ConsumerMember> {
        &self.members
    }

    /// member is the member with `member_id`, if any.
    pub fn member(&self, member_id: &str) -> Option<&ConsumerMember> {
        self.members.get(member_id)
    }

    /// has_member says whether `member_id` is a member.
    pub fn has_member(&self, member_id: &str) -> bool {
        self.members.contains_key(member_id)
    }

    /// num_members is the number of members.
    pub fn num_members(&self) -> usize {
        self.members.len()
    }

    /// num_classic_members is the number of members speaking the classic protocol.
    pub fn num_classic_members(&self) -> usize {
        self.classic_members
    }

    /// partition_epochs is which member epoch holds each partition.
    pub fn partition_epochs(&self) -> &PartitionEpochs {
        &self.partition_epochs
    }

    /// subscribed_topic_names is, for each topic name some member subscribes to, the number of
    /// members subscribing to it.
    pub fn subscribed_topic_names(&self) -> &BTreeMap<String, usize> {
        &self.subscribed_topic_names
    }

    /// subscribed_regexes is, for each regex some member subscribes with, the number of members
    /// using it.
    pub fn subscribed_regexes(&self) -> &BTreeMap<String, usize> {
        &self.subscribed_regexes
    }

    /// resolved_regexes is each regex's last resolution (record type 16).
    pub fn resolved_regexes(&self) -> &BTreeMap<String, ResolvedRegex> {
        &self.resolved_regexes
    }

    /// set_resolved_regex replays a ConsumerGroupRegularExpression record; None for its
    /// tombstone. Answers the previous resolution.
    pub fn set_resolved_regex(
        &mut self,
        regex: &str,
        resolved: Option<ResolvedRegex>,
    ) -> Option<ResolvedRegex> {
        match resolved {
            Some(r) => self.resolved_regexes.insert(regex.to_string(), r),
            None => self.resolved_regexes.remove(regex),
        }
    }

    /// all_subscribed_topics is every topic name the group subscribes to, by name or through a
    /// resolved regex of a member.
    pub fn all_subscribed_topics(&self) -> BTreeSet<&str> {
        let mut out: BTreeSet<&str> = self
            .subscribed_topic_names
            .keys()
            .map(String::as_str)
            .collect();
        for regex in self.subscribed_regexes.keys() {
            if let Some(r) = self.resolved_regexes.get(regex) {
                out.extend(r.topics.iter().map(String::as_str));
            }
        }
        out
    }

    /// is_subscribed_to says whether some member subscribes to `topic`, by name or regex.
    pub fn is_subscribed_to(&self, topic: &str) -> bool {
        self.subscribed_topic_names.contains_key(topic)
            || self.subscribed_regexes.keys().any(|regex| {
                self.resolved_regexes
                    .get(regex)
                    .is_some_and(|r| r.topics.iter().any(|t| t == topic))
            })
    }

    /// server_assignor_votes is, for each assignor name some member asks for, the number of
    /// members asking for it.
    pub fn server_assignor_votes(&self) -> &BTreeMap<String, usize> {
        &self.server_assignors
    }

    /// static_member_id is the member id holding `instance_id`, if any.
    pub fn static_member_id(&self, instance_id: &str) -> Option<&str> {
        self.static_members.get(instance_id).map(String::as_str)
    }

    /// static_member is the member holding `instance_id`, if any.
    pub fn static_member(&self, instance_id: &str) -> Option<&ConsumerMember> {
        self.members.get(self.static_member_id(instance_id)?)
    }

    /// update_member adds `member` or replaces the member of the same id, keeping every index
    /// right. The answer lists partitions found held already at an epoch not below the
    /// member's ([`PartitionEpochs::add`]); they are taken over anyway (KAFKA-19862).
    pub fn update_member(&mut self, member: ConsumerMember) -> Vec<PartitionEpochConflict> {
        let old = self.members.remove(&member.member_id);
        if let Some(old) = &old {
            self.unindex_member(old);
        }
        let conflicts = self.partition_epochs.update_member(old.as_ref(), &member);
        self.index_member(&member);
        self.members.insert(member.member_id.clone(), member);
        conflicts
    }

    /// remove_member removes the member with `member_id`, freeing its partitions; its target
    /// stays until [`ConsumerGroup::remove_target`]. Answers the removed member.
    pub fn remove_member(&mut self, member_id: &str) -> Option<ConsumerMember> {
        let old = self.members.remove(member_id)?;
        self.unindex_member(&old);
        self.partition_epochs.remove_member(&old);
        Some(old)
    }

    fn index_member(&mut self, m: &ConsumerMember) {
        if let Some(instance) = &m.instance_id {
            self.static_members
                .insert(instance.clone(), m.member_id.clone());
        }
        for name in &m.subscribed_topic_names {
            *self.subscribed_topic_names.entry(name.clone()).or_default() += 1;
        }
        if !m.subscribed_topic_regex.is_empty() {
            *self
                .subscribed_regexes
                .entry(m.subscribed_topic_regex.clone())
                .or_default() += 1;
        }
        if let Some(a) = &m.server_assignor {
            *self.server_assignors.entry(a.clone()).or_default() += 1;
        }
        if m.classic_member_metadata.is_some() {
            self.classic_members += 1;
        }
    }

    fn unindex_member(&mut self, m: &ConsumerMember) {
        if let Some(instance) = &m.instance_id {
            // Only the index entry naming this member: a replacing static member may have
            // taken the instance id already.
            if self.static_members.get(instance) == Some(&m.member_id) {
                self.static_members.remove(instance);
            }
        }
        for name in &m.subscribed_topic_names {
            decrement(&mut self.subscribed_topic_names, name);
        }
        if !m.subscribed_topic_regex.is_empty() {
            decrement(&mut self.subscribed_regexes, &m.subscribed_topic_regex);
        }
        if let Some(a) = &m.server_assignor {
            decrement(&mut self.server_assignors, a);
        }
        if m.classic_member_metadata.is_some() {
            self.classic_members -= 1;
        }
    }

    /// targets is the target assignment by member id.
    pub fn targets(&self) -> &BTreeMap<String, Assignment> {
        &self.targets
    }

    /// target is the target of `member_id`, if it has one.
    pub fn target(&self, member_id: &str) -> Option<&Assignment> {
        self.targets.get(member_id)
    }

    /// target_owner is the member whose target holds `partition` of `topic_id` (the inverted
    /// target, Kafka's `invertedTargetAssignment`).
    pub fn target_owner(&self, topic_id: &TopicId, partition: i32) -> Option<&str> {
        self.inverted_targets
            .get(topic_id)?
            .get(&partition)
            .map(String::as_str)
    }

    /// set_target replays a ConsumerGroupTargetAssignmentMember record: `member_id`'s target
    /// becomes `target`, also in the inverted view.
    pub fn set_target(&mut self, member_id: &str, target: Assignment) {
        self.remove_target(member_id);
        for (topic, parts) in target.iter() {
            let owners = self.inverted_targets.entry(*topic).or_default();
            for &p in parts {
                owners.insert(p, member_id.to_string());
            }
        }
        self.targets.insert(member_id.to_string(), target);
    }

    /// remove_target replays a ConsumerGroupTargetAssignmentMember tombstone.
    pub fn remove_target(&mut self, member_id: &str) -> Option<Assignment> {
        let old = self.targets.remove(member_id)?;
        for (topic, parts) in old.iter() {
            if let Some(owners) = self.inverted_targets.get_mut(topic) {
                for p in parts {
                    // Another member's later target may own the partition by now.
                    if owners.get(p).map(String::as_str) == Some(member_id) {
                        owners.remove(p);
                    }
                }
                if owners.is_empty() {
                    self.inverted_targets.remove(topic);
                }
            }
        }
        Some(old)
    }

    /// state is the group's state as §2.2 derives it.
    pub fn state(&self) -> ConsumerGroupState {
        if self.members.is_empty() {
            ConsumerGroupState::Empty
        } else if self.group_epoch > self.assignment_epoch {
            ConsumerGroupState::Assigning
        } else if self
            .members
            .values()
            .any(|m| !(m.state == MemberState::Stable && m.member_epoch == self.assignment_epoch))
        {
            ConsumerGroupState::Reconciling
        } else {
            ConsumerGroupState::Stable
        }
    }

    /// subscription_type is Homogeneous when every subscribed topic name is subscribed by every
    /// member (an empty group too), else Heterogeneous. Regular expressions are not counted yet.
    pub fn subscription_type(&self) -> SubscriptionType {
        let n = self.members.len();
        if self.subscribed_topic_names.values().all(|&c| c == n) {
            SubscriptionType::Homogeneous
        } else {
            SubscriptionType::Heterogeneous
        }
    }

    /// preferred_server_assignor is the assignor named by the most members, `default` when none
    /// names one. Ties follow Kafka's iteration order as far as it is known: `uniform` before
    /// `range` (reference §3.3), then other names ascending.
    pub fn preferred_server_assignor<'a>(&'a self, default: &'a str) -> &'a str {
        most_voted(self.server_assignors.iter().map(|(n, &c)| (n.as_str(), c))).unwrap_or(default)
    }

    /// preferred_server_assignor_after is [`ConsumerGroup::preferred_server_assignor`] as it
    /// will be once `old` is replaced by `new` (either may be `None`), without changing the
    /// group: Kafka's `computePreferredServerAssignor`, which the heartbeat calls before its
    /// records are replayed.
    pub fn preferred_server_assignor_after(
        &self,
        old: Option<&ConsumerMember>,
        new: Option<&ConsumerMember>,
        default: &str,
    ) -> String {
        let mut votes: BTreeMap<&str, usize> = self
            .server_assignors
            .iter()
            .map(|(name, &c)| (name.as_str(), c))
            .collect();
        if let Some(name) = old.and_then(|m| m.server_assignor.as_deref()) {
            if let Some(c) = votes.get_mut(name) {
                *c = c.saturating_sub(1);
            }
        }
        if let Some(name) = new.and_then(|m| m.server_assignor.as_deref()) {
            *votes.entry(name).or_default() += 1;
        }
        most_voted(votes.into_iter()).unwrap_or(default).to_string()
    }

    /// is_full is Kafka's `throwIfConsumerGroupIsFull` test: the group has `max_size` members or
    /// more and `member_id` is empty or not one of them (GROUP_MAX_SIZE_REACHED).
    pub fn is_full(&self, max_size: usize, member_id: &str) -> bool {
        self.members.len() >= max_size && (member_id.is_empty() || !self.has_member(member_id))
    }

    /// compute_target_assignment computes the group's new target after `change` (Kafka's
    /// `TargetAssignmentBuilder.build`). The assignor sees the members in member-id order, each
    /// with its subscribed names resolved through `topics` (names missing from it dropped) and
    /// its current target; the subscription type is that of the members after the change.
    /// Deterministic for a deterministic assignor; the group is not modified.
    pub fn compute_target_assignment(
        &self,
        change: TargetChange<'_>,
        topics: &BTreeMap<String, TopicInfo>,
        assignor: &dyn ServerAssignor,
    ) -> Result<TargetAssignment, TargetAssignmentError> {
        let resolved: BTreeMap<&str, &[String]> = self
            .resolved_regexes
            .iter()
            .map(|(k, v)| (k.as_str(), v.topics.as_slice()))
            .collect();
        self.compute_target_assignment_with(change, topics, &resolved, assignor)
    }

    /// compute_target_assignment_with is [`ConsumerGroup::compute_target_assignment`] with the
    /// regexes' resolutions given (regex → topic names), as a heartbeat that resolves a regex
    /// has them before its records are replayed. A member subscribes to its names and to the
    /// topics of its regex (Kafka's `UnionSet`).
    pub fn compute_target_assignment_with(
        &self,
        change: TargetChange<'_>,
        topics: &BTreeMap<String, TopicInfo>,
        resolved: &BTreeMap<&str, &[String]>,
        assignor: &dyn ServerAssignor,
    ) -> Result<TargetAssignment, TargetAssignmentError> {
        let empty = Assignment::new();
        let mut members: BTreeMap<&str, (&ConsumerMember, &Assignment)> = self
            .members
            .iter()
            .map(|(id, m)| (id.as_str(), (m, self.targets.get(id).unwrap_or(&empty))))
            .collect();
        match change {
            TargetChange::None => {}
            TargetChange::Remove(id) => {
                members.remove(id);
            }
            TargetChange::Update(m) => {
                let mut target = self.targets.get(&m.member_id).unwrap_or(&empty);
                if let Some(old_id) = m
                    .instance_id
                    .as_deref()
                    .and_then(|i| self.static_member_id(i))
                    .filter(|old_id| *old_id != m.member_id)
                {
                    members.remove(old_id);
                    target = self.targets.get(old_id).unwrap_or(&empty);
                }
                members.insert(m.member_id.as_str(), (m, target));
            }
        }

        let subscription_type = if members
            .values()
            .all(|(m, _)| m.subscribed_topic_regex.is_empty())
        {
            SubscriptionType::of(members.values().map(|(m, _)| &m.subscribed_topic_names))
        } else {
            // Kafka's rule with regexes: homogeneous only when every member uses one same
            // regex and none subscribes by name.
            let mut it = members.values().map(|(m, _)| m);
            let first = it.next().map(|m| m.subscribed_topic_regex.as_str());
            if members.values().all(|(m, _)| {
                m.subscribed_topic_names.is_empty()
                    && Some(m.subscribed_topic_regex.as_str()) == first
            }) {
                SubscriptionType::Homogeneous
            } else {
                SubscriptionType::Heterogeneous
            }
        };
        let subscribed: Vec<BTreeSet<TopicId>> = members
            .values()
            .map(|(m, _)| {
                let by_regex = resolved
                    .get(m.subscribed_topic_regex.as_str())
                    .copied()
                    .unwrap_or(&[]);
                m.subscribed_topic_names
                    .iter()
                    .chain(by_regex)
                    .filter_map(|name| topics.get(name).map(|t| t.topic_id))
                    .collect()
            })
            .collect();
        let specs = members
            .values()
            .zip(&subscribed)
            .map(|((m, target), ids)| MemberSpec {
                member_id: &m.member_id,
                instance_id: m.instance_id.as_deref(),
                rack_id: m.rack_id.as_deref(),
                subscribed_topic_ids: ids,
                target,
            })
            .collect();
        let spec = GroupSpec::new(specs, subscription_type);
        let counts: BTreeMap<TopicId, i32> = topics
            .values()
            .map(|t| (t.topic_id, t.partition_count))
            .collect();
        let assigned = assignor.assign(&spec, &counts)?;
        if assigned.len() != members.len() {
            return Err(TargetAssignmentError::WrongMemberCount {
                expected: members.len(),
                got: assigned.len(),
            });
        }
        let mut targets = BTreeMap::new();
        let mut changed = Vec::new();
        for (id, new) in members.keys().zip(assigned) {
            // Against the group's target of this id, not an inherited one: a replacing static
            // member has no target record of its own yet (TargetAssignmentBuilderTest
            // .testReplaceStaticMember writes one for it).
            if self.targets.get(*id) != Some(&new) {
                changed.push(id.to_string());
            }
            targets.insert(id.to_string(), new);
        }
        Ok(TargetAssignment { targets, changed })
    }
}

fn decrement(counts: &mut BTreeMap<String, usize>, key: &str) {
    if let Some(c) = counts.get_mut(key) {
        *c -= 1;
        if *c == 0 {
            counts.remove(key);
        }
    }
}

/// most_voted is the name with the most votes (zero votes do not count), ties broken by
/// [`tie_rank`] then by name.
fn most_voted<'a>(votes: impl Iterator<Item = (&'a str, usize)>) -> Option<&'a str> {
    votes
        .filter(|&(_, c)| c > 0)
        .min_by_key(|&(name, c)| (std::cmp::Reverse(c), tie_rank(name), name))
        .map(|(name, _)| name)
}

/// tie_rank orders assignor names of equal votes: Kafka's table puts `uniform` before `range`.
fn tie_rank(name: &str) -> u8 {
    match name {
        "uniform" => 0,
        "range" => 1,
        _ => 2,
    }
}

#[cfg(test)]
#[path = "group_tests.rs"]
mod tests;
