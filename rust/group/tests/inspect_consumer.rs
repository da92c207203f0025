//! Inspection and expire_member on consumer groups (KIP-848): the view matches what
//! ConsumerGroupDescribe reports, and a session ended by the host fences the member as its
//! session timer does (a_silent_member_is_fenced_at_its_session_timeout, Kafka's
//! testSessionTimeoutLifecycle).

use std::collections::BTreeMap;

use super::*;
use crate::group::GroupKind;

fn names(items: &[(&str, &[i32])]) -> BTreeMap<String, Vec<i32>> {
    items
        .iter()
        .map(|(t, p)| (t.to_string(), p.to_vec()))
        .collect()
}

/// two_members brings m1 and m2 of `foo` to a Stable group at epoch 3; returns what each
/// holds.
fn two_members(h: &mut H) -> (Assignment, Assignment) {
    let r1 = hb(h, &join("m1", &["foo"]));
    let all = assigned(&r1).unwrap();
    hb(h, &join("m2", &["foo"]));
    let kept = assigned(&hb(h, &beat("m1", 2, Some(&all)))).unwrap();
    assert_eq!(hb(h, &beat("m1", 2, Some(&kept))).member_epoch, 3);
    let got = assigned(&hb(h, &beat("m2", 3, Some(&Assignment::new())))).unwrap();
    (kept, got)
}

fn by_name(a: &Assignment) -> BTreeMap<String, Vec<i32>> {
    a.iter()
        .map(|(t, p)| {
            assert_eq!(*t, FOO);
            ("foo".to_string(), p.to_vec())
        })
        .collect()
}

// The view of a consumer group is ConsumerGroupDescribe's: epochs, states, and each member's
// epoch, subscription and assignment, topics by name.
#[test]
fn a_consumer_group_is_described() {
    let mut h = h();
    let (kept, got) = two_members(&mut h);
    let d = describe(&mut h);
    let v = h.c.inspect_group(G).unwrap();
    assert_eq!(v.kind, GroupKind::Consumer);
    assert_eq!(v.state, "Stable");
    assert_eq!(v.state, d.group_state.as_ref());
    assert_eq!((v.generation, v.assignment_epoch), (3, 3));
    assert_eq!(v.protocol_type.as_deref(), Some("consumer"));
    assert_eq!(v.protocol.as_deref(), Some(d.assignor_name.as_ref()));
    let m: Vec<(&str, i32)> = v
        .members
        .iter()
        .map(|m| (m.member_id.as_str(), m.member_epoch))
        .collect();
    assert_eq!(m, [("m1", 3), ("m2", 3)]);
    assert_eq!(v.members[0].subscription, ["foo"]);
    assert_eq!(v.members[0].assignment, by_name(&kept));
    assert_eq!(v.members[1].assignment, by_name(&got));
    assert_eq!(v.members[1].target, by_name(&got));
    assert_eq!(
        (
            v.members[0].client_id.as_str(),
            v.members[0].client_host.as_str()
        ),
        ("client", "/127.0.0.1")
    );
    assert_eq!(h.c.group_ids(), [G]);
}

// While m1 still has to revoke, its view holds the partitions pending revocation, and its
// target is the smaller set (ConsumerGroupDescribe's assignment and targetAssignment).
#[test]
fn a_member_revoking_holds_its_pending_partitions() {
    let mut h = h();
    let all = assigned(&hb(&mut h, &join("m1", &["foo"]))).unwrap();
    hb(&mut h, &join("m2", &["foo"]));
    let kept = assigned(&hb(&mut h, &beat("m1", 2, Some(&all)))).unwrap();
    let v = h.c.inspect_group(G).unwrap();
    assert_eq!(v.state, "Reconciling");
    assert_eq!(
        v.members[0].assignment,
        names(&[("foo", &[0, 1, 2, 3, 4, 5])])
    );
    assert_eq!(v.members[0].target, by_name(&kept));
    assert_eq!(v.members[0].member_epoch, 2);
    assert!(v.members[1].assignment.is_empty());
}

// The session ended by the host: the member is fenced as at its session timeout (tombstones,
// an epoch bump), its next heartbeat is UNKNOWN_MEMBER_ID, and the other member takes over
// everything.
#[test]
fn expiring_a_member_fences_it() {
    let mut h = h();
    two_members(&mut h);
    let n = h.written.len();
    let effects = h.c.expire_member(h.now, G, Some("m1")).unwrap();
    h.apply(effects);
    assert_eq!(
        kinds(&records(&h, n)),
        [
            "CurrentAssignment-",
            "TargetMember-",
            "MemberMetadata-",
            "GroupMetadata"
        ]
    );
    let v = h.c.inspect_group(G).unwrap();
    assert_eq!((v.generation, v.members.len()), (4, 1));
    let r = hb(&mut h, &beat("m1", 3, None));
    assert_eq!(error(&r), ErrorCode::UnknownMemberId);
    let r = hb(&mut h, &beat("m2", 3, Some(&Assignment::new())));
    assert_eq!(r.member_epoch, 4);
    assert_eq!(assigned(&r), Some(parts(&[(FOO, &[0, 1, 2, 3, 4, 5])])));
}

// Every member at once: each is fenced in turn and the group is Empty at a higher epoch.
#[test]
fn expiring_every_member_empties_the_group() {
    let mut h = h();
    two_members(&mut h);
    let effects = h.c.expire_member(h.now, G, Option::None).unwrap();
    h.apply(effects);
    let v = h.c.inspect_group(G).unwrap();
    assert_eq!((v.state, v.members.len()), ("Empty", 0));
    assert_eq!(v.generation, 5);
    let r = hb(&mut h, &beat("m2", 3, None));
    assert_eq!(error(&r), ErrorCode::UnknownMemberId);
}
