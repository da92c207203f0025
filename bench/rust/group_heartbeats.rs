//! The group coordinator's steady state: 10,000 groups of 10 members brought through join and
//! sync, then heartbeating, driven from Rust on one thread.
//!
//! `cargo bench --bench group_heartbeats`. Three figures per pass over every member, in a shuffled
//! order (heartbeats of a real broker arrive interleaved across groups):
//!
//! - `typed`: `Coordinator::handle_into` with a typed `Heartbeat` (the core alone);
//! - `wire`: each heartbeat as a request frame (v4, flexible) decoded into its typed message by
//!   `group::requests::decode`, handled, and its response frame written by
//!   `group::responses::write_frame` into a reused buffer: what a broker's Rust side does per
//!   heartbeat, Python excluded;
//! - `codec alone`: each frame decoded and a Heartbeat response frame written, the state machine
//!   left out: the Rust side's codec by itself (`wire` minus `typed` says the same, less exactly:
//!   the two differ by the coordinator's cache misses from pass to pass).
//!
//! The codec alone moves by a third between runs of one binary with where the stack and heap
//! fall (address layout: `setarch -R` makes it steady); compare binaries over several
//! alternating runs.
//!
//! Each figure is the best of several passes. The setup (joins, syncs, appends) is timed too.

use std::hint::black_box;
use std::time::Instant;

use kgroup::group::{
    requests, responses, Config, Coordinator, Effect, GroupRequest, GroupResponse,
    HeartbeatRequest, JoinGroupRequest, JoinGroupRequestProtocol, Req, SyncGroupRequest,
    SyncGroupRequestAssignment,
};
use kgroup::protocol::frame::{encode_request, RequestHeader};
use kgroup::protocol::messages::heartbeat;
use kgroup::protocol::value::{Struct, Value};
use kgroup::rng::Rng;

