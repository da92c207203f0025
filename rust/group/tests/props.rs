//! Property tests with the crate's seeded Rng: random clients join, sync, heartbeat, leave, commit
//! and fetch over several groups while time moves and appends succeed or fail at random. After
//! every step the coordinator's bookkeeping holds (`Coordinator::check_invariants`: one state per
//! member, the leader a member, counters, timers where they may be), no token is answered twice
//! (the harness fails on it), every deadline is in the future, and no success comes from a stale
//! generation. At the end, with the appends reported and time run on, every request has its
//! answer.

use super::*;
use crate::rng::Rng;
use ErrorCode::*;

const GROUPS: [&str; 3] = ["alpha", "beta", "gamma"];

#[derive(Debug, Default, Clone)]
struct Client {
    group: usize,
    instance: Option<String>,
    member: String,
    generation: i32,
    /// members the leader got in its last JoinGroup response.
    members: Vec<String>,
    join: Option<Token>,
    sync: Option<Token>,
}

struct Sim {
    h: H,
    rng: Rng,
    clients: Vec<Client>,
    /// requests whose success must match the generation they were sent with:
    /// (token, group, generation sent, group generation when sent, admin commit on Empty).
    checks: Vec<(Token, usize, i32, Option<i32>, bool)>,
    sent: Vec<Token>,
}

impl Sim {
    fn new(seed: u64) -> Sim {
        let mut h = H::with(Config {
            initial_rebalance_delay_ms: 30,
            max_size: 5,
            offsets_retention_ms: 20_000,
            offsets_retention_check_interval_ms: 3_000,
            offset_metadata_max_bytes: 8,
            ..config()
        });
        h.hold_appends = true;
        let mut rng = Rng::new(Some(seed));
        let clients = (0..12)
            .map(|i| Client {
                group: i % GROUPS.len(),
                instance: (rng.next_u64() % 3 == 0).then(|| format!("instance-{i}")),
                generation: -1,
                ..Client::default()
            })
            .collect();
        Sim {
            h,
            rng,
            clients,
            checks: Vec::new(),
            sent: Vec::new(),
        }
    }

    fn below(&mut self, n: u64) -> u64 {
        self.rng.next_u64() % n
    }

    /// observe lets clients read the answers to their parked requests.
    fn observe(&mut self) {
        for c in &mut self.clients {
            if let Some(t) = c.join {
                if let Some(GroupResponse::JoinGroup(r)) = self.h.answers.get(&t) {
                    c.join = Option::None;
                    match r.error() {
                        None => {
                            c.member = r.member_id.to_string();
                            c.generation = r.generation_id;
                            c.members = r.members.iter().map(|m| m.member_id.to_string()).collect();
                        }
                        MemberIdRequired => c.member = r.member_id.to_string(),
                        UnknownMemberId | FencedInstanceId => c.member.clear(),
                        _ => {}
                    }
                }
            }
            if let Some(t) = c.sync {
                if self.h.answers.contains_key(&t) {
                    c.sync = Option::None;
                }
            }
        }
    }

