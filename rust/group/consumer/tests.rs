//! Tests across the consumer group's parts: a member's rejoin at epoch 0 (fencing, then
//! reconciliation), and a property test of reconciliation over a whole group.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::group::assignors::{Assignment, TopicId};
use crate::rng::Rng;

const FOO: TopicId = [1; 16];

fn a(topics: &[(TopicId, &[i32])]) -> Assignment {
    topics.iter().map(|(t, p)| (*t, p.to_vec())).collect()
}

fn as_owned(assignment: &Assignment) -> Vec<OwnedTopicPartitions<'static>> {
    assignment
        .iter()
        .map(|(t, p)| OwnedTopicPartitions {
            topic_id: *t,
            partitions: p.to_vec(),
            ..Default::default()
        })
        .collect()
}

/// rejoin is a heartbeat at epoch 0 reporting no partitions, validated then reconciled.
fn rejoin(
    member: &ConsumerMember,
    target_epoch: i32,
    target: &Assignment,
    epochs: &PartitionEpochs,
) -> ConsumerMember {
    validate_member_epoch(member, 0, Some(&[])).unwrap();
    let subscribed = BTreeSet::from([FOO]);
    reconcile(
        member,
        &Reconcile {
            target_epoch,
            target,
            partition_epoch: &|t, p| epochs.get(t, p),
            owned_topic_partitions: Some(&[]),
            subscription_changed: false,
            subscribed_topic_ids: &subscribed,
        },
    )
    .unwrap()
}

fn member_at(state: MemberState, assigned: Assignment, pending: Assignment) -> ConsumerMember {
    ConsumerMember {
        state,
        member_epoch: 100,
        previous_member_epoch: 99,
        subscribed_topic_names: ["foo".to_string()].into(),
        assigned_partitions: assigned,
        partitions_pending_revocation: pending,
        ..ConsumerMember::new("member")
    }
}

// From Kafka's GroupMetadataManagerTest.testMemberCanRejoinWithEpochZeroInStableState: the
// member keeps its state and gets its whole target back.
#[test]
fn member_can_rejoin_with_epoch_zero_in_stable_state() {
    let m = member_at(MemberState::Stable, a(&[(FOO, &[0, 1, 2])]), a(&[]));
    let mut epochs = PartitionEpochs::new();
    epochs.add_member(&m);
    let next = rejoin(&m, 100, &a(&[(FOO, &[0, 1, 2])]), &epochs);
    assert_eq!(next, m);
}

// From Kafka's GroupMetadataManagerTest.testMemberCanRejoinWithEpochZeroInUnrevokedPartitionsState:
// reporting no partitions completes the pending revocation.
#[test]
fn member_can_rejoin_with_epoch_zero_in_unrevoked_partitions_state() {
    let m = member_at(
        MemberState::UnrevokedPartitions,
        a(&[(FOO, &[0, 1])]),
        a(&[(FOO, &[2])]),
    );
    let mut epochs = PartitionEpochs::new();
    epochs.add_member(&m);
    let next = rejoin(&m, 101, &a(&[(FOO, &[0, 1])]), &epochs);
    assert_eq!(next.state, MemberState::Stable);
    assert_eq!((next.member_epoch, next.previous_member_epoch), (101, 100));
    assert_eq!(next.assigned_partitions, a(&[(FOO, &[0, 1])]));
    assert!(next.partitions_pending_revocation.is_empty());
}

// From Kafka's GroupMetadataManagerTest.testMemberCanRejoinWithEpochZeroInUnreleasedPartitionsState.
#[test]
fn member_can_rejoin_with_epoch_zero_in_unreleased_partitions_state() {
    let m = member_at(MemberState::UnreleasedPartitions, a(&[(FOO, &[0])]), a(&[]));
    let mut epochs = PartitionEpochs::new();
    epochs.add_member(&m);
    let next = rejoin(&m, 100, &a(&[(FOO, &[0, 1, 2])]), &epochs);
    assert_eq!(next.state, MemberState::Stable);
    assert_eq!(next.member_epoch, 100);
    assert_eq!(next.assigned_partitions, a(&[(FOO, &[0, 1, 2])]));
}

/// Client is one simulated consumer: the coordinator's member and what the client holds.
struct Client {
    member: ConsumerMember,
    subscribed: BTreeSet<TopicId>,
    /// owned are the partitions the client holds; it drops revoked ones when it acknowledges.
    owned: Assignment,
    /// epoch is the member epoch of the last response.
    epoch: i32,
}

struct Group {
    rng: Rng,
    partitions: BTreeMap<TopicId, i32>,
    clients: Vec<Client>,
    epochs: PartitionEpochs,
    target_epoch: i32,
    targets: Vec<Assignment>,
    /// seen are the states members were left in, to show the test reaches each.
    seen: BTreeSet<&'static str>,
}

impl Group {
    /// new_target hands each partition to a random subscriber of its topic, if it has one.
    fn new_target(&mut self) {
        self.target_epoch += 1;
        let mut targets = vec![BTreeMap::<TopicId, Vec<i32>>::new(); self.clients.len()];
        for (&topic, &count) in &self.partitions {
            let subscribers: Vec<usize> = (0..self.clients.len())
                .filter(|&i| self.clients[i].subscribed.contains(&topic))
                .collect();
            if subscribers.is_empty() {
                continue;
            }
            for p in 0..count {
                let owner = subscribers[(self.rng.next_u64() % subscribers.len() as u64) as usize];
                targets[owner].entry(topic).or_default().push(p);
            }
        }
        self.targets = targets.into_iter().map(Assignment::from_map).collect();
    }

