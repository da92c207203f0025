//! A consumer group's member as the coordinator keeps it (Kafka's `ConsumerGroupMember`) and
//! its reconciliation state ([`MemberState`], Kafka's `MemberState`).

use std::collections::{BTreeMap, BTreeSet};

use crate::group::assignors::{Assignment, TopicId};

/// MemberState is where a member stands in its reconciliation towards the group's target
/// assignment. The discriminant is the `State` int8 of the `ConsumerGroupCurrentMemberAssignment`
/// record (type 8); a byte this version does not know reads as [`MemberState::Unknown`].
///
/// Every state is left through [`super::reconcile`], once per heartbeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemberState {
    /// Stable: the member holds all of its target at the member epoch, or waits for nothing.
    ///
    /// action: none; the member keeps heartbeating.
    /// transition: a new target epoch → UnrevokedPartitions if it must give up partitions it
    /// still reports, else UnreleasedPartitions if some of its new partitions are still held
    /// by others, else Stable at the new epoch. A subscription change in this heartbeat (4.2)
    /// → UnrevokedPartitions if it still reports partitions of topics it left.
    Stable = 0,
    /// UnrevokedPartitions: the member must give up `partitions_pending_revocation` and keeps
    /// its old epoch until it stops reporting them.
    ///
    /// action: the coordinator arms the rebalance timeout; the response lists the smaller
    /// assignment.
    /// transition: when no pending partition is reported any more → the next state towards the
    /// latest target, at the same epoch when more must be revoked (4.2, KAFKA-19974).
    UnrevokedPartitions = 1,
    /// UnreleasedPartitions: the member is at the target epoch but some of its target
    /// partitions are still held (assigned or pending revocation) by other members.
    ///
    /// action: none; each heartbeat hands over whatever has been released meanwhile.
    /// transition: all released → Stable; a newer target needing revocations →
    /// UnrevokedPartitions.
    UnreleasedPartitions = 2,
    /// Unknown: a state byte written by a newer coordinator.
    ///
    /// action: the member is answered FENCED_MEMBER_EPOCH until it rejoins owning nothing.
    /// transition: a heartbeat that reports an empty owned list → reconciled from scratch at
    /// the target epoch.
    Unknown = 127,
}

impl MemberState {
    /// from_i8 reads the record's byte; any byte other than 0, 1, 2 is `Unknown`.
    pub fn from_i8(value: i8) -> Self {
        match value {
            0 => MemberState::Stable,
            1 => MemberState::UnrevokedPartitions,
            2 => MemberState::UnreleasedPartitions,
            _ => MemberState::Unknown,
        }
    }

    /// as_i8 is the byte the record carries for this state.
    pub fn as_i8(self) -> i8 {
        self as i8
    }

    /// name is Kafka's name of the state (`STABLE`, `UNREVOKED_PARTITIONS`,
    /// `UNRELEASED_PARTITIONS`, `UNKNOWN`), as admin tools show it.
    pub fn name(self) -> &'static str {
        match self {
            MemberState::Stable => "STABLE",
            MemberState::UnrevokedPartitions => "UNREVOKED_PARTITIONS",
            MemberState::UnreleasedPartitions => "UNRELEASED_PARTITIONS",
            MemberState::Unknown => "UNKNOWN",
        }
    }
}

/// ClassicMemberMetadata is what a member that speaks the classic protocol inside a consumer
/// group (KIP-848's upgrade path) adds: the tagged `ClassicMemberMetadata` of the
/// `ConsumerGroupMemberMetadata` record (type 5).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClassicMemberMetadata {
    /// session_timeout_ms is the session timeout of the member's JoinGroup.
    pub session_timeout_ms: i32,
    /// supported_protocols are the member's JoinGroup protocols (name, metadata), in its order.
    pub supported_protocols: Vec<ClassicProtocol>,
}

/// ClassicProtocol is one protocol of a classic member's JoinGroup.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ClassicProtocol {
    /// name is the assignor's name (`range`, `cooperative-sticky`).
    pub name: String,
    /// metadata is the protocol's opaque metadata (a `ConsumerProtocolSubscription`).
    pub metadata: Vec<u8>,
}

