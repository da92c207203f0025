//! Server-side assignors of KIP-848 consumer groups (`group.protocol=consumer`): `uniform` and
//! `range`, as Kafka 4.x's group coordinator has them (`UniformAssignor`, `RangeAssignor`);
//! and share groups' (KIP-932) `simple` ([`simple`]), whose members may share partitions and
//! which therefore takes its own member specs.
//!
//! The coordinator computes a group's target assignment by handing an assignor a [`GroupSpec`]
//! (every member with its subscribed topic ids and its previous *target* assignment, in an order
//! the coordinator chooses) and a [`TopicDescriber`] (partition counts). The assignor answers one
//! [`Assignment`] per member, in the members' order, or an [`AssignorError`] (Kafka's
//! `PartitionAssignorException`, which the coordinator answers with UNKNOWN_SERVER_ERROR).
//! [`by_name`] finds an assignor by its Kafka name.
//!
//! Determinism: an assignor's answer depends only on its inputs, including the members' order.
//! `range` sorts the members itself, so for it the order does not matter. `uniform` walks the
//! members in the given order where Kafka walks its `HashMap` of members; to match Kafka's tests
//! the coordinator's order need not be Java's, and a deterministic order of its own (sorted by
//! member id) is the intended use. The one Java iteration order replayed here is the one Kafka's
//! tests pin: the `HashSet` of the first member's topic ids in `uniform`'s homogeneous builder
//! ([`uuid::hash_code`], [`crate::assignors::java::JavaHashTable`]). Where Java iterates a
//! member's previous target (a `HashMap` of topic ids to `HashSet`s of partitions), kgroup walks
//! topic ids in ascending byte order and partitions ascending.
//!
//! Invalid previous targets are cleaned before use, where Kafka would hand out a partition twice
//! or fail: a partition listed by two members belongs to the first of them in the given order,
//! and negative partitions or partitions at or past the topic's partition count are ignored.
//! Valid inputs (the coordinator's own targets) are not changed by this.
//!
//! No assignor here looks at racks: Kafka removed rack awareness from the server-side assignors
//! in 3.8 (KAFKA-16694). [`MemberSpec::rack_id`] is carried for the coordinator's sake.

pub mod range;
pub mod simple;
pub mod uniform;
pub mod uuid;

#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::hash::BuildHasher;

use crate::assignors::fxhash::{fx_map, FxMap};

pub use range::RangeAssignor;
pub use uniform::UniformAssignor;

/// TopicId is a Kafka topic id (`org.apache.kafka.common.Uuid`): its 16 bytes, most significant
/// long first, each long big-endian, as the wire carries it.
pub type TopicId = [u8; 16];

/// Assignment is one member's partitions: for each topic id, its partitions in ascending order
/// without repeats. A topic with no partitions has no entry, so two assignments holding the same
/// partitions compare equal.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Assignment(BTreeMap<TopicId, Vec<i32>>);

impl Assignment {
    /// new is the empty assignment.
    pub fn new() -> Self {
        Assignment(BTreeMap::new())
    }

    /// from_map builds an assignment from any map of partition lists, sorting them, dropping
    /// repeats and dropping topics left with no partitions.
    pub fn from_map(mut map: BTreeMap<TopicId, Vec<i32>>) -> Self {
        map.retain(|_, parts| {
            parts.sort_unstable();
            parts.dedup();
            !parts.is_empty()
        });
        Assignment(map)
    }

    /// from_sorted wraps a map the caller built already normalised (partitions ascending and
    /// distinct, no empty lists).
    fn from_sorted(map: BTreeMap<TopicId, Vec<i32>>) -> Self {
        debug_assert!(map
            .values()
            .all(|p| !p.is_empty() && p.windows(2).all(|w| w[0] < w[1])));
        Assignment(map)
    }

    /// topics is the map of topic ids to partitions, ascending by topic id.
    pub fn topics(&self) -> &BTreeMap<TopicId, Vec<i32>> {
        &self.0
    }

    /// into_map gives the map back.
    pub fn into_map(self) -> BTreeMap<TopicId, Vec<i32>> {
        self.0
    }

    /// get is the partitions of `topic`, empty if it has none.
    pub fn get(&self, topic: &TopicId) -> &[i32] {
        self.0.get(topic).map_or(&[], Vec::as_slice)
    }

    /// contains says whether the assignment holds `partition` of `topic`.
    pub fn contains(&self, topic: &TopicId, partition: i32) -> bool {
        self.get(topic).binary_search(&partition).is_ok()
    }

    /// iter walks the topics in ascending topic id order, each with its partitions.
    pub fn iter(&self) -> impl Iterator<Item = (&TopicId, &[i32])> {
        self.0.iter().map(|(t, p)| (t, p.as_slice()))
    }

    /// len is the number of partitions over all topics.
    pub fn len(&self) -> usize {
        self.0.values().map(Vec::len).sum()
    }

