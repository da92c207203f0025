//! Responses of the transaction apis, written straight into a frame, with Kafka's version
//! rules that the typed message alone does not know:
//! - PRODUCER_FENCED (KIP-588) is INVALID_PRODUCER_EPOCH for InitProducerId before v4,
//!   AddPartitionsToTxn, AddOffsetsToTxn and EndTxn before v2;
//! - AddPartitionsToTxn before v4 answers its one transaction's topics at the top level;
//! - everything a version lacks is left at its default (each typed message's `fit`).

use super::api::*;
use crate::coordinator::frame;
use crate::errors::{ErrorCode, Result};
use crate::protocol::primitives::Writer;

/// write_frame writes the whole response frame of `response` to a request of `version` with
/// `correlation_id` (size prefix, response header, body) at the end of `out`.
pub fn write_frame(
    response: &TxnResponse,
    version: i16,
    correlation_id: i32,
    out: &mut Vec<u8>,
) -> Result<()> {
    let flexible = response.message().is_flexible(version);
    frame::write_frame(flexible, correlation_id, out, |w| {
        write_body(response, version, w)
    })
}

/// encode_response is the whole response frame as a vector of its own.
pub fn encode_response(
    response: &TxnResponse,
    version: i16,
    correlation_id: i32,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write_frame(response, version, correlation_id, &mut out)?;
    Ok(out)
}

/// fenced is `code` as a request of a version before `since` reads it.
fn fenced(code: i16, version: i16, since: i16) -> i16 {
    if version < since && code == ErrorCode::ProducerFenced.code() {
        ErrorCode::InvalidProducerEpoch.code()
    } else {
        code
    }
}

/// write_body writes the body of `response` at `version`.
pub fn write_body(response: &TxnResponse, version: i16, w: &mut Writer) -> Result<()> {
    let v = version;
    match response {
        TxnResponse::InitProducerId(r) => {
            let mut m = r.clone();
            m.error_code = fenced(m.error_code, v, 4);
            m.fit(v);
            m.write(w, v)
        }
        TxnResponse::AddPartitionsToTxn(r) => {
            let mut m = r.clone();
            for t in &mut m.results_by_transaction {
                for tr in &mut t.topic_results {
                    for p in &mut tr.results_by_partition {
                        p.partition_error_code = fenced(p.partition_error_code, v, 2);
                    }
                }
            }
            if v < 4 {
                m.results_by_topic_v3_and_below = m
                    .results_by_transaction
                    .pop()
                    .map(|t| t.topic_results)
                    .unwrap_or_default();
                m.results_by_transaction.clear();
            }
            m.fit(v);
            m.write(w, v)
        }
        TxnResponse::AddOffsetsToTxn(r) => {
            let mut m = r.clone();
            m.error_code = fenced(m.error_code, v, 2);
            m.fit(v);
            m.write(w, v)
        }
        TxnResponse::EndTxn(r) => {
            let mut m = r.clone();
            m.error_code = fenced(m.error_code, v, 2);
            m.fit(v);
            m.write(w, v)
        }
        TxnResponse::DescribeTransactions(r) => {
            let mut m = r.clone();
            m.fit(v);
            m.write(w, v)
        }
        TxnResponse::ListTransactions(r) => {
            let mut m = r.clone();
            m.fit(v);
            m.write(w, v)
        }
    }
}
