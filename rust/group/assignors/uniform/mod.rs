//! UniformAssignor (`uniform`, Kafka's default): partitions spread as evenly as the members'
//! subscriptions allow, moving as few of the previous target's partitions as it can. Balance
//! comes before stickiness.
//!
//! A Homogeneous group goes to `homogeneous` (Kafka 4.x's `UniformHomogeneousAssignmentBuilder`
//! with KAFKA-18688's stability fix, from 4.0.1 and 4.1), a Heterogeneous one to
//! `heterogeneous` (`UniformHeterogeneousAssignmentBuilder` as rewritten in 3.9 by
//! KAFKA-17710). Both walk the members in the caller's order; see each module for what that
//! order decides.

mod heterogeneous;
mod homogeneous;

use super::{
    Assignment, AssignorError, GroupSpec, ServerAssignor, SubscriptionType, TopicDescriber,
};

/// NAME is Kafka's name of this assignor.
pub const NAME: &str = "uniform";

/// UniformAssignor is the `uniform` server-side assignor.
#[derive(Debug, Clone, Copy, Default)]
pub struct UniformAssignor;

impl ServerAssignor for UniformAssignor {
    fn name(&self) -> &'static str {
        NAME
    }

    fn assign(
        &self,
        spec: &GroupSpec<'_>,
        topics: &dyn TopicDescriber,
    ) -> Result<Vec<Assignment>, AssignorError> {
        if spec.members().is_empty() {
            return Ok(Vec::new());
        }
        match spec.subscription_type() {
            SubscriptionType::Homogeneous => homogeneous::assign(spec, topics),
            SubscriptionType::Heterogeneous => heterogeneous::assign(spec, topics),
        }
    }
}

/// UNOWNED marks a partition no member has (yet) in the assignment being built.
const UNOWNED: u32 = u32::MAX;

/// collect turns the owner of each partition (`owners[i][p]` for topic `topic_ids[i]`, every
/// one set) into one assignment per member of `members`.
fn collect(topic_ids: &[super::TopicId], owners: &[Vec<u32>], members: usize) -> Vec<Assignment> {
    let mut out = vec![std::collections::BTreeMap::new(); members];
    let mut lists: Vec<Vec<i32>> = vec![Vec::new(); members];
    let mut touched = Vec::new();
    for (topic, owners) in topic_ids.iter().zip(owners) {
        for (p, &o) in owners.iter().enumerate() {
            debug_assert_ne!(o, UNOWNED, "partition {p} left unassigned");
            let list = &mut lists[o as usize];
            if list.is_empty() {
                touched.push(o as usize);
            }
            list.push(p as i32);
        }
        for o in touched.drain(..) {
            out[o].insert(*topic, std::mem::take(&mut lists[o]));
        }
    }
    out.into_iter().map(Assignment::from_sorted).collect()
}
