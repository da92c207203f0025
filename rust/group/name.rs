//! Name: the key of the coordinator's lookup maps (group ids, member ids, instance ids). A name
//! of up to 54 bytes lives inside the map's own slot, so that finding a group or a member does
//! not chase a pointer to compare keys: on a heartbeat, each chase is a cache miss.

use std::borrow::Borrow;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

const INLINE: usize = 54;

/// Name is an immutable string, inline when short (Kafka's member ids, `client-id` and a UUID,
/// usually are), on the heap otherwise. It hashes and compares as its `str`.
#[derive(Clone)]
pub(crate) enum Name {
    Inline { len: u8, buf: [u8; INLINE] },
    Heap(Box<str>),
}

impl From<&str> for Name {
    fn from(s: &str) -> Name {
        if s.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..s.len()].copy_from_slice(s.as_bytes());
            Name::Inline {
                len: s.len() as u8,
                buf,
            }
        } else {
            Name::Heap(Box::from(s))
        }
    }
}

impl Deref for Name {
    type Target = str;

    #[inline]
    fn deref(&self) -> &str {
        match self {
            // SAFETY: the bytes were copied from a `str` (From<&str>), whole.
            Name::Inline { len, buf } => unsafe {
                std::str::from_utf8_unchecked(&buf[..*len as usize])
            },
            Name::Heap(s) => s,
        }
    }
}

impl Borrow<str> for Name {
    #[inline]
    fn borrow(&self) -> &str {
        self
    }
}

impl Hash for Name {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        (**self).hash(h)
    }
}

impl PartialEq for Name {
    #[inline]
    fn eq(&self, other: &Name) -> bool {
        **self == **other
    }
}

impl Eq for Name {}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::assignors::fxhash::FxMap;

    #[test]
    fn names_find_their_str() {
        let long = "x".repeat(200);
        let mut m: FxMap<Name, u32> = FxMap::default();
        for (i, s) in ["", "g", &"y".repeat(INLINE), &"y".repeat(INLINE + 1), &long]
            .iter()
            .enumerate()
        {
            m.insert(Name::from(*s), i as u32);
            assert_eq!(&*Name::from(*s), *s);
        }
        assert_eq!(m.get(""), Some(&0));
        assert_eq!(m.get("g"), Some(&1));
        assert_eq!(m.get(&*"y".repeat(INLINE + 1)), Some(&3));
        assert_eq!(m.get(long.as_str()), Some(&4));
        assert_eq!(m.get("h"), None);
        assert!(matches!(Name::from("short"), Name::Inline { .. }));
        assert_eq!(std::mem::size_of::<Name>(), 56);
    }
}
