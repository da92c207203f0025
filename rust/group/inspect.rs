//! Inspection and group actions: what a test harness reads of the coordinator's groups as plain
//! data ([`Coordinator::group_ids`], [`Coordinator::inspect_group`],
//! [`Coordinator::committed_offsets`]), and what it does to them that no client request can
//! ([`Coordinator::expire_member`]).
//!
//! The reads touch nothing: no timer fires, no clock advances. They show the coordinator's
//! state as it stands, whatever a loading partition would answer (DescribeGroups would answer
//! COORDINATOR_LOAD_IN_PROGRESS; here a loading partition's groups are simply not there yet).

use std::collections::BTreeMap;

use super::api::Effect;
use super::classic::classic_group::{Group, CONSUMER_PROTOCOL_TYPE};
use super::consumer::{ConsumerGroup, ConsumerMember};
use super::coordinator::Coordinator;
use super::records::OffsetAndMetadata;
use crate::assignors::consumer_protocol::{decode_assignment, decode_subscription};
use crate::errors::{Error, ErrorCode, Result};
use crate::group::assignors::Assignment;

/// GroupKind is a group's type, as ListGroups v5 names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupKind {
    /// Classic: JoinGroup/SyncGroup/Heartbeat (`classic`).
    Classic,
    /// Consumer: KIP-848's ConsumerGroupHeartbeat (`consumer`).
    Consumer,
    /// Share: KIP-932's ShareGroupHeartbeat (`share`).
    Share,
}

impl GroupKind {
    /// name is Kafka's name of the type (`classic`, `consumer`, `share`).
    pub fn name(self) -> &'static str {
        match self {
            GroupKind::Classic => "classic",
            GroupKind::Consumer => "consumer",
            GroupKind::Share => "share",
        }
    }
}

/// GroupView is one group as it stands in the coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupView {
    pub group_id: String,
    pub kind: GroupKind,
    /// state is Kafka's name of the group's state: `Empty`, `PreparingRebalance`,
    /// `CompletingRebalance`, `Stable` for a classic group; `Empty`, `Assigning`,
    /// `Reconciling`, `Stable` for a consumer group; `Empty`, `Stable` for a share group.
    pub state: &'static str,
    /// protocol_type is the classic group's (`consumer` for Kafka's consumers, None while no
    /// member ever joined); `consumer` for a consumer group.
    pub protocol_type: Option<String>,
    /// protocol is the classic group's chosen protocol (the assignor's name, None before the
    /// first generation), or the consumer group's server-side assignor.
    pub protocol: Option<String>,
    /// generation is the classic group's generation id, or the consumer group's group epoch.
    pub generation: i32,
    /// assignment_epoch is the consumer group's target assignment epoch; -1 for a classic group.
    pub assignment_epoch: i32,
    /// members are in the order they joined (classic) or by member id (consumer).
    pub members: Vec<MemberView>,
}

/// MemberView is one member of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemberView {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    /// subscription are the topics the member subscribes to by name, sorted: a classic
    /// member's from its consumer protocol metadata (empty for other protocol types or
    /// metadata that does not decode), a consumer group member's as it heartbeats them.
    pub subscription: Vec<String>,
    /// subscribed_regex is a consumer group member's regular expression, None without one
    /// (and for classic members).
    pub subscribed_regex: Option<String>,
    /// assignment is what the member holds, by topic name, partitions ascending: a classic
    /// member's last synced assignment, decoded from the consumer protocol (empty for other
    /// protocol types); a consumer group member's assigned partitions and those it still has
    /// to revoke (as ConsumerGroupDescribe reports them), topics no longer known left out.
    pub assignment: BTreeMap<String, Vec<i32>>,
    /// target is a consumer group member's target assignment; empty for classic members.
    pub target: BTreeMap<String, Vec<i32>>,
    /// member_epoch is a consumer group member's epoch; -1 for classic members.
    pub member_epoch: i32,
}

