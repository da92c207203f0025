//! reconcile: one step of a member towards the group's target assignment, taken on each of its
//! heartbeats (Kafka's `CurrentAssignmentBuilder`, Kafka 4.2).
//!
//! A member gives partitions up before it gets new ones: while it still reports a partition it
//! must give up, it stays at its epoch with the smaller assignment (UnrevokedPartitions); once
//! it stops reporting them it moves to the target epoch. A partition goes to its new owner only
//! when no member holds it (assigned or pending revocation), so no partition is ever held
//! twice; a member that waits for one is UnreleasedPartitions and gets it on a later heartbeat.
//!
//! Each partition a member holds keeps the target epoch it was assigned at (KIP-1251, Kafka
//! 4.3+; [`ConsumerMember::hold`]), which offset commits are checked against.
//!
//! Kafka 4.2 behaviours kept here:
//! - KAFKA-19974: leaving UnrevokedPartitions keeps the member's epoch when it must revoke
//!   again (4.0 and 4.1 bumped it by one).
//! - KAFKA-19449: a partition in the member's own pending revocation is not unreleased when
//!   the new target hands it back.
//! - KAFKA-19431: when the subscription changed in this heartbeat, partitions of topics the
//!   member no longer subscribes to are revoked at once, even at the target epoch.

use std::collections::{BTreeMap, BTreeSet};

use super::member::{ConsumerMember, MemberState};
use super::OwnedTopicPartitions;
use crate::errors::{Error, ErrorCode};
use crate::group::assignors::{Assignment, TopicId};

/// Reconcile is what one heartbeat brings to a member's reconciliation besides the member.
pub struct Reconcile<'a> {
    /// target_epoch is the group's assignment epoch.
    pub target_epoch: i32,
    /// target is the member's target assignment at `target_epoch`.
    pub target: &'a Assignment,
    /// partition_epoch is the epoch a partition is held at by any member of the group (this one
    /// included), `None` (or `Some(-1)`) when free; see [`super::PartitionEpochs::get`].
    pub partition_epoch: &'a dyn Fn(&TopicId, i32) -> Option<i32>,
    /// owned_topic_partitions are the request's `TopicPartitions`; `None` when not sent, which
    /// counts as still owning every partition.
    pub owned_topic_partitions: Option<&'a [OwnedTopicPartitions<'a>]>,
    /// subscription_changed is true when this heartbeat changed the member's subscription.
    pub subscription_changed: bool,
    /// subscribed_topic_ids are the ids of the topics the member subscribes to now (names and
    /// resolved regex; an unresolved regex matches nothing). Target partitions of other topics
    /// count as not in the target.
    pub subscribed_topic_ids: &'a BTreeSet<TopicId>,
}

/// reconcile is the member after this heartbeat, following the states of [`MemberState`].
/// Deterministic and pure: the caller writes the record and updates the partition epochs when
/// the answer differs from `member`.
///
/// Fails with FENCED_MEMBER_EPOCH when the member is in the Unknown state and the request does
/// not report an empty owned list: it must drop everything and rejoin.
pub fn reconcile(member: &ConsumerMember, input: &Reconcile<'_>) -> Result<ConsumerMember, Error> {
    match member.state {
        MemberState::Stable => {
            if member.member_epoch != input.target_epoch {
                Ok(compute_next(member, input, member.member_epoch))
            } else if input.subscription_changed {
                Ok(drop_unsubscribed(member, input))
            } else {
                Ok(member.clone())
            }
        }
        MemberState::UnrevokedPartitions => {
            if owns_any(
                input.owned_topic_partitions,
                &member.partitions_pending_revocation,
            ) {
                if input.subscription_changed {
                    Ok(drop_unsubscribed(member, input))
                } else {
                    Ok(member.clone())
                }
            } else {
                Ok(compute_next(member, input, member.member_epoch))
            }
        }
        MemberState::UnreleasedPartitions => Ok(compute_next(member, input, member.member_epoch)),
        MemberState::Unknown => {
            if input
                .owned_topic_partitions
                .is_none_or(|owned| !owned.is_empty())
            {
                return Err(Error::kafka(
                    ErrorCode::FencedMemberEpoch,
                    "The consumer group member is in a unknown state. The member must abandon \
                     all its partitions and rejoin.",
                ));
            }
            Ok(compute_next(member, input, input.target_epoch))
        }
    }
}

