//! Tests of the coordinator through its public surface: requests in, effects out, time as an
//! input (nothing sleeps). Each test is named after the Kafka behaviour or test it pins
//! (`core/src/test/scala/unit/kafka/coordinator/group/GroupCoordinatorTest.scala`,
//! `GroupMetadataManagerTest.scala`, `group-coordinator/.../classic/ClassicGroupTest.java`).
//!
//! The harness mirrors GroupCoordinatorTest's: groups of `consumer` members with the `range`
//! protocol, session and rebalance timeouts of 500 ms, an initial rebalance delay of 50 ms, and
//! appends that succeed at once unless a test holds them.

use std::collections::{BTreeMap, VecDeque};

use super::*;
use crate::errors::ErrorCode;

mod admin;
mod consumer;
mod consumer_props;
mod heartbeat;
mod inspect;
mod join;
mod leave;
mod matrix;
mod offsets;
mod persistence;
mod props;
mod static_members;
mod sync;
mod transactions;
mod wire_versions;

/// Errors reads a typed response's error code as an [`ErrorCode`].
pub trait Errors {
    fn error(&self) -> ErrorCode;
}

macro_rules! errors {
    ($($t:ty),* $(,)?) => {
        $(impl Errors for $t {
            fn error(&self) -> ErrorCode {
                ErrorCode::for_code(self.error_code)
            }
        })*
    };
}

errors!(
    JoinGroupResponse<'_>,
    SyncGroupResponse<'_>,
    HeartbeatResponse<'_>,
    LeaveGroupResponse<'_>,
    LeaveGroupResponseMember<'_>,
    OffsetDeleteResponse<'_>,
    OffsetDeleteResponsePartition,
    ListGroupsResponse<'_>,
    DescribeGroupsResponseGroup<'_>,
    OffsetFetchResponseGroup<'_>,
    OffsetFetchResponseGroupTopicPartition<'_>,
    DeleteGroupsResponseResult<'_>,
    OffsetCommitResponsePartition<'_>,
    TxnOffsetCommitResponsePartition<'_>,
    ShareGroupHeartbeatResponse<'_>,
);

pub const SESSION: i32 = 500;
pub const REBALANCE: i32 = 500;
pub const INITIAL_DELAY: i64 = 50;
pub const GROUP: &str = "groupId";
pub const PROTOCOL_TYPE: &str = "consumer";

/// fetch_group is one group of an OffsetFetch: every committed offset when `topics` is None.
pub fn fetch_group<'a>(
    group: &'a str,
    topics: Option<&[(&'a str, &[i32])]>,
) -> OffsetFetchRequestGroup<'a> {
    OffsetFetchRequestGroup {
        group_id: group.into(),
        topics: topics.map(|ts| {
            ts.iter()
                .map(|(n, p)| OffsetFetchRequestGroupTopic {
                    name: (*n).into(),
                    partition_indexes: p.to_vec(),
                    ..Default::default()
                })
                .collect()
        }),
        ..Default::default()
    }
}

/// offset_delete_topic is one topic of an OffsetDelete.
pub fn offset_delete_topic<'a>(name: &'a str, partitions: &[i32]) -> OffsetDeleteRequestTopic<'a> {
    OffsetDeleteRequestTopic {
        name: name.into(),
        partitions: partitions
            .iter()
            .map(|p| OffsetDeleteRequestPartition {
                partition_index: *p,
            })
            .collect(),
    }
}

pub fn config() -> Config {
    Config::from_pairs([
        ("group.min.session.timeout.ms", 10),
        ("group.max.session.timeout.ms", 10 * 60 * 1000),
        ("group.initial.rebalance.delay.ms", INITIAL_DELAY),
        // Targets at once at every epoch bump: the tests that batch them set their own.
        ("group.consumer.assignment.interval.ms", 0),
    ])
    .unwrap()
}

/// Join describes a JoinGroup; `H::join` sends it.
#[derive(Clone, Debug)]
pub struct Join {
    pub version: i16,
    pub group: String,
    pub member: String,
    pub instance: Option<String>,
    pub session: i32,
    pub rebalance: i32,
    pub protocol_type: String,
    pub protocols: Vec<(String, Vec<u8>)>,
    pub client_id: String,
}

