//! Group configs (KIP-848's dynamic group configs) and Kafka 4.3+'s assignment interval
//! (KIP-1263) through the coordinator. Named after Kafka's GroupMetadataManagerTest.

use super::*;
use crate::group::consumer::ConsumerGroup;
use crate::group::GroupConfig;

/// T0 is the clock the batching tests start at: a computed target's timestamp must not be 0,
/// which means "unknown" (MockTime does not start at 0 either).
const T0: i64 = 1_000_000;

fn batching(interval_ms: i64) -> H {
    let mut h = H::with(Config {
        consumer_assignment_interval_ms: interval_ms,
        ..super::super::config()
    });
    h.c.set_topic_metadata([("foo", FOO, 6), ("bar", BAR, 3)]);
    h.now = T0;
    h
}

fn target_metadata(recs: &[R]) -> Vec<(i32, i64)> {
    recs.iter()
        .filter_map(|r| match r {
            R::TargetAssignmentMetadata { value: Some(v), .. } => Some(*v),
            _ => None,
        })
        .collect()
}

// testCanComputeNextTargetAssignmentWithNoPreviousAssignmentTimestamp
#[test]
fn can_compute_next_target_assignment_with_no_previous_assignment_timestamp() {
    assert!(ConsumerGroup::can_compute_next_target_assignment(
        0, 1000, 0
    ));
}

// testCanComputeNextTargetAssignmentWithZeroAssignmentIntervalMs
#[test]
fn can_compute_next_target_assignment_with_zero_assignment_interval_ms() {
    for now in [0, 999_999, 1_000_000] {
        assert!(ConsumerGroup::can_compute_next_target_assignment(
            1_000_000, 0, now
        ));
    }
}

// testCanComputeNextTargetAssignment
#[test]
fn can_compute_next_target_assignment() {
    for now in [0, 999_999, 1_000_000, 1_004_999] {
        assert!(!ConsumerGroup::can_compute_next_target_assignment(
            1_000_000, 5000, now
        ));
    }
    for now in [1_005_000, 1_007_500] {
        assert!(ConsumerGroup::can_compute_next_target_assignment(
            1_000_000, 5000, now
        ));
    }
}

// testConsumerGroupAssignmentInterval: the first target is computed at once (a new group's
// timestamp is 0); a second member joining within the interval bumps the group epoch but gets
// the last target (nothing) at the last assignment epoch; once the interval has passed, its
// next heartbeat computes the target, stamped with the time.
#[test]
fn consumer_group_assignment_interval() {
    let mut h = batching(5000);
    let r = hb(&mut h, &join("m1", &["foo"]));
    assert_eq!(r.member_epoch, 2);
    assert_eq!(r.heartbeat_interval_ms, 5000);
    assert_eq!(assigned(&r), Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5])])));
    assert_eq!(target_metadata(&records(&h, 0)), [(2, T0)]);

    h.advance(4995);
    let n = h.written.len();
    let r = hb(&mut h, &join("m2", &["foo"]));
    assert_eq!((error(&r), r.member_epoch), (ErrorCode::None, 2));
    assert_eq!(assigned(&r), Some(Assignment::new()));
    assert_eq!(
        kinds(&records(&h, n)),
        ["MemberMetadata", "GroupMetadata", "CurrentAssignment"]
    );
    let d = describe(&mut h);
    assert_eq!((d.group_epoch, d.assignment_epoch), (3, 2));

    h.advance(10);
    let n = h.written.len();
    let r = hb(&mut h, &beat("m2", 2, Some(&Assignment::new())));
    assert_eq!((r.member_epoch, r.heartbeat_interval_ms), (3, 5000));
    assert_eq!(assigned(&r), None, "its partitions are still m1's");
    let recs = records(&h, n);
    assert_eq!(
        kinds(&recs),
        [
            "TargetMember",
            "TargetMember",
            "TargetMetadata",
            "CurrentAssignment"
        ]
    );
    assert_eq!(target_metadata(&recs), [(3, T0 + 5005)]);
}

