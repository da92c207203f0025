//! GroupState: the five states of a classic group, documented as Kafka's `ClassicGroupState`
//! documents them, with the transitions each allows.

/// GroupState is the state of a classic group. Names are Kafka's, as DescribeGroups and
/// ListGroups put them on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GroupState {
    /// Empty: the group has no members, but lingers until all its offsets have expired. This
    /// state also holds groups that only store offsets (simple consumers, the admin client).
    ///
    /// action: respond normally to join group from new members
    ///         respond to sync group with UNKNOWN_MEMBER_ID
    ///         respond to heartbeat with UNKNOWN_MEMBER_ID
    ///         respond to leave group with UNKNOWN_MEMBER_ID
    ///         respond to offset commit with generation -1 normally, else with UNKNOWN_MEMBER_ID
    ///         allow offset fetch requests
    /// transition: last offsets removed in periodic expiration task => Dead
    ///             join group from a new member => PreparingRebalance
    ///             group is deleted (DeleteGroups) => Dead
    ///             group is removed by partition unload => Dead
    Empty,
    /// PreparingRebalance: the group is waiting for its members to (re)join.
    ///
    /// action: respond to heartbeats with REBALANCE_IN_PROGRESS
    ///         respond to sync group with REBALANCE_IN_PROGRESS
    ///         remove member on leave group request
    ///         park join group requests from new or existing members until all expected members
    ///         have joined
    ///         allow offset commits from previous generation
    ///         allow offset fetch requests
    /// transition: some members have joined by the timeout => CompletingRebalance
    ///             all members have left the group => Empty
    ///             group is removed by partition unload => Dead
    PreparingRebalance,
    /// CompletingRebalance: the group is waiting for the leader's assignment (Kafka's
    /// `AwaitingSync` before 2.4).
    ///
    /// action: respond to heartbeats with NONE
    ///         respond to offset commits with REBALANCE_IN_PROGRESS
    ///         park sync group requests from followers until transition to Stable
    ///         allow offset fetch requests
    /// transition: sync group with state assignment received from leader => Stable
    ///             join group from new member or existing member with updated metadata
    ///             => PreparingRebalance
    ///             leave group from existing member => PreparingRebalance
    ///             member failure detected => PreparingRebalance
    ///             group is removed by partition unload => Dead
    CompletingRebalance,
    /// Stable: every member has its assignment.
    ///
    /// action: respond to member heartbeats normally
    ///         respond to sync group from any member with current assignment
    ///         respond to join group from followers with matching metadata with current group
    ///         metadata
    ///         allow offset commits from member of current generation
    ///         allow offset fetch requests
    /// transition: member failure detected via heartbeat => PreparingRebalance
    ///             leave group from existing member => PreparingRebalance
    ///             leader join-group received => PreparingRebalance
    ///             follower join-group with new metadata => PreparingRebalance
    ///             group is removed by partition unload => Dead
    Stable,
    /// Dead: the group has no more members and its metadata is being removed (deleted, expired,
    /// or its partition unloaded). The coordinator drops a Dead group at once, so requests
    /// mostly see it as gone; one that finds it still held gets Kafka's answers.
    ///
    /// action: respond to join group, sync group, heartbeat, leave group and offset commit with
    ///         COORDINATOR_NOT_AVAILABLE (the client finds its coordinator again)
    ///         respond to delete groups and offset delete with GROUP_ID_NOT_FOUND
    ///         describe the group as Dead; fetch no offsets
    /// transition: Dead is a final state before group metadata is cleaned up, so there are no
    ///             transitions
    Dead,
}

impl GroupState {
    /// ALL is every state, in Kafka's order.
    pub const ALL: [GroupState; 5] = [
        GroupState::Empty,
        GroupState::PreparingRebalance,
        GroupState::CompletingRebalance,
        GroupState::Stable,
        GroupState::Dead,
    ];