    /// heartbeat is one heartbeat of client `i`: validated, reconciled, applied to the
    /// partition epochs, answered; the client then drops revoked partitions if `ack`.
    fn heartbeat(&mut self, i: usize, ack: bool, send_owned: bool, subscription_changed: bool) {
        let client = &self.clients[i];
        let owned = send_owned.then(|| as_owned(&client.owned));
        validate_member_epoch(&client.member, client.epoch, owned.as_deref())
            .expect("a client at its last epoch is not fenced");
        let epochs = &self.epochs;
        let next = reconcile(
            &client.member,
            &Reconcile {
                target_epoch: self.target_epoch,
                target: &self.targets[i],
                partition_epoch: &|t, p| epochs.get(t, p),
                owned_topic_partitions: owned.as_deref(),
                subscription_changed,
                subscribed_topic_ids: &client.subscribed,
            },
        )
        .expect("no member is in the Unknown state");
        let conflicts = self.epochs.update_member(Some(&client.member), &next);
        assert!(conflicts.is_empty(), "{conflicts:?}");

        let client = &mut self.clients[i];
        client.epoch = next.member_epoch;
        let mut holds = client.owned.topics().clone();
        if ack {
            holds.clear();
        }
        for (t, p) in next.assigned_partitions.iter() {
            holds.entry(*t).or_default().extend_from_slice(p);
        }
        client.owned = Assignment::from_map(holds);
        self.seen.insert(next.state.name());
        client.member = next;
        self.check();
    }

    /// check is the safety invariant: no partition in two members' assigned ∪ pending, each
    /// client holds only what its member has, and the partition epochs are those of the
    /// members.
    fn check(&self) {
        let mut holder: BTreeMap<(TopicId, i32), usize> = BTreeMap::new();
        let mut rebuilt = PartitionEpochs::new();
        for (i, c) in self.clients.iter().enumerate() {
            let m = &c.member;
            for set in [&m.assigned_partitions, &m.partitions_pending_revocation] {
                for (t, ps) in set.iter() {
                    for &p in ps {
                        if let Some(j) = holder.insert((*t, p), i) {
                            panic!("partition {}-{p} held by members {j} and {i}", t[0]);
                        }
                    }
                }
            }
            for (t, ps) in c.owned.iter() {
                for &p in ps {
                    assert!(
                        m.assigned_partitions.contains(t, p)
                            || m.partitions_pending_revocation.contains(t, p),
                        "client {i} holds {}-{p}, its member does not",
                        t[0]
                    );
                }
            }
            assert!(rebuilt.add_member(m).is_empty());
        }
        assert_eq!(rebuilt, self.epochs);
    }
}

// Property: members of one group under random targets, random subscription changes, random
// acknowledgements and heartbeats that sometimes leave out the owned partitions never hold a
// partition twice; once targets stop changing and everyone heartbeats and acknowledges, every
// member is Stable at the target epoch holding exactly its target.
#[test]
fn reconciliation_never_double_assigns_and_converges() {
    let mut seen = BTreeSet::new();
    for seed in 0..300u64 {
        let mut rng = Rng::new(Some(seed));
        let topics = 1 + rng.next_u64() % 3;
        let partitions: BTreeMap<TopicId, i32> = (0..topics)
            .map(|t| ([t as u8 + 1; 16], 1 + (rng.next_u64() % 8) as i32))
            .collect();
        let all: BTreeSet<TopicId> = partitions.keys().copied().collect();
        let members = 1 + rng.next_u64() % 5;
        let clients = (0..members)
            .map(|i| Client {
                member: ConsumerMember::new(format!("m{i}")),
                subscribed: all.clone(),
                owned: Assignment::new(),
                epoch: 0,
            })
            .collect();
        let mut g = Group {
            rng,
            partitions,
            clients,
            epochs: PartitionEpochs::new(),
            target_epoch: 0,
            targets: Vec::new(),
            seen: BTreeSet::new(),
        };
        g.new_target();

        for _ in 0..80 {
            let i = (g.rng.next_u64() % members) as usize;
            let mut changed = false;
            if g.rng.next_u64() % 16 == 0 {
                // Toggle one topic of the member's subscription.
                let topic = *all
                    .iter()
                    .nth((g.rng.next_u64() % topics) as usize)
                    .unwrap();
                let sub = &mut g.clients[i].subscribed;
                if !sub.remove(&topic) {
                    sub.insert(topic);
                }
                changed = true;
                if g.rng.next_u64() % 2 == 0 {
                    g.new_target();
                }
            } else if g.rng.next_u64() % 8 == 0 {
                g.new_target();
            }
            let ack = g.rng.next_u64() % 2 == 0;
            let send_owned = g.rng.next_u64() % 5 != 0;
            g.heartbeat(i, ack, send_owned, changed);
        }

        g.new_target();
        for _ in 0..4 {
            for i in 0..members as usize {
                g.heartbeat(i, true, true, false);
            }
        }
        for (i, c) in g.clients.iter().enumerate() {
            let m = &c.member;
            assert!(
                m.is_reconciled_to(g.target_epoch),
                "seed {seed}: member {i} is {:?} at {} (target {})",
                m.state,
                m.member_epoch,
                g.target_epoch
            );
            assert_eq!(
                m.assigned_partitions, g.targets[i],
                "seed {seed}: member {i}"
            );
            assert!(m.partitions_pending_revocation.is_empty(), "seed {seed}");
            assert_eq!(c.owned, g.targets[i], "seed {seed}: client {i}");
        }
        seen.extend(g.seen);
    }
    let expected = ["STABLE", "UNRELEASED_PARTITIONS", "UNREVOKED_PARTITIONS"];
    assert_eq!(seen, BTreeSet::from(expected));
}
