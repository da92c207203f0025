//! Tests of the transaction coordinator through its public surface: requests in, effects out,
//! time as an input (nothing sleeps). Each test names the Kafka behaviour or test it pins
//! (`core/src/test/scala/unit/kafka/coordinator/transaction/TransactionCoordinatorTest.scala`,
//! `TransactionStateManagerTest.scala`, the reference's §11.2 checklist).
//!
//! The harness appends at once and reports success unless a test holds the appends, hands out
//! producer ids from 1000 up, and writes markers when a test says so.

use std::borrow::Cow;
use std::collections::{BTreeMap, VecDeque};

use super::*;
use crate::coordinator::effect::Effect as E;
use crate::errors::ErrorCode;
use crate::protocol::typed::add_partitions_to_txn::AddPartitionsToTxnRequestTopic;
use ErrorCode::*;

const TXN: &str = "txn-1";
const TIMEOUT: i32 = 60_000;

struct H {
    c: Coordinator,
    now: i64,
    next_pid: i64,
    handed: Vec<i64>,
    next_token: Token,
    hold: bool,
    held: VecDeque<(AppendToken, i32, Vec<u8>)>,
    /// log is every batch appended successfully, by partition, in order.
    log: BTreeMap<i32, Vec<u8>>,
    markers: Vec<WriteMarkers>,
    auto_markers: bool,
    answers: BTreeMap<Token, TxnResponse>,
}

impl H {
    fn new() -> H {
        H::with(Config::default())
    }

    fn with(config: Config) -> H {
        H {
            c: Coordinator::new(config),
            now: 1_000_000,
            next_pid: 1000,
            handed: Vec::new(),
            next_token: 1,
            hold: false,
            held: VecDeque::new(),
            log: BTreeMap::new(),
            markers: Vec::new(),
            auto_markers: false,
            answers: BTreeMap::new(),
        }
    }

    fn run(&mut self, effects: Vec<Effect>) {
        let mut queue: VecDeque<Effect> = effects.into();
        while let Some(e) = queue.pop_front() {
            match e {
                E::Respond { token, response } => {
                    assert!(
                        self.answers.insert(token, response).is_none(),
                        "token {token} answered twice"
                    );
                }
                E::Append {
                    token,
                    partition,
                    records,
                } => {
                    if self.hold {
                        self.held.push_back((token, partition, records));
                    } else {
                        self.log.entry(partition).or_default().extend(&records);
                        queue.extend(self.c.appended(self.now, token, None).unwrap());
                    }
                }
                E::Other(m) => {
                    if self.auto_markers {
                        queue.extend(self.c.markers_written(
                            self.now,
                            &m.transactional_id,
                            m.producer_id,
                            m.producer_epoch,
                        ));
                    }
                    self.markers.push(m);
                }
            }
        }
        self.c.check_invariants();
    }

    /// release reports the oldest held append with `error`.
    fn release(&mut self, error: ErrorCode) {
        let (token, partition, records) = self.held.pop_front().expect("a held append");
        if error == None {
            self.log.entry(partition).or_default().extend(&records);
        }
        let e = self.c.appended(self.now, token, error).unwrap();
        self.run(e);
    }

    fn send(&mut self, req: TxnRequest<'_>) -> Token {
        let token = self.next_token;
        self.next_token += 1;
        let H {
            c,
            next_pid,
            handed,
            now,
            ..
        } = self;
        let mut supply = || {
            let p = *next_pid;
            *next_pid += 1;
            handed.push(p);
            Ok(p)
        };
        let e = c.handle(*now, token, &req, &mut supply);
        self.run(e);
        token
    }

    fn answer(&self, token: Token) -> Option<&TxnResponse> {
        self.answers.get(&token)
    }

    fn code(&self, token: Token) -> Option<ErrorCode> {
        self.answer(token)
            .map(|r| ErrorCode::for_code(r.error_code()))
    }

    fn init_req(&mut self, id: &str, timeout: i32, pe: Option<(i64, i16)>) -> Token {
        let (producer_id, producer_epoch) = pe.unwrap_or((-1, -1));
        self.send(TxnRequest::InitProducerId(
            4,
            InitProducerIdRequest {
                transactional_id: Some(Cow::Owned(id.to_string())),
                transaction_timeout_ms: timeout,
                producer_id,
                producer_epoch,
                ..Default::default()
            },
        ))
    }

    /// init is InitProducerId's (error, producer id, epoch).
    fn init_with(&mut self, id: &str, pe: Option<(i64, i16)>) -> (ErrorCode, i64, i16) {
        let t = self.init_req(id, TIMEOUT, pe);
        match self.answer(t) {
            Some(TxnResponse::InitProducerId(r)) => (
                ErrorCode::for_code(r.error_code),
                r.producer_id,
                r.producer_epoch,
            ),
            other => panic!("no InitProducerId answer: {other:?}"),
        }
    }

    fn init(&mut self, id: &str) -> (i64, i16) {
        let (e, p, ep) = self.init_with(id, Option::None);
        assert_eq!(e, None);
        (p, ep)
    }

    fn add_req(&mut self, id: &str, pid: i64, epoch: i16, parts: &[(&str, &[i32])]) -> Token {
        self.send(TxnRequest::AddPartitionsToTxn(
            3,
            AddPartitionsToTxnRequest {
                v3_and_below_transactional_id: Cow::Owned(id.to_string()),
                v3_and_below_producer_id: pid,
                v3_and_below_producer_epoch: epoch,
                v3_and_below_topics: topics(parts),
                ..Default::default()
            },
        ))
    }

    fn add(&mut self, id: &str, pid: i64, epoch: i16, parts: &[(&str, &[i32])]) -> ErrorCode {
        let t = self.add_req(id, pid, epoch, parts);
        self.code(t).expect("answered")
    }

    fn end_req(&mut self, id: &str, pid: i64, epoch: i16, commit: bool) -> Token {
        self.send(TxnRequest::EndTxn(
            3,
            EndTxnRequest {
                transactional_id: Cow::Owned(id.to_string()),
                producer_id: pid,
                producer_epoch: epoch,
                committed: commit,
                ..Default::default()
            },
        ))
    }

    fn end(&mut self, id: &str, pid: i64, epoch: i16, commit: bool) -> ErrorCode {
        let t = self.end_req(id, pid, epoch, commit);
        self.code(t).expect("answered")
    }

    fn offsets(&mut self, id: &str, pid: i64, epoch: i16, group: &str) -> ErrorCode {
        let t = self.send(TxnRequest::AddOffsetsToTxn(
            3,
            AddOffsetsToTxnRequest {
                transactional_id: Cow::Owned(id.to_string()),
                producer_id: pid,
                producer_epoch: epoch,
                group_id: Cow::Owned(group.to_string()),
                ..Default::default()
            },
        ));
        self.code(t).expect("answered")
    }

