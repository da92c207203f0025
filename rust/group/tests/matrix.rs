//! The error matrix by request and state (reference §1.4), each cell checked from a group in that
//! state, and the pre-checks every group api shares (§1.2, GroupCoordinatorTest's
//! testRequestHandlingWhileLoadingInProgress and the *WrongCoordinator tests).

use super::*;
use ErrorCode::*;

#[derive(Clone, Copy, Debug, PartialEq)]
enum At {
    NoGroup,
    Empty,
    Preparing,
    Completing,
    Stable,
    Dead,
}

const ALL: [At; 6] = [
    At::NoGroup,
    At::Empty,
    At::Preparing,
    At::Completing,
    At::Stable,
    At::Dead,
];

/// setup brings the group to `at` and returns a member of it (the probe) and the generation.
/// In PreparingRebalance the probe has not rejoined; in CompletingRebalance it is the leader.
fn setup(at: At) -> (H, String, i32) {
    let mut h = H::new();
    match at {
        At::NoGroup => (h, "memberId".into(), 1),
        At::Empty => {
            let (m, gen) = h.stable_group();
            h.leave(&[(&m, Option::None)]);
            (h, m, gen)
        }
        At::Preparing => {
            let (ids, gen) = h.join_sync_group(2);
            h.join(&Join::new(&ids[0]));
            (h, ids[1].clone(), gen)
        }
        At::Completing => {
            let r = h.join_alone(&Join::new(""));
            (h, r.member_id.to_string(), r.generation_id)
        }
        At::Stable => {
            let (ids, gen) = h.join_sync_group(2);
            (h, ids[1].clone(), gen)
        }
        At::Dead => {
            let (m, gen) = h.stable_group();
            h.c.force_state(GROUP, GroupState::Dead);
            (h, m, gen)
        }
    }
}

fn expect_state(h: &H, at: At) {
    let want = match at {
        At::NoGroup => Option::None,
        At::Empty => Some(GroupState::Empty),
        At::Preparing => Some(GroupState::PreparingRebalance),
        At::Completing => Some(GroupState::CompletingRebalance),
        At::Stable => Some(GroupState::Stable),
        At::Dead => Some(GroupState::Dead),
    };
    assert_eq!(h.state(), want, "{at:?}");
}

#[test]
fn heartbeat_by_state() {
    for at in ALL {
        let (mut h, m, gen) = setup(at);
        expect_state(&h, at);
        let want = match at {
            At::NoGroup | At::Empty => UnknownMemberId,
            At::Preparing => RebalanceInProgress,
            At::Completing | At::Stable => None,
            At::Dead => CoordinatorNotAvailable,
        };
        assert_eq!(h.heartbeat(&m, gen), want, "{at:?}");
    }
}

#[test]
fn sync_group_by_state() {
    for at in ALL {
        let (mut h, m, gen) = setup(at);
        let s = h.sync(gen, &m, &[]);
        let want = match at {
            At::NoGroup | At::Empty => UnknownMemberId,
            At::Preparing => RebalanceInProgress,
            // The leader's sync: answered once its assignment is written.
            At::Completing | At::Stable => None,
            At::Dead => CoordinatorNotAvailable,
        };
        assert_eq!(h.sync_error(s), want, "{at:?}");
    }
}

#[test]
fn join_group_known_member_by_state() {
    for at in ALL {
        let (mut h, m, gen) = setup(at);
        let t = h.join(&Join::new(&m));
        match at {
            At::NoGroup | At::Empty => assert_eq!(h.join_error(t), UnknownMemberId, "{at:?}"),
            At::Dead => assert_eq!(h.join_error(t), CoordinatorNotAvailable, "{at:?}"),
            // Parked, and now everyone is in: the join completes.
            At::Preparing => assert_eq!(h.join_response(t).generation_id, gen + 1, "{at:?}"),
            // Unchanged metadata: this generation again, no rebalance.
            At::Completing | At::Stable => {
                let r = h.join_response(t);
                assert_eq!((r.error(), r.generation_id), (None, gen), "{at:?}");
                expect_state(&h, at);
            }
        }
    }
}

#[test]
fn join_group_new_member_by_state() {
    for at in ALL {
        let (mut h, _, _) = setup(at);
        let t = h.join(&Join::new("").v(4));
        let want = match at {
            At::Dead => CoordinatorNotAvailable,
            _ => MemberIdRequired,
        };
        assert_eq!(h.join_error(t), want, "{at:?}");
    }
}

