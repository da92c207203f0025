//! Effect: what a coordinator asks its host to do, and the tokens that tie the host's requests
//! and appends to the coordinator's answers.

use std::convert::Infallible;

/// Token identifies a request the host handed in; its response comes back with it.
pub type Token = u64;

/// AppendToken identifies an [`Effect::Append`]; the host reports its outcome with it.
pub type AppendToken = u64;

/// Effect is what the host must do after a call to a coordinator, in the order given. `R` is
/// the coordinator's response type (the group coordinator's `GroupResponse`), `X` the effects
/// of its own beyond responses and appends (the transaction coordinator's markers to write);
/// a coordinator without any keeps the default, [`Infallible`], whose `Other` cannot be built
/// and needs no match arm.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect<R, X = Infallible> {
    /// Respond: send `response` to the request the host gave `token` with (once per token).
    Respond { token: Token, response: R },
    /// Append: append `records` (one v2 record batch, base offset 0, CreateTime, no producer) to
    /// partition `partition` of the coordinator's internal topic (`__consumer_offsets` for the
    /// group coordinator), then report the outcome with the coordinator's `appended(now, token,
    /// error)`. Responses that wait on it go out then.
    Append {
        token: AppendToken,
        partition: i32,
        records: Vec<u8>,
    },
    /// Other: an effect of the coordinator's own kind.
    Other(X),
}