    fn describe(&mut self, id: &str) -> DescribeTransactionsResponseTransactionState<'static> {
        let t = self.send(TxnRequest::DescribeTransactions(
            0,
            DescribeTransactionsRequest {
                transactional_ids: vec![Cow::Owned(id.to_string())],
                ..Default::default()
            },
        ));
        match self.answer(t) {
            Some(TxnResponse::DescribeTransactions(r)) => r.transaction_states[0].clone(),
            other => panic!("{other:?}"),
        }
    }

    fn list(
        &mut self,
        states: &[&str],
        pids: &[i64],
        duration: i64,
    ) -> ListTransactionsResponse<'static> {
        let t = self.send(TxnRequest::ListTransactions(
            1,
            ListTransactionsRequest {
                state_filters: states.iter().map(|s| Cow::Owned(s.to_string())).collect(),
                producer_id_filters: pids.to_vec(),
                duration_filter: duration,
                ..Default::default()
            },
        ));
        match self.answer(t) {
            Some(TxnResponse::ListTransactions(r)) => r.clone(),
            other => panic!("{other:?}"),
        }
    }

    fn state(&self, id: &str) -> Option<TxnState> {
        self.c.transaction(id).map(|m| m.state)
    }

    fn epoch(&self, id: &str) -> i16 {
        self.c.transaction(id).unwrap().producer_epoch
    }

    fn advance(&mut self, ms: i64) {
        self.now += ms;
        let e = self.c.tick(self.now);
        self.run(e);
    }

    /// written reports the last markers asked for as written.
    fn written(&mut self) {
        let m = self.markers.last().expect("markers asked for").clone();
        let e = self.c.markers_written(
            self.now,
            &m.transactional_id,
            m.producer_id,
            m.producer_epoch,
        );
        self.run(e);
    }

    /// ongoing is an id with a transaction on `a`-0.
    fn ongoing(&mut self, id: &str) -> (i64, i16) {
        let (p, e) = self.init(id);
        assert_eq!(self.add(id, p, e, &[("a", &[0])]), None);
        (p, e)
    }
}

fn topics(parts: &[(&str, &[i32])]) -> Vec<AddPartitionsToTxnRequestTopic<'static>> {
    parts
        .iter()
        .map(|(t, ps)| AddPartitionsToTxnRequestTopic {
            name: Cow::Owned(t.to_string()),
            partitions: ps.to_vec(),
            ..Default::default()
        })
        .collect()
}

// -------------------------------------------------------------------------------------------
// InitProducerId

// TransactionCoordinatorTest.shouldInitPidWithEpochZeroForNewTransactionalId
#[test]
fn init_pid_with_epoch_zero_for_a_new_transactional_id() {
    let mut h = H::new();
    assert_eq!(h.init(TXN), (1000, 0));
    assert_eq!(h.state(TXN), Some(TxnState::Empty));
    assert_eq!(h.log.len(), 1, "the Empty record is written");
}

// Checklist 2 and 4: TransactionCoordinatorTest.testValidateTransactionTimeout
#[test]
fn empty_ids_and_bad_timeouts_are_rejected() {
    let mut h = H::new();
    assert_eq!(h.init_with("", Option::None).0, InvalidRequest);
    for timeout in [0, -1, 900_001] {
        let t = h.init_req(TXN, timeout, Option::None);
        assert_eq!(h.code(t), Some(InvalidTransactionTimeout), "{timeout}");
    }
    let t = h.init_req(TXN, 900_000, Option::None);
    assert_eq!(h.code(t), Some(None));
    // KafkaApis: exactly one of the producer id and epoch given.
    assert_eq!(h.init_with(TXN, Some((1000, -1))).0, InvalidRequest);
    assert!(
        h.handed.len() == 1,
        "no producer id spent on rejected requests"
    );
}

// TransactionCoordinatorTest.shouldIncrementEpochAndUpdateMetadataOnHandleInitPidWhenExisting{Empty,CompleteCommit,CompleteAbort}Transaction
#[test]
fn init_bumps_the_epoch_of_an_existing_id_in_empty_or_complete() {
    let mut h = H::new();
    h.auto_markers = true;
    let (p, _) = h.init(TXN);
    assert_eq!(h.init(TXN), (p, 1));
    assert_eq!(h.add(TXN, p, 1, &[("a", &[0])]), None);
    assert_eq!(h.end(TXN, p, 1, true), None);
    assert_eq!(h.state(TXN), Some(TxnState::CompleteCommit));
    assert_eq!(h.init(TXN), (p, 2));
    assert_eq!(h.add(TXN, p, 2, &[("a", &[0])]), None);
    assert_eq!(h.end(TXN, p, 2, false), None);
    assert_eq!(h.state(TXN), Some(TxnState::CompleteAbort));
    assert_eq!(h.init(TXN), (p, 3));
    assert_eq!(h.handed, vec![p]);
}

// TransactionCoordinatorTest.shouldWaitForCommitToCompleteOnHandleInitPidAndExistingTransactionInPrepare{Commit,Abort}State
#[test]
fn init_while_a_transaction_completes_is_concurrent_transactions() {
    for commit in [true, false] {
        let mut h = H::new();
        let (p, e) = h.ongoing(TXN);
        assert_eq!(h.end(TXN, p, e, commit), None);
        assert!(h.state(TXN).unwrap().is_prepare());
        assert_eq!(h.init_with(TXN, Option::None).0, ConcurrentTransactions);
        h.written();
        assert_eq!(h.init(TXN), (p, e + 1));
    }
}

// TransactionCoordinatorTest.shouldAbortTransactionOnHandleInitPidWhenExistingTransactionInOngoingState
#[test]
fn init_fences_and_aborts_an_ongoing_transaction() {
    let mut h = H::new();
    let (p, e) = h.ongoing(TXN);
    assert_eq!(h.init_with(TXN, Option::None).0, ConcurrentTransactions);
    assert_eq!(h.state(TXN), Some(TxnState::PrepareAbort));
    assert_eq!(h.epoch(TXN), e + 1, "the fence bumps the epoch");
    let m = h.markers.last().unwrap().clone();
    assert_eq!(
        (
            m.producer_id,
            m.producer_epoch,
            m.commit,
            m.partitions.clone()
        ),
        (p, e + 1, false, vec![("a".to_string(), 0)])
    );
    // The old producer is fenced.
    assert_eq!(h.end(TXN, p, e, true), ProducerFenced);
    assert_eq!(h.add(TXN, p, e, &[("b", &[0])]), ProducerFenced);
    h.written();
    assert_eq!(h.state(TXN), Some(TxnState::CompleteAbort));
    // The retry bumps again.
    assert_eq!(h.init(TXN), (p, e + 2));
}

