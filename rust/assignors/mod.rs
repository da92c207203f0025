//! Consumer assignors of Kafka's classic group protocol: `range`, `roundrobin`, `sticky` and
//! `cooperative-sticky`, plus the ConsumerProtocol payloads they travel in.
//!
//! Every assignor here makes the decisions Java's makes, in the same order, so that a kgroup
//! leader and a Java leader hand out the same partitions, in the same list order (the order is
//! visible in the Assignment bytes). Where Java's result depends on `HashMap` iteration order
//! (member ids, topic names, sets of partitions) the order is replayed by [`java`]. Where Java's
//! own output would be invalid (a partition for a member not subscribed to its topic, an owned
//! partition that does not exist, a member claiming a partition twice) kgroup stays valid; each
//! such place says so.

pub mod consumer_protocol;
pub(crate) mod fxhash;
pub mod java;
mod model;
mod racks;
pub mod range;
pub mod round_robin;
pub mod sticky;

use std::collections::HashMap;
use std::sync::Arc;

pub use model::MAX_TOTAL_PARTITIONS;

/// TopicPartition names one partition of one topic.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TopicPartition {
    pub topic: Arc<str>,
    pub partition: i32,
}

impl TopicPartition {
    /// new builds a TopicPartition.
    pub fn new(topic: impl Into<Arc<str>>, partition: i32) -> Self {
        TopicPartition {
            topic: topic.into(),
            partition,
        }
    }
}

/// Subscription is what one member sends when it joins: Java's `ConsumerPartitionAssignor.Subscription`.
///
/// `user_data` of `None` is Java's null (encoded as length -1), distinct from empty bytes.
/// `generation_id` -1 means absent (Java's `Optional.empty()`); every negative value is -1.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Subscription {
    pub topics: Vec<Arc<str>>,
    pub user_data: Option<Vec<u8>>,
    pub owned_partitions: Vec<TopicPartition>,
    pub generation_id: i32,
    pub rack_id: Option<Arc<str>>,
    pub group_instance_id: Option<Arc<str>>,
}

impl Subscription {
    /// new is a subscription to `topics` with nothing else: null user data, no owned partitions,
    /// no generation, no rack, no instance id.
    pub fn new<T: Into<Arc<str>>>(topics: impl IntoIterator<Item = T>) -> Self {
        Subscription {
            topics: topics.into_iter().map(Into::into).collect(),
            generation_id: -1,
            ..Default::default()
        }
    }

    /// generation is the generation id, `None` when absent (negative).
    pub fn generation(&self) -> Option<i32> {
        (self.generation_id >= 0).then_some(self.generation_id)
    }
}

/// Assignment is what the leader hands one member: Java's `ConsumerPartitionAssignor.Assignment`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assignment {
    pub partitions: Vec<TopicPartition>,
    pub user_data: Option<Vec<u8>>,
}

/// Member is one group member as the leader sees it: its member id and its subscription.
#[derive(Debug, Clone)]
pub struct Member {
    pub id: Arc<str>,
    pub subscription: Arc<Subscription>,
}

/// GroupInput is everything an assignor reads: partition counts (topics missing or with zero
/// partitions have no metadata and are skipped, as Java skips them), the members in the order
/// the coordinator listed them (Java's leader fills its subscription `HashMap` in that order),
/// and optionally the racks holding a replica of each partition (absent partitions have none).
#[derive(Debug, Clone, Default)]
pub struct GroupInput {
    pub partitions_per_topic: Vec<(Arc<str>, i32)>,
    pub members: Vec<Member>,
    pub partition_racks: Option<HashMap<TopicPartition, Vec<Arc<str>>>>,
}

/// RebalanceProtocol is Java's `ConsumerPartitionAssignor.RebalanceProtocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RebalanceProtocol {
    Eager = 0,
    Cooperative = 1,
}

/// GroupAssignment is an assignor's answer: one list of partitions per member, in the order of
/// [`GroupInput::members`], each in Java's list order, and the user data each member gets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupAssignment {
    pub assignments: Vec<Assignment>,
}

impl GroupAssignment {
    fn from_lists(lists: Vec<Vec<TopicPartition>>) -> Self {
        GroupAssignment {
            assignments: lists
                .into_iter()
                .map(|partitions| Assignment {
                    partitions,
                    user_data: None,
                })
                .collect(),
        }
    }
}
