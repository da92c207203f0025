//! request_decode: any bytes given to the request decoder give a request or an error, never a
//! panic; a request that decodes re-encodes, to its computed size, and decodes to itself.
//! Decoding into an arena gives the same result as decoding on the heap.
#![no_main]

use kgroup::protocol::frame::{
    decode_request, decode_request_header, decode_request_in, encode_request, request_size,
};
use kgroup::protocol::value::Arena;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode_request_header(data);
    let arena = Arena::new();
    let in_arena = decode_request_in(&arena, data);
    assert_eq!(in_arena.is_ok(), decode_request(data).is_ok());
    if let Ok(req) = decode_request(data) {
        let a = in_arena.expect("decodes in an arena too");
        assert_eq!(a.header, req.header);
        assert_eq!(a.body, req.body);
        let again = encode_request(&req.header, &req.body).expect("a decoded request re-encodes");
        assert_eq!(request_size(&req.header, &req.body).unwrap() + 4, again.len());
        let back = decode_request(&again[4..]).expect("a re-encoded request decodes");
        assert_eq!(back.header, req.header);
        assert_eq!(back.body, req.body);
    }
});
