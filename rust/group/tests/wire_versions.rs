//! Requests and responses of the group apis at every version the codec speaks: request frames
//! read into the coordinator's typed input (`requests`), responses written back in the
//! version's shape (`responses`), checked against the generic codec.

use std::borrow::Cow;

use super::*;
use crate::group::requests::{self, GROUP_API_KEYS};
use crate::group::responses;
use crate::protocol::frame::{decode_response, encode_request, RequestHeader};
use crate::protocol::messages::api;
use crate::protocol::random::Gen;
use crate::protocol::schema::Field;
use crate::protocol::value::{Seq, Struct, Value};
use ErrorCode::*;

fn header(key: i16, version: i16) -> RequestHeader<'static> {
    RequestHeader {
        api_key: key,
        api_version: version,
        correlation_id: 77,
        client_id: Some(Cow::Borrowed("wire-client")),
        unknown_tagged: Vec::new(),
    }
}

/// Random requests of every group api at every version go through the adapter, the coordinator
/// and back: the response frame of each encodes (every field the version lacks is left at its
/// default) and decodes as the version's response with the request's correlation id.
#[test]
fn every_version_of_every_group_api_round_trips() {
    let mut g = Gen::new(5);
    let mut c = Coordinator::with_seed(config(), 1);
    let mut token = 0;
    let mut responses = 0;
    for _ in 0..20 {
        for key in GROUP_API_KEYS {
            let a = api(key).unwrap();
            for v in a.versions().lo..=a.versions().hi {
                let body = g.body(a.request, v);
                let frame = encode_request(&header(key, v), &body).unwrap();
                let input = requests::decode(&frame[4..], "/10.0.0.1").unwrap().1;
                token += 1;
                let mut effects = c.handle(token, token as u64, &input);
                // Complete appends so that parked commits answer too.
                while let Some(pos) = effects
                    .iter()
                    .position(|e| matches!(e, Effect::Append { .. }))
                {
                    let Effect::Append { token: t, .. } = effects.remove(pos) else {
                        unreachable!()
                    };
                    effects.extend(c.appended(token, t, None).unwrap());
                }
                for e in effects {
                    let Effect::Respond { response, .. } = e else {
                        continue;
                    };
                    let version = v;
                    let out = responses::encode_response(&response, version, 77)
                        .unwrap_or_else(|e| panic!("{} v{v}: {e}", a.name));
                    let back = decode_response(response.api_key(), version, &out[4..]).unwrap();
                    assert_eq!(back.correlation_id, 77);
                    responses += 1;
                }
            }
        }
    }
    assert!(responses > 1_000, "{responses}");
}

/// response_body is the body `responses` writes, read back by the generic codec.
fn response_body(r: &GroupResponse, v: i16) -> Struct<'static> {
    let mut w = crate::protocol::primitives::Writer::new();
    responses::write_body(r, v, &mut w).unwrap();
    let bytes: &'static [u8] = Box::leak(w.into_inner().into_boxed_slice());
    let msg = api(r.api_key()).unwrap().response;
    crate::protocol::codec::decode_message(msg, v, bytes).unwrap()
}

fn field(fields: &'static [Field], name: &str) -> usize {
    fields.iter().position(|f| f.name == name).unwrap()
}

fn get<'a>(s: &'a Struct<'a>, fields: &'static [Field], name: &str) -> &'a Value<'a> {
    &s.fields[field(fields, name)]
}

// JoinGroup v0 has no rebalance timeout: the session timeout stands in
// (JoinGroupRequest.maybeOverrideRebalanceTimeout); v4+ makes MEMBER_ID_REQUIRED possible.
#[test]
fn join_group_versions() {
    let a = api(11).unwrap();
    for v in 0..=9 {
        let mut body = Struct::defaults(a.request.fields);
        body.set(a.request.fields, "group_id", Value::String("g".into()));
        body.set(a.request.fields, "session_timeout_ms", Value::Int32(10_000));
        if v >= 1 {
            body.set(
                a.request.fields,
                "rebalance_timeout_ms",
                Value::Int32(60_000),
            );
        }
        let pf = a.request.fields[field(a.request.fields, "protocols")].fields;
        let mut p = Struct::defaults(pf);
        p.set(pf, "name", Value::String("range".into()));
        body.set(
            a.request.fields,
            "protocols",
            Value::Array(Seq::Owned(vec![Value::Struct(p)])),
        );
        body.set(
            a.request.fields,
            "protocol_type",
            Value::String("consumer".into()),
        );
        let frame = encode_request(&header(11, v), &body).unwrap();
        let GroupRequest::JoinGroup(j) = requests::decode(&frame[4..], "/h").unwrap().1 else {
            panic!()
        };
        assert_eq!(j.rebalance_timeout_ms, if v == 0 { 10_000 } else { 60_000 });
        assert_eq!(j.client_id, "wire-client");
        assert_eq!(j.version, v);
        let mut c = Coordinator::with_seed(config(), 1);
        let e = c.handle(0, 1, &GroupRequest::JoinGroup(j));
        let want = if v >= 4 { MemberIdRequired } else { None };
        match &e[..] {
            [Effect::Respond {
                response: GroupResponse::JoinGroup(r),
                ..
            }] => assert_eq!(r.error(), want),
            [] => assert_eq!(want, None, "v{v}: parked"),
            other => panic!("{other:?}"),
        }
    }
}

