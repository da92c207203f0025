//! ListGroups, DescribeGroups, DeleteGroups, OffsetDelete: GroupCoordinatorTest's admin tests
//! (checklist items 37-40).

use super::*;
use crate::assignors::consumer_protocol::encode_subscription;
use crate::assignors::Subscription;
use ErrorCode::*;

// testListGroupsIncludesStableGroups / testListGroupsIncludesRebalancingGroups
#[test]
fn test_list_groups_includes_stable_and_rebalancing_groups() {
    let mut h = H::new();
    h.stable_group();
    let r = h.list(&[], &[]);
    assert_eq!(r.error(), None);
    assert_eq!(r.groups.len(), 1);
    assert_eq!(
        (
            r.groups[0].group_id.as_ref(),
            r.groups[0].protocol_type.as_ref()
        ),
        (GROUP, "consumer")
    );
    assert_eq!(r.groups[0].group_state, GroupState::Stable.name());
    h.join(&Join::new(""));
    assert_eq!(
        h.list(&[], &[]).groups[0].group_state,
        GroupState::PreparingRebalance.name()
    );
}

// testListGroupsWithStates / testListGroupsWithTypes
#[test]
fn test_list_groups_with_states_and_types() {
    let mut h = H::new();
    h.stable_group();
    let mut simple = H::new();
    let _ = &mut simple;
    let t = h.commit_full(
        2,
        "simple",
        "",
        Option::None,
        -1,
        &[("t", 0, 1, Option::None)],
    );
    assert_eq!(h.commit_errors(t), [None]);
    let ids = |r: &ListGroupsResponse| {
        r.groups
            .iter()
            .map(|g| g.group_id.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&h.list(&["stable"], &[])), [GROUP]);
    assert_eq!(ids(&h.list(&["EMPTY", "Dead"], &[])), ["simple"]);
    assert_eq!(
        ids(&h.list(&["PreparingRebalance"], &[])),
        Vec::<String>::new()
    );
    assert_eq!(ids(&h.list(&[], &["Classic"])), [GROUP, "simple"]);
    assert_eq!(ids(&h.list(&[], &["consumer"])), Vec::<String>::new());
}

// testDescribeGroupInactiveGroup: an unknown group is Dead with nothing else.
#[test]
fn test_describe_group_inactive_group() {
    let mut h = H::new();
    let d = h.describe(GROUP);
    assert_eq!(
        (
            d.error(),
            d.group_state.as_ref(),
            d.protocol_type.as_ref(),
            d.protocol_data.as_ref()
        ),
        (None, "Dead", "", "")
    );
    assert!(d.members.is_empty());
}

// testDescribeGroupStableForDynamicMember / ...ForStaticMember: metadata and assignment of each
// member, and the protocol.
#[test]
fn test_describe_group_stable() {
    let mut h = H::new();
    let ((leader, li), _, _) = h.static_stable_group();
    let d = h.describe(GROUP);
    assert_eq!(
        (
            d.group_state.as_ref(),
            d.protocol_type.as_ref(),
            d.protocol_data.as_ref()
        ),
        ("Stable", "consumer", "range")
    );
    let m = &d.members[0];
    assert_eq!(m.member_id.as_ref(), leader.as_str());
    assert_eq!(m.group_instance_id.as_deref(), Some(li.as_str()));
    assert_eq!(
        (m.client_id.as_ref(), m.client_host.as_ref()),
        ("clientId", "/127.0.0.1")
    );
    assert_eq!(&*m.member_metadata, b"metadata");
    assert_eq!(&*m.member_assignment, b"leader-assignment");
}

// testDescribeGroupRebalancing: no metadata, no assignment, no protocol.
#[test]
fn test_describe_group_rebalancing() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new(""));
    let d = h.describe(GROUP);
    assert_eq!(
        (d.group_state.as_ref(), d.protocol_data.as_ref()),
        ("CompletingRebalance", "")
    );
    assert_eq!(d.members[0].member_id, r.member_id);
    assert!(d.members[0].member_metadata.is_empty() && d.members[0].member_assignment.is_empty());
}

// DescribeGroups v3+ may ask for the authorized operations: without an authorizer, all of a
// group's (READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS).
#[test]
fn describe_groups_reports_authorized_operations_when_asked() {
    let mut h = H::new();
    let t = h.send(&GroupRequest::DescribeGroups(Req::new(
        5,
        DescribeGroupsRequest {
            groups: vec![GROUP.into()],
            include_authorized_operations: true,
            ..Default::default()
        },
    )));
    match &h.answers[&t] {
        GroupResponse::DescribeGroups(r) => assert_eq!(r.groups[0].authorized_operations, 3400),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.describe(GROUP).authorized_operations, i32::MIN);
}