// TransactionCoordinatorTest.shouldNotRepeatedlyBumpEpochDueToInitPidDuringOngoingTxnIfAppendToLogFails
#[test]
fn a_failed_fence_does_not_bump_the_epoch_again() {
    let mut h = H::new();
    let (_, e) = h.ongoing(TXN);
    h.hold = true;
    let t = h.init_req(TXN, TIMEOUT, Option::None);
    h.release(NotEnoughReplicas);
    assert_eq!(h.code(t), Some(CoordinatorNotAvailable));
    assert_eq!(h.state(TXN), Some(TxnState::Ongoing));
    assert_eq!(h.epoch(TXN), e + 1);
    let t = h.init_req(TXN, TIMEOUT, Option::None);
    h.release(None);
    assert_eq!(h.code(t), Some(ConcurrentTransactions));
    assert_eq!(h.epoch(TXN), e + 1, "the second fence reuses the epoch");
}

// TransactionCoordinatorTest.shouldGenerateNewProducerIdIfEpochsExhausted
#[test]
fn an_exhausted_epoch_gets_a_new_producer_id() {
    let mut h = H::new();
    let (p, _) = h.init(TXN);
    h.c.txns.get_mut(TXN).unwrap().producer_epoch = i16::MAX - 1;
    assert_eq!(h.init(TXN), (p + 1, 0));
    let m = h.c.transaction(TXN).unwrap();
    assert_eq!((m.prev_producer_id, m.last_producer_epoch), (p, -1));
}

// TransactionCoordinatorTest.testRetryInitProducerIdAfterProducerIdRotation and
// testInitProducerIdWithInvalidEpochAfterProducerIdRotation
#[test]
fn a_retry_after_a_rotation_is_accepted_through_the_previous_producer_id() {
    let mut h = H::new();
    let (p, _) = h.init(TXN);
    h.c.txns.get_mut(TXN).unwrap().producer_epoch = i16::MAX - 1;
    assert_eq!(h.init_with(TXN, Some((p, i16::MAX - 1))), (None, p + 1, 0));
    assert_eq!(
        h.c.transaction(TXN).unwrap().last_producer_epoch,
        i16::MAX - 1
    );
    // The response was lost: the retry names the old id and epoch, and gets the new ones.
    assert_eq!(h.init_with(TXN, Some((p, i16::MAX - 1))), (None, p + 1, 0));
    // A wrong epoch under the old id is fenced.
    assert_eq!(h.init_with(TXN, Some((p, 5))).0, ProducerFenced);
}

// TransactionCoordinatorTest.testInitProducerIdWithCurrentEpochProvided,
// testInitProducerIdStaleCurrentEpochProvided, testFenceProducerWhenMappingExistsWithDifferentProducerId
#[test]
fn kip_360_bumps_from_the_current_epoch_and_fences_others() {
    let mut h = H::new();
    let (p, e) = h.init(TXN);
    assert_eq!(h.init_with(TXN, Some((p, e))), (None, p, e + 1));
    // A retry of that bump: the last epoch gets the current one, no bump.
    assert_eq!(h.init_with(TXN, Some((p, e))), (None, p, e + 1));
    assert_eq!(h.epoch(TXN), e + 1);
    assert_eq!(h.init_with(TXN, Some((p, e + 5))).0, ProducerFenced);
    assert_eq!(h.init_with(TXN, Some((p + 77, e))).0, ProducerFenced);
}

// TransactionCoordinatorTest.shouldGenerateNewProducerIdIfNoStateAndProducerIdAndEpochProvided
#[test]
fn a_producer_id_and_epoch_without_state_get_a_new_producer_id() {
    let mut h = H::new();
    assert_eq!(h.init_with(TXN, Some((55, 3))), (None, 1000, 0));
}

// Checklist 5: not coordinator or loading.
#[test]
fn requests_for_a_loading_or_unloaded_partition_are_refused() {
    let mut h = H::new();
    let part = h.c.partition_for(TXN);
    h.c.load(part, &[], false, 0).unwrap();
    assert_eq!(h.init_with(TXN, Option::None).0, CoordinatorLoadInProgress);
    assert_eq!(
        h.list(&[], &[], -1).error_code,
        CoordinatorLoadInProgress.code()
    );
    assert_eq!(h.describe(TXN).error_code, CoordinatorLoadInProgress.code());
    assert_eq!(h.c.verify(TXN, 1, 0, "a", 0), CoordinatorLoadInProgress);
    let e = h.c.unload(h.now, part);
    h.run(e);
    assert_eq!(h.init_with(TXN, Option::None).0, NotCoordinator);
    assert_eq!(h.end(TXN, 1, 0, true), NotCoordinator);
    assert_eq!(h.describe(TXN).error_code, NotCoordinator.code());
    assert!(h.handed.is_empty());
}

// -------------------------------------------------------------------------------------------
// AddPartitionsToTxn, AddOffsetsToTxn, verification

// Checklist 14 and 15.
#[test]
fn add_partitions_checks_id_producer_and_state() {
    let mut h = H::new();
    assert_eq!(h.add("", 1, 0, &[("a", &[0])]), InvalidRequest);
    assert_eq!(h.add(TXN, 1, 0, &[("a", &[0])]), InvalidProducerIdMapping);
    let (p, e) = h.init(TXN);
    assert_eq!(
        h.add(TXN, p + 1, e, &[("a", &[0])]),
        InvalidProducerIdMapping
    );
    assert_eq!(h.add(TXN, p, e + 1, &[("a", &[0])]), ProducerFenced);
    assert_eq!(h.add(TXN, p, e, &[("a", &[0])]), None);
    assert_eq!(h.end(TXN, p, e, true), None);
    assert_eq!(h.add(TXN, p, e, &[("a", &[0])]), ConcurrentTransactions);
}

// TransactionCoordinatorTest.shouldRespondWithErrorsNoneOnAddPartitionWhenNoErrorsAndPartitionsTheSame
#[test]
fn partitions_already_in_the_transaction_write_nothing() {
    let mut h = H::new();
    let (p, e) = h.ongoing(TXN);
    let appended = h.log.values().map(Vec::len).sum::<usize>();
    h.hold = true;
    assert_eq!(h.add(TXN, p, e, &[("a", &[0])]), None);
    assert!(h.held.is_empty());
    assert_eq!(h.log.values().map(Vec::len).sum::<usize>(), appended);
    // A new one waits on its append, and meanwhile the id has a change pending.
    let t = h.add_req(TXN, p, e, &[("b", &[1])]);
    assert_eq!(h.code(t), Option::None);
    assert_eq!(h.add(TXN, p, e, &[("a", &[0])]), ConcurrentTransactions);
    h.release(None);
    assert_eq!(h.code(t), Some(None));
    assert_eq!(h.c.transaction(TXN).unwrap().partitions.len(), 2);
}

