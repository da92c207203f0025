//! The classic group type's part of loading and unloading a partition of `__consumer_offsets`:
//! a group restored from its metadata record (Kafka's `readGroupMessageValue` and `loadGroup`),
//! its members' sessions started once loaded (`onGroupLoaded`), and its parked requests
//! answered NOT_COORDINATOR when the partition is given up (`onResignation`).

use super::classic_group::{empty_bytes, Group};
use super::member::{Member, Protocol};
use super::state::GroupState;
use crate::coordinator::timers::Timer;
use crate::errors::ErrorCode;
use crate::group::api::{join_error, sync_error, GroupResponse};
use crate::group::coordinator::Coordinator;
use crate::group::records::GroupMetadataValue;

impl Coordinator {
    /// activate_loaded starts the sessions of loaded members (Kafka's `onGroupLoaded`) and
    /// rebalances a group above `group.max.size`.
    pub(crate) fn activate_loaded(&mut self) {
        for (id, uid) in std::mem::take(&mut self.to_activate) {
            let Some(g) = self.slot_of_uid(&id, uid) else {
                continue;
            };
            for s in self.group(g).ordered() {
                self.reschedule_session(g, s);
            }
            if self.group(g).consumer.is_some() {
                self.activate_consumer_group(g);
                continue;
            }
            if self.group(g).share.is_some() {
                self.activate_share_group(g);
                continue;
            }
            if self.group(g).len() as i64 > self.config.max_size {
                self.prepare_rebalance(g);
            }
        }
    }

    /// unload_group answers a group's parked JoinGroups and SyncGroups NOT_COORDINATOR, and drops
    /// the group, Dead.
    pub(crate) fn unload_group(&mut self, g: u32) {
        let now = self.runtime.now();
        for s in self.group(g).ordered() {
            let group = self.group_mut(g);
            let id = group.member(s).id.clone();
            let join = group.take_join(s);
            let sync = group.member_mut(s).awaiting_sync.take();
            if let Some(t) = join {
                self.respond(
                    t,
                    GroupResponse::JoinGroup(join_error(&id, ErrorCode::NotCoordinator)),
                );
            }
            if let Some(t) = sync {
                self.respond(
                    t,
                    GroupResponse::SyncGroup(sync_error(ErrorCode::NotCoordinator)),
                );
            }
        }
        self.group_mut(g).transition(GroupState::Dead, now);
        self.drop_group(g);
    }
}

/// restore fills a new group from its metadata record (Kafka's `readGroupMessageValue` and
/// `loadGroup`): Stable with members, Empty without.
pub(crate) fn restore(group: &mut Group, v: &GroupMetadataValue) {
    group.generation = v.generation;
    group.protocol_type = (!v.protocol_type.is_empty()).then(|| v.protocol_type.clone());
    group.protocol_name = v.protocol.clone();
    group.state_timestamp = (v.current_state_timestamp != -1).then_some(v.current_state_timestamp);
    for m in &v.members {
        let protocols = match &v.protocol {
            Some(p) => vec![Protocol {
                name: p.clone(),
                metadata: m.subscription.clone(),
            }],
            None => Vec::new(),
        };
        let member = Member {
            id: m.member_id.clone(),
            instance_id: m.group_instance_id.clone(),
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            rebalance_timeout_ms: if m.rebalance_timeout == -1 {
                m.session_timeout
            } else {
                m.rebalance_timeout
            },
            session_timeout_ms: m.session_timeout,
            protocol_type: v.protocol_type.clone(),
            protocols,
            assignment: if m.assignment.is_empty() {
                empty_bytes()
            } else {
                m.assignment.clone()
            },
            awaiting_join: None,
            awaiting_sync: None,
            is_new: false,
            pending_sync: false,
            heartbeat: Timer::default(),
            seq: 0,
        };
        // A record naming the same member or instance twice cannot come from Kafka; the last
        // one wins rather than leaving a member unreachable.
        if let Some(s) = group.slot(&m.member_id) {
            group.remove(s);
        }
        if let Some(s) = m
            .group_instance_id
            .as_deref()
            .and_then(|i| group.static_slot(i))
        {
            group.remove(s);
        }
        group.add(member);
    }
    let leader = v.leader.as_deref().and_then(|l| group.slot(l));
    group.leader = leader.or_else(|| group.ordered().first().copied());
    group.state = if group.members.is_empty() {
        GroupState::Empty
    } else {
        GroupState::Stable
    };
    group.subscribed_topics = group.compute_subscribed_topics();
}
