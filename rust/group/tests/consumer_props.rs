//! Property tests of KIP-848 consumer groups through the whole coordinator, with the crate's
//! seeded Rng. Simulated clients behave as Kafka's consumer does on its side of the protocol
//! (`ConsumerMembershipManager`, `ConsumerHeartbeatRequestManager.HeartbeatState`): they join
//! at epoch 0, heartbeat with the epoch they were given, send only the fields that changed,
//! revoke what they must drop before acknowledging with the partitions they own, take new
//! partitions once their revocations are done, leave with -1 (a static member -2 or -1), are
//! fenced (FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID) and rejoin having lost everything, retry
//! after a coordinator error with every field, crash, or hang and time out. Around them topics
//! are created, grown and deleted (`set_topic_metadata`), time moves, appends fail at once or
//! succeed and are reported later, and now and then a new coordinator replays what was written
//! to `__consumer_offsets` (a restart: the answers not sent yet are lost).
//!
//! After every step: no partition is held by two clients at once as the clients see it (a
//! client the coordinator fenced by a timer and that does not know it yet is a zombie, as in
//! Kafka, and is left out), nor by two members in the coordinator (assigned or pending
//! revocation); what a client owns is its member's; member epochs (per member id) and the group
//! epoch (across restarts too) never go back; every request is answered exactly once. At the
//! end, once every client has kept heartbeating with nothing changing, the group is Stable at
//! its group epoch and every partition of every subscribed topic is assigned to exactly one
//! member that subscribes to it, the one whose client owns it.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::group::assignors::TopicId;
use crate::group::consumer::{ConsumerGroupState, MemberState};
use crate::rng::Rng;

const G: &str = "cg";
const SESSION_MS: i64 = 3_000;
const INTERVAL_MS: i64 = 500;
const NAMES: [&str; 6] = ["t0", "t1", "t2", "t3", "t4", "t5"];
const REGEXES: [&str; 4] = ["t[0-2]", "t.*", "t[3-5]", "t1|t4"];
const ASSIGNORS: [Option<&str>; 3] = [None, Some("uniform"), Some("range")];
/// HOLD_MS bounds how long a successful append's report may wait: a well-behaved client's
/// heartbeat response comes well within its session.
const HOLD_MS: i64 = 800;

type Tp = (TopicId, i32);

/// Sent is what a client's request in flight was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sent {
    Heartbeat,
    Leave,
}

#[derive(Debug, Clone)]
struct Client {
    instance: Option<String>,
    incarnation: u32,
    /// running: the consumer is up (a closed or crashed one is not).
    running: bool,
    epoch: i32,
    owned: BTreeSet<Tp>,
    /// target is the last assignment received and not reconciled yet.
    target: Option<BTreeSet<Tp>>,
    reconcile_at: i64,
    /// acked: the owned partitions were sent since the last reconciliation.
    acked: bool,
    /// full: the next heartbeat sends every field (joining, or after an error).
    full: bool,
    names: BTreeSet<String>,
    regex: String,
    assignor: Option<&'static str>,
    rebalance_timeout: i32,
    /// sent_names and sent_regex are the subscription last sent (Kafka's `SentFields`; None
    /// and "" stand for its null).
    sent_names: Option<BTreeSet<String>>,
    sent_regex: String,
    inflight: Option<(Token, Sent)>,
    next_heartbeat: i64,
    backoff_until: i64,
    /// hung_until: the client neither heartbeats nor reconciles until then (a stuck poll loop);
    /// it may be fenced meanwhile and become a zombie.
    hung_until: i64,
    /// slow: its revocations may outlast its rebalance timeout.
    slow: bool,
}

impl Client {
    fn member_id(&self, i: usize) -> String {
        format!("client{i}-{}", self.incarnation)
    }
}

/// Stats count what a run went through, to show the sequences reach each case.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Stats {
    heartbeats: u64,
    errors: BTreeMap<&'static str, u64>,
    revocations: u64,
    reloads: u64,
    lost_answers: u64,
    failed_appends: u64,
    zombies: u64,
    topic_changes: u64,
    max_group_epoch: i32,
}

