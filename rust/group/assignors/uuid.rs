//! Java's view of a topic id (`org.apache.kafka.common.Uuid`): its hash code and order, which
//! the assignors' results depend on, and its base64 text form, as Kafka prints and parses it.

use std::cmp::Ordering;

use super::TopicId;

fn halves(id: &TopicId) -> (i64, i64) {
    let (msb, lsb) = id.split_at(8);
    (
        i64::from_be_bytes(msb.try_into().unwrap()),
        i64::from_be_bytes(lsb.try_into().unwrap()),
    )
}

/// hash_code is `Uuid.hashCode()`: the two halves xor-ed, then the high and low 32 bits of that
/// xor-ed.
pub fn hash_code(id: &TopicId) -> i32 {
    let (msb, lsb) = halves(id);
    let x = msb ^ lsb;
    ((x >> 32) as i32) ^ (x as i32)
}

/// compare is `Uuid.compareTo`: the most significant halves as signed longs, then the least
/// significant ones. It differs from the bytes' order when a half has its top bit set.
pub fn compare(a: &TopicId, b: &TopicId) -> Ordering {
    halves(a).cmp(&halves(b))
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// format is `Uuid.toString()`: URL-safe base64 of the 16 bytes without padding, 22 characters.
pub fn format(id: &TopicId) -> String {
    let mut out = String::with_capacity(22);
    for chunk in id.chunks(3) {
        let mut b = [0u8; 3];
        b[..chunk.len()].copy_from_slice(chunk);
        let n = u32::from_be_bytes([0, b[0], b[1], b[2]]);
        for k in 0..=chunk.len() {
            out.push(ALPHABET[(n >> (18 - 6 * k) & 63) as usize] as char);
        }
    }
    out
}

/// parse is `Uuid.fromString` for the 22-character form [`format()`] writes; `None` for anything
/// that is not 16 bytes of URL-safe base64. Like Java's decoder it ignores the 4 bits past the
/// 16th byte, so several strings parse to one id (Kafka's tests use such strings).
pub fn parse(text: &str) -> Option<TopicId> {
    let s = text.as_bytes();
    if s.len() != 22 {
        return None;
    }
    let mut bits: u32 = 0;
    let mut nbits = 0;
    let mut out = [0u8; 16];
    let mut len = 0;
    for &c in s {
        let v = ALPHABET.iter().position(|&a| a == c)? as u32;
        bits = bits << 6 | v;
        nbits += 6;
        if nbits >= 8 {
            nbits -= 8;
            out[len] = (bits >> nbits) as u8;
            len += 1;
            bits &= (1 << nbits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_form_round_trips() {
        // The topic ids of Kafka's OptimizedUniformAssignmentBuilderTest: two have nonzero
        // bits past the 16th byte, which Java's decoder drops.
        for (s, canonical) in [
            ("T1-A4s3VTwiI5CTbEp6POw", "T1-A4s3VTwiI5CTbEp6POw"),
            ("T2-B4s3VTwiI5YHbPp6YUe", "T2-B4s3VTwiI5YHbPp6YUQ"),
            ("T3-CU8fVTLCz5YMkLoDQsa", "T3-CU8fVTLCz5YMkLoDQsQ"),
            ("T4-Tw9fVTLCz5HbPp6YQsa", "T4-Tw9fVTLCz5HbPp6YQsQ"),
            ("AAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAAAAAAAA"),
        ] {
            assert_eq!(format(&parse(s).unwrap()), canonical);
        }
        assert_eq!(
            parse("T1-A4s3VTwiI5CTbEp6POw").unwrap(),
            [79, 95, 128, 226, 205, 213, 79, 8, 136, 228, 36, 219, 18, 158, 143, 59]
        );
        assert_eq!(
            parse("AAAAAAAAAAAAAAAAAAAAA+"),
            None,
            "not the URL-safe alphabet"
        );
        assert_eq!(parse("AAAA"), None);
        let mut id = [0u8; 16];
        id[15] = 1;
        assert_eq!(format(&id), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!(parse("AAAAAAAAAAAAAAAAAAAAAQ"), Some(id));
    }

    #[test]
    fn hash_and_order_follow_java() {
        // Uuid(msb=1, lsb=2).hashCode() == 3; Uuid(msb=1<<32, lsb=0).hashCode() == 1.
        let mut a = [0u8; 16];
        a[7] = 1;
        a[15] = 2;
        assert_eq!(hash_code(&a), 3);
        let mut b = [0u8; 16];
        b[3] = 1;
        assert_eq!(hash_code(&b), 1);
        // A negative most significant half sorts first in Java, last by bytes.
        let mut neg = [0u8; 16];
        neg[0] = 0x80;
        assert_eq!(compare(&neg, &a), Ordering::Less);
        assert!(neg > a);
        assert_eq!(compare(&a, &a), Ordering::Equal);
    }
}