// TransactionCoordinatorTest.shouldRespondWithSuccessOnAddPartitionsWhenStateIsComplete{Commit,Abort}
#[test]
fn adding_after_a_completed_transaction_starts_a_new_one_now() {
    let mut h = H::new();
    h.auto_markers = true;
    let (p, e) = h.ongoing(TXN);
    let first = h.c.transaction(TXN).unwrap().start_timestamp;
    assert_eq!(h.end(TXN, p, e, false), None);
    h.now += 5_000;
    assert_eq!(h.add(TXN, p, e, &[("a", &[1])]), None);
    let m = h.c.transaction(TXN).unwrap();
    assert_eq!(
        (m.state, m.start_timestamp),
        (TxnState::Ongoing, first + 5_000)
    );
}

// Checklist 19: KafkaApis.handleAddPartitionsToTxnRequest's unknown partitions.
#[test]
fn an_unknown_partition_fails_and_the_rest_are_not_attempted() {
    let mut h = H::new();
    h.c.set_topics(Some([("a", 2)]));
    let (p, e) = h.init(TXN);
    let t = h.add_req(TXN, p, e, &[("a", &[0, 2]), ("zz", &[0])]);
    let Some(TxnResponse::AddPartitionsToTxn(r)) = h.answer(t) else {
        panic!()
    };
    let got: Vec<(String, i32, i16)> = r.results_by_transaction[0]
        .topic_results
        .iter()
        .flat_map(|t| {
            t.results_by_partition.iter().map(|p| {
                (
                    t.name.to_string(),
                    p.partition_index,
                    p.partition_error_code,
                )
            })
        })
        .collect();
    assert_eq!(
        got,
        vec![
            ("a".into(), 0, OperationNotAttempted.code()),
            ("a".into(), 2, UnknownTopicOrPartition.code()),
            ("zz".into(), 0, UnknownTopicOrPartition.code()),
        ]
    );
    assert_eq!(h.state(TXN), Some(TxnState::Empty), "nothing added");
}

// KafkaApis.handleAddOffsetsToTxnRequest: the group's __consumer_offsets partition.
#[test]
fn add_offsets_adds_the_groups_offsets_partition() {
    let mut h = H::new();
    let (p, e) = h.init(TXN);
    assert_eq!(h.offsets(TXN, p, e, "my-group"), None);
    let m = h.c.transaction(TXN).unwrap();
    // "my-group" is partition 12 of 50 (reference §2).
    assert_eq!(
        m.partitions.iter().next(),
        Some(&(OFFSETS_TOPIC.to_string(), 12))
    );
    assert_eq!(h.offsets(TXN, p, e + 1, "my-group"), ProducerFenced);
}

// TransactionCoordinatorTest.testVerifyPartitionHandling and
// shouldRespondWithInvalidTxnStateWhenVerifyOnlyAndPartitionNotPresent (KIP-890 part 1)
#[test]
fn verification_answers_without_adding() {
    let mut h = H::new();
    let (p, e) = h.ongoing(TXN);
    assert_eq!(h.c.verify(TXN, p, e, "a", 0), None);
    assert_eq!(h.c.verify(TXN, p, e, "a", 1), TransactionAbortable);
    assert_eq!(h.c.verify(TXN, p, e + 1, "a", 0), ProducerFenced);
    assert_eq!(h.c.verify(TXN, p + 1, e, "a", 0), InvalidProducerIdMapping);
    assert_eq!(h.c.verify("nope", p, e, "a", 0), InvalidProducerIdMapping);
    assert_eq!(h.c.verify("", p, e, "a", 0), InvalidRequest);
    // The batched v4 form.
    let t = h.send(TxnRequest::AddPartitionsToTxn(
        5,
        AddPartitionsToTxnRequest {
            transactions: vec![
                AddPartitionsToTxnRequestTransaction {
                    transactional_id: Cow::Borrowed(TXN),
                    producer_id: p,
                    producer_epoch: e,
                    verify_only: true,
                    topics: topics(&[("a", &[0, 1])]),
                    ..Default::default()
                },
                AddPartitionsToTxnRequestTransaction {
                    transactional_id: Cow::Borrowed("other"),
                    producer_id: 5,
                    producer_epoch: 0,
                    verify_only: true,
                    topics: topics(&[("a", &[0])]),
                    ..Default::default()
                },
            ],
            ..Default::default()
        },
    ));
    let Some(TxnResponse::AddPartitionsToTxn(r)) = h.answer(t) else {
        panic!()
    };
    let codes: Vec<Vec<i16>> = r
        .results_by_transaction
        .iter()
        .map(|t| {
            t.topic_results[0]
                .results_by_partition
                .iter()
                .map(|p| p.partition_error_code)
                .collect()
        })
        .collect();
    assert_eq!(
        codes,
        vec![
            vec![0, TransactionAbortable.code()],
            vec![InvalidProducerIdMapping.code()]
        ]
    );
    assert_eq!(
        h.c.transaction(TXN).unwrap().partitions.len(),
        1,
        "verification adds nothing"
    );
    // Decided: CONCURRENT_TRANSACTIONS.
    assert_eq!(h.end(TXN, p, e, true), None);
    assert_eq!(h.c.verify(TXN, p, e, "a", 0), ConcurrentTransactions);
}

// A batched AddPartitionsToTxn (v4+) that adds to two transactions answers once both appends
// are in.
#[test]
fn a_batch_answers_when_every_transaction_is_written() {
    let mut h = H::new();
    let (p1, e1) = h.init("t1");
    let (p2, e2) = h.init("t2");
    h.hold = true;
    let tx = |id: &'static str, p, e| AddPartitionsToTxnRequestTransaction {
        transactional_id: Cow::Borrowed(id),
        producer_id: p,
        producer_epoch: e,
        topics: topics(&[("a", &[0])]),
        ..Default::default()
    };
    let t = h.send(TxnRequest::AddPartitionsToTxn(
        4,
        AddPartitionsToTxnRequest {
            transactions: vec![tx("t1", p1, e1), tx("t2", p2, e2)],
            ..Default::default()
        },
    ));
    h.release(None);
    assert!(h.answer(t).is_none());
    h.release(NotLeaderOrFollower);
    let Some(TxnResponse::AddPartitionsToTxn(r)) = h.answer(t) else {
        panic!()
    };
    let codes: Vec<i16> = r
        .results_by_transaction
        .iter()
        .map(|t| t.topic_results[0].results_by_partition[0].partition_error_code)
        .collect();
    assert_eq!(codes, vec![0, NotCoordinator.code()]);
}

// -------------------------------------------------------------------------------------------
// EndTxn