#[test]
fn leave_group_by_state() {
    for at in ALL {
        let (mut h, m, _) = setup(at);
        let r = h.leave(&[(&m, Option::None)]);
        let (top, member) = match at {
            At::NoGroup | At::Empty => (None, Some(UnknownMemberId)),
            At::Preparing | At::Completing | At::Stable => (None, Some(None)),
            At::Dead => (CoordinatorNotAvailable, Option::None),
        };
        assert_eq!(r.error(), top, "{at:?}");
        assert_eq!(r.members.first().map(|m| m.error()), member, "{at:?}");
    }
}

#[test]
fn offset_commit_by_state() {
    for at in ALL {
        let (mut h, m, gen) = setup(at);
        let want = match at {
            At::NoGroup => IllegalGeneration,
            At::Empty => UnknownMemberId,
            At::Preparing | At::Stable => None,
            At::Completing => RebalanceInProgress,
            At::Dead => CoordinatorNotAvailable,
        };
        assert_eq!(h.commit(&m, gen, &[("t", 0, 1)]), [want], "member, {at:?}");
        // Without a member identity (generation -1): the admin path.
        let t = h.commit_full(2, GROUP, "", Option::None, -1, &[("t", 0, 1, Option::None)]);
        let want = match at {
            At::NoGroup | At::Empty => None,
            At::Preparing | At::Completing | At::Stable => UnknownMemberId,
            At::Dead => CoordinatorNotAvailable,
        };
        assert_eq!(h.commit_errors(t), [want], "admin, {at:?}");
    }
}

#[test]
fn offset_fetch_by_state() {
    for at in ALL {
        let (mut h, _, _) = setup(at);
        assert_eq!(h.offset("t", 0), (-1, None), "{at:?}");
    }
}

#[test]
fn delete_groups_by_state() {
    for at in ALL {
        let (mut h, _, _) = setup(at);
        let want = match at {
            At::NoGroup | At::Dead => GroupIdNotFound,
            At::Empty => None,
            _ => NonEmptyGroup,
        };
        assert_eq!(h.delete_groups(&[GROUP])[0].1, want, "{at:?}");
    }
}

#[test]
fn offset_delete_by_state() {
    for at in ALL {
        let (mut h, _, _) = setup(at);
        let r = h.delete_offsets(GROUP, &[("t", &[0])]);
        let (top, part) = match at {
            At::NoGroup | At::Dead => (GroupIdNotFound, Option::None),
            At::Empty => (None, Some(None)),
            // Consumer groups whose subscriptions do not parse keep every topic.
            _ => (None, Some(GroupSubscribedToTopic)),
        };
        assert_eq!(r.error(), top, "{at:?}");
        assert_eq!(
            r.topics.first().map(|t| t.partitions[0].error()),
            part,
            "{at:?}"
        );
    }
}

#[test]
fn describe_groups_by_state() {
    for at in ALL {
        let (mut h, _, _) = setup(at);
        let d = h.describe(GROUP);
        let want = match at {
            At::NoGroup | At::Dead => "Dead",
            At::Empty => "Empty",
            At::Preparing => "PreparingRebalance",
            At::Completing => "CompletingRebalance",
            At::Stable => "Stable",
        };
        assert_eq!((d.error(), &*d.group_state), (None, want), "{at:?}");
    }
}

/// loading marks the group's partition as loading (a first chunk, not the last).
fn loading(h: &mut H) {
    let p = h.c.partition_for(GROUP);
    h.c.load(p, &[], false).unwrap();
}