// The group's consumer.assignment.interval.ms overrides the broker's: 0 computes every target
// at once, and another group keeps the broker's interval.
#[test]
fn a_group_assignment_interval_overrides_the_brokers() {
    let mut h = batching(5000);
    h.c.set_group_config(
        G,
        GroupConfig {
            consumer_assignment_interval_ms: Some(0),
            ..Default::default()
        },
    );
    hb(&mut h, &join("m1", &["foo"]));
    h.advance(10);
    let r = hb(&mut h, &join("m2", &["foo"]));
    assert_eq!(r.member_epoch, 3, "computed at once");
    // Unset again: the broker's 5000 ms apply from the next heartbeat.
    h.c.set_group_config(G, GroupConfig::default());
    h.advance(10);
    let r = hb(&mut h, &join("m3", &["foo"]));
    assert_eq!(r.member_epoch, 3, "batched");
    let d = describe(&mut h);
    assert_eq!((d.group_epoch, d.assignment_epoch), (4, 3));
}

// The assignment timestamp is written with the target and replayed at load: after a restart
// the interval still runs from the last computation.
#[test]
fn the_assignment_timestamp_is_replayed_at_load() {
    let mut h = batching(5000);
    hb(&mut h, &join("m1", &["foo"]));
    h.advance(100);
    let mut by_partition: BTreeMap<i32, Vec<u8>> = BTreeMap::new();
    for (p, b) in &h.written {
        by_partition.entry(*p).or_default().extend_from_slice(b);
    }
    let mut r = batching(5000);
    r.now = h.now;
    for (p, data) in &by_partition {
        r.c.load(*p, data, true).unwrap();
    }
    let x = hb(&mut r, &join("m2", &["foo"]));
    assert_eq!(x.member_epoch, 2, "the interval has not passed since T0");
    r.advance(4900);
    let x = hb(&mut r, &beat("m2", 2, Some(&Assignment::new())));
    assert_eq!(x.member_epoch, 3);
}

// When the last member goes, the emptied group's target metadata is written with timestamp 0
// (Kafka 4.4): the next member's target is computed at once.
#[test]
fn an_emptied_group_computes_its_next_target_at_once() {
    let mut h = batching(5000);
    hb(&mut h, &join("m1", &["foo"]));
    h.advance(10);
    let n = h.written.len();
    hb(&mut h, &beat("m1", -1, None));
    assert_eq!(target_metadata(&records(&h, n)), [(3, 0)]);
    h.advance(10);
    let r = hb(&mut h, &join("m2", &["foo"]));
    assert_eq!(r.member_epoch, 4);
    assert_eq!(assigned(&r), Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5])])));
}

// testConsumerGroupDynamicConfigs: the group's consumer.session.timeout.ms and
// consumer.heartbeat.interval.ms take effect at the member's next heartbeat: the interval it
// is told and the session timer that heartbeat arms.
#[test]
fn consumer_group_dynamic_configs() {
    let mut h = h();
    let r = hb(&mut h, &join("m1", &["foo"]));
    assert_eq!((r.member_epoch, r.heartbeat_interval_ms), (2, 5000));
    h.advance(5000);
    h.c.set_group_config(
        G,
        GroupConfig {
            consumer_session_timeout_ms: Some(50_000),
            consumer_heartbeat_interval_ms: Some(10_000),
            ..Default::default()
        },
    );
    let r = hb(&mut h, &beat("m1", 2, None));
    assert_eq!((r.member_epoch, r.heartbeat_interval_ms), (2, 10_000));
    // The broker's 45 s would have fenced it here; the group's 50 s have not.
    h.advance(49_999);
    assert_eq!(describe(&mut h).members.len(), 1);
    h.advance(2);
    assert_eq!(describe(&mut h).members.len(), 0);
}

// A group config set for another group changes nothing here.
#[test]
fn a_group_config_is_only_its_groups() {
    let mut h = h();
    h.c.set_group_config(
        "other",
        GroupConfig {
            consumer_heartbeat_interval_ms: Some(6000),
            ..Default::default()
        },
    );
    let r = hb(&mut h, &join("m1", &["foo"]));
    assert_eq!(r.heartbeat_interval_ms, 5000);
    h.advance(45_001);
    assert_eq!(describe(&mut h).members.len(), 0);
}