/// GROUPS is 10,000 unless `GROUP_BENCH_GROUPS` says otherwise (a small run for a profiler).
fn groups() -> usize {
    std::env::var("GROUP_BENCH_GROUPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}
const MEMBERS: usize = 10;
const PASSES: usize = 7;

struct Member {
    group: String,
    id: String,
    generation: i32,
}

fn setup(c: &mut Coordinator) -> Vec<Member> {
    let mut out = Vec::new();
    let mut token = 0u64;
    let protocols = vec![JoinGroupRequestProtocol {
        name: "range".into(),
        metadata: (&b"subscription"[..]).into(),
        ..Default::default()
    }];
    let names: Vec<String> = (0..groups()).map(|g| format!("group-{g}")).collect();
    let mut joins = Vec::with_capacity(groups() * MEMBERS);
    for name in &names {
        for _ in 0..MEMBERS {
            token += 1;
            let effects = c.handle(
                0,
                token,
                &GroupRequest::JoinGroup(Req {
                    version: 3,
                    client_id: "bench-client",
                    client_host: "/127.0.0.1",
                    body: JoinGroupRequest {
                        group_id: name.as_str().into(),
                        session_timeout_ms: 45_000,
                        rebalance_timeout_ms: 300_000,
                        protocol_type: "consumer".into(),
                        protocols: protocols.clone(),
                        ..Default::default()
                    },
                }),
            );
            assert!(effects.is_empty(), "joins park during the initial delay");
            joins.push((token, name));
        }
    }
    // The initial delay, re-armed once by the members that followed the first.
    let mut effects = c.tick(3_000);
    effects.extend(c.tick(6_000));
    let mut joined = std::collections::HashMap::new();
    for e in effects {
        if let Effect::Respond {
            token,
            response: GroupResponse::JoinGroup(r),
        } = e
        {
            joined.insert(token, r);
        }
    }
    assert_eq!(joined.len(), groups() * MEMBERS);
    for (token, name) in &joins {
        let r = &joined[token];
        out.push(Member {
            group: name.to_string(),
            id: r.member_id.to_string(),
            generation: r.generation_id,
        });
    }
    for (k, chunk) in out.chunks(MEMBERS).enumerate() {
        let leader = joined[&joins[k * MEMBERS].0].leader.to_string();
        let assignments: Vec<SyncGroupRequestAssignment<'_>> = chunk
            .iter()
            .map(|m| SyncGroupRequestAssignment {
                member_id: m.id.as_str().into(),
                assignment: (&b"assignment"[..]).into(),
                ..Default::default()
            })
            .collect();
        for m in chunk {
            token += 1;
            let is_leader = m.id == leader;
            let effects = c.handle(
                6_000,
                token,
                &GroupRequest::SyncGroup(Req::new(
                    3,
                    SyncGroupRequest {
                        group_id: m.group.as_str().into(),
                        generation_id: m.generation,
                        member_id: m.id.as_str().into(),
                        assignments: if is_leader {
                            assignments.clone()
                        } else {
                            Vec::new()
                        },
                        ..Default::default()
                    },
                )),
            );
            for e in effects {
                if let Effect::Append { token, .. } = e {
                    c.appended(6_000, token, kgroup::errors::ErrorCode::None)
                        .unwrap();
                }
            }
        }
        assert_eq!(
            c.group_state(&chunk[0].group),
            Some(kgroup::group::GroupState::Stable)
        );
    }
    out
}

fn best(mut f: impl FnMut() -> f64) -> f64 {
    (0..PASSES).map(|_| f()).fold(f64::MAX, f64::min)
}

/// typed_pass sends one typed heartbeat per request; returns the seconds it took.
#[inline(never)]
fn typed_pass(
    c: &mut Coordinator,
    r: &Requests,
    now: i64,
    token: &mut u64,
    out: &mut Vec<Effect>,
) -> f64 {
    let t = Instant::now();
    for &(g, i, e, generation) in &r.at {
        *token += 1;
        c.handle_into(
            now,
            *token,
            &GroupRequest::Heartbeat(Req::new(
                4,
                HeartbeatRequest {
                    group_id: r.text[g..i].into(),
                    generation_id: generation,
                    member_id: r.text[i..e].into(),
                    ..Default::default()
                },
            )),
            out,
        );
        debug_assert!(matches!(
            out.last(),
            Some(Effect::Respond { response: GroupResponse::Heartbeat(r), .. })
                if r.error_code == 0
        ));
        out.clear();
    }
    t.elapsed().as_secs_f64()
}

/// wire_pass decodes each request frame, handles it and encodes its response frame; returns the
/// seconds it took.
#[inline(never)]
fn wire_pass(
    c: &mut Coordinator,
    frames: &[u8],
    spans: &[(usize, usize)],
    now: i64,
    token: &mut u64,
    bytes_out: &mut usize,
) -> f64 {
    let mut out = Vec::with_capacity(4);
    let mut buf = Vec::with_capacity(64);
    let t = Instant::now();
    for &(a, b) in spans {
        let f = &frames[a..b];
        let (header, input) = requests::decode(f, "/127.0.0.1").unwrap();
        *token += 1;
        c.handle_into(now, *token, &input, &mut out);
        for e in out.drain(..) {
            if let Effect::Respond { response, .. } = e {
                buf.clear();
                responses::write_frame(&response, header.version, header.correlation_id, &mut buf)
                    .unwrap();
                *bytes_out += buf.len();
            }
        }
    }
    t.elapsed().as_secs_f64()
}

/// codec_pass decodes each request frame and writes a Heartbeat response frame for it, the
/// state machine left out: the codec alone. Returns the seconds it took.
#[inline(never)]
fn codec_pass(frames: &[u8], spans: &[(usize, usize)], bytes_out: &mut usize) -> f64 {
    let mut buf = Vec::with_capacity(64);
    let response = GroupResponse::Heartbeat(Default::default());
    let t = Instant::now();
    for &(a, b) in spans {
        let f = &frames[a..b];
        let (header, input) = requests::decode(f, "/127.0.0.1").unwrap();
        black_box(&input);
        buf.clear();
        responses::write_frame(&response, header.version, header.correlation_id, &mut buf).unwrap();
        *bytes_out += buf.len();
    }
    t.elapsed().as_secs_f64()
}

/// Requests holds heartbeats' strings back to back in the order they are sent, as a broker's
/// receive buffer holds requests: a request's bytes are in cache when it is handled.
struct Requests {
    text: String,
    /// (group id start, member id start, member id end, generation)
    at: Vec<(usize, usize, usize, i32)>,
}

impl Requests {
    fn new(members: &[Member]) -> Requests {
        let mut text = String::new();
        let mut at = Vec::with_capacity(members.len());
        for m in members {
            let g = text.len();
            text.push_str(&m.group);
            let i = text.len();
            text.push_str(&m.id);
            at.push((g, i, text.len(), m.generation));
        }
        Requests { text, at }
    }
}

fn main() {
    let config = Config::from_pairs([("group.initial.rebalance.delay.ms", 3_000)]).unwrap();
    let mut c = Coordinator::with_seed(config, 1);
    let t = Instant::now();
    let mut members = setup(&mut c);
    let setup_s = t.elapsed().as_secs_f64();
    println!(
        "setup: {} groups x {MEMBERS} members joined and synced in {:.2} s",
        groups(),
        setup_s
    );
    let n = members.len();
    let mut now = 6_000i64;
    let mut out = Vec::with_capacity(4);
    let mut token = 1_000_000u64;
    let mut pass = |c: &mut Coordinator, r: &Requests, now: i64, token: &mut u64| {
        typed_pass(c, r, now, token, &mut out)
    };
    let ordered = Requests::new(&members);
    let in_order = best(|| {
        now += 1_000;
        pass(&mut c, &ordered, now, &mut token)
    });
    // Interleave the groups, as heartbeats arrive at a broker.
    let mut rng = Rng::new(Some(3));
    for i in (1..members.len()).rev() {
        let j = (rng.next_u64() % (i as u64 + 1)) as usize;
        members.swap(i, j);
    }
    let shuffled = Requests::new(&members);
    let typed = best(|| {
        now += 1_000;
        pass(&mut c, &shuffled, now, &mut token)
    });

    // Request frames, back to back in one buffer, as a broker reads them off its sockets (each
    // after its size prefix).
    let mut frames = Vec::new();
    let mut spans = Vec::with_capacity(n);
    for (i, m) in members.iter().enumerate() {
        let f = heartbeat::REQUEST.fields;
        let mut body = Struct::defaults(f);
        body.set(f, "group_id", Value::String(m.group.as_str().into()));
        body.set(f, "generation_id", Value::Int32(m.generation));
        body.set(f, "member_id", Value::String(m.id.as_str().into()));
        let header = RequestHeader {
            api_key: 12,
            api_version: 4,
            correlation_id: i as i32,
            client_id: Some("bench-client".into()),
            unknown_tagged: Vec::new(),
        };
        let frame = encode_request(&header, &body).unwrap();
        let start = frames.len();
        frames.extend_from_slice(&frame[4..]);
        spans.push((start, frames.len()));
    }
    let mut bytes_out = 0usize;
    let wire_s = best(|| {
        now += 1_000;
        wire_pass(&mut c, &frames, &spans, now, &mut token, &mut bytes_out)
    });
    // The codec alone is quick: many more passes, so that the best is not a noisy one.
    let codec_s = (0..50)
        .map(|_| codec_pass(&frames, &spans, &mut bytes_out))
        .fold(f64::MAX, f64::min);
    black_box(bytes_out);

    println!("{:<22} {:>14} {:>10}", "case", "heartbeats/s", "ns each");
    for (name, s) in [
        ("typed, group order", in_order),
        ("typed, shuffled", typed),
        ("wire, shuffled", wire_s),
        ("codec alone, shuffled", codec_s),
    ] {
        println!(
            "{name:<22} {:>14.0} {:>10.0}",
            n as f64 / s,
            s * 1e9 / n as f64
        );
    }
    assert_eq!(c.group_count(), groups());
}
