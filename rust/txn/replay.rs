//! LoadState: a `__transaction_state` partition's ids while it loads, record by record.

use std::collections::BTreeMap;

use super::metadata::Transit;
use super::records::{self, Key};
use crate::coordinator::load::{Replay, Replayed};
use crate::errors::Result;

/// LoadState is a partition's ids while it loads: the last value of each, None after a
/// tombstone.
#[derive(Debug, Default)]
pub struct LoadState {
    pub(super) txns: BTreeMap<String, Option<Transit>>,
}

impl Replay for LoadState {
    fn record(
        &mut self,
        _pid: i64,
        _transactional: bool,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<Replayed> {
        match records::read_key(key)? {
            Key::Unknown(_) => Ok(Replayed::Unknown),
            Key::Transaction(id) => {
                let v = value.map(records::read_value).transpose()?;
                self.txns.insert(id, v);
                Ok(Replayed::Known)
            }
        }
    }
}
