//! request_decode: any bytes given to the request decoder give a request or an error, never a
//! panic; a request that decodes re-encodes, to its computed size, and decodes to itself.
#![no_main]

use kgroup::protocol::frame::{decode_request, decode_request_header, encode_request, request_size};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = decode_request_header(data);
    if let Ok(req) = decode_request(data) {
        let again = encode_request(&req.header, &req.body).expect("a decoded request re-encodes");
        assert_eq!(request_size(&req.header, &req.body).unwrap() + 4, again.len());
        let back = decode_request(&again[4..]).expect("a re-encoded request decodes");
        assert_eq!(back.header, req.header);
        assert_eq!(back.body, req.body);
    }
});
