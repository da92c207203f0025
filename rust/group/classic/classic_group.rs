//! Group: one classic group's membership, generation, protocol and offsets (Kafka's
//! `GroupMetadata` / `ClassicGroup`). Pure bookkeeping: what to answer and when is the
//! coordinator's (`../coordinator.rs` and the handler modules).

use std::collections::BTreeSet;
use std::sync::Arc;

use super::member::{Member, Protocol};
use super::state::GroupState;
use crate::assignors::consumer_protocol::decode_subscription;
use crate::assignors::fxhash::FxMap;
use crate::coordinator::timers::Timer;
use crate::group::api::{bytes, text, JoinGroupResponse, JoinGroupResponseMember, Token};
use crate::group::name::Name;
use crate::group::offsets::offsets::Offsets;
use crate::group::records::OffsetAndMetadata;
use crate::group::slab::Slab;

/// CONSUMER_PROTOCOL_TYPE is the protocol type of Kafka's consumers.
pub const CONSUMER_PROTOCOL_TYPE: &str = "consumer";

/// JoinPhase is the kind of the group's delayed join while it is PreparingRebalance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JoinPhase {
    /// Initial: Kafka's InitialDelayedJoin for a group that was Empty: it never completes
    /// early; on expiry it waits `min(delay, remaining)` more when a member joined meanwhile.
    Initial { delay_ms: i64, remaining_ms: i64 },
    /// Regular: Kafka's DelayedJoin: completes when every member has rejoined, or at the
    /// rebalance timeout.
    Regular,
}

/// PendingMember is a member id handed out with MEMBER_ID_REQUIRED (KIP-394), waiting for its
/// member to join with it.
#[derive(Debug, Clone)]
pub(crate) struct PendingMember {
    pub id: Arc<str>,
    pub expiry: Timer,
}

/// Group is one classic group. The fields a heartbeat reads come first, in one cache line
/// (`repr(C)` keeps them there).
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Group {
    pub state: GroupState,
    pub generation: i32,
    by_id: FxMap<Name, u32>,
    pub members: Slab<Member>,
    statics: FxMap<Name, u32>,
    /// uid is unique among every group the coordinator ever held: parked work names its group
    /// by it, so that a deleted and recreated group is not mistaken for the old one.
    pub uid: u64,
    pub id: Arc<str>,
    pub partition: i32,
    /// state_timestamp is when the state last changed (None for a group loaded from a record
    /// older than GroupMetadataValue v2). It drives offset expiry of Empty groups (KIP-211).
    pub state_timestamp: Option<i64>,
    pub protocol_type: Option<Arc<str>>,
    pub protocol_name: Option<Arc<str>>,
    /// leader is the leader's slot in `members`.
    pub leader: Option<u32>,
    pub pending: Slab<PendingMember>,
    pending_by_id: FxMap<Name, u32>,
    awaiting_join: usize,
    pending_sync: usize,
    /// protocol_counts counts the members supporting each protocol.
    protocol_counts: FxMap<Arc<str>, usize>,
    /// subscribed_topics are the consumer group's topics (None when not known).
    pub subscribed_topics: Option<BTreeSet<Arc<str>>>,
    /// new_member_added: a member joined during the initial delayed join.
    pub new_member_added: bool,
    pub join_timer: Timer,
    pub join_phase: JoinPhase,
    pub sync_timer: Timer,
    /// sync_generation is the generation the sync timer was armed for.
    pub sync_generation: i32,
    pub offsets: Offsets,
    next_seq: u64,
    /// consumer is set when the group is a KIP-848 consumer group: the classic part then stays
    /// Empty and holds only the offsets.
    pub consumer: Option<Box<crate::group::consumer::part::ConsumerPart>>,
    /// share is set when the group is a KIP-932 share group: the classic part then stays
    /// empty, and the group has no offsets.
    pub share: Option<Box<crate::group::share::part::SharePart>>,
}

impl Group {
    pub fn new(uid: u64, id: Arc<str>, partition: i32, now: Option<i64>) -> Group {
        Group {
            uid,
            id,
            partition,
            state: GroupState::Empty,
            state_timestamp: now,
            protocol_type: None,
            protocol_name: None,
            generation: 0,
            leader: None,
            members: Slab::default(),
            by_id: FxMap::default(),
            statics: FxMap::default(),
            pending: Slab::default(),
            pending_by_id: FxMap::default(),
            awaiting_join: 0,
            pending_sync: 0,
            protocol_counts: FxMap::default(),
            subscribed_topics: None,
            new_member_added: false,
            join_timer: Timer::default(),
            join_phase: JoinPhase::Regular,
            sync_timer: Timer::default(),
            sync_generation: -1,
            offsets: Offsets::default(),
            next_seq: 0,
            consumer: None,
            share: None,
        }
    }

