//! seed: write a starting corpus for the fuzz targets.
//!
//! `corpus/request_decode/`: every request fixture captured from the real clients, plus random
//! requests of every api and version; `corpus/response_decode/`: random responses of every api
//! and version, each behind the two bytes that select its api and version.

use std::fs;
use std::path::Path;

use kgroup::protocol::frame::{encode_request, encode_response, RequestHeader};
use kgroup::protocol::messages::APIS;
use kgroup::protocol::random::Gen;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let requests = root.join("corpus/request_decode");
    let responses = root.join("corpus/response_decode");
    fs::create_dir_all(&requests).unwrap();
    fs::create_dir_all(&responses).unwrap();
    let fixtures = root.join("../tests/protocol/fixtures");
    let mut n = 0;
    for client in fs::read_dir(&fixtures).unwrap() {
        for f in fs::read_dir(client.unwrap().path()).unwrap() {
            let f = f.unwrap().path();
            fs::copy(&f, requests.join(format!("fixture-{n}"))).unwrap();
            n += 1;
        }
    }
    let mut g = Gen::new(2024);
    for (i, api) in APIS.iter().enumerate() {
        let range = api.versions();
        for v in range.lo..=range.hi {
            for k in 0..3 {
                let header = RequestHeader {
                    api_key: api.key,
                    api_version: v,
                    correlation_id: k,
                    client_id: Some("seed".into()),
                    unknown_tagged: Vec::new(),
                };
                let req = encode_request(&header, &g.body(api.request, v)).unwrap();
                fs::write(requests.join(format!("{}-v{v}-{k}", api.name)), &req[4..]).unwrap();
                let resp = encode_response(api.key, v, k, &g.body(api.response, v)).unwrap();
                let mut data = vec![i as u8, (v - range.lo) as u8];
                data.extend_from_slice(&resp[4..]);
                fs::write(responses.join(format!("{}-v{v}-{k}", api.name)), data).unwrap();
            }
        }
    }
    println!("{n} fixtures and random messages written under {}", root.join("corpus").display());
}