struct Sim {
    c: Coordinator,
    now: i64,
    rng: Rng,
    seed: u64,
    next_token: Token,
    fail_percent: u64,
    /// outstanding maps each token not answered yet to its client (None: the test's own).
    outstanding: BTreeMap<Token, Option<(usize, u32)>>,
    /// answers are every answer in order, for the determinism check.
    answers: Vec<(Token, GroupResponse)>,
    /// log is what was appended to each partition of `__consumer_offsets`.
    log: BTreeMap<i32, Vec<u8>>,
    /// held are appends in the log whose success is not reported yet, with when they were made.
    held: Vec<(AppendToken, i64)>,
    topics: BTreeMap<String, (TopicId, i32)>,
    next_topic_id: u8,
    clients: Vec<Client>,
    group_epoch: i32,
    member_epochs: BTreeMap<String, i32>,
    stats: Stats,
    /// last names the last step, for failure messages.
    last: &'static str,
}

fn config() -> Config {
    Config {
        consumer_session_timeout_ms: SESSION_MS,
        consumer_heartbeat_interval_ms: INTERVAL_MS,
        ..super::config()
    }
}

fn set(a: &crate::group::assignors::Assignment) -> BTreeSet<Tp> {
    a.iter()
        .flat_map(|(t, ps)| ps.iter().map(move |p| (*t, *p)))
        .collect()
}

fn full_match(regex: &str, topic: &str) -> bool {
    regex::Regex::new(&format!("^(?:{regex})$"))
        .unwrap()
        .is_match(topic)
}

impl Sim {
    fn new(seed: u64) -> Sim {
        let mut rng = Rng::new(Some(seed));
        let clients = (0..6)
            .map(|i| Client {
                instance: (i % 3 == 2).then(|| format!("instance-{i}")),
                incarnation: 0,
                running: false,
                epoch: 0,
                owned: BTreeSet::new(),
                target: None,
                reconcile_at: 0,
                acked: true,
                full: true,
                names: BTreeSet::new(),
                regex: String::new(),
                assignor: None,
                rebalance_timeout: 3_000,
                sent_names: None,
                sent_regex: String::new(),
                inflight: None,
                next_heartbeat: 0,
                backoff_until: 0,
                hung_until: 0,
                slow: false,
            })
            .collect();
        let fail_percent = rng.next_u64() % 12;
        let mut sim = Sim {
            c: Coordinator::with_seed(config(), seed),
            now: 0,
            rng,
            seed,
            next_token: 1,
            fail_percent,
            outstanding: BTreeMap::new(),
            answers: Vec::new(),
            log: BTreeMap::new(),
            held: Vec::new(),
            topics: BTreeMap::new(),
            next_topic_id: 1,
            clients,
            group_epoch: 0,
            member_epochs: BTreeMap::new(),
            stats: Stats::default(),
            last: "",
        };
        for _ in 0..3 {
            sim.create_topic();
        }
        sim.publish_topics();
        sim
    }

    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    // -- the coordinator's effects ------------------------------------------------------

    /// apply carries out effects: answers go to their clients; each append fails at once (its
    /// records never reach the log) or is in the log, its success reported now or later.
    fn apply(&mut self, effects: Vec<Effect>) {
        let mut queue: std::collections::VecDeque<Effect> = effects.into();
        while let Some(e) = queue.pop_front() {
            match e {
                Effect::Respond { token, response } => {
                    let owner = self
                        .outstanding
                        .remove(&token)
                        .unwrap_or_else(|| panic!("token {token} answered twice or unknown"));
                    self.answers.push((token, response.clone()));
                    if let Some((i, incarnation)) = owner {
                        self.deliver(i, incarnation, token, &response);
                    }
                }
                Effect::Append {
                    token,
                    partition,
                    records,
                } => {
                    if self.chance(self.fail_percent) {
                        self.stats.failed_appends += 1;
                        let error = [
                            ErrorCode::NotLeaderOrFollower,
                            ErrorCode::NotEnoughReplicas,
                            ErrorCode::RequestTimedOut,
                            ErrorCode::KafkaStorageError,
                        ][self.below(4) as usize];
                        queue.extend(self.c.appended(self.now, token, error).unwrap());
                    } else {
                        self.log.entry(partition).or_default().extend(&records);
                        if self.chance(60) {
                            queue
                                .extend(self.c.appended(self.now, token, ErrorCode::None).unwrap());
                        } else {
                            self.held.push((token, self.now));
                        }
                    }
                }
                Effect::Other(e) => panic!("a consumer group asked for share state: {e:?}"),
            }
        }
    }