    /// name is Kafka's name on the wire: `Empty`, `PreparingRebalance`, `CompletingRebalance`,
    /// `Stable`, `Dead`.
    pub const fn name(self) -> &'static str {
        match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        }
    }

    /// valid_previous are the states a group may move to this one from (Kafka's
    /// `validPreviousStates`).
    pub const fn valid_previous(self) -> &'static [GroupState] {
        use GroupState::*;
        match self {
            Empty => &[PreparingRebalance],
            PreparingRebalance => &[Stable, CompletingRebalance, Empty],
            CompletingRebalance => &[PreparingRebalance],
            Stable => &[CompletingRebalance],
            Dead => &[Stable, PreparingRebalance, CompletingRebalance, Empty, Dead],
        }
    }

    /// can_transition_to tells whether a group in this state may move to `to`.
    pub fn can_transition_to(self, to: GroupState) -> bool {
        to.valid_previous().contains(&self)
    }

    /// can_rebalance tells whether a rebalance may start from this state (Kafka's
    /// `canRebalance`: the state is a valid previous state of PreparingRebalance).
    pub fn can_rebalance(self) -> bool {
        self.can_transition_to(GroupState::PreparingRebalance)
    }

    /// matches tells whether the state's name equals `filter` ignoring ASCII case, as
    /// ListGroups v4+ filters states.
    pub fn matches(self, filter: &str) -> bool {
        self.name().eq_ignore_ascii_case(filter)
    }
}

impl std::fmt::Display for GroupState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::GroupState::{self, *};

    fn legal(from: GroupState, to: GroupState) -> bool {
        from.can_transition_to(to)
    }

    // ClassicGroupTest: one test per legal transition ...
    #[test]
    fn test_legal_transitions() {
        for (from, to) in [
            (Stable, PreparingRebalance),
            (Stable, Dead),
            (CompletingRebalance, PreparingRebalance),
            (PreparingRebalance, Dead),
            (PreparingRebalance, Empty),
            (Empty, Dead),
            (CompletingRebalance, Stable),
            (PreparingRebalance, CompletingRebalance),
            (Empty, PreparingRebalance),
            (CompletingRebalance, Dead),
            (Dead, Dead),
        ] {
            assert!(legal(from, to), "{from} -> {to}");
        }
    }

    // ... and per illegal one (testEmptyToStableIllegalTransition ...
    // testDeadToAwaitingRebalanceIllegalTransition).
    #[test]
    fn test_illegal_transitions() {
        for (from, to) in [
            (Empty, Stable),
            (Stable, Stable),
            (Empty, CompletingRebalance),
            (PreparingRebalance, PreparingRebalance),
            (PreparingRebalance, Stable),
            (CompletingRebalance, CompletingRebalance),
            (Dead, Stable),
            (Dead, PreparingRebalance),
            (Dead, CompletingRebalance),
            (Dead, Empty),
            (Stable, Empty),
            (CompletingRebalance, Empty),
            (Empty, Empty),
            (Stable, CompletingRebalance),
        ] {
            assert!(!legal(from, to), "{from} -> {to}");
        }
        // The table is exactly the legal list above: 11 of 25 pairs.
        let n = GroupState::ALL
            .iter()
            .flat_map(|a| GroupState::ALL.iter().map(move |b| (*a, *b)))
            .filter(|(a, b)| legal(*a, *b))
            .count();
        assert_eq!(n, 11);
    }

    // testCanRebalanceWhenStable, ...WhenCompletingRebalance, testCannotRebalanceWhenPreparingRebalance,
    // ...WhenDead.
    #[test]
    fn test_can_rebalance() {
        assert!(Stable.can_rebalance());
        assert!(CompletingRebalance.can_rebalance());
        assert!(Empty.can_rebalance());
        assert!(!PreparingRebalance.can_rebalance());
        assert!(!Dead.can_rebalance());
    }

    // testIsInStates: ListGroups' filter ignores case.
    #[test]
    fn test_is_in_states() {
        assert!(Empty.matches("empty"));
        assert!(PreparingRebalance.matches("PREPARINGREBALANCE"));
        assert!(!Stable.matches("stable "));
        assert_eq!(CompletingRebalance.to_string(), "CompletingRebalance");
    }
}