/// owns_any is true when the request reports any partition of `partitions`, or reports
/// nothing at all.
fn owns_any(owned: Option<&[OwnedTopicPartitions<'_>]>, partitions: &Assignment) -> bool {
    let Some(owned) = owned else {
        return true;
    };
    owned.iter().any(|tp| {
        let held = partitions.get(&tp.topic_id);
        tp.partitions.iter().any(|p| held.binary_search(p).is_ok())
    })
}

/// drop_unsubscribed moves the partitions of topics the member left from its assignment to
/// its pending revocation, without changing its epoch.
fn drop_unsubscribed(member: &ConsumerMember, input: &Reconcile<'_>) -> ConsumerMember {
    let mut assigned = BTreeMap::new();
    let mut pending = member.partitions_pending_revocation.topics().clone();
    let mut dropped = false;
    for (topic_id, partitions) in member.assigned_partitions.iter() {
        if input.subscribed_topic_ids.contains(topic_id) {
            assigned.insert(*topic_id, partitions.to_vec());
        } else {
            dropped = true;
            pending
                .entry(*topic_id)
                .or_default()
                .extend_from_slice(partitions);
        }
    }
    if !dropped {
        return member.clone();
    }
    let pending = Assignment::from_map(pending);
    let mut next = member.clone();
    let pending = if !pending.is_empty() && owns_any(input.owned_topic_partitions, &pending) {
        next.state = MemberState::UnrevokedPartitions;
        pending
    } else {
        // The dropped partitions are gone from the client already: only the assignment
        // shrinks, and the state and pending revocation stay.
        member.partitions_pending_revocation.clone()
    };
    // Nothing new: every partition keeps its assignment epoch.
    next.hold(Assignment::from_map(assigned), pending, input.target_epoch);
    next
}

/// compute_next reconciles the member from its assigned partitions towards the target.
/// `epoch_if_revoking` is the epoch it keeps when it must revoke first.
fn compute_next(
    member: &ConsumerMember,
    input: &Reconcile<'_>,
    epoch_if_revoking: i32,
) -> ConsumerMember {
    let topics: BTreeSet<&TopicId> = input
        .target
        .topics()
        .keys()
        .chain(member.assigned_partitions.topics().keys())
        .collect();

    let mut assigned = BTreeMap::new();
    let mut revoke = BTreeMap::new();
    let mut to_assign = BTreeMap::new();
    let mut has_unreleased = false;
    for topic_id in topics {
        let target = if input.subscribed_topic_ids.contains(topic_id) {
            input.target.get(topic_id)
        } else {
            &[]
        };
        let current = member.assigned_partitions.get(topic_id);
        let (keep, gone): (Vec<i32>, Vec<i32>) = current
            .iter()
            .partition(|p| target.binary_search(p).is_ok());
        let mut new = Vec::new();
        for &p in target {
            if keep.binary_search(&p).is_ok() {
                continue;
            }
            let held = (input.partition_epoch)(topic_id, p).is_some_and(|e| e != -1);
            // Held by this member's own pending revocation (the target gives it back): not
            // unreleased, only one member can hold it (KAFKA-19449).
            if held && !member.partitions_pending_revocation.contains(topic_id, p) {
                has_unreleased = true;
            } else {
                new.push(p);
            }
        }
        assigned.insert(*topic_id, keep);
        revoke.insert(*topic_id, gone);
        to_assign.insert(*topic_id, new);
    }
    let revoke = Assignment::from_map(revoke);
    let to_assign = Assignment::from_map(to_assign);

    let mut next = member.clone();
    if !revoke.is_empty() && owns_any(input.owned_topic_partitions, &revoke) {
        next.state = MemberState::UnrevokedPartitions;
        next.update_member_epoch(epoch_if_revoking);
        next.hold(Assignment::from_map(assigned), revoke, input.target_epoch);
        return next;
    }
    for (topic_id, partitions) in to_assign.iter() {
        assigned
            .entry(*topic_id)
            .or_default()
            .extend_from_slice(partitions);
    }
    next.state = if has_unreleased {
        MemberState::UnreleasedPartitions
    } else {
        MemberState::Stable
    };
    next.update_member_epoch(input.target_epoch);
    next.hold(
        Assignment::from_map(assigned),
        Assignment::new(),
        input.target_epoch,
    );
    next
}

#[cfg(test)]
mod tests;
