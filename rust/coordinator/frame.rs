//! Frame: a coordinator's response as a whole frame (size prefix, response header, body), the
//! same for every coordinator whatever its responses.

use crate::errors::Result;
use crate::protocol::primitives::Writer;

/// write_frame writes a response frame at the end of `out`: the size prefix, the response
/// header of `correlation_id` (v1, with its tagged section, when the response's version is
/// `flexible`; no coordinator api is ApiVersions, whose header stays v0), then what `body`
/// writes. On an error `out` is left as it was.
pub fn write_frame(
    flexible: bool,
    correlation_id: i32,
    out: &mut Vec<u8>,
    body: impl FnOnce(&mut Writer) -> Result<()>,
) -> Result<()> {
    let start = out.len();
    let mut w = Writer::over(std::mem::take(out));
    w.i32(0);
    w.i32(correlation_id);
    if flexible {
        w.unsigned_varint(0);
    }
    let written = body(&mut w);
    *out = w.into_inner();
    if let Err(e) = written {
        out.truncate(start);
        return Err(e);
    }
    let size = (out.len() - start - 4) as i32;
    out[start..start + 4].copy_from_slice(&size.to_be_bytes());
    Ok(())
}