    fn step(&mut self) {
        let i = self.below(self.clients.len() as u64) as usize;
        let c = self.clients[i].clone();
        let group = GROUPS[c.group];
        let generation_now = self.h.c.group_generation(group);
        let state_now = self.h.c.group_state(group);
        // A stale or made-up generation now and then.
        let gen = match self.below(10) {
            0 => c.generation - 1,
            1 => c.generation + 1,
            _ => c.generation,
        };
        match self.below(100) {
            0..=19 if c.join.is_none() => {
                let version = [0, 3, 4, 5, 9][self.below(5) as usize];
                let mut j = Join::new(&c.member).group(group).v(version);
                j.session = 300 + self.below(700) as i32;
                j.rebalance = 100 + self.below(2_000) as i32;
                if let Some(inst) = &c.instance {
                    j = j.instance(inst);
                }
                if self.below(8) == 0 {
                    j = j.protocols(&[("roundrobin", b"x"), ("range", b"y")]);
                }
                if self.below(20) == 0 {
                    j = j.protocol_type("connect");
                }
                let t = self.h.join(&j);
                self.sent.push(t);
                self.clients[i].join = Some(t);
            }
            20..=34 if c.sync.is_none() && !c.member.is_empty() => {
                let assignments: Vec<(String, Vec<u8>)> = c
                    .members
                    .iter()
                    .map(|m| (m.clone(), m.as_bytes().to_vec()))
                    .collect();
                let a: Vec<(&str, &[u8])> = assignments
                    .iter()
                    .map(|(m, b)| (m.as_str(), b.as_slice()))
                    .collect();
                let version = [0, 3, 5][self.below(3) as usize];
                let protocol = if self.below(2) == 0 {
                    (Some("consumer"), Some("range"))
                } else {
                    (Option::None, Option::None)
                };
                let t = self.h.sync_full(
                    version,
                    group,
                    gen,
                    &c.member,
                    c.instance.as_deref(),
                    protocol,
                    &a,
                );
                self.sent.push(t);
                self.checks.push((t, c.group, gen, generation_now, false));
                self.clients[i].sync = Some(t);
            }
            35..=59 => {
                let t = self.h.send(&GroupRequest::Heartbeat(Req::new(
                    4,
                    HeartbeatRequest {
                        group_id: group.into(),
                        generation_id: gen,
                        member_id: c.member.as_str().into(),
                        group_instance_id: c.instance.as_deref().map(Into::into),
                        ..Default::default()
                    },
                )));
                self.sent.push(t);
                self.checks.push((t, c.group, gen, generation_now, false));
            }
            60..=64 => {
                let by_instance = c.instance.is_some() && self.below(2) == 0;
                let member = if by_instance { "" } else { c.member.as_str() };
                self.h.leave_in(group, &[(member, c.instance.as_deref())]);
                self.clients[i].member.clear();
            }
            65..=79 => {
                let admin = self.below(4) == 0;
                let (member, g) = if admin {
                    ("", -1)
                } else {
                    (c.member.as_str(), gen)
                };
                let meta = if self.below(10) == 0 {
                    Some("far too long")
                } else {
                    Option::None
                };
                let p = self.below(3) as i32;
                let version = [2, 7, 8, 9][self.below(4) as usize];
                let offset = self.below(1000) as i64;
                let instance = if admin {
                    Option::None
                } else {
                    c.instance.as_deref()
                };
                let t = self.h.commit_full(
                    version,
                    group,
                    member,
                    instance,
                    g,
                    &[("topic", p, offset, meta)],
                );
                self.sent.push(t);
                let empty_admin =
                    g < 0 && matches!(state_now, Option::None | Some(GroupState::Empty));
                self.checks
                    .push((t, c.group, g, generation_now, empty_admin));
            }
            80..=84 => {
                let stable = self.below(2) == 0;
                self.h.fetch_in(group, Option::None, stable);
            }
            85..=87 => match self.below(4) {
                0 => {
                    self.h.delete_groups(&[group]);
                }
                1 => {
                    self.h.delete_offsets(group, &[("topic", &[0, 1])]);
                }
                2 => {
                    self.h.describe(group);
                }
                _ => {
                    self.h.list(&[], &[]);
                }
            },
            88..=93 => {
                let dt = [0, 1, 10, 100, 300, 1_000][self.below(6) as usize];
                self.h.advance(dt);
            }
            _ => {
                if !self.h.appends.is_empty() {
                    let error = [
                        None,
                        None,
                        None,
                        NotLeaderOrFollower,
                        MessageTooLarge,
                        RequestTimedOut,
                    ][self.below(6) as usize];
                    let k = self.below(self.h.appends.len() as u64) as usize;
                    let (t, _, _) = self.h.appends.remove(k).unwrap();
                    let effects = self.h.c.appended(self.h.now, t, error).unwrap();
                    self.h.apply(effects);
                }
            }
        }
        self.observe();
        self.h.c.check_invariants();
        if let Some(d) = self.h.c.next_deadline() {
            assert!(
                d > self.h.now,
                "a deadline at {d}, now {}: {:?}",
                self.h.now,
                self.h.c.runtime.timers.peek()
            );
        }
    }

    /// check_generations: a success of a heartbeat, sync or commit names the generation the group
    /// had when it was sent (a commit with -1 succeeds only in an Empty or new group).
    fn check_generations(&self) {
        for (t, _, gen, group_gen, empty_admin) in &self.checks {
            let ok = match self.h.answers.get(t) {
                Some(GroupResponse::Heartbeat(r)) => r.error() == None,
                Some(GroupResponse::SyncGroup(r)) => r.error() == None,
                Some(GroupResponse::OffsetCommit(r)) => r.topics[0].partitions[0].error() == None,
                _ => false,
            };
            if ok && !empty_admin {
                assert_eq!(
                    Some(*gen),
                    *group_gen,
                    "token {t}: a success from another generation"
                );
            }
        }
    }

    /// drain reports every append and runs time on until nothing is parked.
    fn drain(&mut self) {
        for _ in 0..10 {
            self.h.finish_appends(None);
            self.h.advance(NEW_MEMBER_JOIN_TIMEOUT_MS + 10_000);
            self.h.c.check_invariants();
        }
        self.h.finish_appends(None);
        for t in &self.sent {
            assert!(self.h.answered(*t), "token {t} never answered");
        }
    }
}

#[test]
fn random_operations_keep_the_invariants() {
    for seed in 0..48 {
        let mut sim = Sim::new(seed);
        for _ in 0..1_500 {
            sim.step();
        }
        sim.check_generations();
        sim.drain();
        if std::env::var("GROUP_PROPS_HISTOGRAM").is_ok() {
            let mut seen: BTreeMap<String, usize> = BTreeMap::new();
            for r in sim.h.answers.values() {
                let (api, e) = match r {
                    GroupResponse::JoinGroup(r) => ("join", r.error()),
                    GroupResponse::SyncGroup(r) => ("sync", r.error()),
                    GroupResponse::Heartbeat(r) => ("heartbeat", r.error()),
                    GroupResponse::OffsetCommit(r) => ("commit", r.topics[0].partitions[0].error()),
                    _ => continue,
                };
                *seen.entry(format!("{api} {}", e.name())).or_default() += 1;
            }
            eprintln!("seed {seed}: {seen:?}");
        }
    }
}

/// The same inputs give the same effects.
#[test]
fn runs_are_deterministic() {
    let run = |seed| {
        let mut sim = Sim::new(seed);
        for _ in 0..800 {
            sim.step();
        }
        (sim.h.answers.clone(), sim.h.written.clone())
    };
    assert_eq!(run(7), run(7));
}
