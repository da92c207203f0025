//! Requests of the transaction apis, straight from their frame: the header read (as the group
//! apis' are) and the body decoded once into its generated typed message.

use super::api::*;
use crate::errors::{Error, Result};
use crate::protocol::primitives::Reader;

pub use crate::group::requests::Header;

/// decode reads a whole transaction request frame (the bytes after the size prefix). Another
/// api is [`Error::InvalidArgument`].
pub fn decode(frame: &[u8]) -> Result<(Header<'_>, TxnRequest<'_>)> {
    let (h, body) = crate::group::requests::header(frame)?;
    let req = body_of(h.api_key, h.version, body)?;
    Ok((h, req))
}

/// body_of decodes the body of a transaction request. Bytes after the body are ignored, as
/// Kafka's broker ignores them.
pub fn body_of(api_key: i16, version: i16, body: &[u8]) -> Result<TxnRequest<'_>> {
    let r = &mut Reader::new(body);
    let v = version;
    Ok(match api_key {
        22 => TxnRequest::InitProducerId(v, InitProducerIdRequest::read(r, v)?),
        24 => TxnRequest::AddPartitionsToTxn(v, AddPartitionsToTxnRequest::read(r, v)?),
        25 => TxnRequest::AddOffsetsToTxn(v, AddOffsetsToTxnRequest::read(r, v)?),
        26 => TxnRequest::EndTxn(v, EndTxnRequest::read(r, v)?),
        65 => TxnRequest::DescribeTransactions(v, DescribeTransactionsRequest::read(r, v)?),
        66 => TxnRequest::ListTransactions(v, ListTransactionsRequest::read(r, v)?),
        _ => {
            return Err(Error::InvalidArgument(format!(
                "api key {api_key} is not served by the transaction coordinator"
            )))
        }
    })
}