impl Coordinator {
    /// group_ids are the ids of every group the coordinator holds, sorted.
    pub fn group_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.groups.iter().map(|(_, g)| g.id.to_string()).collect();
        ids.sort_unstable();
        ids
    }

    /// inspect_group is a group as it stands, None when the coordinator has no such group.
    pub fn inspect_group(&self, group_id: &str) -> Option<GroupView> {
        let group = self.group(self.slot_of(group_id)?);
        Some(match (group.consumer.as_deref(), group.share.as_deref()) {
            (Some(part), _) => self.consumer_view(group_id, &part.group),
            (None, Some(part)) => self.share_view(part),
            (None, None) => classic_view(group),
        })
    }

    /// committed_offsets are a group's committed offsets by topic, then partition: the stable
    /// ones OffsetFetch returns (neither commits still being appended nor offsets of open
    /// transactions). None when the coordinator has no such group.
    pub fn committed_offsets(
        &self,
        group_id: &str,
    ) -> Option<Vec<(String, i32, OffsetAndMetadata)>> {
        let group = self.group(self.slot_of(group_id)?);
        Some(
            group
                .offsets
                .all()
                .map(|(t, p, o)| (t.to_string(), p, o.clone()))
                .collect(),
        )
    }

    /// expire_member ends the session of `member_id` of `group_id` (of every member, when
    /// None) at `now`, through the same code as its session timer's expiry: a classic group
    /// removes the member (its parked JoinGroup answered UNKNOWN_MEMBER_ID) and rebalances,
    /// unless the member has a request parked (Kafka's `onExpireHeartbeat` spares it: its
    /// session is held by that request); a consumer group fences it (its records tombstoned,
    /// the group epoch bumped), so that its next heartbeat is answered UNKNOWN_MEMBER_ID; a
    /// share group fences it likewise.
    ///
    /// Errors: COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR as the group's partition stands,
    /// GROUP_ID_NOT_FOUND for a group the coordinator does not hold, UNKNOWN_MEMBER_ID for a
    /// member the group does not have.
    pub fn expire_member(
        &mut self,
        now: i64,
        group_id: &str,
        member_id: Option<&str>,
    ) -> Result<Vec<Effect>> {
        // Checked before the clock moves: an error changes nothing and loses no effect.
        let chosen = self.members_to_expire(group_id, member_id)?;
        let mut out = Vec::new();
        self.enter(now);
        for id in chosen {
            // Each expiry may change the group (a consumer group may even turn classic again
            // when its last consumer-protocol member goes), and the timers just fired may
            // have removed the member already: look it up afresh.
            let Some(g) = self.slot_of(group_id) else {
                break;
            };
            let group = self.group(g);
            if group.consumer.is_some() {
                self.expire_consumer_member(g, &id);
            } else if group.share.is_some() {
                self.expire_share_member(g, &id);
            } else if let Some(slot) = group.slot(&id) {
                self.expire_heartbeat(g, slot);
            }
        }
        self.run_timers();
        self.runtime.drain_into(&mut out);
        Ok(out)
    }

    /// members_to_expire are the ids [`Coordinator::expire_member`] ends the sessions of, or
    /// the error it answers.
    fn members_to_expire(&self, group_id: &str, member_id: Option<&str>) -> Result<Vec<String>> {
        if let Some(e) = self.gate(group_id) {
            return Err(Error::kafka(
                e,
                format!("group {group_id} is not served now"),
            ));
        }
        let Some(g) = self.slot_of(group_id) else {
            return Err(Error::kafka(
                ErrorCode::GroupIdNotFound,
                format!("Group {group_id} not found."),
            ));
        };
        let group = self.group(g);
        let members: Vec<String> = match group.consumer.as_deref() {
            Some(part) => part.group.members().keys().cloned().collect(),
            None if group.share.is_some() => group
                .share
                .as_deref()
                .map(|p| p.members.keys().cloned().collect())
                .unwrap_or_default(),
            None => group
                .ordered()
                .into_iter()
                .map(|s| group.member(s).id.to_string())
                .collect(),
        };
        match member_id {
            Some(id) if !members.iter().any(|m| m == id) => Err(Error::kafka(
                ErrorCode::UnknownMemberId,
                format!("Group {group_id} has no member {id}."),
            )),
            Some(id) => Ok(vec![id.to_string()]),
            None => Ok(members),
        }
    }

    fn consumer_view(&self, group_id: &str, group: &ConsumerGroup) -> GroupView {
        let default = self
            .config
            .consumer_assignors
            .first()
            .map(String::as_str)
            .unwrap_or("uniform");
        let empty = Assignment::new();
        GroupView {
            group_id: group_id.to_string(),
            kind: GroupKind::Consumer,
            state: group.state().name(),
            protocol_type: Some(CONSUMER_PROTOCOL_TYPE.to_string()),
            protocol: Some(group.preferred_server_assignor(default).to_string()),
            generation: group.group_epoch(),
            assignment_epoch: group.assignment_epoch(),
            members: group
                .members()
                .values()
                .map(|m| self.consumer_member_view(m, group.target(&m.member_id).unwrap_or(&empty)))
                .collect(),
        }
    }

    fn consumer_member_view(&self, m: &ConsumerMember, target: &Assignment) -> MemberView {
        let mut owned = self.by_name(&m.assigned_partitions);
        for (t, p) in self.by_name(&m.partitions_pending_revocation) {
            let ps = owned.entry(t).or_default();
            ps.extend(p);
            ps.sort_unstable();
            ps.dedup();
        }
        MemberView {
            member_id: m.member_id.clone(),
            group_instance_id: m.instance_id.clone(),
            client_id: m.client_id.clone(),
            client_host: m.client_host.clone(),
            subscription: m.subscribed_topic_names.iter().cloned().collect(),
            subscribed_regex: Some(m.subscribed_topic_regex.clone()).filter(|r| !r.is_empty()),
            assignment: owned,
            target: self.by_name(target),
            member_epoch: m.member_epoch,
        }
    }

    /// share_view is a share group as it stands: protocol type `share`, the `simple`
    /// assignor, its members by member id with their assignments and targets.
    fn share_view(&self, part: &super::share::part::SharePart) -> GroupView {
        let empty = Assignment::new();
        GroupView {
            group_id: part.group_id.clone(),
            kind: GroupKind::Share,
            state: part.state(),
            protocol_type: Some("share".to_string()),
            protocol: Some(super::assignors::simple::NAME.to_string()),
            generation: part.group_epoch,
            assignment_epoch: part.assignment_epoch,
            members: part
                .members
                .values()
                .map(|m| MemberView {
                    member_id: m.member_id.clone(),
                    group_instance_id: None,
                    client_id: m.client_id.clone(),
                    client_host: m.client_host.clone(),
                    subscription: m.subscribed_topic_names.iter().cloned().collect(),
                    subscribed_regex: None,
                    assignment: self.by_name(&m.assigned_partitions),
                    target: self.by_name(part.targets.get(&m.member_id).unwrap_or(&empty)),
                    member_epoch: m.member_epoch,
                })
                .collect(),
        }
    }

    /// by_name names the topics of `a`; topics no longer known are left out.
    fn by_name(&self, a: &Assignment) -> BTreeMap<String, Vec<i32>> {
        a.iter()
            .filter_map(|(t, p)| Some((self.topic_names.get(t)?.to_string(), p.to_vec())))
            .collect()
    }
}

