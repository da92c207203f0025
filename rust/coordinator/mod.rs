//! The coordinator runtime: what every coordinator of an internal topic shares, whatever it
//! coordinates (Kafka 4.x's `coordinator-common`). The group coordinator (`group`, over
//! `__consumer_offsets`) uses it; a transaction coordinator (over `__transaction_state`) plugs
//! in the same way, bringing only its own specifics.
//!
//! A coordinator is a pure, deterministic state machine: it reads no clock and does no I/O. A
//! host hands it requests with the time and a token, reports how the appends it asked for went,
//! calls its `tick` at its `next_deadline`, and replays its internal topic's partitions into it
//! on start; it answers with [`Effect`]s: responses (some deferred until an append completes)
//! and record batches to append.
//!
//! - [`timers`]: one min-heap of deadlines, keyed by the coordinator's own key type.
//! - [`effect`]: [`Effect`], [`Token`], [`AppendToken`].
//! - [`frame`]: a response as a whole frame.
//! - [`appends`]: what waits on each append, and the record batch an append writes.
//! - [`load`]: replaying a partition's batches record by record into the coordinator's state,
//!   and which partitions are loading or given up.
//! - [`partition`]: which partition of the internal topic holds a key.
//! - [`runtime`]: [`Runtime`], the above bundled with the clock and the effects of a call.
//!
//! Everything is generic and resolved at compile time: a coordinator's hot path (a heartbeat)
//! pays no dynamic dispatch and no allocation for going through the runtime.

pub mod appends;
pub mod effect;
pub mod frame;
pub mod load;
pub mod partition;
pub mod runtime;
pub mod timers;

pub use appends::{Appends, Producer, Records};
pub use effect::{AppendToken, Effect, Token};
pub use load::{Counts, Partitions, Replay, Replayed};
pub use partition::partition_for;
pub use runtime::Runtime;
pub use timers::{Due, Owners, Timer, Timers};