// TransactionCoordinatorTest.shouldReturnInvalidEpochOnEndTxnWhenEpochIs{Larger,Smaller} and
// the unknown id / producer id cases.
#[test]
fn end_txn_checks_id_producer_and_epoch() {
    let mut h = H::new();
    assert_eq!(h.end("", 1, 0, true), InvalidRequest);
    assert_eq!(h.end(TXN, 1, 0, true), InvalidProducerIdMapping);
    let (p, e) = h.ongoing(TXN);
    assert_eq!(h.end(TXN, p + 1, e, true), InvalidProducerIdMapping);
    assert_eq!(h.end(TXN, p, e + 1, true), ProducerFenced);
    h.init_with(TXN, Option::None); // fences: epoch e+1
    assert_eq!(h.end(TXN, p, e, false), ProducerFenced);
}

// TransactionCoordinatorTest.shouldAppendPrepare{Commit,Abort}ToLogOnEndTxnWhenStatusIsOngoingAndResultIs{Commit,Abort}
// and shouldCompleteAppendToLogOnEndTxnWhenSendMarkersSucceed
#[test]
fn end_txn_prepares_answers_then_completes_after_the_markers() {
    for commit in [true, false] {
        let mut h = H::new();
        let (p, e) = h.init(TXN);
        assert_eq!(h.add(TXN, p, e, &[("b", &[1]), ("a", &[2, 0])]), None);
        assert_eq!(h.offsets(TXN, p, e, "g"), None);
        h.hold = true;
        let t = h.end_req(TXN, p, e, commit);
        assert_eq!(h.code(t), Option::None, "answered once durable");
        assert!(h.markers.is_empty());
        h.release(None);
        assert_eq!(h.code(t), Some(None));
        let m = h.markers.last().unwrap().clone();
        let offsets = crate::coordinator::partition_for("g", 50);
        assert_eq!(
            m,
            WriteMarkers {
                transactional_id: TXN.into(),
                producer_id: p,
                producer_epoch: e,
                commit,
                coordinator_epoch: 0,
                partitions: vec![
                    (OFFSETS_TOPIC.into(), offsets),
                    ("a".into(), 0),
                    ("a".into(), 2),
                    ("b".into(), 1)
                ],
            }
        );
        // Retries while the markers are out.
        assert_eq!(h.end(TXN, p, e, commit), ConcurrentTransactions);
        assert_eq!(h.end(TXN, p, e, !commit), InvalidTxnState);
        h.written();
        assert!(h.held.len() == 1, "the Complete record");
        h.release(None);
        let want = if commit {
            TxnState::CompleteCommit
        } else {
            TxnState::CompleteAbort
        };
        assert_eq!(h.state(TXN), Some(want));
        assert!(h.c.transaction(TXN).unwrap().partitions.is_empty());
        // TransactionCoordinatorTest.testEndTxnWhenStatusIsCompleteCommitAndResultIsCommitInV1 and
        // shouldReturnInvalidTxnRequestOnEndTxnRequestWhenStatusIsComplete*
        h.hold = false;
        assert_eq!(h.end(TXN, p, e, commit), None);
        assert_eq!(h.end(TXN, p, e, !commit), InvalidTxnState);
    }
}

// TransactionCoordinatorTest.TestEndTxnRequestWhenEmptyTransactionStateForAbortInV1
#[test]
fn end_txn_without_a_transaction_is_invalid_txn_state() {
    let mut h = H::new();
    let (p, e) = h.init(TXN);
    assert_eq!(h.end(TXN, p, e, false), InvalidTxnState);
    assert_eq!(h.end(TXN, p, e, true), InvalidTxnState);
}

// TransactionCoordinatorTest.testPendingStateNotResetOnRetryAppend and
// TransactionStateManagerTest.testAppendFailTo*Error
#[test]
fn append_errors_map_and_the_complete_record_is_retried() {
    let mut h = H::new();
    let (p, e) = h.ongoing(TXN);
    h.hold = true;
    for (storage, answered) in [
        (NotEnoughReplicas, CoordinatorNotAvailable),
        (RequestTimedOut, CoordinatorNotAvailable),
        (NotLeaderOrFollower, NotCoordinator),
        (KafkaStorageError, NotCoordinator),
        (MessageTooLarge, UnknownServerError),
        (RecordListTooLarge, UnknownServerError),
        (CorruptMessage, CorruptMessage),
    ] {
        let t = h.end_req(TXN, p, e, true);
        h.release(storage);
        assert_eq!(h.code(t), Some(answered), "{storage:?}");
        assert_eq!(h.state(TXN), Some(TxnState::Ongoing));
        assert!(h.c.transaction(TXN).unwrap().pending.is_none());
    }
    let t = h.end_req(TXN, p, e, true);
    h.release(None);
    assert_eq!(h.code(t), Some(None));
    h.written();
    h.release(NotEnoughReplicas);
    assert_eq!(
        h.c.transaction(TXN).unwrap().pending,
        Some(TxnState::CompleteCommit)
    );
    assert_eq!(h.held.len(), 1, "retried");
    h.release(None);
    assert_eq!(h.state(TXN), Some(TxnState::CompleteCommit));
}

// -------------------------------------------------------------------------------------------
// Timeouts and expiry

// TransactionCoordinatorTest.shouldAbortExpiredTransactionsInOngoingStateAndBumpEpoch and
// shouldOnlyConsiderTransactionsInTheOngoingStateToAbort
#[test]
fn timed_out_transactions_are_aborted_with_a_bumped_epoch() {
    let mut h = H::new();
    let (p, e) = h.ongoing(TXN);
    let (p2, e2) = h.init("idle");
    // Not yet: the timeout counts from the first partition.
    h.advance(TIMEOUT as i64 - 1);
    assert_eq!(h.state(TXN), Some(TxnState::Ongoing));
    h.advance(10_000);
    assert_eq!(h.state(TXN), Some(TxnState::PrepareAbort));
    assert_eq!(h.epoch(TXN), e + 1);
    let m = h.markers.last().unwrap();
    assert_eq!(
        (m.producer_id, m.producer_epoch, m.commit),
        (p, e + 1, false)
    );
    h.written();
    assert_eq!(h.state(TXN), Some(TxnState::CompleteAbort));
    // The producer is fenced (TV1).
    assert_eq!(h.end(TXN, p, e, true), ProducerFenced);
    assert_eq!(h.c.transaction("idle").unwrap().producer_epoch, e2);
    assert_eq!(h.c.transaction("idle").unwrap().producer_id, p2);
}

// TransactionCoordinatorTest.shouldNotAbortExpiredTransactionsThatHaveAPendingStateTransition and
// shouldNotBumpEpochWhenAbortingExpiredTransactionIfAppendToLogFails
#[test]
fn a_timed_out_transaction_with_a_change_pending_waits_and_a_failed_abort_does_not_bump_twice() {
    let mut h = H::new();
    let (p, e) = h.ongoing(TXN);
    h.hold = true;
    let t = h.add_req(TXN, p, e, &[("b", &[0])]);
    h.advance(TIMEOUT as i64 + 10_000);
    assert_eq!(h.held.len(), 1, "no abort while a change is pending");
    h.release(None);
    assert_eq!(h.code(t), Some(None));
    h.advance(10_000);
    assert_eq!(h.epoch(TXN), e + 1);
    h.release(NotEnoughReplicas);
    assert_eq!(h.state(TXN), Some(TxnState::Ongoing));
    h.advance(10_000);
    assert_eq!(h.epoch(TXN), e + 1, "the failed fence's epoch is reused");
    h.release(None);
    assert_eq!(h.state(TXN), Some(TxnState::PrepareAbort));
}