/// classic_view is a classic group as it stands.
fn classic_view(group: &Group) -> GroupView {
    let consumer = group.is_consumer_group();
    GroupView {
        group_id: group.id.to_string(),
        kind: GroupKind::Classic,
        state: group.state.name(),
        protocol_type: group.protocol_type.as_deref().map(str::to_string),
        protocol: group.protocol_name.as_deref().map(str::to_string),
        generation: group.generation,
        assignment_epoch: -1,
        members: group
            .ordered()
            .into_iter()
            .map(|s| {
                let m = group.member(s);
                // The metadata of the group's protocol, or before the first generation the
                // member's favourite: with the consumer protocol every one lists the topics.
                let metadata = group
                    .protocol_name
                    .as_deref()
                    .and_then(|p| m.metadata(p))
                    .or_else(|| m.protocols.first().map(|p| &p.metadata));
                let mut subscription: Vec<String> = match metadata {
                    Some(md) if consumer => decode_subscription(md)
                        .map(|(s, _)| s.topics.iter().map(|t| t.to_string()).collect())
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                subscription.sort_unstable();
                subscription.dedup();
                let mut assignment: BTreeMap<String, Vec<i32>> = BTreeMap::new();
                if consumer && !m.assignment.is_empty() {
                    if let Ok((a, _)) = decode_assignment(&m.assignment) {
                        for tp in &a.partitions {
                            assignment
                                .entry(tp.topic.to_string())
                                .or_default()
                                .push(tp.partition);
                        }
                    }
                }
                for ps in assignment.values_mut() {
                    ps.sort_unstable();
                    ps.dedup();
                }
                MemberView {
                    member_id: m.id.to_string(),
                    group_instance_id: m.instance_id.as_deref().map(str::to_string),
                    client_id: m.client_id.to_string(),
                    client_host: m.client_host.to_string(),
                    subscription,
                    subscribed_regex: None,
                    assignment,
                    target: BTreeMap::new(),
                    member_epoch: -1,
                }
            })
            .collect(),
    }
}
