//! typed_decode: the generated typed decoders against the generic one. The first two bytes pick
//! a message (any request, response or internal-topic record) and a version; the rest is its
//! body. The typed code refuses exactly what the generic codec refuses, never panics, and what
//! both accept re-encodes to the same bytes.
#![no_main]

use kgroup::protocol::codec::{decode_message, encode_to_vec};
use kgroup::protocol::messages::{coordinator_records, APIS};
use kgroup::protocol::schema::Message;
use kgroup::protocol::typed::reencode;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [pick, version, body @ ..] = data else {
        return;
    };
    let messages: Vec<&'static Message> = APIS
        .iter()
        .flat_map(|a| [a.request, a.response])
        .chain(coordinator_records::RECORDS.iter().copied())
        .collect();
    let msg = messages[*pick as usize % messages.len()];
    let span = (msg.valid.hi - msg.valid.lo + 1) as u8;
    let version = msg.valid.lo + (version % span) as i16;
    let typed = reencode(msg.name, version, body).expect("every message has typed code");
    let generic = decode_message(msg, version, body).and_then(|s| encode_to_vec(msg, version, &s));
    match (generic, typed) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        (g, t) => panic!("generic {:?}, typed {:?}", g.map(|_| ()), t.map(|_| ())),
    }
});