// TransactionStateManagerTest.shouldRemove{Empty,CompleteCommit,CompleteAbort}ExpiredTransactionalIds,
// shouldNotRemove{Ongoing,PrepareCommit,PrepareAbort}TransactionalIds
#[test]
fn idle_ids_expire_with_a_tombstone_only_without_a_transaction() {
    let mut h = H::with(Config {
        id_expiration_ms: 100_000,
        remove_interval_ms: 50_000,
        ..Config::default()
    });
    h.auto_markers = true;
    h.init("empty");
    let (p, e) = h.ongoing("committed");
    assert_eq!(h.end("committed", p, e, true), None);
    let (p, e) = h.ongoing("aborted");
    assert_eq!(h.end("aborted", p, e, false), None);
    h.auto_markers = false;
    h.ongoing("ongoing");
    let (p, e) = h.ongoing("prepared");
    assert_eq!(h.end("prepared", p, e, true), None);
    // Timed-out transactions would be aborted meanwhile; keep them open for this test.
    for id in ["ongoing", "prepared"] {
        h.c.txns.get_mut(id).unwrap().timeout_ms = i32::MAX;
    }
    h.advance(99_000);
    assert_eq!(h.c.transaction_count(), 5, "not idle long enough yet");
    h.advance(50_000);
    let mut left: Vec<&str> = h.c.txns.keys().map(String::as_str).collect();
    left.sort();
    assert_eq!(left, vec!["ongoing", "prepared"]);
    // An expired id starts again with a new producer id.
    let (p, e) = h.init("empty");
    assert_eq!((p, e), (*h.handed.last().unwrap(), 0));
}

// TransactionStateManagerTest.shouldNotRemoveExpiredTransactionalIdsIfLogAppendFails
#[test]
fn a_failed_tombstone_keeps_the_id() {
    let mut h = H::with(Config {
        id_expiration_ms: 1_000,
        remove_interval_ms: 5_000,
        ..Config::default()
    });
    h.init(TXN);
    h.hold = true;
    h.advance(5_000);
    assert_eq!(h.c.transaction(TXN).unwrap().pending, Some(TxnState::Dead));
    assert_eq!(h.describe(TXN).error_code, TransactionalIdNotFound.code());
    h.release(NotEnoughReplicas);
    assert_eq!(h.state(TXN), Some(TxnState::Empty));
    assert!(h.c.transaction(TXN).unwrap().pending.is_none());
    h.advance(5_000);
    h.release(None);
    assert_eq!(h.state(TXN), Option::None);
}

#[test]
fn the_timers_are_due_at_their_intervals() {
    let mut h = H::new();
    assert_eq!(h.c.next_deadline(), Option::None);
    h.init(TXN);
    assert_eq!(h.c.next_deadline(), Some(h.now + 10_000));
    h.advance(10_000);
    assert_eq!(h.c.next_deadline(), Some(h.now + 10_000));
}

// -------------------------------------------------------------------------------------------
// Describe and list

// TransactionCoordinatorTest.testDescribeTransactions* (checklist 31)
#[test]
fn describe_transactions_reports_kafkas_fields() {
    let mut h = H::new();
    assert_eq!(h.describe("").error_code, InvalidRequest.code());
    assert_eq!(
        h.describe("unknown").error_code,
        TransactionalIdNotFound.code()
    );
    let (p, e) = h.init(TXN);
    let d = h.describe(TXN);
    assert_eq!(
        (
            d.error_code,
            &*d.transaction_state,
            d.transaction_start_time_ms
        ),
        (0, "Empty", -1)
    );
    h.add(TXN, p, e, &[("b", &[1]), ("a", &[3, 1])]);
    let d = h.describe(TXN);
    assert_eq!(
        (
            &*d.transaction_state,
            d.producer_id,
            d.producer_epoch,
            d.transaction_timeout_ms,
            d.transaction_start_time_ms
        ),
        ("Ongoing", p, e, TIMEOUT, h.now)
    );
    let topics: Vec<(String, Vec<i32>)> = d
        .topics
        .iter()
        .map(|t| (t.topic.to_string(), t.partitions.clone()))
        .collect();
    assert_eq!(
        topics,
        vec![("a".into(), vec![1, 3]), ("b".into(), vec![1])]
    );
}

// TransactionStateManagerTest.testListTransactionsFiltering
#[test]
fn list_transactions_filters_by_state_producer_and_duration() {
    let mut h = H::new();
    let (p1, _) = h.ongoing("t1");
    h.now += 1_000;
    let (p2, _) = h.init("t2");
    h.now += 1_000;
    let names = |r: &ListTransactionsResponse<'_>| -> Vec<String> {
        r.transaction_states
            .iter()
            .map(|s| s.transactional_id.to_string())
            .collect()
    };
    assert_eq!(names(&h.list(&[], &[], -1)), vec!["t1", "t2"]);
    let r = h.list(&["Ongoing", "Bogus"], &[], -1);
    assert_eq!(
        (names(&r), r.unknown_state_filters.clone()),
        (vec!["t1".to_string()], vec![Cow::Borrowed("Bogus")])
    );
    assert!(names(&h.list(&["Bogus"], &[], -1)).is_empty());
    assert_eq!(names(&h.list(&[], &[p2], -1)), vec!["t2"]);
    assert_eq!(
        names(&h.list(&[], &[p1, p2], 1_500)),
        vec!["t1", "t2"],
        "t2's start is -1"
    );
    assert_eq!(
        names(&h.list(&["Ongoing"], &[], 2_000)),
        Vec::<String>::new()
    );
    assert_eq!(
        h.list(&["Ongoing"], &[], 1_999).transaction_states[0].transaction_state,
        "Ongoing"
    );
}

// -------------------------------------------------------------------------------------------
// Wire versions

