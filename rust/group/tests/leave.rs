//! LeaveGroup: GroupCoordinatorTest's leave tests (checklist items 35-36).

use super::*;
use ErrorCode::*;

// testLeaveGroupUnknownGroup: top-level NONE, each member UNKNOWN_MEMBER_ID.
#[test]
fn test_leave_group_unknown_group() {
    let mut h = H::new();
    let r = h.leave(&[("m1", Option::None), ("", Some("i1"))]);
    assert_eq!(r.error(), None);
    assert_eq!(
        r.members.iter().map(|m| m.error()).collect::<Vec<_>>(),
        [UnknownMemberId; 2]
    );
    assert_eq!(r.members[1].group_instance_id.as_deref(), Some("i1"));
}

// testLeaveGroupUnknownConsumerExistingGroup / testValidLeaveGroup
#[test]
fn test_valid_leave_group() {
    let mut h = H::new();
    let (m, _) = h.stable_group();
    let r = h.leave(&[("unknown", Option::None)]);
    assert_eq!(r.members[0].error(), UnknownMemberId);
    let r = h.leave(&[(&m, Option::None)]);
    assert_eq!((r.error(), r.members[0].error()), (None, None));
    assert_eq!(h.state(), Some(GroupState::Empty));
    let r = h.leave_in("", &[(&m, Option::None)]);
    assert_eq!(r.error(), InvalidGroupId);
}

// testSingleLeaveDeadGroup / testBatchLeaveDeadGroup
#[test]
fn test_leave_dead_group() {
    let mut h = H::new();
    let (m, _) = h.stable_group();
    h.c.force_state(GROUP, GroupState::Dead);
    let r = h.leave(&[(&m, Option::None), ("x", Option::None)]);
    assert_eq!(r.error(), CoordinatorNotAvailable);
    assert!(r.members.is_empty());
}

// testLeaveGroupWithFencedInstanceId / testLeaveGroupStaticMemberWithUnknownMemberId
#[test]
fn test_leave_group_with_fenced_instance_id() {
    let mut h = H::new();
    let ((leader, li), _, _) = h.static_stable_group();
    let r = h.leave(&[("some-other-member", Some(&li))]);
    assert_eq!(r.members[0].error(), FencedInstanceId);
    let r = h.leave(&[(&leader, Some("unknown-instance"))]);
    assert_eq!(r.members[0].error(), UnknownMemberId);
    assert_eq!(h.state(), Some(GroupState::Stable));
}

// testStaticMembersValidBatchLeaveGroup / ...FencedInstanceBatchLeaveGroup /
// ...UnknownInstanceBatchLeaveGroup: each member of a batch has its own outcome.
#[test]
fn test_static_members_batch_leave_group() {
    let mut h = H::new();
    let ((leader, li), (_, fi), _) = h.static_stable_group();
    let r = h.leave(&[
        (&leader, Some(&li)),
        ("fenced", Some(&fi)),
        ("", Some("unknown-instance")),
    ]);
    assert_eq!(r.error(), None);
    assert_eq!(
        r.members.iter().map(|m| m.error()).collect::<Vec<_>>(),
        [None, FencedInstanceId, UnknownMemberId]
    );
    assert_eq!(h.state(), Some(GroupState::PreparingRebalance));
}

// A member leaving with its JoinGroup parked: the join is answered UNKNOWN_MEMBER_ID and the
// rebalance may complete without it.
#[test]
fn leaving_answers_the_parked_join() {
    let mut h = H::new();
    let (ids, _) = h.join_sync_group(2);
    let a = h.join(&Join::new(&ids[0]));
    assert!(!h.answered(a));
    let r = h.leave(&[(&ids[1], Option::None)]);
    assert_eq!(r.members[0].error(), None);
    // ids[0] was the only one left to rejoin: the join completes now.
    assert_eq!(h.join_error(a), None);
    assert_eq!(h.join_response(a).members.len(), 1);
}