    pub fn is(&self, s: GroupState) -> bool {
        self.state == s
    }

    /// transition moves the group to `to` and stamps the time. An illegal transition (Kafka's
    /// IllegalStateException) is a bug: it fails in debug builds and returns false.
    pub fn transition(&mut self, to: GroupState, now: i64) -> bool {
        let ok = self.state.can_transition_to(to);
        debug_assert!(
            ok,
            "group {} cannot go from {} to {to}",
            self.id, self.state
        );
        if ok {
            self.state = to;
            self.state_timestamp = Some(now);
        }
        ok
    }

    pub fn is_consumer_group(&self) -> bool {
        self.protocol_type.as_deref() == Some(CONSUMER_PROTOCOL_TYPE)
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn slot(&self, member_id: &str) -> Option<u32> {
        self.by_id.get(member_id).copied()
    }

    pub fn member(&self, slot: u32) -> &Member {
        self.members.get(slot).expect("a member's slot")
    }

    pub fn member_mut(&mut self, slot: u32) -> &mut Member {
        self.members.get_mut(slot).expect("a member's slot")
    }

    pub fn static_slot(&self, instance_id: &str) -> Option<u32> {
        self.statics.get(instance_id).copied()
    }

    pub fn is_leader(&self, slot: u32) -> bool {
        self.leader == Some(slot)
    }

    pub fn leader_id(&self) -> Option<Arc<str>> {
        self.leader.map(|l| self.member(l).id.clone())
    }

    pub fn num_awaiting_join(&self) -> usize {
        self.awaiting_join
    }

    /// ordered are the member slots in the order the members joined.
    pub fn ordered(&self) -> Vec<u32> {
        let mut v: Vec<(u64, u32)> = self.members.iter().map(|(s, m)| (m.seq, s)).collect();
        v.sort_unstable();
        v.into_iter().map(|(_, s)| s).collect()
    }

    /// add adds a member (Kafka's `add`): the first member sets the protocol type and becomes
    /// leader. Returns its slot.
    pub fn add(&mut self, mut member: Member) -> u32 {
        if self.members.is_empty() {
            self.protocol_type = Some(member.protocol_type.clone());
        }
        member.seq = self.next_seq;
        self.next_seq += 1;
        if member.awaiting_join.is_some() {
            self.awaiting_join += 1;
        }
        self.count_protocols(&member.protocols, true);
        let id = member.id.clone();
        let instance = member.instance_id.clone();
        self.remove_pending(&id);
        let slot = self.members.insert(member);
        self.by_id.insert(Name::from(&*id), slot);
        if let Some(i) = instance {
            self.statics.insert(Name::from(&*i), slot);
        }
        if self.leader.is_none() {
            self.leader = Some(slot);
        }
        slot
    }

    /// remove takes a member out (Kafka's `remove`): a leader that leaves is replaced by the
    /// longest-standing remaining member. The caller answers what the member had parked.
    pub fn remove(&mut self, slot: u32) -> Option<Member> {
        let m = self.members.remove(slot)?;
        self.count_protocols(&m.protocols, false);
        if m.awaiting_join.is_some() {
            self.awaiting_join -= 1;
        }
        if m.pending_sync {
            self.pending_sync -= 1;
        }
        self.by_id.remove(&*m.id);
        if let Some(i) = &m.instance_id {
            if self.statics.get(&**i) == Some(&slot) {
                self.statics.remove(&**i);
            }
        }
        if self.leader == Some(slot) {
            self.leader = self.ordered().first().copied();
        }
        Some(m)
    }

    fn count_protocols(&mut self, protocols: &[Protocol], add: bool) {
        for p in protocols {
            if add {
                *self.protocol_counts.entry(p.name.clone()).or_insert(0) += 1;
            } else if let Some(n) = self.protocol_counts.get_mut(&*p.name) {
                *n -= 1;
                if *n == 0 {
                    self.protocol_counts.remove(&*p.name);
                }
            }
        }
    }

    /// update_member replaces a member's protocols and timeouts and parks `join` as its JoinGroup
    /// (Kafka's `updateMember`). Returns the JoinGroup it had parked before, which the caller
    /// must answer.
    pub fn update_member(
        &mut self,
        slot: u32,
        protocols: Vec<Protocol>,
        rebalance_timeout_ms: i32,
        session_timeout_ms: i32,
        join: Option<Token>,
    ) -> Option<Token> {
        let old = std::mem::replace(&mut self.member_mut(slot).protocols, protocols);
        self.count_protocols(&old, false);
        let new = std::mem::take(&mut self.member_mut(slot).protocols);
        self.count_protocols(&new, true);
        let m = self.member_mut(slot);
        m.protocols = new;
        m.rebalance_timeout_ms = rebalance_timeout_ms;
        m.session_timeout_ms = session_timeout_ms;
        let before = m.awaiting_join.take();
        m.awaiting_join = join;
        match (before.is_some(), join.is_some()) {
            (false, true) => self.awaiting_join += 1,
            (true, false) => self.awaiting_join -= 1,
            _ => {}
        }
        before
    }

    /// take_join takes the member's parked JoinGroup, to answer it.
    pub fn take_join(&mut self, slot: u32) -> Option<Token> {
        let t = self.member_mut(slot).awaiting_join.take();
        if t.is_some() {
            self.awaiting_join -= 1;
        }
        t
    }

    #[cfg(test)]
    /// set_join parks a JoinGroup for the member; returns the one it replaces.
    pub fn set_join(&mut self, slot: u32, token: Token) -> Option<Token> {
        let before = self.member_mut(slot).awaiting_join.replace(token);
        if before.is_none() {
            self.awaiting_join += 1;
        }
        before
    }

    /// replace_static_member moves a static member to a new member id (Kafka's
    /// `replaceStaticMember`); the leader follows it. Returns the old id and what the old id
    /// had parked (JoinGroup, SyncGroup), which the caller fences with FENCED_INSTANCE_ID.
    pub fn replace_static_member(
        &mut self,
        slot: u32,
        new_id: Arc<str>,
    ) -> (Arc<str>, Option<Token>, Option<Token>) {
        let join = self.take_join(slot);
        let m = self.member_mut(slot);
        let sync = m.awaiting_sync.take();
        let old = std::mem::replace(&mut m.id, new_id.clone());
        self.by_id.remove(&*old);
        self.by_id.insert(Name::from(&*new_id), slot);
        (old, join, sync)
    }

    pub fn is_pending(&self, member_id: &str) -> bool {
        self.pending_by_id.contains_key(member_id)
    }

    pub fn pending_slot(&self, member_id: &str) -> Option<u32> {
        self.pending_by_id.get(member_id).copied()
    }

    /// add_pending records a member id handed out with MEMBER_ID_REQUIRED; returns its slot.
    pub fn add_pending(&mut self, id: Arc<str>) -> u32 {
        debug_assert!(!self.by_id.contains_key(&*id));
        if let Some(s) = self.pending_slot(&id) {
            return s;
        }
        let slot = self.pending.insert(PendingMember {
            id: id.clone(),
            expiry: Timer::default(),
        });
        self.pending_by_id.insert(Name::from(&*id), slot);
        slot
    }

    /// remove_pending forgets a pending member id; true if it was pending.
    pub fn remove_pending(&mut self, id: &str) -> bool {
        match self.pending_by_id.remove(id) {
            Some(slot) => {
                self.pending.remove(slot);
                true
            }
            None => false,
        }
    }

    #[cfg(test)]
    pub fn num_pending(&self) -> usize {
        self.pending.len()
    }

    /// set_pending_sync marks whether the member still owes a SyncGroup.
    pub fn set_pending_sync(&mut self, slot: u32, on: bool) {
        let m = self.member_mut(slot);
        if m.pending_sync != on {
            m.pending_sync = on;
            if on {
                self.pending_sync += 1;
            } else {
                self.pending_sync -= 1;
            }
        }
    }

    pub fn clear_pending_sync(&mut self) {
        for (_, m) in self.members.iter_mut() {
            m.pending_sync = false;
        }
        self.pending_sync = 0;
    }

    pub fn num_pending_sync(&self) -> usize {
        self.pending_sync
    }

    /// pending_sync_slots are the members that owe a SyncGroup.
    pub fn pending_sync_slots(&self) -> Vec<u32> {
        self.members
            .iter()
            .filter(|(_, m)| m.pending_sync)
            .map(|(s, _)| s)
            .collect()
    }

    /// has_all_members_joined: every member has a JoinGroup parked and no member id handed
    /// out with MEMBER_ID_REQUIRED is still awaited.
    pub fn has_all_members_joined(&self) -> bool {
        self.members.len() == self.awaiting_join && self.pending.is_empty()
    }

    /// rebalance_timeout_ms is the largest of the members' rebalance timeouts (0 without
    /// members).
    pub fn rebalance_timeout_ms(&self) -> i64 {
        self.members
            .iter()
            .map(|(_, m)| m.rebalance_timeout_ms as i64)
            .max()
            .unwrap_or(0)
            .max(0)
    }

    fn is_candidate(&self, protocol: &str) -> bool {
        self.protocol_counts.get(protocol).copied() == Some(self.members.len())
    }

    /// supports_protocols tells whether a member with these protocols may join (Kafka's
    /// `supportsProtocols`): an Empty group takes any non-empty protocol type and list; otherwise
    /// the type must match and one protocol must be supported by every member.
    pub fn supports_protocols(
        &self,
        protocol_type: &str,
        protocols: &[crate::group::api::JoinGroupRequestProtocol<'_>],
    ) -> bool {
        if self.is(GroupState::Empty) {
            !protocol_type.is_empty() && !protocols.is_empty()
        } else {
            self.protocol_type.as_deref() == Some(protocol_type)
                && protocols.iter().any(|p| self.is_candidate(&p.name))
        }
    }

    /// select_protocol chooses the group's protocol (Kafka's `selectProtocol`): among the
    /// protocols every member supports, each member votes for its favourite and the most votes
    /// win. Kafka breaks ties arbitrarily; here the tie goes to the protocol the longest-standing
    /// member prefers. None without members.
    pub fn select_protocol(&self) -> Option<Arc<str>> {
        let order = self.ordered();
        let mut votes: Vec<(Arc<str>, usize)> = Vec::new();
        for s in &order {
            let Some(v) = self.member(*s).vote(|p| self.is_candidate(p)) else {
                continue;
            };
            match votes.iter_mut().find(|(n, _)| n == v) {
                Some((_, c)) => *c += 1,
                None => votes.push((v.clone(), 1)),
            }
        }
        let max = votes.iter().map(|(_, c)| *c).max()?;
        let tied: Vec<&Arc<str>> = votes
            .iter()
            .filter(|(_, c)| *c == max)
            .map(|(n, _)| n)
            .collect();
        let first = self.member(*order.first()?);
        first
            .protocols
            .iter()
            .find(|p| tied.contains(&&p.name))
            .map(|p| p.name.clone())
            .or_else(|| tied.first().map(|n| (*n).clone()))
    }

    /// maybe_elect_new_joined_leader keeps a leader that has rejoined, else elects the
    /// longest-standing member that has (Kafka's `maybeElectNewJoinedLeader`). False when there
    /// is no leader, or nobody rejoined.
    pub fn maybe_elect_new_joined_leader(&mut self) -> bool {
        let Some(l) = self.leader else {
            return false;
        };
        if self.member(l).awaiting_join.is_some() {
            return true;
        }
        match self
            .ordered()
            .into_iter()
            .find(|s| self.member(*s).awaiting_join.is_some())
        {
            Some(s) => {
                self.leader = Some(s);
                true
            }
            None => false,
        }
    }

    /// init_next_generation starts the next generation (Kafka's `initNextGeneration`): bump the
    /// generation, select the protocol, compute the subscribed topics, and move to
    /// CompletingRebalance (or Empty without members).
    pub fn init_next_generation(&mut self, now: i64) {
        self.generation = self.generation.wrapping_add(1);
        if self.members.is_empty() {
            self.protocol_name = None;
            self.subscribed_topics = self.compute_subscribed_topics();
            self.transition(GroupState::Empty, now);
        } else {
            self.protocol_name = self.select_protocol();
            self.subscribed_topics = self.compute_subscribed_topics();
            self.transition(GroupState::CompletingRebalance, now);
        }
        self.clear_pending_sync();
    }

    /// compute_subscribed_topics reads every member's subscription for a consumer group (the
    /// ConsumerProtocol prefix that every version shares). None when the group is not a
    /// consumer group, has no protocol yet, or a subscription does not parse; empty without
    /// members.
    pub fn compute_subscribed_topics(&self) -> Option<BTreeSet<Arc<str>>> {
        if !self.is_consumer_group() {
            return None;
        }
        if self.members.is_empty() {
            return Some(BTreeSet::new());
        }
        let protocol = self.protocol_name.as_deref()?;
        let mut topics = BTreeSet::new();
        for (_, m) in self.members.iter() {
            let (sub, _) = decode_subscription(m.metadata(protocol)?).ok()?;
            topics.extend(sub.topics);
        }
        Some(topics)
    }

    /// is_subscribed_to_topic tells whether the group consumes `topic`; when the topics are not
    /// known, a consumer group is assumed to (to be safe) and other groups not.
    pub fn is_subscribed_to_topic(&self, topic: &str) -> bool {
        match &self.subscribed_topics {
            Some(t) => t.contains(topic),
            None => self.is_consumer_group(),
        }
    }

    /// join_result is this generation's JoinGroup response to `member_id`, naming `leader` (""
    /// for none): generation, protocol type and name; no members (the leader's come from
    /// [`current_members`](Self::current_members)).
    pub fn join_result(&self, member_id: &str, leader: Option<&str>) -> JoinGroupResponse<'static> {
        JoinGroupResponse {
            generation_id: self.generation,
            protocol_type: self.protocol_type.as_deref().map(text),
            protocol_name: self.protocol_name.as_deref().map(text),
            leader: leader.map_or_else(Default::default, text),
            member_id: text(member_id),
            ..Default::default()
        }
    }

    /// current_members are the members with their metadata for the group's protocol, for the
    /// leader's JoinGroup response.
    pub fn current_members(&self) -> Vec<JoinGroupResponseMember<'static>> {
        let protocol = self.protocol_name.as_deref().unwrap_or("");
        self.ordered()
            .into_iter()
            .map(|s| {
                let m = self.member(s);
                JoinGroupResponseMember {
                    member_id: text(&m.id),
                    group_instance_id: m.instance_id.as_deref().map(text),
                    metadata: m
                        .metadata(protocol)
                        .map_or_else(Default::default, |b| bytes(b)),
                    ..Default::default()
                }
            })
            .collect()
    }