    /// report_held reports held appends' success: all of them, or each with some chance (those
    /// held too long always).
    fn report_held(&mut self, all: bool) {
        let held = std::mem::take(&mut self.held);
        for (t, at) in held {
            if all || self.now - at >= HOLD_MS || self.chance(50) {
                let effects = self.c.appended(self.now, t, ErrorCode::None).unwrap();
                self.apply(effects);
            } else {
                self.held.push((t, at));
            }
        }
    }

    fn send(&mut self, owner: Option<(usize, u32)>, req: &GroupRequest<'_>) -> Token {
        let t = self.next_token;
        self.next_token += 1;
        self.outstanding.insert(t, owner);
        let effects = self.c.handle(self.now, t, req);
        self.apply(effects);
        t
    }

    fn advance(&mut self, dt: i64) {
        self.now += dt;
        let effects = self.c.tick(self.now);
        self.apply(effects);
    }

    // -- topics -------------------------------------------------------------------------

    fn publish_topics(&mut self) {
        let topics: Vec<(String, TopicId, i32)> = self
            .topics
            .iter()
            .map(|(n, (id, p))| (n.clone(), *id, *p))
            .collect();
        self.c
            .set_topic_metadata(topics.iter().map(|(n, id, p)| (n.as_str(), *id, *p)));
    }

    fn create_topic(&mut self) {
        let free: Vec<&str> = NAMES
            .iter()
            .copied()
            .filter(|n| !self.topics.contains_key(*n))
            .collect();
        if free.is_empty() {
            return;
        }
        let name = free[self.below(free.len() as u64) as usize].to_string();
        let id = [self.next_topic_id; 16];
        self.next_topic_id += 1;
        let partitions = 1 + self.below(4) as i32;
        self.topics.insert(name, (id, partitions));
    }

    fn change_topics(&mut self) {
        self.stats.topic_changes += 1;
        let names: Vec<String> = self.topics.keys().cloned().collect();
        match self.below(3) {
            0 => self.create_topic(),
            1 if !names.is_empty() => {
                let n = &names[self.below(names.len() as u64) as usize];
                let grow = 1 + self.below(2) as i32;
                let t = self.topics.get_mut(n).unwrap();
                t.1 = (t.1 + grow).min(9);
            }
            _ if !names.is_empty() => {
                let n = names[self.below(names.len() as u64) as usize].clone();
                self.topics.remove(&n);
            }
            _ => {}
        }
        self.publish_topics();
    }

    // -- clients ------------------------------------------------------------------------

    fn random_subscription(&mut self) -> (BTreeSet<String>, String) {
        let mut names = BTreeSet::new();
        let mut regex = String::new();
        if self.chance(25) {
            regex = REGEXES[self.below(REGEXES.len() as u64) as usize].to_string();
        }
        if regex.is_empty() || self.chance(20) {
            for _ in 0..1 + self.below(3) {
                names.insert(NAMES[self.below(NAMES.len() as u64) as usize].to_string());
            }
        }
        (names, regex)
    }

    /// start brings client `i` up as a new consumer: a new member id (a static one keeps its
    /// instance id), a subscription, joining at epoch 0.
    fn start(&mut self, i: usize) {
        let (names, regex) = self.random_subscription();
        let assignor = ASSIGNORS[self.below(3) as usize];
        let rebalance_timeout = 3_000 + self.below(3_000) as i32;
        let slow = self.chance(5);
        let c = &mut self.clients[i];
        c.incarnation += 1;
        c.running = true;
        c.epoch = 0;
        c.owned.clear();
        c.target = None;
        c.acked = true;
        c.full = true;
        c.names = names;
        c.regex = regex;
        c.assignor = assignor;
        c.rebalance_timeout = rebalance_timeout;
        c.sent_names = None;
        c.sent_regex = String::new();
        c.inflight = None;
        c.next_heartbeat = 0;
        c.backoff_until = 0;
        c.hung_until = 0;
        c.slow = slow;
    }