// testRequestHandlingWhileLoadingInProgress: COORDINATOR_LOAD_IN_PROGRESS, except SyncGroup
// (REBALANCE_IN_PROGRESS, which old clients expect) and Heartbeat (NONE, blindly).
#[test]
fn test_request_handling_while_loading_in_progress() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    loading(&mut h);
    let t = h.join(&Join::new(""));
    assert_eq!(h.join_error(t), CoordinatorLoadInProgress);
    let s = h.sync(gen, &m, &[]);
    assert_eq!(h.sync_error(s), RebalanceInProgress);
    assert_eq!(h.heartbeat(&m, gen), None);
    assert_eq!(
        h.leave(&[(&m, Option::None)]).error(),
        CoordinatorLoadInProgress
    );
    assert_eq!(
        h.commit(&m, gen, &[("t", 0, 1)]),
        [CoordinatorLoadInProgress]
    );
    assert_eq!(
        h.fetch_in(GROUP, Option::None, false).error(),
        CoordinatorLoadInProgress
    );
    assert_eq!(h.describe(GROUP).error(), CoordinatorLoadInProgress);
    assert_eq!(h.delete_groups(&[GROUP])[0].1, CoordinatorLoadInProgress);
    assert_eq!(
        h.delete_offsets(GROUP, &[("t", &[0])]).error(),
        CoordinatorLoadInProgress
    );
    // ListGroups: the error, with what is known so far.
    let l = h.list(&[], &[]);
    assert_eq!(l.error(), CoordinatorLoadInProgress);
}

// testJoinGroupWrongCoordinator, testSyncGroupNotCoordinator, testHeartbeatWrongCoordinator,
// testLeaveGroupWrongCoordinator, testFetchOffsetNotCoordinatorForGroup,
// testDescribeGroupWrongCoordinator, testDeleteGroupWithWrongCoordinator: a partition the
// coordinator gave up answers NOT_COORDINATOR.
#[test]
fn test_wrong_coordinator() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    let p = h.c.partition_for(GROUP);
    let effects = h.c.unload(h.now, p);
    h.apply(effects);
    assert_eq!(h.state(), Option::None);
    let t = h.join(&Join::new(""));
    assert_eq!(h.join_error(t), NotCoordinator);
    let s = h.sync(gen, &m, &[]);
    assert_eq!(h.sync_error(s), NotCoordinator);
    assert_eq!(h.heartbeat(&m, gen), NotCoordinator);
    assert_eq!(h.leave(&[(&m, Option::None)]).error(), NotCoordinator);
    assert_eq!(h.commit(&m, gen, &[("t", 0, 1)]), [NotCoordinator]);
    assert_eq!(
        h.fetch_in(GROUP, Option::None, false).error(),
        NotCoordinator
    );
    assert_eq!(h.describe(GROUP).error(), NotCoordinator);
    assert_eq!(h.delete_groups(&[GROUP])[0].1, NotCoordinator);
    // Other partitions are still served.
    let other = (0..100)
        .map(|i| format!("g{i}"))
        .find(|g| h.c.partition_for(g) != p)
        .unwrap();
    let t = h.join(&Join::new("").group(&other));
    assert!(!h.answered(t));
}

// Unloading answers every parked request NOT_COORDINATOR (Kafka's onGroupUnloaded).
#[test]
fn unloading_answers_parked_requests() {
    let mut h = H::new();
    let (ids, gen) = h.join_sync_group(2);
    let j = h.join(&Join::new(&ids[0]));
    assert!(!h.answered(j));
    let p = h.c.partition_for(GROUP);
    let effects = h.c.unload(h.now, p);
    h.apply(effects);
    assert_eq!(h.join_error(j), NotCoordinator);
    let mut h = H::new();
    let r = h.join_alone(&Join::new(""));
    let f = h.join(&Join::new(""));
    h.join(&Join::new(&r.member_id));
    let fr = h.join_response(f).clone();
    let s = h.sync(fr.generation_id, &fr.member_id, &[]);
    assert!(!h.answered(s));
    let effects = h.c.unload(h.now, p);
    h.apply(effects);
    assert_eq!(h.sync_error(s), NotCoordinator);
    let _ = gen;
}

// testInvalidGroupId: the empty group id is invalid for the group-management apis, valid for
// offsets, DescribeGroups and DeleteGroups.
#[test]
fn test_empty_group_id_is_valid_for_offsets_and_admin() {
    let mut h = H::new();
    let t = h.commit_full(2, "", "", Option::None, -1, &[("t", 0, 1, Option::None)]);
    assert_eq!(h.commit_errors(t), [None]);
    assert_eq!(
        h.fetch_in("", Some(&[("t", &[0])]), false).topics[0].partitions[0].committed_offset,
        1
    );
    assert_eq!(h.describe("").group_state, "Empty");
    assert_eq!(h.delete_groups(&[""])[0].1, None);
}