// KafkaApis: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before InitProducerId v4,
// AddPartitionsToTxn, AddOffsetsToTxn and EndTxn v2; AddPartitionsToTxn v0-3 answers per topic.
#[test]
fn old_versions_read_producer_fenced_as_invalid_producer_epoch() {
    use crate::protocol::primitives::Reader;
    let body = |frame: &[u8], flexible: bool| -> Vec<u8> {
        // size, correlation id, (tagged section)
        frame[8 + flexible as usize..].to_vec()
    };
    let fenced = ProducerFenced.code();
    let end = TxnResponse::EndTxn(EndTxnResponse {
        error_code: fenced,
        ..Default::default()
    });
    for (v, want) in [
        (0, InvalidProducerEpoch),
        (1, InvalidProducerEpoch),
        (2, ProducerFenced),
        (4, ProducerFenced),
    ] {
        let f = responses::encode_response(&end, v, 7).unwrap();
        let b = body(&f, v >= 3);
        let r = EndTxnResponse::read(&mut Reader::new(&b), v).unwrap();
        assert_eq!(r.error_code, want.code(), "EndTxn v{v}");
    }
    let init = TxnResponse::InitProducerId(InitProducerIdResponse {
        error_code: fenced,
        ..Default::default()
    });
    for (v, want) in [(3, InvalidProducerEpoch), (4, ProducerFenced)] {
        let f = responses::encode_response(&init, v, 7).unwrap();
        let b = body(&f, v >= 2);
        let r = InitProducerIdResponse::read(&mut Reader::new(&b), v).unwrap();
        assert_eq!(r.error_code, want.code(), "InitProducerId v{v}");
    }
    let mut h = H::new();
    let (p, e) = h.init(TXN);
    let t = h.add_req(TXN, p, e + 1, &[("a", &[0])]);
    let resp = h.answer(t).unwrap().clone();
    for (v, want) in [(1, InvalidProducerEpoch), (3, ProducerFenced)] {
        let f = responses::encode_response(&resp, v, 7).unwrap();
        let b = body(&f, v >= 3);
        let r = AddPartitionsToTxnResponse::read(&mut Reader::new(&b), v).unwrap();
        assert!(r.results_by_transaction.is_empty());
        assert_eq!(
            r.results_by_topic_v3_and_below[0].results_by_partition[0].partition_error_code,
            want.code(),
            "v{v}"
        );
    }
}

// A request frame decodes into its typed request; another api is refused.
#[test]
fn frames_decode_into_requests() {
    use crate::protocol::primitives::Writer;
    let req = EndTxnRequest {
        transactional_id: Cow::Borrowed("t"),
        producer_id: 5,
        producer_epoch: 2,
        committed: true,
        ..Default::default()
    };
    let mut w = Writer::with_capacity(64);
    w.i16(26);
    w.i16(1);
    w.i32(9);
    w.i16(1);
    w.buf.push(b'c');
    req.write(&mut w, 1).unwrap();
    let frame = w.into_inner();
    let (hd, r) = requests::decode(&frame).unwrap();
    assert_eq!((hd.api_key, hd.version, hd.correlation_id), (26, 1, 9));
    assert_eq!(r, TxnRequest::EndTxn(1, req));
    let mut other = frame.clone();
    other[1] = 12; // Heartbeat v1
    assert!(requests::decode(&other).is_err());
}

// -------------------------------------------------------------------------------------------
// Loading

// TransactionStateManagerTest.shouldWriteTxnMarkersForTransactionInPrepared{Commit,Abort}State,
// testIgnoreUnknownRecordType, and a tombstone deletes.
#[test]
fn a_load_rebuilds_the_state_and_decided_transactions_ask_for_their_markers_again() {
    let mut h = H::with(Config {
        num_partitions: 1,
        id_expiration_ms: 100_000,
        remove_interval_ms: 1_000_000,
        ..Config::default()
    });
    h.auto_markers = true;
    let (p, e) = h.ongoing("committed");
    assert_eq!(h.end("committed", p, e, true), None);
    h.auto_markers = false;
    h.ongoing("ongoing");
    let (p, e) = h.ongoing("prepared");
    assert_eq!(h.end("prepared", p, e, false), None);
    h.init("gone");
    // Expire "gone" by hand: a tombstone in the log.
    let mut log = h.log[&0].clone();
    log.extend(crate::coordinator::appends::batch(
        h.now,
        vec![(records::key("gone").unwrap(), Option::None)],
    ));
    // A record of another type is skipped.
    log.extend(crate::coordinator::appends::batch(
        h.now,
        vec![(vec![0, 9, 1, 2], Some(vec![1]))],
    ));
    let mut fresh = Coordinator::new(h.c.config().clone());
    let stats = fresh.load(0, &log, true, 7).unwrap();
    assert_eq!((stats.transactions, stats.unknown), (3, 1));
    for id in ["committed", "ongoing", "prepared"] {
        let (a, b) = (h.c.transaction(id).unwrap(), fresh.transaction(id).unwrap());
        assert_eq!(
            (
                a.producer_id,
                a.producer_epoch,
                a.state,
                &a.partitions,
                a.start_timestamp,
                a.timeout_ms
            ),
            (
                b.producer_id,
                b.producer_epoch,
                b.state,
                &b.partitions,
                b.start_timestamp,
                b.timeout_ms
            ),
            "{id}"
        );
        assert_eq!(b.last_producer_epoch, -1, "not persisted");
    }
    assert!(fresh.transaction("gone").is_none());
    assert_eq!(fresh.next_deadline(), Some(i64::MIN), "markers queued");
    let effects = fresh.tick(h.now);
    let markers: Vec<WriteMarkers> = effects
        .into_iter()
        .filter_map(|e| match e {
            E::Other(m) => Some(m),
            _ => Option::None,
        })
        .collect();
    assert_eq!(markers.len(), 1);
    assert_eq!(
        (
            &*markers[0].transactional_id,
            markers[0].commit,
            markers[0].coordinator_epoch
        ),
        ("prepared", false, 7)
    );
    // They complete as before the restart.
    let e = fresh.markers_written(h.now, "prepared", p, e);
    assert!(matches!(e.as_slice(), [E::Append { .. }]));
    // The Ongoing one is aborted at its timeout, counted from its persisted start.
    let mut h2 = H::with(h.c.config().clone());
    h2.c = fresh;
    h2.now = h.now;
    h2.run(e);
    assert_eq!(h2.state("prepared"), Some(TxnState::CompleteAbort));
    h2.advance(TIMEOUT as i64 + 10_000);
    assert_eq!(h2.state("ongoing"), Some(TxnState::PrepareAbort));
}

// A load replaces what the coordinator held for the partition; appends still out for the old
// state change nothing and answer NOT_COORDINATOR.
#[test]
fn appends_of_an_unloaded_partition_answer_not_coordinator() {
    let mut h = H::new();
    let (p, e) = h.init(TXN);
    h.hold = true;
    let t = h.add_req(TXN, p, e, &[("a", &[0])]);
    let part = h.c.partition_for(TXN);
    let ef = h.c.unload(h.now, part);
    h.run(ef);
    h.release(None);
    assert_eq!(h.code(t), Some(NotCoordinator));
    assert_eq!(h.c.transaction_count(), 0);
}

// -------------------------------------------------------------------------------------------
// Properties