    /// lose is what a client does when fenced: every partition is lost, it rejoins at epoch 0
    /// under the same member id.
    fn lose(&mut self, i: usize) {
        let c = &mut self.clients[i];
        c.owned.clear();
        c.target = None;
        c.acked = true;
        c.epoch = 0;
        c.full = true;
    }

    /// deliver hands an answer to the client that sent it (a client restarted since ignores
    /// it: its connection is gone).
    fn deliver(&mut self, i: usize, incarnation: u32, token: Token, response: &GroupResponse) {
        let now = self.now;
        let c = &mut self.clients[i];
        let Some((t, sent)) = c.inflight else {
            return;
        };
        if c.incarnation != incarnation || t != token {
            return;
        }
        c.inflight = None;
        let GroupResponse::ConsumerGroupHeartbeat(r) = response else {
            panic!("client {i}: {response:?}");
        };
        if sent == Sent::Leave {
            return;
        }
        let error = ErrorCode::for_code(r.error_code);
        if error != ErrorCode::None {
            *self.stats.errors.entry(error.name()).or_default() += 1;
        }
        let c = &mut self.clients[i];
        match error {
            ErrorCode::None => {
                assert_eq!(r.member_id.as_deref(), Some(c.member_id(i).as_str()));
                assert!(
                    c.epoch == 0 || r.member_epoch >= c.epoch,
                    "seed {}: client {i}'s epoch went from {} back to {}",
                    self.seed,
                    c.epoch,
                    r.member_epoch
                );
                assert!(r.member_epoch > 0, "client {i}: epoch {}", r.member_epoch);
                c.epoch = r.member_epoch;
                c.next_heartbeat = now + i64::from(r.heartbeat_interval_ms);
                if let Some(a) = &r.assignment {
                    let target: BTreeSet<Tp> = a
                        .topic_partitions
                        .iter()
                        .flat_map(|tp| tp.partitions.iter().map(move |p| (tp.topic_id, *p)))
                        .collect();
                    let revoking = c.owned.difference(&target).count() > 0;
                    c.target = Some(target);
                    if revoking {
                        self.stats.revocations += 1;
                        let slow = c.slow;
                        let c_timeout = i64::from(c.rebalance_timeout);
                        let delay = if slow && self.chance(50) {
                            c_timeout + self.below(2_000) as i64
                        } else {
                            [0, 0, 50, 200, 600][self.below(5) as usize]
                        };
                        self.clients[i].reconcile_at = now + delay;
                    } else {
                        c.reconcile_at = now;
                    }
                }
            }
            ErrorCode::FencedMemberEpoch | ErrorCode::UnknownMemberId => self.lose(i),
            ErrorCode::NotCoordinator
            | ErrorCode::CoordinatorNotAvailable
            | ErrorCode::CoordinatorLoadInProgress => {
                c.full = true;
            }
            ErrorCode::UnreleasedInstanceId if c.epoch == 0 && c.instance.is_some() => {
                // Fatal to Kafka's consumer; the application starts it again a little later.
                c.full = true;
                c.backoff_until = now + 1_000;
            }
            other => panic!(
                "seed {}: client {i} got {} ({:?})",
                self.seed,
                other.name(),
                r.error_message
            ),
        }
    }