impl Join {
    pub fn new(member: &str) -> Join {
        Join {
            version: 3,
            group: GROUP.into(),
            member: member.into(),
            instance: None,
            session: SESSION,
            rebalance: REBALANCE,
            protocol_type: PROTOCOL_TYPE.into(),
            protocols: vec![("range".into(), b"metadata".to_vec())],
            client_id: "clientId".into(),
        }
    }
    pub fn v(mut self, version: i16) -> Join {
        self.version = version;
        self
    }
    pub fn group(mut self, g: &str) -> Join {
        self.group = g.into();
        self
    }
    pub fn instance(mut self, i: &str) -> Join {
        self.instance = Some(i.into());
        self.version = self.version.max(5);
        self
    }
    pub fn session(mut self, s: i32) -> Join {
        self.session = s;
        self
    }
    pub fn rebalance(mut self, r: i32) -> Join {
        self.rebalance = r;
        self
    }
    pub fn protocol_type(mut self, t: &str) -> Join {
        self.protocol_type = t.into();
        self
    }
    pub fn protocols(mut self, p: &[(&str, &[u8])]) -> Join {
        self.protocols = p.iter().map(|(n, m)| (n.to_string(), m.to_vec())).collect();
        self
    }
}

/// H drives a coordinator: it keeps the clock, hands out tokens, records every response (a
/// token answered twice fails the test) and completes appends (at once, unless held).
pub struct H {
    pub c: Coordinator,
    pub now: i64,
    next: Token,
    pub answers: BTreeMap<Token, GroupResponse>,
    pub appends: VecDeque<(AppendToken, i32, Vec<u8>)>,
    /// written keeps every append ever made, in order (partition, batch).
    pub written: Vec<(i32, Vec<u8>)>,
    pub hold_appends: bool,
    /// share_effects are the share-state effects the coordinator asked for, in order.
    pub share_effects: Vec<ShareEffect>,
}

impl H {
    pub fn new() -> H {
        H::with(config())
    }

    pub fn with(config: Config) -> H {
        H {
            c: Coordinator::with_seed(config, 42),
            now: 0,
            next: 1,
            answers: BTreeMap::new(),
            appends: VecDeque::new(),
            written: Vec::new(),
            hold_appends: false,
            share_effects: Vec::new(),
        }
    }

    pub fn apply(&mut self, effects: Vec<Effect>) {
        for e in effects {
            match e {
                Effect::Respond { token, response } => {
                    assert!(
                        self.answers.insert(token, response).is_none(),
                        "token {token} answered twice"
                    );
                }
                Effect::Append {
                    token,
                    partition,
                    records,
                } => {
                    self.written.push((partition, records.clone()));
                    self.appends.push_back((token, partition, records));
                }
                Effect::Other(e) => self.share_effects.push(e),
            }
        }
        if !self.hold_appends {
            self.finish_appends(ErrorCode::None);
        }
    }

    /// finish_appends reports every queued append with `error`.
    pub fn finish_appends(&mut self, error: ErrorCode) {
        while let Some((t, _, _)) = self.appends.pop_front() {
            let effects = self.c.appended(self.now, t, error).unwrap();
            self.apply(effects);
        }
    }

    /// finish_one reports the oldest queued append with `error`.
    pub fn finish_one(&mut self, error: ErrorCode) {
        let (t, _, _) = self.appends.pop_front().expect("an append");
        let effects = self.c.appended(self.now, t, error).unwrap();
        self.apply(effects);
    }

    pub fn send(&mut self, req: &GroupRequest<'_>) -> Token {
        let t = self.next;
        self.next += 1;
        let effects = self.c.handle(self.now, t, req);
        self.apply(effects);
        t
    }

    pub fn advance(&mut self, ms: i64) {
        self.now += ms;
        let effects = self.c.tick(self.now);
        self.apply(effects);
    }

    pub fn answered(&self, t: Token) -> bool {
        self.answers.contains_key(&t)
    }