/// ConsumerMember is one member of a consumer group: its subscription (record type 5) and its
/// reconciliation state (record type 8). Plain data: the coordinator replaces a member by the
/// next value rather than editing it, so that what changed can be written as records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsumerMember {
    /// member_id is the id the client chose (or the server gave a v0 client with an empty id).
    pub member_id: String,
    /// instance_id is `group.instance.id` for a static member, `None` for a dynamic one.
    pub instance_id: Option<String>,
    /// rack_id is the client's `client.rack`, if set.
    pub rack_id: Option<String>,
    /// rebalance_timeout_ms is how long the member may take to revoke partitions; -1 until a
    /// heartbeat sets it.
    pub rebalance_timeout_ms: i32,
    /// client_id is the request header's client id.
    pub client_id: String,
    /// client_host is the client's address as the broker saw it.
    pub client_host: String,
    /// subscribed_topic_names are the topics the member subscribes to by name, sorted (the
    /// record's writer sorts them).
    pub subscribed_topic_names: BTreeSet<String>,
    /// subscribed_topic_regex is the member's RE2J subscription; empty when it has none.
    pub subscribed_topic_regex: String,
    /// server_assignor is the assignor the member asked for (`uniform`, `range`), if any.
    pub server_assignor: Option<String>,
    /// member_epoch is the epoch the member is reconciled to: 0 while joining, the target
    /// epoch once it has moved to it.
    pub member_epoch: i32,
    /// previous_member_epoch is the epoch before the last [`ConsumerMember::update_member_epoch`];
    /// a heartbeat carrying it is accepted when the bump's response may have been lost.
    pub previous_member_epoch: i32,
    /// state is where the member stands in its reconciliation.
    pub state: MemberState,
    /// assigned_partitions are the partitions the member holds at `member_epoch` and the
    /// response tells it to own.
    pub assigned_partitions: Assignment,
    /// partitions_pending_revocation are the partitions the member must give up and may still
    /// hold; no other member gets them until it reports them gone.
    pub partitions_pending_revocation: Assignment,
    /// assignment_epochs is, for each partition the member holds (assigned or pending
    /// revocation), the target epoch at which it was assigned to the member (KIP-1251, Kafka
    /// 4.3+): a commit stamped with an older member epoch is accepted for a partition the member
    /// held at that epoch already. Kept right by [`ConsumerMember::hold`].
    pub assignment_epochs: BTreeMap<(TopicId, i32), i32>,
    /// classic_member_metadata is set for a member using the classic protocol, `None` for a
    /// ConsumerGroupHeartbeat member.
    pub classic_member_metadata: Option<ClassicMemberMetadata>,
}

impl ConsumerMember {
    /// new is a member as it joins, with the defaults of Kafka's `ConsumerGroupMember.Builder`:
    /// epoch 0, previous epoch -1, Stable, no subscription, rebalance timeout -1, empty
    /// client id and host, nothing assigned.
    pub fn new(member_id: impl Into<String>) -> Self {
        ConsumerMember {
            member_id: member_id.into(),
            instance_id: None,
            rack_id: None,
            rebalance_timeout_ms: -1,
            client_id: String::new(),
            client_host: String::new(),
            subscribed_topic_names: BTreeSet::new(),
            subscribed_topic_regex: String::new(),
            server_assignor: None,
            member_epoch: 0,
            previous_member_epoch: -1,
            state: MemberState::Stable,
            assigned_partitions: Assignment::new(),
            partitions_pending_revocation: Assignment::new(),
            assignment_epochs: BTreeMap::new(),
            classic_member_metadata: None,
        }
    }

    /// hold makes `assigned` and `pending` the member's partitions. A partition it held as
    /// assigned before, or held pending revocation and still does, keeps the epoch it was
    /// assigned at; any other gets `epoch`, as Kafka's CurrentAssignmentBuilder gives newly
    /// assigned partitions the target assignment epoch.
    pub fn hold(&mut self, assigned: Assignment, pending: Assignment, epoch: i32) {
        let mut epochs = BTreeMap::new();
        for (held, is_pending) in [(&assigned, false), (&pending, true)] {
            for (topic, partitions) in held.iter() {
                for &p in partitions {
                    let kept = self.assigned_partitions.contains(topic, p)
                        || (is_pending && self.partitions_pending_revocation.contains(topic, p));
                    let e = match self.assignment_epochs.get(&(*topic, p)) {
                        Some(&e) if kept => e,
                        _ => epoch,
                    };
                    epochs.insert((*topic, p), e);
                }
            }
        }
        self.assigned_partitions = assigned;
        self.partitions_pending_revocation = pending;
        self.assignment_epochs = epochs;
    }