    /// act lets client `i` do what it has to: finish a reconciliation that is due, then send a
    /// heartbeat if it is joining, must acknowledge, changed its subscription, or is due.
    fn act(&mut self, i: usize, eager: bool) {
        let now = self.now;
        let c = &mut self.clients[i];
        if !c.running || c.inflight.is_some() || now < c.hung_until {
            return;
        }
        if c.target.is_some() && now >= c.reconcile_at {
            // Revoked partitions are gone before the ack; new ones are taken with it.
            c.owned = c.target.take().unwrap();
            c.acked = false;
        }
        let joining = c.epoch == 0;
        if joining && now < c.backoff_until {
            return;
        }
        let changed = c.sent_names.as_ref() != Some(&c.names) || c.sent_regex != c.regex;
        if !(joining || c.full || !c.acked || changed || eager || now >= c.next_heartbeat) {
            return;
        }
        let full = joining || c.full;
        if full {
            c.sent_names = None;
            c.sent_regex = String::new();
        }
        let member_id = c.member_id(i);
        let names = (full || c.sent_names.as_ref() != Some(&c.names)).then(|| c.names.clone());
        // The regex goes when it changed ("" drops it) and with every field, "" included: a
        // full heartbeat of a known member that left it out would keep a regex whose removal
        // was never sent (Kafka's client leaves out an empty one).
        let regex = (full || c.sent_regex != c.regex).then(|| c.regex.clone());
        let owned = (full || !c.acked).then(|| {
            let mut by_topic: BTreeMap<TopicId, Vec<i32>> = BTreeMap::new();
            for (t, p) in &c.owned {
                by_topic.entry(*t).or_default().push(*p);
            }
            by_topic
        });
        debug_assert!(!joining || c.owned.is_empty());
        let req = ConsumerGroupHeartbeatRequest {
            group_id: G.into(),
            member_id: member_id.into(),
            member_epoch: c.epoch,
            instance_id: c.instance.clone().map(Cow::Owned),
            rebalance_timeout_ms: if full { c.rebalance_timeout } else { -1 },
            subscribed_topic_names: names
                .as_ref()
                .map(|n| n.iter().map(|s| Cow::Owned(s.clone())).collect()),
            server_assignor: if full {
                c.assignor.map(Cow::Borrowed)
            } else {
                None
            },
            subscribed_topic_regex: regex.clone().map(Cow::Owned),
            topic_partitions: owned.map(|o| {
                o.into_iter()
                    .map(|(t, p)| ConsumerGroupHeartbeatRequestTopicPartition {
                        topic_id: t,
                        partitions: p,
                        ..Default::default()
                    })
                    .collect()
            }),
            ..Default::default()
        };
        if let Some(n) = names {
            c.sent_names = Some(n);
        }
        if let Some(r) = regex {
            c.sent_regex = r;
        }
        c.acked = true;
        c.full = false;
        c.next_heartbeat = now + INTERVAL_MS;
        let incarnation = c.incarnation;
        // In flight before it is sent: an answer may come back at once.
        c.inflight = Some((self.next_token, Sent::Heartbeat));
        self.stats.heartbeats += 1;
        self.send(
            Some((i, incarnation)),
            &GroupRequest::ConsumerGroupHeartbeat(Req {
                version: 1,
                client_id: "consumer",
                client_host: "/127.0.0.1",
                body: req,
            }),
        );
    }

    /// leave closes client `i`: its partitions are revoked, then it sends epoch -1 (a static
    /// member -2 mostly, to come back under a new member id with its assignment).
    fn leave(&mut self, i: usize) {
        let c = &mut self.clients[i];
        if !c.running || c.epoch == 0 || c.inflight.is_some() || self.now < c.hung_until {
            return;
        }
        let epoch = if c.instance.is_some() && self.rng.next_u64() % 4 != 0 {
            -2
        } else {
            -1
        };
        let c = &mut self.clients[i];
        c.owned.clear();
        c.target = None;
        c.running = false;
        let req = ConsumerGroupHeartbeatRequest {
            group_id: G.into(),
            member_id: c.member_id(i).into(),
            member_epoch: epoch,
            instance_id: c.instance.clone().map(Cow::Owned),
            rebalance_timeout_ms: -1,
            ..Default::default()
        };
        let incarnation = c.incarnation;
        c.inflight = Some((self.next_token, Sent::Leave));
        self.send(
            Some((i, incarnation)),
            &GroupRequest::ConsumerGroupHeartbeat(Req::new(1, req)),
        );
    }

    /// crash stops client `i` at once: its process is gone with its partitions; its member
    /// stays until its session times out.
    fn crash(&mut self, i: usize) {
        let c = &mut self.clients[i];
        c.running = false;
        c.owned.clear();
        c.target = None;
        c.inflight = None;
    }

    fn change_subscription(&mut self, i: usize) {
        if !self.clients[i].running {
            return;
        }
        let (names, regex) = self.random_subscription();
        let c = &mut self.clients[i];
        c.names = names;
        c.regex = regex;
    }