    /// is_empty says whether the assignment holds no partition.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(TopicId, Vec<i32>)> for Assignment {
    /// from_iter merges the lists of a topic named more than once, then normalises as
    /// [`Assignment::from_map`].
    fn from_iter<I: IntoIterator<Item = (TopicId, Vec<i32>)>>(iter: I) -> Self {
        let mut map: BTreeMap<TopicId, Vec<i32>> = BTreeMap::new();
        for (topic, parts) in iter {
            map.entry(topic).or_default().extend(parts);
        }
        Assignment::from_map(map)
    }
}

/// SubscriptionType is Kafka's `SubscriptionType`: whether every member subscribes to the same
/// topics (Homogeneous) or not (Heterogeneous). Both assignors pick their algorithm by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SubscriptionType {
    Homogeneous,
    Heterogeneous,
}

impl SubscriptionType {
    /// of is the subscription type of a group whose members subscribe to these topic sets, as
    /// Kafka computes it for a group without regular expressions (`ConsumerGroup.subscriptionType`
    /// counts the subscribers of each topic name): Homogeneous when every topic is subscribed by
    /// every member, that is when all the sets are equal; an empty group, or one whose members
    /// subscribe to nothing, is Homogeneous. Kafka counts topic *names*, unresolved ones
    /// included, so a coordinator passes the name sets; sets of ids work the same way.
    pub fn of<S: PartialEq>(subscriptions: impl IntoIterator<Item = S>) -> Self {
        let mut it = subscriptions.into_iter();
        match it.next() {
            Some(first) if it.any(|s| s != first) => SubscriptionType::Heterogeneous,
            _ => SubscriptionType::Homogeneous,
        }
    }

    /// name is Kafka's `toString()` of the type.
    pub fn name(self) -> &'static str {
        match self {
            SubscriptionType::Homogeneous => "Homogeneous",
            SubscriptionType::Heterogeneous => "Heterogeneous",
        }
    }
}

/// MemberSpec is one member as an assignor sees it (Kafka's `MemberSubscriptionAndAssignment`):
/// its ids, its subscribed topic ids (names resolved through the metadata, unioned with its
/// regular expressions' topics) and its previous target assignment.
#[derive(Debug, Clone, Copy)]
pub struct MemberSpec<'a> {
    pub member_id: &'a str,
    pub instance_id: Option<&'a str>,
    pub rack_id: Option<&'a str>,
    pub subscribed_topic_ids: &'a BTreeSet<TopicId>,
    /// target is the member's target assignment from the previous computation (not what it
    /// currently owns).
    pub target: &'a Assignment,
}

/// GroupSpec is everything an assignor reads of a group (Kafka's `GroupSpec`): its members in
/// the caller's order, its subscription type, and the inverted previous targets
/// ([`GroupSpec::is_partition_assigned`]). Building it cleans the previous targets as the
/// module documentation says; [`GroupSpec::target`] is a member's cleaned target.
#[derive(Debug, Clone)]
pub struct GroupSpec<'a> {
    members: Vec<MemberSpec<'a>>,
    subscription_type: SubscriptionType,
    /// For each topic held by some previous target: its held partitions, ascending, each with
    /// the index of the member holding it.
    owners: FxMap<TopicId, Vec<(i32, u32)>>,
    targets: Vec<Cow<'a, Assignment>>,
}

impl<'a> GroupSpec<'a> {
    /// new builds the spec of `members`, in that order. `subscription_type` is trusted as given
    /// (Kafka's assignors trust it too: a Homogeneous group is assigned the first member's
    /// topics); [`SubscriptionType::of`] computes it.
    pub fn new(members: Vec<MemberSpec<'a>>, subscription_type: SubscriptionType) -> Self {
        let mut owners: FxMap<TopicId, Vec<(i32, u32)>> = fx_map(0);
        for (i, m) in members.iter().enumerate() {
            for (topic, parts) in m.target.iter() {
                owners
                    .entry(*topic)
                    .or_default()
                    .extend(parts.iter().map(|&p| (p, i as u32)));
            }
        }
        let mut cleaned = false;
        for held in owners.values_mut() {
            let before = held.len();
            // Stable: of two claims on a partition, the earlier member's stays first.
            held.sort_by_key(|&(p, _)| p);
            held.dedup_by_key(|&mut (p, _)| p);
            let negatives = held.partition_point(|&(p, _)| p < 0);
            held.drain(..negatives);
            cleaned |= held.len() != before;
        }
        owners.retain(|_, held| !held.is_empty());
        let targets = members
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let held_by = |t: &TopicId, p: i32| owner_in(&owners, t, p) == Some(i as u32);
                if cleaned
                    && m.target
                        .iter()
                        .any(|(t, ps)| ps.iter().any(|&p| !held_by(t, p)))
                {
                    let kept = m
                        .target
                        .iter()
                        .map(|(t, ps)| {
                            (*t, ps.iter().copied().filter(|&p| held_by(t, p)).collect())
                        })
                        .filter(|(_, ps): &(TopicId, Vec<i32>)| !ps.is_empty())
                        .collect();
                    Cow::Owned(Assignment::from_sorted(kept))
                } else {
                    Cow::Borrowed(m.target)
                }
            })
            .collect();
        GroupSpec {
            members,
            subscription_type,
            owners,
            targets,
        }
    }

    /// members is the members in the caller's order.
    pub fn members(&self) -> &[MemberSpec<'a>] {
        &self.members
    }

    /// subscription_type is the type the spec was built with.
    pub fn subscription_type(&self) -> SubscriptionType {
        self.subscription_type
    }

    /// target is the previous target of the member at `index`, cleaned: without partitions an
    /// earlier member also holds, nor negative ones.
    pub fn target(&self, index: usize) -> &Assignment {
        &self.targets[index]
    }

    /// is_partition_assigned says whether some member's previous target holds `partition` of
    /// `topic` (Kafka's `GroupSpec.isPartitionAssigned`).
    pub fn is_partition_assigned(&self, topic: &TopicId, partition: i32) -> bool {
        owner_in(&self.owners, topic, partition).is_some()
    }

    /// previous_owner is the index of the member whose previous target holds `partition` of
    /// `topic`, if any.
    pub fn previous_owner(&self, topic: &TopicId, partition: i32) -> Option<usize> {
        owner_in(&self.owners, topic, partition).map(|i| i as usize)
    }

    /// held_partitions is the partitions of `topic` that previous targets hold, ascending.
    fn held_partitions(&self, topic: &TopicId) -> impl Iterator<Item = i32> + '_ {
        self.owners
            .get(topic)
            .into_iter()
            .flat_map(|held| held.iter().map(|&(p, _)| p))
    }
}

