//! TxnState: the states of a transactional id, as Kafka's `TransactionState`: their ids in
//! `__transaction_state`, their names on the wire (DescribeTransactions, ListTransactions), and
//! the transitions allowed between them.

use std::fmt;

/// TxnState is where a transactional id's transaction stands. Every change of state is
/// written to `__transaction_state` first and takes effect once the write is durable; meanwhile
/// the target is the metadata's pending state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TxnState {
    /// Empty: the id has a producer id and epoch but no transaction.
    ///
    /// action: InitProducerId bumps the epoch (a new producer id once it is exhausted);
    ///         EndTxn answers INVALID_TXN_STATE.
    /// transition: AddPartitionsToTxn or AddOffsetsToTxn => Ongoing
    ///             InitProducerId => Empty
    ///             expired (`transactional.id.expiration.ms` idle) => Dead
    Empty,
    /// Ongoing: a transaction has partitions; its timeout runs from the first of them.
    ///
    /// action: AddPartitionsToTxn adds partitions (nothing is written when all are in);
    ///         verification answers whether a partition is in.
    /// transition: EndTxn commit => PrepareCommit
    ///             EndTxn abort, or the transaction timed out => PrepareAbort
    ///             InitProducerId (a new instance) => PrepareEpochFence, then PrepareAbort
    ///             AddPartitionsToTxn => Ongoing
    Ongoing,
    /// PrepareCommit: the commit is decided and durable; markers are being written.
    ///
    /// action: EndTxn commit (a retry) and InitProducerId answer CONCURRENT_TRANSACTIONS; EndTxn
    ///         abort answers INVALID_TXN_STATE.
    /// transition: every marker written => CompleteCommit
    PrepareCommit,
    /// PrepareAbort: the abort is decided and durable; markers are being written.
    ///
    /// action: EndTxn abort (a retry) and InitProducerId answer CONCURRENT_TRANSACTIONS; EndTxn
    ///         commit answers INVALID_TXN_STATE.
    /// transition: every marker written => CompleteAbort
    PrepareAbort,
    /// CompleteCommit: the last transaction committed.
    ///
    /// action: EndTxn commit (a retry) answers NONE; EndTxn abort INVALID_TXN_STATE.
    /// transition: AddPartitionsToTxn or AddOffsetsToTxn => Ongoing
    ///             InitProducerId => Empty
    ///             expired => Dead
    CompleteCommit,
    /// CompleteAbort: the last transaction aborted.
    ///
    /// action: EndTxn abort (a retry) answers NONE; EndTxn commit INVALID_TXN_STATE.
    /// transition: AddPartitionsToTxn or AddOffsetsToTxn => Ongoing
    ///             InitProducerId => Empty
    ///             expired => Dead
    CompleteAbort,
    /// Dead: the id expired and its tombstone is being written; never written itself.
    ///
    /// action: DescribeTransactions answers TRANSACTIONAL_ID_NOT_FOUND; ListTransactions skips it.
    /// transition: the tombstone is durable => the id is forgotten
    Dead,
    /// PrepareEpochFence: only ever a pending state: the epoch is bumped to fence a producer
    /// whose transaction is aborted (InitProducerId of a new instance, a timeout).
    ///
    /// action: none (never a current state).
    /// transition: => PrepareAbort, at the bumped epoch
    PrepareEpochFence,
}

impl TxnState {
    /// ALL lists the states by id.
    pub const ALL: [TxnState; 8] = [
        TxnState::Empty,
        TxnState::Ongoing,
        TxnState::PrepareCommit,
        TxnState::PrepareAbort,
        TxnState::CompleteCommit,
        TxnState::CompleteAbort,
        TxnState::Dead,
        TxnState::PrepareEpochFence,
    ];

    /// id is the state's byte in a `__transaction_state` value.
    pub fn id(self) -> i8 {
        self as i8
    }

    /// from_id is the state of a record's byte, None for an unknown one.
    pub fn from_id(id: i8) -> Option<TxnState> {
        usize::try_from(id)
            .ok()
            .and_then(|i| TxnState::ALL.get(i).copied())
    }

    /// name is the state's name on the wire (Kafka's `stateName`).
    pub fn name(self) -> &'static str {
        match self {
            TxnState::Empty => "Empty",
            TxnState::Ongoing => "Ongoing",
            TxnState::PrepareCommit => "PrepareCommit",
            TxnState::PrepareAbort => "PrepareAbort",
            TxnState::CompleteCommit => "CompleteCommit",
            TxnState::CompleteAbort => "CompleteAbort",
            TxnState::Dead => "Dead",
            TxnState::PrepareEpochFence => "PrepareEpochFence",
        }
    }

    /// from_name is the state of a name, None for an unknown one (case-sensitive, as Kafka's).
    pub fn from_name(name: &str) -> Option<TxnState> {
        TxnState::ALL.into_iter().find(|s| s.name() == name)
    }

    /// valid_previous tells whether a transaction may move from `from` to this state (Kafka's
    /// `VALID_PREVIOUS_STATES`; the transitions from Empty and Complete* to PrepareAbort are
    /// transaction protocol v2's, which this coordinator does not take yet).
    pub fn valid_previous(self, from: TxnState) -> bool {
        use TxnState::*;
        match self {
            Empty => matches!(from, Empty | CompleteCommit | CompleteAbort),
            Ongoing => matches!(from, Ongoing | Empty | CompleteCommit | CompleteAbort),
            PrepareCommit => from == Ongoing,
            PrepareAbort => matches!(
                from,
                Ongoing | PrepareEpochFence | Empty | CompleteCommit | CompleteAbort
            ),
            CompleteCommit => from == PrepareCommit,
            CompleteAbort => from == PrepareAbort,
            Dead => matches!(from, Empty | CompleteCommit | CompleteAbort),
            PrepareEpochFence => from == Ongoing,
        }
    }

    /// expiration_allowed tells whether an idle id in this state may expire.
    pub fn expiration_allowed(self) -> bool {
        matches!(
            self,
            TxnState::Empty | TxnState::CompleteCommit | TxnState::CompleteAbort
        )
    }

    /// is_prepare tells whether the state is PrepareCommit or PrepareAbort.
    pub fn is_prepare(self) -> bool {
        matches!(self, TxnState::PrepareCommit | TxnState::PrepareAbort)
    }
}

impl fmt::Display for TxnState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_are_kafkas() {
        // Kafka's TransactionState ids and names.
        for (i, s) in TxnState::ALL.iter().enumerate() {
            assert_eq!(s.id() as usize, i);
            assert_eq!(TxnState::from_id(i as i8), Some(*s));
            assert_eq!(TxnState::from_name(s.name()), Some(*s));
        }
        assert_eq!(TxnState::from_id(8), None);
        assert_eq!(TxnState::from_id(-1), None);
        assert_eq!(TxnState::from_name("ongoing"), None);
        assert_eq!(TxnState::PrepareEpochFence.name(), "PrepareEpochFence");
    }

    #[test]
    fn only_kafkas_transitions_are_valid() {
        use TxnState::*;
        assert!(PrepareCommit.valid_previous(Ongoing));
        assert!(!PrepareCommit.valid_previous(Empty));
        assert!(!CompleteCommit.valid_previous(PrepareAbort));
        assert!(!Dead.valid_previous(Ongoing));
        assert!(PrepareEpochFence.valid_previous(Ongoing));
        assert!(!Ongoing.valid_previous(PrepareCommit));
        assert!(Empty.expiration_allowed() && !Ongoing.expiration_allowed());
    }
}