// JoinGroupResponse: the protocol name is "" before v7 and null for "" from v7; the protocol type
// only from v7; skip_assignment only from v9; member instance ids only from v5.
#[test]
fn join_group_response_shapes() {
    let r = GroupResponse::JoinGroup(join_error("m", UnknownMemberId));
    let f = api(11).unwrap().response.fields;
    for v in 0..=9 {
        let body = response_body(&r, v);
        let name = get(&body, f, "protocol_name");
        if v < 7 {
            assert_eq!(name, &Value::String("".into()), "v{v}");
        } else {
            assert_eq!(name, &Value::Null, "v{v}");
        }
        assert_eq!(get(&body, f, "error_code"), &Value::Int16(25));
        assert_eq!(get(&body, f, "generation_id"), &Value::Int32(-1));
        let frame = responses::encode_response(&r, v, 1).unwrap();
        decode_response(11, v, &frame[4..]).unwrap();
    }
    let ok = GroupResponse::JoinGroup(JoinGroupResponse {
        generation_id: 3,
        protocol_type: Some("consumer".into()),
        protocol_name: Some("range".into()),
        leader: "m".into(),
        skip_assignment: true,
        member_id: "m".into(),
        members: vec![JoinGroupResponseMember {
            member_id: "m".into(),
            group_instance_id: Some("i".into()),
            metadata: (&b"md"[..]).into(),
            ..Default::default()
        }],
        ..Default::default()
    });
    let body = response_body(&ok, 9);
    assert_eq!(get(&body, f, "skip_assignment"), &Value::Bool(true));
    assert_eq!(
        get(&body, f, "protocol_type"),
        &Value::String("consumer".into())
    );
    let body = response_body(&ok, 6);
    assert_eq!(get(&body, f, "protocol_type"), &Value::Null);
}

// LeaveGroupResponse before v3 carries the member's error at the top level.
#[test]
fn leave_group_v0_lifts_the_member_error() {
    let r = GroupResponse::LeaveGroup(LeaveGroupResponse {
        members: vec![LeaveGroupResponseMember {
            member_id: "m".into(),
            error_code: UnknownMemberId.code(),
            ..Default::default()
        }],
        ..Default::default()
    });
    let f = api(13).unwrap().response.fields;
    for v in 0..=2 {
        assert_eq!(
            get(&response_body(&r, v), f, "error_code"),
            &Value::Int16(25)
        );
    }
    let body = response_body(&r, 3);
    assert_eq!(get(&body, f, "error_code"), &Value::Int16(0));
    assert_eq!(get(&body, f, "members").as_array().unwrap().len(), 1);
}

// OffsetFetchResponse: before v2 a group error goes on every partition; v2-7 has a top-level
// error; v8+ one entry per group.
#[test]
fn offset_fetch_response_shapes() {
    let r = GroupResponse::OffsetFetch(OffsetFetchResponse {
        groups: vec![OffsetFetchResponseGroup {
            group_id: "g".into(),
            error_code: CoordinatorLoadInProgress.code(),
            topics: vec![OffsetFetchResponseGroupTopic {
                name: "t".into(),
                partitions: vec![OffsetFetchResponseGroupTopicPartition {
                    partition_index: 0,
                    committed_offset: 5,
                    committed_leader_epoch: 1,
                    metadata: Some("".into()),
                    ..Default::default()
                }],
                ..Default::default()
            }],
            ..Default::default()
        }],
        ..Default::default()
    });
    let f = api(9).unwrap().response.fields;
    let tf = f[field(f, "topics")].fields;
    let pf = tf[field(tf, "partitions")].fields;
    for v in 0..=9 {
        let body = response_body(&r, v);
        let frame = responses::encode_response(&r, v, 1).unwrap();
        decode_response(9, v, &frame[4..]).unwrap();
        if v >= 8 {
            assert_eq!(get(&body, f, "groups").as_array().unwrap().len(), 1);
            continue;
        }
        let topics = get(&body, f, "topics").as_array().unwrap();
        let p = topics[0].as_struct().unwrap().fields[field(tf, "partitions")]
            .as_array()
            .unwrap()[0]
            .as_struct()
            .unwrap();
        let perr = &p.fields[field(pf, "error_code")];
        let poff = &p.fields[field(pf, "committed_offset")];
        if v < 2 {
            assert_eq!((perr, poff), (&Value::Int16(14), &Value::Int64(-1)), "v{v}");
        } else {
            assert_eq!(get(&body, f, "error_code"), &Value::Int16(14), "v{v}");
            assert_eq!(perr, &Value::Int16(0), "v{v}");
        }
    }
}