    /// expired_offsets are the offsets to expire at `now` (Kafka's `removeExpiredOffsets`): an
    /// Empty group with a protocol type counts from when it became Empty (KIP-211), or from the
    /// commit when that is unknown; a Stable consumer group that knows its topics expires only
    /// offsets of topics it no longer consumes (KIP-496); a simple group counts from the commit.
    /// Other groups keep theirs.
    pub fn expired_offsets(&self, now: i64, retention_ms: i64) -> Vec<(Arc<str>, i32)> {
        let by_commit = |o: &OffsetAndMetadata| o.commit_timestamp;
        if let Some(part) = &self.consumer {
            // A consumer group (Kafka's ConsumerGroup.offsetExpirationCondition): by commit
            // time, and never an offset of a topic some member subscribes to.
            return self.offsets.expired(now, retention_ms, by_commit, |t| {
                part.group.is_subscribed_to(t)
            });
        }
        match &self.protocol_type {
            Some(_) if self.is(GroupState::Empty) => {
                let since = self.state_timestamp;
                self.offsets.expired(
                    now,
                    retention_ms,
                    |o| since.unwrap_or(o.commit_timestamp),
                    |_| false,
                )
            }
            Some(t) if &**t == CONSUMER_PROTOCOL_TYPE && self.is(GroupState::Stable) => {
                match &self.subscribed_topics {
                    Some(topics) => self
                        .offsets
                        .expired(now, retention_ms, by_commit, |t| topics.contains(t)),
                    None => Vec::new(),
                }
            }
            None => self
                .offsets
                .expired(now, retention_ms, by_commit, |_| false),
            _ => Vec::new(),
        }
    }
}