    /// assignment_epoch is the epoch at which the member was given `partition` of `topic`,
    /// `None` when it holds it neither assigned nor pending revocation.
    pub fn assignment_epoch(&self, topic: &TopicId, partition: i32) -> Option<i32> {
        self.assignment_epochs.get(&(*topic, partition)).copied()
    }

    /// update_member_epoch moves the member to `epoch`, remembering the current one as the
    /// previous epoch (also when they are equal, as Kafka's builder does).
    pub fn update_member_epoch(&mut self, epoch: i32) {
        self.previous_member_epoch = self.member_epoch;
        self.member_epoch = epoch;
    }

    /// is_reconciled_to is true when the member is Stable at `target_epoch`.
    pub fn is_reconciled_to(&self, target_epoch: i32) -> bool {
        self.state == MemberState::Stable && self.member_epoch == target_epoch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_state_bytes_and_names() {
        for (byte, state, name) in [
            (0, MemberState::Stable, "STABLE"),
            (1, MemberState::UnrevokedPartitions, "UNREVOKED_PARTITIONS"),
            (
                2,
                MemberState::UnreleasedPartitions,
                "UNRELEASED_PARTITIONS",
            ),
            (127, MemberState::Unknown, "UNKNOWN"),
        ] {
            assert_eq!(MemberState::from_i8(byte), state);
            assert_eq!(state.as_i8(), byte);
            assert_eq!(state.name(), name);
        }
        // Kafka's MemberState.fromValue: any byte it does not know is UNKNOWN.
        for byte in [3, 42, -1, i8::MIN] {
            assert_eq!(MemberState::from_i8(byte), MemberState::Unknown);
        }
    }

    #[test]
    fn new_member_has_the_builder_defaults() {
        let m = ConsumerMember::new("m");
        assert_eq!(m.member_id, "m");
        assert_eq!((m.member_epoch, m.previous_member_epoch), (0, -1));
        assert_eq!(m.state, MemberState::Stable);
        assert_eq!(m.rebalance_timeout_ms, -1);
        assert!(m.subscribed_topic_regex.is_empty());
        assert!(m.assigned_partitions.is_empty());
        assert!(m.partitions_pending_revocation.is_empty());
        assert!(m.classic_member_metadata.is_none());
        assert!(m.assignment_epochs.is_empty());
    }

    // KIP-1251: kept partitions keep the epoch they were assigned at, new ones get the target
    // epoch, and a partition leaving for pending revocation takes its epoch along.
    #[test]
    fn held_partitions_keep_their_assignment_epochs() {
        const T: TopicId = [1; 16];
        let a = |ps: &[i32]| [(T, ps.to_vec())].into_iter().collect::<Assignment>();
        let mut m = ConsumerMember::new("m");
        m.hold(a(&[0, 1]), Assignment::new(), 3);
        m.hold(a(&[0, 1, 2]), Assignment::new(), 5);
        assert_eq!(
            [0, 1, 2, 3].map(|p| m.assignment_epoch(&T, p)),
            [Some(3), Some(3), Some(5), None]
        );
        m.hold(a(&[2]), a(&[0, 1]), 5);
        assert_eq!(
            [0, 1, 2].map(|p| m.assignment_epoch(&T, p)),
            [Some(3), Some(3), Some(5)]
        );
        // Still pending: kept. Handed back from pending revocation: assigned anew.
        m.hold(a(&[0, 2]), a(&[1]), 7);
        assert_eq!(
            [0, 1, 2].map(|p| m.assignment_epoch(&T, p)),
            [Some(7), Some(3), Some(5)]
        );
        m.hold(Assignment::new(), Assignment::new(), 8);
        assert!(m.assignment_epochs.is_empty());
    }

    #[test]
    fn update_member_epoch_keeps_the_previous_one() {
        let mut m = ConsumerMember::new("m");
        m.update_member_epoch(5);
        assert_eq!((m.member_epoch, m.previous_member_epoch), (5, 0));
        m.update_member_epoch(5);
        assert_eq!((m.member_epoch, m.previous_member_epoch), (5, 5));
    }
}
