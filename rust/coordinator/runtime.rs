//! Runtime: the state every coordinator of an internal topic keeps beside its own: the clock,
//! the timers, the appends waiting on the host, the partitions it loads, and the effects of the
//! call in progress (Kafka's `CoordinatorRuntime`, without threads: the host serialises calls).

use std::convert::Infallible;

use super::appends::{self, Appends, Producer, Records};
use super::effect::{AppendToken, Effect, Token};
use super::load::{Counts, Partitions, Replay};
use super::timers::Timers;
use crate::errors::Result;

/// Runtime is one coordinator's shared machinery, generic over what the coordinator plugs in:
/// `K` the key of its timers, `R` its response, `P` what waits on an append, `S` the
/// [`Replay`] state of a partition while it loads, `X` its effects of its own
/// ([`Effect::Other`]). Deterministic and not thread-safe, like the
/// coordinator that holds it.
///
/// A call of the coordinator goes: [`advance`](Runtime::advance) the clock, fire the timers
/// due ([`Timers::pop_due`]), do the work (which [`respond`](Runtime::respond)s and
/// [`append`](Runtime::append)s), fire what the work made due, hand the effects over
/// ([`drain_into`](Runtime::drain_into)).
#[derive(Debug)]
pub struct Runtime<K, R, P, S, X = Infallible> {
    pub timers: Timers<K>,
    pub appends: Appends<P>,
    pub partitions: Partitions<S>,
    now: i64,
    clock_seen: bool,
    out: Vec<Effect<R, X>>,
}

impl<K, R, P, S, X> Default for Runtime<K, R, P, S, X> {
    fn default() -> Self {
        Runtime {
            timers: Timers::default(),
            appends: Appends::default(),
            partitions: Partitions::default(),
            now: i64::MIN,
            clock_seen: false,
            out: Vec::new(),
        }
    }
}

impl<K, R, P, S, X> Runtime<K, R, P, S, X> {
    /// now is the latest time a call gave (ms), `i64::MIN` before the first.
    #[inline]
    pub fn now(&self) -> i64 {
        self.now
    }

    /// advance moves the clock to `now`; a time earlier than one seen before counts as the
    /// later one. True the first time: a coordinator arms its periodic timers then.
    #[inline]
    pub fn advance(&mut self, now: i64) -> bool {
        self.now = self.now.max(now);
        !std::mem::replace(&mut self.clock_seen, true)
    }

    /// respond queues the response to the request of `token`.
    #[inline]
    pub fn respond(&mut self, token: Token, response: R) {
        self.out.push(Effect::Respond { token, response });
    }

    /// append queues an append of `records` to `partition` of the internal topic, stamped with
    /// the clock, with `pending` waiting on its outcome; returns its token.
    pub fn append(&mut self, partition: i32, records: Records, pending: P) -> AppendToken {
        let records = appends::batch(self.now, records);
        self.append_batch(partition, records, pending)
    }

    /// append_transactional is [`append`](Runtime::append) of a transactional batch of
    /// `producer` (see [`appends::transactional_batch`]): the records count once the host writes
    /// the transaction's commit marker after them.
    pub fn append_transactional(
        &mut self,
        partition: i32,
        producer: Producer,
        records: Records,
        pending: P,
    ) -> AppendToken {
        let records = appends::transactional_batch(self.now, producer, records);
        self.append_batch(partition, records, pending)
    }

    fn append_batch(&mut self, partition: i32, records: Vec<u8>, pending: P) -> AppendToken {
        let token = self.appends.add(pending);
        self.out.push(Effect::Append {
            token,
            partition,
            records,
        });
        token
    }

    /// emit queues an effect of the coordinator's own kind.
    #[inline]
    pub fn emit(&mut self, effect: X) {
        self.out.push(Effect::Other(effect));
    }

    /// has_effects tells whether effects are queued (a load queues some before any call).
    #[inline]
    pub fn has_effects(&self) -> bool {
        !self.out.is_empty()
    }

    /// drain_into moves the effects queued so far to the end of `out`.
    #[inline]
    pub fn drain_into(&mut self, out: &mut Vec<Effect<R, X>>) {
        out.append(&mut self.out);
    }

    /// take_effects is the effects queued so far.
    pub fn take_effects(&mut self) -> Vec<Effect<R, X>> {
        std::mem::take(&mut self.out)
    }
}

impl<K, R, P, S: Replay, X> Runtime<K, R, P, S, X> {
    /// load replays one chunk of `partition` (see [`Partitions::load`]), adding what it read to
    /// `counts`: the partition's state once `last`.
    pub fn load(
        &mut self,
        partition: i32,
        data: &[u8],
        last: bool,
        counts: &mut Counts,
    ) -> Result<Option<S>> {
        self.partitions.load(partition, data, last, counts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::load::Replayed;

    #[derive(Default)]
    struct Nothing;

    impl Replay for Nothing {
        fn record(&mut self, _: i64, _: bool, _: &[u8], _: Option<&[u8]>) -> Result<Replayed> {
            Ok(Replayed::Known)
        }
    }

    #[test]
    fn effects_come_out_in_order_and_appends_wait() {
        let mut rt: Runtime<u32, &str, &str, Nothing> = Runtime::default();
        assert!(rt.advance(10));
        assert!(!rt.advance(5), "the first clock only once");
        assert_eq!(rt.now(), 10, "time never goes back");
        rt.respond(1, "one");
        let t = rt.append(7, vec![(b"k".to_vec(), None)], "waits");
        rt.respond(2, "two");
        let mut out = Vec::new();
        rt.drain_into(&mut out);
        assert!(matches!(out[0], Effect::Respond { token: 1, .. }));
        assert!(matches!(out[1], Effect::Append { token, partition: 7, .. } if token == t));
        assert!(matches!(out[2], Effect::Respond { token: 2, .. }));
        assert!(rt.take_effects().is_empty());
        assert_eq!(rt.appends.take(t).unwrap(), "waits");
    }

    #[test]
    fn a_transactional_append_is_an_append_of_the_producers_batch() {
        use crate::protocol::records::{decode_batches, DecodeOptions};
        let mut rt: Runtime<u32, &str, &str, Nothing> = Runtime::default();
        rt.advance(10);
        let plain = rt.append(3, vec![(b"a".to_vec(), None)], "plain");
        let producer = Producer { id: 7, epoch: 2 };
        let txn = rt.append_transactional(3, producer, vec![(b"b".to_vec(), None)], "txn");
        assert_eq!((plain, txn), (1, 2), "one sequence of tokens");
        let out = rt.take_effects();
        let Effect::Append { records, .. } = &out[1] else {
            panic!("{out:?}")
        };
        let b = &decode_batches(records, &DecodeOptions::default()).unwrap()[0];
        assert_eq!(
            (b.producer_id, b.producer_epoch, b.is_transactional),
            (7, 2, true)
        );
        assert_eq!(rt.appends.take(txn).unwrap(), "txn");
    }
}
