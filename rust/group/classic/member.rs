//! Member: one member of a classic group (Kafka's `MemberMetadata` / `ClassicGroupMember`).

use std::sync::Arc;

use crate::coordinator::timers::Timer;
use crate::group::api::{JoinGroupRequestProtocol, Token};

/// Protocol is one protocol a member supports: its name and its metadata (for the consumer
/// protocol, the encoded subscription).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Protocol {
    pub name: Arc<str>,
    pub metadata: Arc<[u8]>,
}

impl Protocol {
    pub fn list(protocols: &[JoinGroupRequestProtocol<'_>]) -> Vec<Protocol> {
        protocols
            .iter()
            .map(|p| Protocol {
                name: Arc::from(&*p.name),
                metadata: Arc::from(&*p.metadata),
            })
            .collect()
    }
}

/// Member is one member of a group, with the requests it has parked. The fields a heartbeat
/// touches come first, in one cache line (`repr(C)` keeps them there).
#[derive(Debug, Clone)]
#[repr(C)]
pub(crate) struct Member {
    /// heartbeat is the session timer.
    pub heartbeat: Timer,
    pub session_timeout_ms: i32,
    pub rebalance_timeout_ms: i32,
    /// awaiting_join is the member's parked JoinGroup.
    pub awaiting_join: Option<Token>,
    /// awaiting_sync is the member's parked SyncGroup.
    pub awaiting_sync: Option<Token>,
    /// is_new: added in the current rebalance and not yet through a join completion. A new
    /// member's session expires even while its JoinGroup is parked (the 5-minute timeout).
    pub is_new: bool,
    /// pending_sync: got its JoinGroup response and has not sent SyncGroup yet (DelayedSync).
    pub pending_sync: bool,
    pub id: Arc<str>,
    pub instance_id: Option<Arc<str>>,
    pub client_id: Arc<str>,
    pub client_host: Arc<str>,
    pub protocol_type: Arc<str>,
    /// protocols are the supported protocols, by the member's preference.
    pub protocols: Vec<Protocol>,
    pub assignment: Arc<[u8]>,
    /// seq is the order the member joined the group in: the order of member lists.
    pub seq: u64,
}

impl Member {
    /// is_static tells whether the member has a group instance id (KIP-345).
    pub fn is_static(&self) -> bool {
        self.instance_id.is_some()
    }

    /// matches tells whether `protocols` are exactly the member's, in order.
    pub fn matches(&self, protocols: &[JoinGroupRequestProtocol<'_>]) -> bool {
        self.protocols.len() == protocols.len()
            && self
                .protocols
                .iter()
                .zip(protocols)
                .all(|(p, q)| *p.name == *q.name && *p.metadata == *q.metadata)
    }

    /// metadata is the member's metadata for `protocol`.
    pub fn metadata(&self, protocol: &str) -> Option<&Arc<[u8]>> {
        self.protocols
            .iter()
            .find(|p| &*p.name == protocol)
            .map(|p| &p.metadata)
    }

    /// vote is the member's favourite among `candidates` (Kafka's `MemberMetadata.vote`).
    pub fn vote(&self, is_candidate: impl Fn(&str) -> bool) -> Option<&Arc<str>> {
        self.protocols
            .iter()
            .find(|p| is_candidate(&p.name))
            .map(|p| &p.name)
    }

    /// has_satisfied_heartbeat tells whether the session timer may expire without removing the
    /// member: a new member never satisfies it; others do while a request of theirs is parked.
    pub fn has_satisfied_heartbeat(&self) -> bool {
        !self.is_new && (self.awaiting_join.is_some() || self.awaiting_sync.is_some())
    }
}
