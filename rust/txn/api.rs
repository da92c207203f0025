//! The transaction coordinator's inputs and outputs: typed requests (borrowing from the decoded
//! frame), typed responses (owned, in the newest version's shape), the markers it asks the host
//! to write, and the effects a host carries out.
//!
//! [`super::requests`] decodes a request frame into its generated typed body;
//! [`super::responses`] writes a [`TxnResponse`] as the frame of the request's version, with
//! Kafka's version rules (PRODUCER_FENCED answered as INVALID_PRODUCER_EPOCH to versions that
//! predate it, AddPartitionsToTxn's per-topic shape before v4).

use crate::protocol::schema::Message;
pub use crate::protocol::typed::add_offsets_to_txn::{
    AddOffsetsToTxnRequest, AddOffsetsToTxnResponse,
};
pub use crate::protocol::typed::add_partitions_to_txn::{
    AddPartitionsToTxnRequest, AddPartitionsToTxnRequestTopic,
    AddPartitionsToTxnRequestTransaction, AddPartitionsToTxnResponse,
    AddPartitionsToTxnResponseResultsByPartition, AddPartitionsToTxnResponseResultsByTransaction,
    AddPartitionsToTxnResponseTopicResult,
};
pub use crate::protocol::typed::describe_transactions::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, DescribeTransactionsResponseTopic,
    DescribeTransactionsResponseTransactionState,
};
pub use crate::protocol::typed::end_txn::{EndTxnRequest, EndTxnResponse};
pub use crate::protocol::typed::init_producer_id::{InitProducerIdRequest, InitProducerIdResponse};
pub use crate::protocol::typed::list_transactions::{
    ListTransactionsRequest, ListTransactionsResponse, ListTransactionsResponseTransactionState,
};

pub use crate::coordinator::effect::{AppendToken, Token};

/// TXN_API_KEYS are the api keys the transaction coordinator serves: InitProducerId (22),
/// AddPartitionsToTxn (24), AddOffsetsToTxn (25), EndTxn (26), DescribeTransactions (65),
/// ListTransactions (66).
pub const TXN_API_KEYS: [i16; 6] = [22, 24, 25, 26, 65, 66];

/// is_txn_api tells whether `api_key` is one the coordinator serves.
#[inline]
pub fn is_txn_api(api_key: i16) -> bool {
    TXN_API_KEYS.contains(&api_key)
}

/// TxnRequest is a request of a transaction api, its body as generated from its declaration,
/// with its version (for the few rules that depend on it).
#[derive(Debug, Clone, PartialEq)]
pub enum TxnRequest<'a> {
    InitProducerId(i16, InitProducerIdRequest<'a>),
    AddPartitionsToTxn(i16, AddPartitionsToTxnRequest<'a>),
    AddOffsetsToTxn(i16, AddOffsetsToTxnRequest<'a>),
    EndTxn(i16, EndTxnRequest<'a>),
    DescribeTransactions(i16, DescribeTransactionsRequest<'a>),
    ListTransactions(i16, ListTransactionsRequest<'a>),
}

/// TxnResponse is the coordinator's answer, in the newest version's shape: AddPartitionsToTxn
/// answers in `results_by_transaction` (one entry for a request before v4).
#[derive(Debug, Clone, PartialEq)]
pub enum TxnResponse {
    InitProducerId(InitProducerIdResponse<'static>),
    AddPartitionsToTxn(AddPartitionsToTxnResponse<'static>),
    AddOffsetsToTxn(AddOffsetsToTxnResponse<'static>),
    EndTxn(EndTxnResponse<'static>),
    DescribeTransactions(DescribeTransactionsResponse<'static>),
    ListTransactions(ListTransactionsResponse<'static>),
}

impl TxnResponse {
    /// api_key is the Kafka api key of the response.
    pub fn api_key(&self) -> i16 {
        match self {
            TxnResponse::InitProducerId(_) => 22,
            TxnResponse::AddPartitionsToTxn(_) => 24,
            TxnResponse::AddOffsetsToTxn(_) => 25,
            TxnResponse::EndTxn(_) => 26,
            TxnResponse::DescribeTransactions(_) => 65,
            TxnResponse::ListTransactions(_) => 66,
        }
    }

    /// message is the declaration of the response.
    pub fn message(&self) -> &'static Message {
        match self {
            TxnResponse::InitProducerId(_) => InitProducerIdResponse::MESSAGE,
            TxnResponse::AddPartitionsToTxn(_) => AddPartitionsToTxnResponse::MESSAGE,
            TxnResponse::AddOffsetsToTxn(_) => AddOffsetsToTxnResponse::MESSAGE,
            TxnResponse::EndTxn(_) => EndTxnResponse::MESSAGE,
            TxnResponse::DescribeTransactions(_) => DescribeTransactionsResponse::MESSAGE,
            TxnResponse::ListTransactions(_) => ListTransactionsResponse::MESSAGE,
        }
    }

    /// error_code is the response's top-level error (AddPartitionsToTxn: the first partition's
    /// error, DescribeTransactions: the first id's), for tests and logs.
    pub fn error_code(&self) -> i16 {
        match self {
            TxnResponse::InitProducerId(r) => r.error_code,
            TxnResponse::AddPartitionsToTxn(r) => r
                .results_by_transaction
                .first()
                .and_then(|t| t.topic_results.first())
                .and_then(|t| t.results_by_partition.first())
                .map_or(r.error_code, |p| p.partition_error_code),
            TxnResponse::AddOffsetsToTxn(r) => r.error_code,
            TxnResponse::EndTxn(r) => r.error_code,
            TxnResponse::DescribeTransactions(r) => {
                r.transaction_states.first().map_or(0, |s| s.error_code)
            }
            TxnResponse::ListTransactions(r) => r.error_code,
        }
    }
}

/// WriteMarkers asks the host to write the transaction markers of a decided transaction: a
/// COMMIT (`commit`) or ABORT control batch of `producer_id` at `producer_epoch`, stamped with
/// `coordinator_epoch`, to every partition in `partitions` (`__consumer_offsets` ones included,
/// which the group coordinator completes). Once every marker is written the host calls the
/// coordinator's `markers_written(now, transactional_id, producer_id, producer_epoch)`, and the
/// transaction completes. A host that cannot write them retries; after a restart the load asks
/// again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteMarkers {
    pub transactional_id: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub commit: bool,
    pub coordinator_epoch: i32,
    /// partitions are (topic, partition), sorted.
    pub partitions: Vec<(String, i32)>,
}

/// Effect is what the host must do after a call of the transaction coordinator: send a
/// [`TxnResponse`], append records to a partition of `__transaction_state` and report the
/// outcome with `Coordinator::appended(now, token, error)`, or write a transaction's markers
/// ([`WriteMarkers`], in [`Effect::Other`](crate::coordinator::effect::Effect::Other)).
pub type Effect = crate::coordinator::effect::Effect<TxnResponse, WriteMarkers>;