    /// reload replaces the coordinator by one that replays what was written, as a restart
    /// does: the answers not sent are lost (their clients see the connection drop, as
    /// NOT_COORDINATOR) and held appends are in the log already.
    fn reload(&mut self) {
        self.stats.reloads += 1;
        let mut c = Coordinator::with_seed(config(), self.seed + 1_000 * self.stats.reloads);
        let topics: Vec<(String, TopicId, i32)> = self
            .topics
            .iter()
            .map(|(n, (id, p))| (n.clone(), *id, *p))
            .collect();
        c.set_topic_metadata(topics.iter().map(|(n, id, p)| (n.as_str(), *id, *p)));
        for (p, data) in &self.log {
            c.load(*p, data, true).unwrap();
        }
        self.c = c;
        self.held.clear();
        let lost = std::mem::take(&mut self.outstanding);
        for (_, owner) in lost {
            self.stats.lost_answers += 1;
            if let Some((i, incarnation)) = owner {
                let cl = &mut self.clients[i];
                if cl.incarnation == incarnation && cl.inflight.is_some() {
                    cl.inflight = None;
                    cl.full = true;
                }
            }
        }
        self.advance(0);
    }

    fn describe(&mut self) {
        let t = self.send(
            None,
            &GroupRequest::ConsumerGroupDescribe(Req::new(
                1,
                ConsumerGroupDescribeRequest {
                    group_ids: vec![G.into()],
                    ..Default::default()
                },
            )),
        );
        let Some((_, GroupResponse::ConsumerGroupDescribe(r))) = self.answers.last() else {
            panic!("token {t}: no ConsumerGroupDescribe answer");
        };
        let d = &r.groups[0];
        let mut seen = BTreeSet::new();
        for m in &d.members {
            for tp in &m.assignment.topic_partitions {
                for p in &tp.partitions {
                    assert!(seen.insert((tp.topic_id, *p)), "described twice: {d:?}");
                }
            }
        }
    }

    // -- invariants -----------------------------------------------------------------------

    fn part(&self) -> Option<&crate::group::consumer::ConsumerGroup> {
        let s = self.c.slot_of(G)?;
        self.c.groups.get(s)?.consumer.as_deref().map(|p| &p.group)
    }

    /// check_sessions: every member has a session running out in the future, so that a member
    /// whose client is gone leaves in time.
    fn check_sessions(&self) {
        let Some(s) = self.c.slot_of(G) else {
            return;
        };
        let Some(part) = self.c.groups.get(s).and_then(|g| g.consumer.as_deref()) else {
            return;
        };
        for id in part.group.members().keys() {
            let deadline = part
                .timer_slot(id)
                .and_then(|s| part.timers.get(s))
                .and_then(|t| t.session.deadline);
            assert!(
                deadline.is_some_and(|d| d > self.now),
                "seed {}: member {id} has no session ({deadline:?}, now {}) after {}",
                self.seed,
                self.now,
                self.last
            );
        }
    }

    /// check holds after every step.
    fn check(&mut self) {
        self.c.check_invariants();
        self.check_sessions();
        let seed = self.seed;
        let Some(group) = self.part() else {
            assert!(
                self.clients.iter().all(|c| c.owned.is_empty()),
                "seed {seed}: no group, yet clients own partitions"
            );
            return;
        };
        // The coordinator: one holder per partition, epochs that only move forward.
        let mut holder: BTreeMap<Tp, &str> = BTreeMap::new();
        for m in group.members().values() {
            for held in [&m.assigned_partitions, &m.partitions_pending_revocation] {
                for tp in set(held) {
                    if let Some(other) = holder.insert(tp, &m.member_id) {
                        panic!(
                            "seed {seed}: {:?}-{} held by members {other} and {}",
                            tp.0[0], tp.1, m.member_id
                        );
                    }
                }
            }
        }
        let group_epoch = group.group_epoch();
        assert!(
            group_epoch >= self.group_epoch,
            "seed {seed}: the group epoch went from {} back to {group_epoch}",
            self.group_epoch
        );
        assert!(group.assignment_epoch() <= group_epoch);
        let mut epochs = BTreeMap::new();
        for m in group.members().values() {
            if m.member_epoch == -2 {
                continue;
            }
            if let Some(before) = self.member_epochs.get(&m.member_id) {
                assert!(
                    m.member_epoch >= *before,
                    "seed {seed}: member {} went from epoch {before} back to {}",
                    m.member_id,
                    m.member_epoch
                );
            }
            assert!(m.member_epoch <= group_epoch);
            epochs.insert(m.member_id.clone(), m.member_epoch);
        }
        // The clients: what each owns is its member's, and no two own the same partition.
        let mut owner: BTreeMap<Tp, usize> = BTreeMap::new();
        let mut zombies = 0;
        for (i, c) in self.clients.iter().enumerate() {
            if c.owned.is_empty() {
                continue;
            }
            let Some(m) = group.member(&c.member_id(i)) else {
                // Fenced by a timer, it does not know yet.
                zombies += 1;
                continue;
            };
            for tp in &c.owned {
                assert!(
                    m.assigned_partitions.contains(&tp.0, tp.1)
                        || m.partitions_pending_revocation.contains(&tp.0, tp.1),
                    "seed {seed}: client {i} owns {:?}-{}, its member does not: {m:?}",
                    tp.0[0],
                    tp.1
                );
                if let Some(j) = owner.insert(*tp, i) {
                    panic!(
                        "seed {seed}: {:?}-{} owned by clients {j} and {i}",
                        tp.0[0], tp.1
                    );
                }
            }
        }
        self.stats.max_group_epoch = self.stats.max_group_epoch.max(group_epoch);
        self.group_epoch = group_epoch;
        self.member_epochs.extend(epochs);
        self.stats.zombies += zombies;
    }