/// Random producers init, add, commit, abort and re-init over a few ids while time moves,
/// appends fail at random and markers come back late. After every step the metadata holds
/// together; an id's (producer id, epoch) never goes back; no producer id is handed out
/// twice
/// (nor shared by two ids); every request is answered once everything is reported.
#[test]
fn random_request_sequences_keep_the_state_valid() {
    use crate::rng::Rng;
    const IDS: [&str; 3] = ["x", "y", "z"];
    // How many runs decided a transaction, and saw an id start again with a new producer id.
    let (mut decided, mut renewed) = (0, 0);
    for seed in 0..40u64 {
        let mut rng = Rng::new(Some(seed));
        let mut h = H::with(Config {
            num_partitions: 3,
            // Ids expire within a run, and come back with new producer ids.
            id_expiration_ms: 40_000,
            remove_interval_ms: 15_000,
            ..Config::default()
        });
        h.hold = true;
        let mut known: BTreeMap<&str, (i64, i16)> = BTreeMap::new();
        let mut last: BTreeMap<&str, (i64, i16)> = BTreeMap::new();
        let mut owners: BTreeMap<i64, &str> = BTreeMap::new();
        let mut sent = Vec::new();
        for _ in 0..300 {
            let id = IDS[(rng.next_u64() % 3) as usize];
            let (p, e) = known.get(id).copied().unwrap_or((1000, 0));
            // Sometimes a stale or wrong epoch.
            let e = if rng.next_u64() % 8 == 0 {
                e.saturating_sub(1)
            } else {
                e
            };
            match rng.next_u64() % 9 {
                0 | 1 => sent.push(h.init_req(id, TIMEOUT, Option::None)),
                2 => sent.push(h.init_req(id, TIMEOUT, Some((p, e)))),
                3 | 4 => {
                    let part = (rng.next_u64() % 3) as i32;
                    sent.push(h.add_req(id, p, e, &[("a", &[part])]));
                }
                5 => sent.push(h.end_req(id, p, e, rng.next_u64() % 2 == 0)),
                6 => {
                    let n = (rng.next_u64() % 3) as usize;
                    for _ in 0..n.min(h.held.len()) {
                        let err = if rng.next_u64() % 5 == 0 {
                            NotEnoughReplicas
                        } else {
                            None
                        };
                        h.release(err);
                    }
                }
                7 => {
                    if let Some(m) = h.markers.pop() {
                        decided += 1;
                        let ef = h.c.markers_written(
                            h.now,
                            &m.transactional_id,
                            m.producer_id,
                            m.producer_epoch,
                        );
                        h.run(ef);
                    }
                }
                _ => h.advance((rng.next_u64() % 20_000) as i64),
            }
            for t in &sent {
                if let Some(TxnResponse::InitProducerId(r)) = h.answer(*t) {
                    if r.error_code == 0 {
                        let id = IDS.iter().copied().find(|i| {
                            h.c.transaction(i).is_some_and(|m| {
                                m.producer_id == r.producer_id
                                    && m.producer_epoch == r.producer_epoch
                            })
                        });
                        if let Some(id) = id {
                            known.insert(id, (r.producer_id, r.producer_epoch));
                        }
                    }
                }
            }
            // A producer id belongs to one transactional id only, ever.
            for id in IDS {
                if let Some(m) = h.c.transaction(id) {
                    let owner = owners.entry(m.producer_id).or_insert(id);
                    assert_eq!(
                        *owner, id,
                        "seed {seed}: producer id {} shared",
                        m.producer_id
                    );
                }
            }
            for id in IDS {
                if let Some(m) = h.c.transaction(id) {
                    let now = (m.producer_id, m.producer_epoch);
                    if let Some(before) = last.get(id) {
                        assert!(
                            now.0 != before.0 || now.1 >= before.1,
                            "seed {seed}: {id} epoch went back"
                        );
                    }
                    last.insert(id, now);
                }
            }
        }
        // Report everything, then every request has its answer.
        for _ in 0..1000 {
            if !h.held.is_empty() {
                h.release(None);
            } else if let Some(m) = h.markers.pop() {
                let ef = h.c.markers_written(
                    h.now,
                    &m.transactional_id,
                    m.producer_id,
                    m.producer_epoch,
                );
                h.run(ef);
            } else {
                break;
            }
        }
        for t in &sent {
            assert!(
                h.answer(*t).is_some(),
                "seed {seed}: token {t} never answered"
            );
        }
        renewed += (h.handed.len() > IDS.len()) as usize;
    }
    assert!(
        decided > 40 && renewed > 10,
        "{decided} decisions, {renewed} renewals"
    );
}

#[test]
fn random_requests_and_flipped_bytes_are_answered_or_refused_never_a_panic() {
    // Every decoder and server path survives arbitrary bytes: random requests of every
    // transaction api at every version (the generic codec's random bodies) are answered, each
    // answer written in its version's shape; the same frames with random bytes flipped either
    // fail to decode (the broker closes that connection) or are answered too.
    use crate::protocol::frame::{encode_request, RequestHeader};
    use crate::protocol::messages::api;
    use crate::protocol::random::Gen;

    let mut g = Gen::new(22);
    let mut rng = crate::rng::Rng::new(Some(22));
    let mut c = Coordinator::new(Config::default());
    c.set_topics(Some([("t", 3)].into_iter()));
    let mut pids = 0i64;
    let mut next = || -> std::result::Result<i64, ErrorCode> {
        pids += 1;
        Ok(pids)
    };
    let (mut token, mut answered, mut refused) = (0u64, 0, 0);
    for _ in 0..30 {
        for key in TXN_API_KEYS {
            let a = api(key).unwrap();
            for v in a.versions().lo..=a.versions().hi {
                let header = RequestHeader {
                    api_key: key,
                    api_version: v,
                    correlation_id: 7,
                    client_id: Some(Cow::Borrowed("fuzz")),
                    unknown_tagged: Vec::new(),
                };
                let frame = encode_request(&header, &g.body(a.request, v)).unwrap();
                let mut flipped = frame[4..].to_vec();
                for _ in 0..1 + rng.next_u64() % 4 {
                    let at = (rng.next_u64() as usize) % flipped.len();
                    flipped[at] ^= 1 << (rng.next_u64() % 8);
                }
                for (f, valid) in [(&frame[4..], true), (&flipped[..], false)] {
                    match requests::decode(f) {
                        Ok((h, req)) => {
                            token += 1;
                            let out = c.handle(token as i64, token, &req, &mut next);
                            for e in out {
                                if let E::Respond { response, .. } = e {
                                    responses::encode_response(&response, h.version, 7)
                                        .unwrap_or_else(|e| panic!("{} v{v}: {e}", a.name));
                                    answered += 1;
                                }
                            }
                        }
                        Err(_) => {
                            assert!(!valid, "{} v{v}: a valid request did not decode", a.name);
                            refused += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(
        answered > 500 && refused > 0,
        "{answered} answered, {refused} refused"
    );
}