    pub fn join_response(&self, t: Token) -> &JoinGroupResponse<'static> {
        match self.answers.get(&t) {
            Some(GroupResponse::JoinGroup(r)) => r,
            other => panic!("token {t}: no JoinGroup response: {other:?}"),
        }
    }

    pub fn sync_response(&self, t: Token) -> &SyncGroupResponse<'static> {
        match self.answers.get(&t) {
            Some(GroupResponse::SyncGroup(r)) => r,
            other => panic!("token {t}: no SyncGroup response: {other:?}"),
        }
    }

    pub fn join_error(&self, t: Token) -> ErrorCode {
        self.join_response(t).error()
    }

    pub fn sync_error(&self, t: Token) -> ErrorCode {
        self.sync_response(t).error()
    }

    // -- requests ---------------------------------------------------------------------------

    pub fn join(&mut self, j: &Join) -> Token {
        let protocols = j
            .protocols
            .iter()
            .map(|(n, m)| JoinGroupRequestProtocol {
                name: n.into(),
                metadata: m.into(),
                ..Default::default()
            })
            .collect();
        let req = GroupRequest::JoinGroup(Req {
            version: j.version,
            client_id: &j.client_id,
            client_host: "/127.0.0.1",
            body: JoinGroupRequest {
                group_id: j.group.as_str().into(),
                session_timeout_ms: j.session,
                rebalance_timeout_ms: j.rebalance,
                member_id: j.member.as_str().into(),
                group_instance_id: j.instance.as_deref().map(Into::into),
                protocol_type: j.protocol_type.as_str().into(),
                protocols,
                ..Default::default()
            },
        });
        self.send(&req)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn sync_full(
        &mut self,
        version: i16,
        group: &str,
        generation: i32,
        member: &str,
        instance: Option<&str>,
        protocol: (Option<&str>, Option<&str>),
        assignments: &[(&str, &[u8])],
    ) -> Token {
        let req = GroupRequest::SyncGroup(Req::new(
            version,
            SyncGroupRequest {
                group_id: group.into(),
                generation_id: generation,
                member_id: member.into(),
                group_instance_id: instance.map(Into::into),
                protocol_type: protocol.0.map(Into::into),
                protocol_name: protocol.1.map(Into::into),
                assignments: assignments
                    .iter()
                    .map(|(m, a)| SyncGroupRequestAssignment {
                        member_id: (*m).into(),
                        assignment: (*a).into(),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            },
        ));
        self.send(&req)
    }

    pub fn sync(&mut self, generation: i32, member: &str, assignments: &[(&str, &[u8])]) -> Token {
        self.sync_full(
            3,
            GROUP,
            generation,
            member,
            None,
            (None, None),
            assignments,
        )
    }

    pub fn sync_static(
        &mut self,
        generation: i32,
        member: &str,
        instance: &str,
        assignments: &[(&str, &[u8])],
    ) -> Token {
        self.sync_full(
            3,
            GROUP,
            generation,
            member,
            Some(instance),
            (None, None),
            assignments,
        )
    }

    pub fn heartbeat_in(
        &mut self,
        group: &str,
        member: &str,
        instance: Option<&str>,
        generation: i32,
    ) -> ErrorCode {
        let t = self.send(&GroupRequest::Heartbeat(Req::new(
            4,
            HeartbeatRequest {
                group_id: group.into(),
                generation_id: generation,
                member_id: member.into(),
                group_instance_id: instance.map(Into::into),
                ..Default::default()
            },
        )));
        match self.answers.get(&t) {
            Some(GroupResponse::Heartbeat(r)) => r.error(),
            other => panic!("no heartbeat response: {other:?}"),
        }
    }

    pub fn heartbeat(&mut self, member: &str, generation: i32) -> ErrorCode {
        self.heartbeat_in(GROUP, member, None, generation)
    }

    pub fn leave(&mut self, members: &[(&str, Option<&str>)]) -> LeaveGroupResponse<'static> {
        self.leave_in(GROUP, members)
    }

    pub fn leave_in(
        &mut self,
        group: &str,
        members: &[(&str, Option<&str>)],
    ) -> LeaveGroupResponse<'static> {
        let t = self.send(&GroupRequest::LeaveGroup(Req::new(
            5,
            LeaveGroupRequest {
                group_id: group.into(),
                members: members
                    .iter()
                    .map(|(m, i)| LeaveGroupRequestMember {
                        member_id: (*m).into(),
                        group_instance_id: i.map(Into::into),
                        ..Default::default()
                    })
                    .collect(),
                ..Default::default()
            },
        )));
        match self.answers.get(&t) {
            Some(GroupResponse::LeaveGroup(r)) => r.clone(),
            other => panic!("no leave response: {other:?}"),
        }
    }

    /// commit sends an OffsetCommit; returns its token (answered once appended).
    #[allow(clippy::too_many_arguments)]
    pub fn commit_full(
        &mut self,
        version: i16,
        group: &str,
        member: &str,
        instance: Option<&str>,
        generation: i32,
        offsets: &[(&str, i32, i64, Option<&str>)],
    ) -> Token {
        let mut topics: Vec<OffsetCommitRequestTopic<'_>> = Vec::new();
        for (t, p, o, m) in offsets {
            let part = OffsetCommitRequestPartition {
                partition_index: *p,
                committed_offset: *o,
                committed_leader_epoch: -1,
                commit_timestamp: -1,
                committed_metadata: m.map(Into::into),
                ..Default::default()
            };
            match topics.iter_mut().find(|x| x.name == *t) {
                Some(x) => x.partitions.push(part),
                None => topics.push(OffsetCommitRequestTopic {
                    name: (*t).into(),
                    partitions: vec![part],
                    ..Default::default()
                }),
            }
        }
        self.send(&GroupRequest::OffsetCommit(Req::new(
            version,
            OffsetCommitRequest {
                group_id: group.into(),
                generation_id_or_member_epoch: generation,
                member_id: member.into(),
                group_instance_id: instance.map(Into::into),
                retention_time_ms: -1,
                topics,
                ..Default::default()
            },
        )))
    }

    /// txn_commit_full sends a TxnOffsetCommit of `offsets` ((topic, partition, offset,
    /// metadata)) by producer `pid` (epoch 0).
    #[allow(clippy::too_many_arguments)]
    pub fn txn_commit_full(
        &mut self,
        version: i16,
        group: &str,
        pid: i64,
        member: &str,
        instance: Option<&str>,
        generation: i32,
        offsets: &[(&str, i32, i64, Option<&str>)],
    ) -> Token {
        let mut topics: Vec<TxnOffsetCommitRequestTopic<'_>> = Vec::new();
        for (t, p, o, m) in offsets {
            let part = TxnOffsetCommitRequestPartition {
                partition_index: *p,
                committed_offset: *o,
                committed_leader_epoch: -1,
                committed_metadata: m.map(Into::into),
                ..Default::default()
            };
            match topics.iter_mut().find(|x| x.name == *t) {
                Some(x) => x.partitions.push(part),
                None => topics.push(TxnOffsetCommitRequestTopic {
                    name: (*t).into(),
                    partitions: vec![part],
                    ..Default::default()
                }),
            }
        }
        self.send(&GroupRequest::TxnOffsetCommit(Req::new(
            version,
            TxnOffsetCommitRequest {
                transactional_id: "txn".into(),
                group_id: group.into(),
                producer_id: pid,
                producer_epoch: 0,
                generation_id: generation,
                member_id: member.into(),
                group_instance_id: instance.map(Into::into),
                topics,
                ..Default::default()
            },
        )))
    }

    /// txn_errors are every partition's error of an answered TxnOffsetCommit.
    pub fn txn_errors(&self, t: Token) -> Vec<ErrorCode> {
        match self.answers.get(&t) {
            Some(GroupResponse::TxnOffsetCommit(r)) => r
                .topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error()))
                .collect(),
            other => panic!("token {t}: no TxnOffsetCommit response: {other:?}"),
        }
    }

    /// txn_commit commits `offsets` of GROUP in producer `pid`'s transaction outside group
    /// management and returns every partition's error.
    pub fn txn_commit(&mut self, pid: i64, offsets: &[(&str, i32, i64)]) -> Vec<ErrorCode> {
        let o: Vec<_> = offsets.iter().map(|(t, p, o)| (*t, *p, *o, None)).collect();
        let t = self.txn_commit_full(3, GROUP, pid, "", None, -1, &o);
        self.txn_errors(t)
    }

    /// end_txn reports the marker of producer `pid` appended to GROUP's partition.
    pub fn end_txn(&mut self, pid: i64, commit: bool) {
        let p = self.c.partition_for(GROUP);
        let effects = self.c.end_transaction(self.now, p, pid, commit);
        self.apply(effects);
    }

    pub fn commit_response(&self, t: Token) -> &OffsetCommitResponse<'static> {
        match self.answers.get(&t) {
            Some(GroupResponse::OffsetCommit(r)) => r,
            other => panic!("token {t}: no OffsetCommit response: {other:?}"),
        }
    }

    /// commit commits and returns every partition's error (the commit must be answered).
    pub fn commit(
        &mut self,
        member: &str,
        generation: i32,
        offsets: &[(&str, i32, i64)],
    ) -> Vec<ErrorCode> {
        let o: Vec<_> = offsets.iter().map(|(t, p, o)| (*t, *p, *o, None)).collect();
        let t = self.commit_full(8, GROUP, member, None, generation, &o);
        self.commit_errors(t)
    }

    pub fn commit_errors(&self, t: Token) -> Vec<ErrorCode> {
        self.commit_response(t)
            .topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(|p| p.error()))
            .collect()
    }

    /// fetch fetches offsets of one group (all when `topics` is None).
    pub fn fetch_in(
        &mut self,
        group: &str,
        topics: Option<&[(&str, &[i32])]>,
        require_stable: bool,
    ) -> OffsetFetchResponseGroup<'static> {
        let t = self.send(&GroupRequest::OffsetFetch(Req::new(
            9,
            OffsetFetchRequest {
                groups: vec![fetch_group(group, topics)],
                require_stable,
                ..Default::default()
            },
        )));
        match self.answers.get(&t) {
            Some(GroupResponse::OffsetFetch(r)) => r.groups[0].clone(),
            other => panic!("no OffsetFetch response: {other:?}"),
        }
    }

    /// offset is the committed offset of one partition as OffsetFetch answers it (-1: none).
    pub fn offset(&mut self, topic: &str, partition: i32) -> (i64, ErrorCode) {
        let g = self.fetch_in(GROUP, Some(&[(topic, &[partition])]), false);
        let p = &g.topics[0].partitions[0];
        (p.committed_offset, p.error())
    }

    pub fn describe(&mut self, group: &str) -> DescribeGroupsResponseGroup<'static> {
        let t = self.send(&GroupRequest::DescribeGroups(Req::new(
            5,
            DescribeGroupsRequest {
                groups: vec![group.into()],
                ..Default::default()
            },
        )));
        match self.answers.get(&t) {
            Some(GroupResponse::DescribeGroups(r)) => r.groups[0].clone(),
            other => panic!("no DescribeGroups response: {other:?}"),
        }
    }

    pub fn list(&mut self, states: &[&str], types: &[&str]) -> ListGroupsResponse<'static> {
        let t = self.send(&GroupRequest::ListGroups(Req::new(
            5,
            ListGroupsRequest {
                states_filter: states.iter().map(|s| (*s).into()).collect(),
                types_filter: types.iter().map(|s| (*s).into()).collect(),
                ..Default::default()
            },
        )));
        match self.answers.get(&t) {
            Some(GroupResponse::ListGroups(r)) => r.clone(),
            other => panic!("no ListGroups response: {other:?}"),
        }
    }

    pub fn delete_groups(&mut self, groups: &[&str]) -> Vec<(String, ErrorCode)> {
        let t = self.send(&GroupRequest::DeleteGroups(Req::new(
            2,
            DeleteGroupsRequest {
                groups_names: groups.iter().map(|s| (*s).into()).collect(),
                ..Default::default()
            },
        )));
        match self.answers.get(&t) {
            Some(GroupResponse::DeleteGroups(r)) => r
                .results
                .iter()
                .map(|r| (r.group_id.to_string(), r.error()))
                .collect(),
            other => panic!("no DeleteGroups response: {other:?}"),
        }
    }

    pub fn delete_offsets(
        &mut self,
        group: &str,
        topics: &[(&str, &[i32])],
    ) -> OffsetDeleteResponse<'static> {
        let t = self.send(&GroupRequest::OffsetDelete(Req::new(
            0,
            OffsetDeleteRequest {
                group_id: group.into(),
                topics: topics
                    .iter()
                    .map(|(n, p)| offset_delete_topic(n, p))
                    .collect(),
            },
        )));
        match self.answers.get(&t) {
            Some(GroupResponse::OffsetDelete(r)) => r.clone(),
            other => panic!("no OffsetDelete response: {other:?}"),
        }
    }

    pub fn state(&self) -> Option<GroupState> {
        self.c.group_state(GROUP)
    }

    // -- composite steps --------------------------------------------------------------------

    /// join_alone has a new member join an empty group and waits out the initial delay; returns
    /// the JoinGroup response.
    pub fn join_alone(&mut self, j: &Join) -> JoinGroupResponse<'static> {
        let t = self.join(j);
        self.advance(INITIAL_DELAY);
        self.join_response(t).clone()
    }

    /// stable_group makes a Stable group of one dynamic member; returns (member id, generation).
    pub fn stable_group(&mut self) -> (String, i32) {
        let r = self.join_alone(&Join::new(""));
        assert_eq!(r.error(), ErrorCode::None);
        let s = self.sync(
            r.generation_id,
            &r.member_id,
            &[(&r.member_id, b"assignment")],
        );
        assert_eq!(self.sync_error(s), ErrorCode::None);
        assert_eq!(self.state(), Some(GroupState::Stable));
        (r.member_id.to_string(), r.generation_id)
    }

    /// static_stable_group makes a Stable group of a static leader and a static follower;
    /// returns ((leader id, instance), (follower id, instance), generation).
    pub fn static_stable_group(&mut self) -> ((String, String), (String, String), i32) {
        let l = self.join(&Join::new("").instance("leader-instance"));
        let f = self.join(&Join::new("").instance("follower-instance"));
        // The second member re-arms the initial delay once.
        self.advance(INITIAL_DELAY);
        self.advance(INITIAL_DELAY);
        let (lr, fr) = (self.join_response(l).clone(), self.join_response(f).clone());
        assert_eq!((lr.error(), fr.error()), (ErrorCode::None, ErrorCode::None));
        assert_eq!(lr.leader, lr.member_id);
        let gen = lr.generation_id;
        let ls = self.sync_static(
            gen,
            &lr.member_id,
            "leader-instance",
            &[
                (&lr.member_id, b"leader-assignment"),
                (&fr.member_id, b"follower-assignment"),
            ],
        );
        let fs = self.sync_static(gen, &fr.member_id, "follower-instance", &[]);
        assert_eq!(self.sync_error(ls), ErrorCode::None);
        assert_eq!(self.sync_error(fs), ErrorCode::None);
        assert_eq!(self.state(), Some(GroupState::Stable));
        (
            (lr.member_id.to_string(), "leader-instance".into()),
            (fr.member_id.to_string(), "follower-instance".into()),
            gen,
        )
    }

    /// join_sync_group brings `n` new dynamic members into a Stable group (the first is the
    /// leader); returns their member ids and the generation.
    pub fn join_sync_group(&mut self, n: usize) -> (Vec<String>, i32) {
        let tokens: Vec<Token> = (0..n).map(|_| self.join(&Join::new(""))).collect();
        self.advance(INITIAL_DELAY);
        self.advance(INITIAL_DELAY);
        let ids: Vec<String> = tokens
            .iter()
            .map(|t| self.join_response(*t).member_id.to_string())
            .collect();
        let gen = self.join_response(tokens[0]).generation_id;
        let leader = self.join_response(tokens[0]).leader.to_string();
        let assignments: Vec<(String, Vec<u8>)> = ids
            .iter()
            .map(|m| (m.clone(), m.as_bytes().to_vec()))
            .collect();
        let a: Vec<(&str, &[u8])> = assignments
            .iter()
            .map(|(m, b)| (m.as_str(), b.as_slice()))
            .collect();
        let mut syncs = vec![self.sync(gen, &leader, &a)];
        for m in ids.iter().filter(|m| **m != leader) {
            syncs.push(self.sync(gen, m, &[]));
        }
        for s in syncs {
            assert_eq!(self.sync_error(s), ErrorCode::None);
        }
        (ids, gen)
    }
}
