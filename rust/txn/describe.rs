//! DescribeTransactions (65) v0 and ListTransactions (66) v0-1 (v1 adds the duration filter;
//! v2's transactional id pattern is not served).
//!
//! Kafka's `TransactionCoordinator.handleDescribeTransactions` and
//! `TransactionStateManager.listTransactionStates`.

use std::borrow::Cow;
use std::collections::BTreeSet;

use super::api::{
    DescribeTransactionsRequest, DescribeTransactionsResponse, DescribeTransactionsResponseTopic,
    DescribeTransactionsResponseTransactionState, ListTransactionsRequest,
    ListTransactionsResponse, ListTransactionsResponseTransactionState, Token, TxnResponse,
};
use super::coordinator::Coordinator;
use super::state::TxnState;
use crate::errors::ErrorCode;

impl Coordinator {
    pub(super) fn describe_transactions(
        &mut self,
        token: Token,
        r: &DescribeTransactionsRequest<'_>,
    ) {
        let states = r
            .transactional_ids
            .iter()
            .map(|id| self.describe_one(id))
            .collect();
        self.respond(
            token,
            TxnResponse::DescribeTransactions(DescribeTransactionsResponse {
                transaction_states: states,
                ..Default::default()
            }),
        );
    }

    fn describe_one(&self, id: &str) -> DescribeTransactionsResponseTransactionState<'static> {
        let mut s = DescribeTransactionsResponseTransactionState {
            transactional_id: Cow::Owned(id.to_string()),
            ..Default::default()
        };
        let error = if id.is_empty() {
            Some(ErrorCode::InvalidRequest)
        } else if let Some(e) = self.gate(id) {
            Some(e)
        } else {
            match self.txns.get(id) {
                Some(m) if m.state != TxnState::Dead && m.pending != Some(TxnState::Dead) => {
                    let mut topics: Vec<DescribeTransactionsResponseTopic<'static>> = Vec::new();
                    for (t, p) in &m.partitions {
                        match topics.last_mut() {
                            Some(last) if last.topic == t.as_str() => last.partitions.push(*p),
                            _ => topics.push(DescribeTransactionsResponseTopic {
                                topic: Cow::Owned(t.clone()),
                                partitions: vec![*p],
                                ..Default::default()
                            }),
                        }
                    }
                    s.producer_id = m.producer_id;
                    s.producer_epoch = m.producer_epoch;
                    s.transaction_state = Cow::Borrowed(m.state.name());
                    s.transaction_timeout_ms = m.timeout_ms;
                    s.transaction_start_time_ms = m.start_timestamp;
                    s.topics = topics;
                    None
                }
                _ => Some(ErrorCode::TransactionalIdNotFound),
            }
        };
        s.error_code = error.map_or(0, |e| e.code());
        s
    }

    pub(super) fn list_transactions(&mut self, token: Token, r: &ListTransactionsRequest<'_>) {
        let mut resp = ListTransactionsResponse::default();
        if self.runtime.partitions.any_loading() {
            resp.error_code = ErrorCode::CoordinatorLoadInProgress.code();
        } else {
            let mut states = BTreeSet::new();
            for name in &r.state_filters {
                match TxnState::from_name(name) {
                    Some(s) => {
                        states.insert(s);
                    }
                    None => resp
                        .unknown_state_filters
                        .push(Cow::Owned(name.to_string())),
                }
            }
            let now = self.now();
            let pids: BTreeSet<i64> = r.producer_id_filters.iter().copied().collect();
            resp.transaction_states = self
                .txns
                .values()
                .filter(|m| {
                    m.state != TxnState::Dead
                        && self.gate(&m.transactional_id).is_none()
                        && (pids.is_empty() || pids.contains(&m.producer_id))
                        && (r.state_filters.is_empty() || states.contains(&m.state))
                        && (r.duration_filter < 0
                            || now.saturating_sub(m.start_timestamp) > r.duration_filter)
                })
                .map(|m| ListTransactionsResponseTransactionState {
                    transactional_id: Cow::Owned(m.transactional_id.clone()),
                    producer_id: m.producer_id,
                    transaction_state: Cow::Borrowed(m.state.name()),
                    ..Default::default()
                })
                .collect();
        }
        self.respond(token, TxnResponse::ListTransactions(resp));
    }
}