    // -- the run --------------------------------------------------------------------------

    fn step(&mut self) {
        let n = self.clients.len() as u64;
        let i = self.below(n) as usize;
        let roll = self.below(100);
        self.last = match roll {
            0..=39 | 93.. => "act",
            40..=54 => "time",
            55..=66 => "report",
            67..=72 => "subscribe",
            73..=76 => "topics",
            77..=79 => "leave",
            80..=81 => "crash",
            82 => "hang",
            83..=89 => "start",
            90 => "reload",
            _ => "describe",
        };
        match roll {
            0..=39 => {
                let eager = self.chance(10);
                self.act(i, eager);
            }
            40..=54 => {
                // Clients heartbeat on their own schedule, time moves.
                for j in 0..self.clients.len() {
                    self.act(j, false);
                }
                let dt = [0, 10, 50, 100, 200, 300][self.below(6) as usize];
                self.advance(dt);
            }
            55..=66 => self.report_held(false),
            67..=72 => self.change_subscription(i),
            73..=76 => self.change_topics(),
            77..=79 => self.leave(i),
            80..=81 => self.crash(i),
            82 => {
                let c = &self.clients[i];
                if c.running {
                    let until = self.now + 500 + self.below(5_000) as i64;
                    self.clients[i].hung_until = until;
                }
            }
            83..=89 => {
                if !self.clients[i].running {
                    self.start(i);
                    self.act(i, false);
                }
            }
            90 => self.reload(),
            91..=92 => self.describe(),
            _ => {
                let j = self.below(n) as usize;
                self.act(j, false);
            }
        }
        self.check();
    }

    /// settle runs every client well behaved with nothing changing, until the group has had
    /// time to time out the members nobody runs and converge.
    fn settle(&mut self) {
        // The log is healthy again: a member whose client is gone must not be kept by failing
        // fencing writes (each failure gives it a new session).
        self.fail_percent = 0;
        for i in 0..self.clients.len() {
            let c = &mut self.clients[i];
            c.hung_until = 0;
            c.slow = false;
            if c.target.is_some() {
                c.reconcile_at = c.reconcile_at.min(self.now);
            }
            if !c.running {
                self.start(i);
            }
            // A client started now is not slow either: a revocation it held past its rebalance
            // timeout would be fenced only after the settling time.
            self.clients[i].slow = false;
        }
        for _ in 0..80 {
            self.report_held(true);
            for i in 0..self.clients.len() {
                self.act(i, false);
            }
            self.report_held(true);
            self.advance(100);
            self.check();
        }
    }

