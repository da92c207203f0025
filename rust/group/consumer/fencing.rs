//! fencing: whether a heartbeat's member epoch is one the coordinator accepts from a member it
//! knows (Kafka's `GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid`, 4.2).

use super::member::ConsumerMember;
use super::OwnedTopicPartitions;
use crate::errors::{Error, ErrorCode};

/// validate_member_epoch accepts a heartbeat from the known `member` carrying `received_epoch`
/// and the request's owned partitions, or answers FENCED_MEMBER_EPOCH. Accepted:
/// - epoch 0, a rejoin, whatever the member's epoch (4.2, KAFKA-19233; ≤ 4.1 fenced it);
/// - the member's epoch;
/// - its previous epoch, when the request reports owned partitions that are all among the
///   member's assigned partitions (the response that bumped the epoch may have been lost).
///
/// Fencing writes nothing: the member stays until it rejoins or its session expires. A
/// member unknown to the group is not this check's (UNKNOWN_MEMBER_ID).
pub fn validate_member_epoch(
    member: &ConsumerMember,
    received_epoch: i32,
    owned_topic_partitions: Option<&[OwnedTopicPartitions<'_>]>,
) -> Result<(), Error> {
    if received_epoch == 0 || received_epoch == member.member_epoch {
        return Ok(());
    }
    if received_epoch > member.member_epoch {
        return Err(fenced(received_epoch, member, "greater"));
    }
    if received_epoch != member.previous_member_epoch || !is_subset(owned_topic_partitions, member)
    {
        return Err(fenced(received_epoch, member, "smaller"));
    }
    Ok(())
}

/// is_subset is true when the request reports owned partitions and each is assigned to the
/// member. A reported topic the member has nothing of fails even with no partitions listed,
/// as in Kafka.
fn is_subset(owned: Option<&[OwnedTopicPartitions<'_>]>, member: &ConsumerMember) -> bool {
    let Some(owned) = owned else {
        return false;
    };
    owned.iter().all(|tp| {
        let assigned = member.assigned_partitions.get(&tp.topic_id);
        !assigned.is_empty()
            && tp
                .partitions
                .iter()
                .all(|p| assigned.binary_search(p).is_ok())
    })
}

fn fenced(received_epoch: i32, member: &ConsumerMember, relation: &str) -> Error {
    Error::kafka(
        ErrorCode::FencedMemberEpoch,
        format!(
            "The consumer group member has a {relation} member epoch ({received_epoch}) than the \
             one known by the group coordinator ({}). The member must abandon all its partitions \
             and rejoin.",
            member.member_epoch
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::group::assignors::{Assignment, TopicId};
    use crate::group::consumer::member::MemberState;

    const FOO: TopicId = [1; 16];
    const BAR: TopicId = [2; 16];

    fn owned(topics: &[(TopicId, &[i32])]) -> Vec<OwnedTopicPartitions<'static>> {
        topics
            .iter()
            .map(|(t, p)| OwnedTopicPartitions {
                topic_id: *t,
                partitions: p.to_vec(),
                ..Default::default()
            })
            .collect()
    }

    /// member is at epoch 100, previously 99, holding foo 1-3.
    fn member() -> ConsumerMember {
        ConsumerMember {
            member_epoch: 100,
            previous_member_epoch: 99,
            assigned_partitions: [(FOO, vec![1, 2, 3])].into_iter().collect::<Assignment>(),
            ..ConsumerMember::new("member")
        }
    }

    fn is_fenced(result: Result<(), Error>) -> bool {
        result.is_err_and(|e| e.error_code() == Some(ErrorCode::FencedMemberEpoch))
    }

    // From Kafka's GroupMetadataManagerTest.testConsumerGroupMemberEpochValidation.
    #[test]
    fn consumer_group_member_epoch_validation() {
        let m = member();
        // Greater than the member's epoch.
        assert!(is_fenced(validate_member_epoch(&m, 200, None)));
        // Smaller, and not the previous epoch.
        assert!(is_fenced(validate_member_epoch(&m, 50, None)));
        // The previous epoch without reporting partitions.
        assert!(is_fenced(validate_member_epoch(&m, 99, None)));
        // The previous epoch owning a subset of the assignment: the bump's response was lost.
        let subset = owned(&[(FOO, &[1, 2])]);
        assert!(validate_member_epoch(&m, 99, Some(&subset)).is_ok());
        // The member's epoch.
        assert!(validate_member_epoch(&m, 100, None).is_ok());
    }

    #[test]
    fn previous_epoch_needs_a_subset_of_the_assignment() {
        let m = member();
        assert!(validate_member_epoch(&m, 99, Some(&[])).is_ok());
        assert!(validate_member_epoch(&m, 99, Some(&owned(&[(FOO, &[1, 2, 3])]))).is_ok());
        assert!(is_fenced(validate_member_epoch(
            &m,
            99,
            Some(&owned(&[(FOO, &[1, 4])]))
        )));
        // A topic the member has nothing of fails even with no partitions (Kafka's isSubset).
        assert!(is_fenced(validate_member_epoch(
            &m,
            99,
            Some(&owned(&[(BAR, &[])]))
        )));
    }

    // KAFKA-19233 (4.2): epoch 0 from a known member is a rejoin, accepted in every state;
    // Kafka's testMemberCanRejoinWithEpochZeroIn{Stable,UnrevokedPartitions,
    // UnreleasedPartitions}State.
    #[test]
    fn epoch_zero_from_a_known_member_is_accepted() {
        for state in [
            MemberState::Stable,
            MemberState::UnrevokedPartitions,
            MemberState::UnreleasedPartitions,
        ] {
            let m = ConsumerMember { state, ..member() };
            assert!(validate_member_epoch(&m, 0, Some(&[])).is_ok());
            assert!(validate_member_epoch(&m, 0, None).is_ok());
        }
    }

    #[test]
    fn fenced_message_names_both_epochs() {
        let err = validate_member_epoch(&member(), 200, None).unwrap_err();
        let text = err.to_string();
        assert!(text.contains("200") && text.contains("100"), "{text}");
    }
}