// OffsetFetch requests: v0-7 name one group (null topics = all, from v2); v8+ several.
#[test]
fn offset_fetch_request_versions() {
    let a = api(9).unwrap();
    let f = a.request.fields;
    for v in 2..=9 {
        let mut body = Struct::defaults(f);
        if v < 8 {
            body.set(f, "group_id", Value::String("g".into()));
            body.set(f, "topics", Value::Null);
        } else {
            let gf = f[field(f, "groups")].fields;
            let mut g1 = Struct::defaults(gf);
            g1.set(gf, "group_id", Value::String("a".into()));
            g1.set(gf, "topics", Value::Null);
            let mut g2 = g1.clone();
            g2.set(gf, "group_id", Value::String("b".into()));
            body.set(
                f,
                "groups",
                Value::Array(Seq::Owned(vec![Value::Struct(g1), Value::Struct(g2)])),
            );
        }
        if v >= 7 {
            body.set(f, "require_stable", Value::Bool(true));
        }
        let frame = encode_request(&header(9, v), &body).unwrap();
        let GroupRequest::OffsetFetch(o) = requests::decode(&frame[4..], "").unwrap().1 else {
            panic!()
        };
        assert_eq!(o.groups.len(), if v < 8 { 1 } else { 2 });
        assert!(o.groups.iter().all(|g| g.topics.is_none()));
        assert_eq!(o.require_stable, v >= 7);
    }
}

// DescribeGroups v3+ reports the authorized operations when asked; before v3 the field does not
// exist. From v6 the unknown group is GROUP_ID_NOT_FOUND (KIP-1043): no operations with an error.
#[test]
fn describe_groups_authorized_operations_by_version() {
    let a = api(15).unwrap();
    let f = a.request.fields;
    for v in 0..=6 {
        let mut body = Struct::defaults(f);
        body.set(
            f,
            "groups",
            Value::Array(Seq::Owned(vec![Value::String("g".into())])),
        );
        if v >= 3 {
            body.set(f, "include_authorized_operations", Value::Bool(true));
        }
        let frame = encode_request(&header(15, v), &body).unwrap();
        let input = requests::decode(&frame[4..], "").unwrap().1;
        let mut c = Coordinator::with_seed(config(), 1);
        let e = c.handle(0, 1, &input);
        let Effect::Respond { response, .. } = &e[0] else {
            panic!()
        };
        let out = responses::encode_response(response, v, 9).unwrap();
        let back = decode_response(15, v, &out[4..]).unwrap();
        let rf = a.response.fields;
        let gf = rf[field(rf, "groups")].fields;
        let g = back.body.fields[field(rf, "groups")].as_array().unwrap()[0]
            .as_struct()
            .unwrap()
            .clone();
        let ops = &g.fields[field(gf, "authorized_operations")];
        let expected = if (3..6).contains(&v) {
            crate::group::api::GROUP_OPERATIONS
        } else {
            i32::MIN
        };
        assert_eq!(ops, &Value::Int32(expected), "v{v}");
        let error = &g.fields[field(gf, "error_code")];
        assert_eq!(error, &Value::Int16(if v >= 6 { 69 } else { 0 }), "v{v}");
        assert_eq!(
            g.fields[field(gf, "group_state")],
            Value::String("Dead".into())
        );
    }
}

// A request of another api, or a body that is not the api's, is refused.
#[test]
fn other_apis_and_bodies_are_refused() {
    let body = crate::protocol::codec::encode_to_vec(
        api(3).unwrap().request,
        1,
        &Struct::defaults(api(3).unwrap().request.fields),
    )
    .unwrap();
    assert!(requests::body_of(3, 1, "", "", &body).is_err());
    assert!(requests::body_of(12, 1, "", "", &body).is_err());
    assert!(requests::is_group_api(47) && !requests::is_group_api(0));
}

// The heartbeat response frame is the generic codec's, byte for byte.
#[test]
fn heartbeat_frames_are_the_codecs() {
    for v in 0..=4 {
        for error in [None, RebalanceInProgress, UnknownMemberId] {
            let r = GroupResponse::Heartbeat(HeartbeatResponse {
                error_code: error.code(),
                ..Default::default()
            });
            let body = response_body(&r, v);
            let generic = crate::protocol::frame::encode_response(12, v, -5, &body).unwrap();
            assert_eq!(responses::encode_response(&r, v, -5).unwrap(), generic);
        }
    }
    assert!(responses::encode_response(
        &GroupResponse::Heartbeat(HeartbeatResponse::default()),
        5,
        0
    )
    .is_err());
}