    /// check_converged: the group is Stable at its group epoch; every client is a member owning
    /// exactly its assignment; every partition of every subscribed topic is assigned once, to a
    /// member subscribing to it.
    fn check_converged(&self) {
        let seed = self.seed;
        assert!(self.outstanding.is_empty(), "seed {seed}: unanswered");
        let group = self.part().expect("the group");
        let members: Vec<String> = group
            .members()
            .values()
            .map(|m| {
                format!(
                    "{} {:?} {} {}",
                    m.member_id,
                    m.state,
                    m.member_epoch,
                    set(&m.assigned_partitions).len()
                )
            })
            .collect();
        assert_eq!(
            group.state(),
            ConsumerGroupState::Stable,
            "seed {seed}: epoch {} {members:?} {:?}",
            group.group_epoch(),
            self.clients
                .iter()
                .map(|c| (
                    c.running,
                    c.epoch,
                    c.inflight,
                    c.backoff_until,
                    c.next_heartbeat,
                    c.owned.len()
                ))
                .collect::<Vec<_>>()
        );
        assert_eq!(group.assignment_epoch(), group.group_epoch(), "seed {seed}");
        assert_eq!(group.members().len(), self.clients.len(), "seed {seed}");
        let mut assigned: BTreeMap<Tp, String> = BTreeMap::new();
        for (i, c) in self.clients.iter().enumerate() {
            let id = c.member_id(i);
            let m = group
                .member(&id)
                .unwrap_or_else(|| panic!("seed {seed}: client {i} is not a member"));
            assert_eq!(
                (m.state, m.member_epoch),
                (MemberState::Stable, group.group_epoch()),
                "seed {seed}: member {id}"
            );
            assert!(m.partitions_pending_revocation.is_empty());
            assert_eq!(m.subscribed_topic_names, c.names, "seed {seed}: {id}");
            assert_eq!(m.subscribed_topic_regex, c.regex, "seed {seed}: {id}");
            assert_eq!(
                set(&m.assigned_partitions),
                c.owned,
                "seed {seed}: client {i}"
            );
            for tp in &c.owned {
                let (name, _) = self
                    .topics
                    .iter()
                    .find(|(_, (tid, n))| *tid == tp.0 && tp.1 < *n)
                    .unwrap_or_else(|| panic!("seed {seed}: {id} holds a partition gone"));
                assert!(
                    c.names.contains(name) || (!c.regex.is_empty() && full_match(&c.regex, name)),
                    "seed {seed}: {id} holds {name}, not subscribed"
                );
                assert!(assigned.insert(*tp, id.clone()).is_none());
            }
        }
        for (name, (id, n)) in &self.topics {
            let subscribed = self.clients.iter().any(|c| {
                c.names.contains(name) || (!c.regex.is_empty() && full_match(&c.regex, name))
            });
            for p in 0..*n {
                assert_eq!(
                    assigned.contains_key(&(*id, p)),
                    subscribed,
                    "seed {seed}: {name}-{p}"
                );
            }
        }
    }
}

fn run(seed: u64, steps: usize) -> Sim {
    let mut sim = Sim::new(seed);
    for _ in 0..steps {
        sim.step();
    }
    sim.settle();
    sim.check_converged();
    sim
}

#[test]
fn random_consumer_groups_never_double_assign_and_converge() {
    let mut total = Stats::default();
    for seed in 0..40 {
        let sim = run(seed, 600);
        let s = sim.stats;
        total.heartbeats += s.heartbeats;
        total.revocations += s.revocations;
        total.reloads += s.reloads;
        total.lost_answers += s.lost_answers;
        total.failed_appends += s.failed_appends;
        total.zombies += s.zombies;
        total.topic_changes += s.topic_changes;
        total.max_group_epoch = total.max_group_epoch.max(s.max_group_epoch);
        for (e, n) in s.errors {
            *total.errors.entry(e).or_default() += n;
        }
    }
    if std::env::var("CONSUMER_PROPS_STATS").is_ok() {
        eprintln!("{total:?}");
    }
    // The sequences reach what they are meant to.
    assert!(total.revocations > 0 && total.reloads > 0 && total.lost_answers > 0);
    assert!(total.failed_appends > 0 && total.zombies > 0);
    for e in [
        "FENCED_MEMBER_EPOCH",
        "UNKNOWN_MEMBER_ID",
        "NOT_COORDINATOR",
    ] {
        assert!(total.errors.contains_key(e), "{e} never seen: {total:?}");
    }
}

/// The same seed gives the same run.
#[test]
fn consumer_runs_are_deterministic() {
    let a = run(3, 300);
    let b = run(3, 300);
    assert_eq!(a.answers, b.answers);
    assert_eq!(a.log, b.log);
    assert_eq!(a.stats, b.stats);
}
