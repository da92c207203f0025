//! response_decode: the first two bytes pick an api and a version, the rest is a response
//! frame. Decoding gives a response or an error, never a panic; a response that decodes
//! re-encodes and decodes to itself. Decoding into an arena gives the same result as decoding
//! on the heap.
#![no_main]

use kgroup::protocol::frame::{decode_response, decode_response_in, encode_response_tagged};
use kgroup::protocol::value::Arena;
use kgroup::protocol::messages::APIS;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let api = &APIS[data[0] as usize % APIS.len()];
    let range = api.versions();
    let version = range.lo + (data[1] as i16) % (range.hi - range.lo + 1);
    let frame = &data[2..];
    let arena = Arena::new();
    let in_arena = decode_response_in(&arena, api.key, version, frame);
    assert_eq!(in_arena.is_ok(), decode_response(api.key, version, frame).is_ok());
    if let Ok(resp) = decode_response(api.key, version, frame) {
        let a = in_arena.expect("decodes in an arena too");
        assert_eq!(a.body, resp.body);
        assert_eq!(a.version, resp.version);
        let again = encode_response_tagged(api.key, resp.version, resp.correlation_id, &resp.unknown_tagged, &resp.body)
            .expect("a decoded response re-encodes");
        let back = decode_response(api.key, resp.version, &again[4..]).expect("a re-encoded response decodes");
        assert_eq!(back.correlation_id, resp.correlation_id);
        assert_eq!(back.unknown_tagged, resp.unknown_tagged);
        assert_eq!(back.body, resp.body);
    }
});