fn owner_in(owners: &FxMap<TopicId, Vec<(i32, u32)>>, topic: &TopicId, p: i32) -> Option<u32> {
    let held = owners.get(topic)?;
    let i = held.binary_search_by_key(&p, |&(q, _)| q).ok()?;
    Some(held[i].1)
}

/// TopicDescriber answers an assignor's one question about the cluster (Kafka's
/// `SubscribedTopicDescriber`): how many partitions a topic has. `None`, or a negative count, is
/// a topic missing from the metadata, which fails the assignment when a member subscribes to it.
pub trait TopicDescriber {
    /// partition_count is the number of partitions of `topic`.
    fn partition_count(&self, topic: &TopicId) -> Option<i32>;
}

impl TopicDescriber for BTreeMap<TopicId, i32> {
    fn partition_count(&self, topic: &TopicId) -> Option<i32> {
        self.get(topic).copied()
    }
}

impl<S: BuildHasher> TopicDescriber for HashMap<TopicId, i32, S> {
    fn partition_count(&self, topic: &TopicId) -> Option<i32> {
        self.get(topic).copied()
    }
}

impl<F: Fn(&TopicId) -> Option<i32>> TopicDescriber for F {
    fn partition_count(&self, topic: &TopicId) -> Option<i32> {
        self(topic)
    }
}

/// partition_count is `topic`'s partition count, or Kafka's error for a subscribed topic that
/// is not in the metadata.
fn partition_count(topics: &dyn TopicDescriber, topic: &TopicId) -> Result<i32, AssignorError> {
    match topics.partition_count(topic) {
        Some(n) if n >= 0 => Ok(n),
        _ => Err(AssignorError::new(format!(
            "Members are subscribed to topic {} which doesn't exist in the topic metadata.",
            uuid::format(topic)
        ))),
    }
}

/// in_range is the part of `parts` (ascending) that exists in a topic of `count` partitions.
fn in_range(parts: &[i32], count: i32) -> &[i32] {
    let lo = parts.partition_point(|&p| p < 0);
    let hi = parts.partition_point(|&p| p < count);
    &parts[lo..hi.max(lo)]
}

/// AssignorError is an assignor's failure (Kafka's `PartitionAssignorException`): a member
/// subscribes to a topic missing from the metadata, or partitions were left unassigned. The
/// coordinator answers the heartbeat with UNKNOWN_SERVER_ERROR and writes nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignorError {
    message: String,
}

impl AssignorError {
    /// new makes an error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        AssignorError {
            message: message.into(),
        }
    }

    /// message is the error's text.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for AssignorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for AssignorError {}

/// ServerAssignor is a server-side assignor (Kafka's `ConsumerGroupPartitionAssignor`).
/// Implementations hold no state: `assign` is a pure function of its arguments, safe to call
/// from any thread.
pub trait ServerAssignor: Sync {
    /// name is the assignor's Kafka name, as members ask for it in ConsumerGroupHeartbeat's
    /// `ServerAssignor` and as `group.consumer.assignors` lists it.
    fn name(&self) -> &'static str;

    /// assign computes the group's new target assignment: one [`Assignment`] per member of
    /// `spec`, in the same order. A member may get an empty assignment.
    fn assign(
        &self,
        spec: &GroupSpec<'_>,
        topics: &dyn TopicDescriber,
    ) -> Result<Vec<Assignment>, AssignorError>;
}

static UNIFORM: UniformAssignor = UniformAssignor;
static RANGE: RangeAssignor = RangeAssignor;

/// by_name is the built-in assignor called `name` (`uniform` or `range`), if there is one.
pub fn by_name(name: &str) -> Option<&'static dyn ServerAssignor> {
    match name {
        uniform::NAME => Some(&UNIFORM),
        range::NAME => Some(&RANGE),
        _ => None,
    }
}