pub(crate) fn empty_bytes() -> Arc<[u8]> {
    Arc::from(&[][..])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::assignors::consumer_protocol::encode_subscription;
    use crate::assignors::Subscription;
    use GroupState::*;

    /// protos are JoinGroup protocols from (name, metadata) pairs.
    pub fn protos<'a>(
        pairs: &[(&'a str, &'a [u8])],
    ) -> Vec<crate::group::api::JoinGroupRequestProtocol<'a>> {
        pairs
            .iter()
            .map(|(n, m)| crate::group::api::JoinGroupRequestProtocol {
                name: (*n).into(),
                metadata: (*m).into(),
                ..Default::default()
            })
            .collect()
    }

    pub fn member(id: &str, instance: Option<&str>, protocols: &[(&str, &[u8])]) -> Member {
        Member {
            id: Arc::from(id),
            instance_id: instance.map(Arc::from),
            client_id: Arc::from("client"),
            client_host: Arc::from("host"),
            rebalance_timeout_ms: 60_000,
            session_timeout_ms: 10_000,
            protocol_type: Arc::from("consumer"),
            protocols: Protocol::list(&protos(protocols)),
            assignment: empty_bytes(),
            awaiting_join: None,
            awaiting_sync: None,
            is_new: false,
            pending_sync: false,
            heartbeat: Timer::default(),
            seq: 0,
        }
    }

    fn group() -> Group {
        Group::new(1, Arc::from("groupId"), 0, Some(0))
    }

    // ClassicGroupTest.testSelectProtocol: no majority is either; a majority wins.
    #[test]
    fn test_select_protocol() {
        let mut g = group();
        assert_eq!(g.select_protocol(), None); // testSelectProtocolRaisesIfNoMembers
        g.add(member("m1", None, &[("range", b""), ("roundrobin", b"")]));
        g.add(member("m2", None, &[("roundrobin", b""), ("range", b"")]));
        // A tie: here the longest-standing member's favourite.
        assert_eq!(g.select_protocol().as_deref(), Some("range"));
        g.add(member("m3", None, &[("roundrobin", b""), ("range", b"")]));
        assert_eq!(g.select_protocol().as_deref(), Some("roundrobin"));
    }

    // testSelectProtocolChoosesCompatibleProtocol
    #[test]
    fn test_select_protocol_chooses_compatible_protocol() {
        let mut g = group();
        g.add(member("m1", None, &[("range", b""), ("roundrobin", b"")]));
        g.add(member("m2", None, &[("roundrobin", b""), ("foo", b"")]));
        assert_eq!(g.select_protocol().as_deref(), Some("roundrobin"));
    }

    // testSupportsProtocols
    #[test]
    fn test_supports_protocols() {
        let mut g = group();
        assert!(g.supports_protocols("consumer", &protos(&[("range", b""), ("roundrobin", b"")])));
        assert!(!g.supports_protocols("", &protos(&[("range", b"")])));
        assert!(!g.supports_protocols("consumer", &protos(&[])));
        g.add(member("m1", None, &[("range", b""), ("roundrobin", b"")]));
        g.transition(PreparingRebalance, 1);
        assert!(g.supports_protocols("consumer", &protos(&[("roundrobin", b""), ("foo", b"")])));
        assert!(g.supports_protocols("consumer", &protos(&[("range", b""), ("bar", b"")])));
        assert!(!g.supports_protocols("consumer", &protos(&[("foo", b""), ("bar", b"")])));
        assert!(!g.supports_protocols("connect", &protos(&[("range", b"")])));
    }

    // testInitNextGeneration / testInitNextGenerationEmptyGroup
    #[test]
    fn test_init_next_generation() {
        let mut g = group();
        let s = g.add(member("m1", None, &[("roundrobin", b"")]));
        g.transition(PreparingRebalance, 1);
        g.set_join(s, 7);
        g.init_next_generation(2);
        assert_eq!(g.generation, 1);
        assert_eq!(g.protocol_name.as_deref(), Some("roundrobin"));
        assert!(g.is(CompletingRebalance));
        let mut e = group();
        e.protocol_type = Some(Arc::from("consumer"));
        e.transition(PreparingRebalance, 1);
        e.init_next_generation(2);
        assert_eq!(
            (e.generation, e.protocol_name.clone(), e.state),
            (1, None, Empty)
        );
        assert_eq!(e.subscribed_topics, Some(BTreeSet::new()));
    }

    // testUpdateMember: protocols and timeouts change, the parked join counts.
    #[test]
    fn test_update_member() {
        let mut g = group();
        let s = g.add(member("m1", None, &[("range", b"")]));
        assert_eq!(
            g.update_member(
                s,
                Protocol::list(&protos(&[("roundrobin", b"x")])),
                1,
                2,
                Some(5)
            ),
            None
        );
        assert!(g.is_candidate("roundrobin") && !g.is_candidate("range"));
        assert_eq!(g.num_awaiting_join(), 1);
        assert_eq!(
            g.update_member(s, Protocol::list(&protos(&[("range", b"")])), 3, 4, None),
            Some(5)
        );
        assert_eq!(g.num_awaiting_join(), 0);
        assert_eq!(
            (
                g.member(s).rebalance_timeout_ms,
                g.member(s).session_timeout_ms
            ),
            (3, 4)
        );
    }

    // testReplaceGroupInstance: the leader follows the member to its new id; parked requests of
    // the old id come back to be fenced.
    #[test]
    fn test_replace_group_instance() {
        let mut g = group();
        let s = g.add(member("m1", Some("i1"), &[("range", b"")]));
        g.set_join(s, 3);
        g.member_mut(s).awaiting_sync = Some(4);
        let (old, join, sync) = g.replace_static_member(s, Arc::from("m2"));
        assert_eq!((&*old, join, sync), ("m1", Some(3), Some(4)));
        assert_eq!(g.slot("m2"), Some(s));
        assert_eq!(g.slot("m1"), None);
        assert_eq!(g.static_slot("i1"), Some(s));
        assert_eq!(g.leader_id().as_deref(), Some("m2"));
        assert_eq!(g.num_awaiting_join(), 0);
    }

    // testCannotAddPendingMemberIfStable / testRemovalFromPendingAfterMemberIsStable /
    // testRemovalFromPendingWhenMemberIsRemoved
    #[test]
    fn test_pending_members() {
        let mut g = group();
        g.add_pending(Arc::from("p1"));
        assert!(g.is_pending("p1"));
        assert!(!g.has_all_members_joined());
        g.add(member("p1", None, &[("range", b"")]));
        assert!(!g.is_pending("p1"));
        g.add_pending(Arc::from("p2"));
        assert!(g.remove_pending("p2"));
        assert_eq!(g.num_pending(), 0);
    }

    // testCanAddAndRemovePendingSyncMember / testRemovalFromPendingSyncWhenMemberIsRemoved /
    // testNewGenerationClearsPendingSyncMembers
    #[test]
    fn test_pending_sync_members() {
        let mut g = group();
        let s = g.add(member("m1", None, &[("range", b"")]));
        g.set_pending_sync(s, true);
        g.set_pending_sync(s, true);
        assert_eq!(g.num_pending_sync(), 1);
        g.set_pending_sync(s, false);
        assert_eq!(g.num_pending_sync(), 0);
        g.set_pending_sync(s, true);
        g.remove(s);
        assert_eq!(g.num_pending_sync(), 0);
        let s = g.add(member("m2", None, &[("range", b"")]));
        g.set_pending_sync(s, true);
        g.transition(PreparingRebalance, 1);
        g.init_next_generation(2);
        assert_eq!(g.num_pending_sync(), 0);
    }

    // testElectNewJoinedLeader / testMaybeElectNewJoinedLeaderChooseExisting
    #[test]
    fn test_elect_new_joined_leader() {
        let mut g = group();
        let a = g.add(member("a", None, &[("range", b"")]));
        let b = g.add(member("b", None, &[("range", b"")]));
        assert_eq!(g.leader, Some(a));
        assert!(!g.maybe_elect_new_joined_leader());
        g.set_join(b, 1);
        assert!(g.maybe_elect_new_joined_leader());
        assert_eq!(g.leader, Some(b));
        g.set_join(a, 2);
        assert!(g.maybe_elect_new_joined_leader());
        assert_eq!(g.leader, Some(b));
        // A leader that leaves hands over to the longest-standing member.
        g.remove(b);
        assert_eq!(g.leader, Some(a));
        g.remove(a);
        assert_eq!(g.leader, None);
    }

    // testCannotAddStaticMemberIfAlreadyPresent is guarded by the coordinator (a known instance
    // id is replaced, never added); static ids map to slots.
    #[test]
    fn test_static_members_map_to_their_member() {
        let mut g = group();
        let s = g.add(member("m", Some("i"), &[("range", b"")]));
        assert_eq!(g.static_slot("i"), Some(s));
        g.remove(s);
        assert_eq!(g.static_slot("i"), None);
    }

    fn subscription(topics: &[&str]) -> Vec<u8> {
        encode_subscription(&Subscription::new(topics.iter().copied()), 0).unwrap()
    }

    // testSubscribedTopics / testSubscribedTopicsNonConsumerGroup / testIsSubscribedToTopic
    #[test]
    fn test_subscribed_topics() {
        let mut g = group();
        assert_eq!(g.compute_subscribed_topics(), None);
        assert!(!g.is_subscribed_to_topic("topic"));
        let sub = subscription(&["topic"]);
        let mut m = member("m", None, &[("range", &sub)]);
        m.protocol_type = Arc::from("My Protocol");
        let s = g.add(m);
        g.transition(PreparingRebalance, 1);
        g.init_next_generation(2);
        assert_eq!(g.subscribed_topics, None);
        assert!(!g.is_subscribed_to_topic("topic"));
        g.remove(s);
        let mut c = group();
        c.add(member("m", None, &[("range", &sub)]));
        c.transition(PreparingRebalance, 1);
        c.init_next_generation(2);
        assert_eq!(
            c.subscribed_topics,
            Some(BTreeSet::from([Arc::from("topic")]))
        );
        assert!(c.is_subscribed_to_topic("topic"));
        // An unparsable subscription: not known, so a consumer group is assumed subscribed.
        let mut u = group();
        u.add(member("m", None, &[("range", &[0xff, 0xff])]));
        u.transition(PreparingRebalance, 1);
        u.init_next_generation(2);
        assert_eq!(u.subscribed_topics, None);
        assert!(u.is_subscribed_to_topic("anything"));
    }

    fn committed(ts: i64) -> OffsetAndMetadata {
        OffsetAndMetadata {
            offset: 15000,
            leader_epoch: -1,
            metadata: Arc::from(""),
            commit_timestamp: ts,
            expire_timestamp: None,
        }
    }

    // testOffsetExpirationCondition
    #[test]
    fn test_offset_expiration_condition() {
        let (now, commit, retention) = (30_000, 20_000, 10_000);
        // 1. A simple group counts from the commit.
        let mut g = Group::new(1, Arc::from("g"), 0, Some(5_000));
        g.offsets.put("t", 0, committed(commit), 0);
        assert_eq!(g.expired_offsets(now, retention).len(), 1);
        assert_eq!(g.expired_offsets(now - 1, retention).len(), 0);
        // 2. A non-consumer group, Empty, counts from when it became Empty.
        g.protocol_type = Some(Arc::from("My Protocol"));
        assert_eq!(g.expired_offsets(5_000 + retention, retention).len(), 1);
        assert_eq!(g.expired_offsets(5_000 + retention - 1, retention).len(), 0);
        // 3. A non-consumer group that is not Empty keeps its offsets.
        g.transition(PreparingRebalance, 6_000);
        assert!(g.expired_offsets(i64::MAX / 2, retention).is_empty());
        // 4. A Stable consumer group expires the topics it does not consume, from the commit.
        let sub = subscription(&["topic"]);
        let mut c = Group::new(2, Arc::from("c"), 0, Some(0));
        c.add(member("m", None, &[("range", &sub)]));
        c.offsets.put("topic", 0, committed(commit), 0);
        c.offsets.put("other", 0, committed(commit), 1);
        c.transition(PreparingRebalance, 1);
        c.init_next_generation(2);
        c.transition(Stable, 3);
        let gone = c.expired_offsets(now, retention);
        assert_eq!(gone, vec![(Arc::from("other"), 0)]);
        // 5. Not Stable: nothing expires.
        c.transition(PreparingRebalance, 4);
        assert!(c.expired_offsets(now, retention).is_empty());
        // An explicit expire timestamp decides alone.
        let mut e = Group::new(3, Arc::from("e"), 0, Some(0));
        let mut o = committed(0);
        o.expire_timestamp = Some(100);
        e.offsets.put("t", 0, o.clone(), 0);
        assert_eq!(e.expired_offsets(100, i64::MAX).len(), 1);
        assert_eq!(e.expired_offsets(99, 0).len(), 0);
        // A commit in flight never expires.
        e.offsets.stage("t", 0, 9);
        assert!(e.expired_offsets(1_000, 0).is_empty());
        // Nor one an open transaction wrote for the partition (Kafka's
        // testCleanupExpiredOffsetsWithPendingTransactionalOffsets).
        let mut x = Group::new(4, Arc::from("x"), 0, Some(0));
        x.offsets.put("t", 0, o.clone(), 0);
        x.offsets.put_transactional(7, "t", 0, o, 1);
        assert!(x.expired_offsets(1_000, 0).is_empty());
        x.offsets.end_transaction(7, false);
        assert_eq!(x.expired_offsets(1_000, 0).len(), 1);
    }
}