// testDeleteNonEmptyGroup / testDeleteEmptyGroup / testDeleteEmptyGroupWithStoredOffsets
#[test]
fn test_delete_groups() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    assert_eq!(h.commit(&m, gen, &[("topic", 0, 0)]), [None]);
    assert_eq!(
        h.delete_groups(&[GROUP]),
        [(GROUP.to_string(), NonEmptyGroup)]
    );
    h.leave(&[(&m, Option::None)]);
    let from = h.written.len();
    assert_eq!(
        h.delete_groups(&[GROUP, GROUP, "unknown"]),
        [
            (GROUP.to_string(), None),
            ("unknown".to_string(), GroupIdNotFound)
        ]
    );
    assert_eq!(h.describe(GROUP).group_state, "Dead");
    assert_eq!(h.offset("topic", 0), (-1, None));
    // The offset and the group metadata were tombstoned.
    assert_eq!(h.written.len(), from + 1);
}

// testDeleteOffsetOfNonExistingGroup / testDeleteOffsetOfDeadConsumerGroup
#[test]
fn test_delete_offset_of_non_existing_or_dead_group() {
    let mut h = H::new();
    let r = h.delete_offsets(GROUP, &[("t", &[0])]);
    assert_eq!(r.error(), GroupIdNotFound);
    let (_, _) = h.stable_group();
    h.c.force_state(GROUP, GroupState::Dead);
    assert_eq!(
        h.delete_offsets(GROUP, &[("t", &[0])]).error(),
        GroupIdNotFound
    );
}

// testDeleteOffsetOfNonEmptyNonConsumerGroup / testDeleteOffsetOfEmptyNonConsumerGroup
#[test]
fn test_delete_offset_of_non_consumer_group() {
    let mut h = H::new();
    let r = h.join_alone(&Join::new("").protocol_type("connect"));
    let s = h.sync(r.generation_id, &r.member_id, &[]);
    assert_eq!(h.sync_error(s), None);
    assert_eq!(
        h.commit(&r.member_id, r.generation_id, &[("t", 0, 1)]),
        [None]
    );
    let d = h.delete_offsets(GROUP, &[("t", &[0])]);
    assert_eq!(d.error(), NonEmptyGroup);
    assert!(d.topics.is_empty());
    h.leave(&[(&r.member_id, Option::None)]);
    let d = h.delete_offsets(GROUP, &[("t", &[0])]);
    assert_eq!((d.error(), d.topics[0].partitions[0].error()), (None, None));
    assert_eq!(h.offset("t", 0), (-1, None));
}

// testDeleteOffsetOfEmptyConsumerGroup
#[test]
fn test_delete_offset_of_empty_consumer_group() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    assert_eq!(h.commit(&m, gen, &[("t", 0, 1), ("t", 1, 1)]), [None, None]);
    h.leave(&[(&m, Option::None)]);
    let d = h.delete_offsets(GROUP, &[("t", &[0])]);
    assert_eq!((d.error(), d.topics[0].partitions[0].error()), (None, None));
    assert_eq!(h.offset("t", 0), (-1, None));
    assert_eq!(h.offset("t", 1), (1, None));
}

// testDeleteOffsetOfStableConsumerGroup: partitions of consumed topics are kept.
#[test]
fn test_delete_offset_of_stable_consumer_group() {
    let sub = encode_subscription(&Subscription::new(["bar"]), 0).unwrap();
    let mut h = H::new();
    let r = h.join_alone(&Join::new("").protocols(&[("protocol", &sub)]));
    let s = h.sync(r.generation_id, &r.member_id, &[]);
    assert_eq!(h.sync_error(s), None);
    assert_eq!(
        h.commit(
            &r.member_id,
            r.generation_id,
            &[("foo", 0, 37), ("bar", 0, 37)]
        ),
        [None, None]
    );
    let d = h.delete_offsets(GROUP, &[("foo", &[0]), ("bar", &[0])]);
    assert_eq!(d.error(), None);
    assert_eq!(d.topics[0].partitions[0].error(), None);
    assert_eq!(d.topics[1].partitions[0].error(), GroupSubscribedToTopic);
    assert_eq!(h.offset("foo", 0), (-1, None));
    assert_eq!(h.offset("bar", 0), (37, None));
}

// testDeleteOffsetOfConsumerGroupWithUnparsableProtocol: topics unknown: every partition kept.
#[test]
fn test_delete_offset_of_consumer_group_with_unparsable_protocol() {
    let mut h = H::new();
    let (m, gen) = h.stable_group();
    assert_eq!(h.commit(&m, gen, &[("foo", 0, 37)]), [None]);
    let d = h.delete_offsets(GROUP, &[("foo", &[0])]);
    assert_eq!(
        (d.error(), d.topics[0].partitions[0].error()),
        (None, GroupSubscribedToTopic)
    );
}
